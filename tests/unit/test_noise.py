"""The CPU keep-alive spinners: idle priority, and gone afterwards."""
import os
import time
from pathlib import Path

import pytest

from harness.host.noise import KeepAwake, keep_awake


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


CPUIDLE = "/sys/devices/system/cpu/cpu{}/cpuidle/state{}/usage"


def _usage(state: int) -> int:
    return sum(int(open(CPUIDLE.format(c, state)).read()) for c in range(os.cpu_count() or 1))


# The CPUs' idle states count only while a CPU idles: beside five other test workers
# none does, and no poll is seen (run 34 here). Alone, on a quiet machine.
@pytest.mark.alone
@pytest.mark.skipif(not os.path.exists(CPUIDLE.format(0, 1)) or
                    not os.access("/dev/cpu_dma_latency", os.W_OK),
                    reason="no cpuidle states or PM QoS file on this host")
def test_pm_qos_keeps_cpus_out_of_halt_and_lets_go_afterwards():
    with keep_awake("auto") as method:
        assert method == "pm_qos"
        halts, polls = _usage(1), _usage(0)
        time.sleep(0.5)
        assert _usage(1) - halts <= 2  # no halting while the request is held
        assert _usage(0) > polls  # idle time is spent polling
    others = _pm_qos_holders()
    if others:  # a harness run beside this test keeps the CPUs awake: nothing to see
        pytest.skip(f"PM QoS is also held by pid {', '.join(others)}")
    halts = _usage(1)
    time.sleep(0.5)
    assert _usage(1) > halts  # the request is gone: CPUs halt again


def _pm_qos_holders() -> list[str]:
    """Other processes with /dev/cpu_dma_latency open (each holds a request)."""
    out = []
    for fd in Path("/proc").glob("[0-9]*/fd/*"):
        try:
            if os.readlink(fd) == "/dev/cpu_dma_latency" and \
                    fd.parts[2] != str(os.getpid()):
                out.append(fd.parts[2])
        except OSError:
            continue
    return sorted(set(out))


def test_pm_qos_without_the_file_is_refused_by_name(tmp_path, monkeypatch):
    # As an unprivileged user /dev/cpu_dma_latency cannot be opened for writing; root can,
    # so a path that does not exist stands in. Once an ImportError, now the message.
    from harness.errors import InputError
    from harness.host import noise
    monkeypatch.setattr(noise, "PM_QOS", tmp_path / "no" / "cpu_dma_latency")
    with pytest.raises(InputError, match=r"cpu_keepalive: pm_qos needs write access to "
                       r".*cpu_dma_latency \(No such file or directory\); use "
                       r"cpu_keepalive: spinner"):
        with noise.keep_awake("pm_qos"):
            pass
    with noise.keep_awake("auto") as method:  # auto falls back to the spinners
        assert method == "spinner"
