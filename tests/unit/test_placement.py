"""CPU placement on real processes: a child's every thread on the server's CPUs and
this process's on the client's for the block, each given back what it had after it."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from harness.host.placement import allowed, parse_cpus, placed

pytestmark = pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs two CPUs")

THREADS = ("import threading, time\n"
           "for _ in range(3): threading.Thread(target=time.sleep, args=(30,)).start()\n"
           "print('up', flush=True); time.sleep(30)")


def _all(pid: int) -> set[str]:
    out = set()
    for tid in os.listdir(f"/proc/{pid}/task"):
        for line in open(f"/proc/{pid}/task/{tid}/status"):
            if line.startswith("Cpus_allowed_list:"):
                out.add(line.split()[-1])
    return out


def test_every_thread_is_placed_for_the_block_and_given_back_after():
    child = subprocess.Popen([sys.executable, "-c", THREADS], stdout=subprocess.PIPE,
                             text=True)
    try:
        assert child.stdout is not None and child.stdout.readline() == "up\n"
        before_child, before_mine = _all(child.pid), _all(os.getpid())
        with placed({1}, {0}, child.pid) as done:
            assert _all(child.pid) == {"1"} and len(os.listdir(
                f"/proc/{child.pid}/task")) == done["mysqld_threads"] == 4
            assert _all(os.getpid()) == {"0"}
            late = subprocess.Popen(["sleep", "5"])  # what the harness starts meanwhile
            time.sleep(0.1)
            assert allowed(late.pid) == "0"
            late.kill()
            late.wait()
        assert _all(child.pid) == before_child and _all(os.getpid()) == before_mine
    finally:
        child.kill()
        child.wait()


def test_cpu_lists_read_as_the_kernel_writes_them():
    assert parse_cpus("0-1,3") == {0, 1, 3} and parse_cpus("2") == {2}
    for bad in ("", "a", "1-", "3-1"):
        with pytest.raises(ValueError):
            parse_cpus(bad)
