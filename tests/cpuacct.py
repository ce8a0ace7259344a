"""Each test's CPU, its servers' and tools' included, for the suite's length (make test
TEST_JUNIT=DIR): every pytest process moves itself into a cgroup v1 cpuacct group of its
own, which the servers and tools it starts inherit, and each test's junit record gains
``cpu_s``, that group's CPU seconds from its setup to its teardown. The parallel phase
is CPU-bound on two cores, so its length follows the sum of these, not of the tests'
wall seconds. Off unless TEST_CPU_ACCOUNT is set (tests/run.py sets it with --junit-dir);
a host without cpuacct v1 records nothing."""
from __future__ import annotations

import os
from pathlib import Path

ROOT = Path("/sys/fs/cgroup/cpuacct")


def join() -> Path | None:
    """Move this process into a group of its own; None where that cannot be done."""
    if not os.environ.get("TEST_CPU_ACCOUNT") or not (ROOT / "cgroup.procs").exists():
        return None
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    group = ROOT / "harness-tests" / f"{worker}-{os.getpid()}"
    try:
        group.mkdir(parents=True, exist_ok=True)
        (group / "cgroup.procs").write_text(str(os.getpid()))
    except OSError:
        return None
    return group


def usage(group: Path | None) -> float:
    return int((group / "cpuacct.usage").read_text()) / 1e9 if group else 0.0


def leave(group: Path | None) -> None:
    """Back to the root group; the group goes once nothing is left in it."""
    if group is None:
        return
    try:
        (ROOT / "cgroup.procs").write_text(str(os.getpid()))
        group.rmdir()
    except OSError:
        pass  # a process a test left still runs in it: the suite's own check names it
