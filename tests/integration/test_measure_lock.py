"""The measurement lock against a holder that does not let go: one that handed its open
lock file to a child and exited is not named for the child (the kernel's /proc/locks
still names the one that took it), and one stopped (SIGSTOP) does not block every
harness on the host: a run waiting for it names the holder that is really there,
breaks the lock once it has been stopped long enough (30 s; 5 s here), says so, and
measures; a bound on
the wait ends it with the holder's name."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import pytest

from harness import locks
from harness.bench import faults

from ..conftest import ROOT

pytestmark = pytest.mark.integration

SCENARIO = """\
name: waits
servers: [mariadb-10.11]
dataset: {tables: 1, table_size: 1000}
workload: {test: oltp_point_select, threads: 1, warmup_s: 0, duration_s: 3}
wakeup_probe: false
snapshot: false
between_runs: restart
"""


def _holder(lock) -> int:
    return faults.lock_held_by_a_child(lock)


def test_a_stopped_holder_is_named_and_broken(tmp_path, results):
    lock = tmp_path / "measure.lock"
    child = _holder(lock)
    try:
        assert locks.holders(lock) == [child]  # not the exited process that took it
        with pytest.raises(locks.LockTimeout, match=rf"held by pid {child} "):
            with locks.held(lock, "a bounded wait", timeout_s=1, say=None):
                pass
        os.kill(child, signal.SIGSTOP)
        f = tmp_path / "waits.yaml"
        f.write_text(SCENARIO)
        t0 = time.monotonic()
        r = subprocess.run([sys.executable, "-m", "harness", "run", str(f)], cwd=ROOT,
                           env={**os.environ, "HARNESS_MEASURE_LOCK": str(lock),
                                "HARNESS_MEASURE_LOCK_BREAK_S": "5"},
                           capture_output=True, text=True, timeout=600)
        took = time.monotonic() - t0
        assert r.returncode == 0, r.stderr[-3000:]
        assert re.search(rf"measurement lock: waiting for pid {child} \(root: ", r.stderr)
        assert re.search(rf"measurement lock: its holder pid {child} .* has been stopped "
                         r"\(SIGSTOP\) for [5-9] s: the lock is broken", r.stderr), r.stderr
        assert took < 300 and "Traceback" not in r.stderr
        assert locks.stopped(child)  # the lock was broken, not its holder
    finally:
        os.kill(child, signal.SIGKILL)


def test_the_wait_is_bounded_and_names_the_holder(tmp_path, results):
    lock = tmp_path / "measure.lock"
    child = _holder(lock)
    try:
        f = tmp_path / "waits.yaml"
        f.write_text(SCENARIO)
        r = subprocess.run([sys.executable, "-m", "harness", "run", str(f)], cwd=ROOT,
                           env={**os.environ, "HARNESS_MEASURE_LOCK": str(lock),
                                "HARNESS_MEASURE_LOCK_WAIT_S": "3"},
                           capture_output=True, text=True, timeout=600)
        assert r.returncode == 1, r.stderr[-3000:]
        assert re.search(rf"measurement lock: not free after 3 s: held by pid {child} ",
                         r.stderr + r.stdout), r.stderr[-3000:]
        assert "HARNESS_MEASURE_LOCK_WAIT_S waits longer" in r.stderr + r.stdout
    finally:
        os.kill(child, signal.SIGKILL)
