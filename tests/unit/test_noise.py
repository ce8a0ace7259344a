"""The CPU keep-alive spinners: idle priority, and gone afterwards."""
import os
import time

from harness.noise import KeepAwake


def test_keep_awake_spins_at_idle_priority_and_stops():
    with KeepAwake(n=2) as k:
        pids = [p.pid for p in k.procs]
        time.sleep(0.3)
        assert len(pids) == 2
        for pid in pids:
            assert os.sched_getscheduler(pid) == os.SCHED_IDLE
            assert os.path.exists(f"/proc/{pid}")
    for pid in pids:
        assert not os.path.exists(f"/proc/{pid}") or "Z" in open(f"/proc/{pid}/stat").read(
        ).split()[2]


def test_probe_spinner_is_a_normal_process():
    with KeepAwake(n=1, idle=False) as k:
        time.sleep(0.2)
        assert os.sched_getscheduler(k.procs[0].pid) == os.SCHED_OTHER
