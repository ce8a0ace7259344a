"""``make test``: the suite in two phases, then one closing line for both.

1. Every test not marked ``alone`` (nor ``every_workload``: ``make test-ab``'s), on
   ``--workers`` pytest-xdist workers; a file's tests stay on one worker (its module
   fixtures are made once), the longest files first (conftest orders them), so no long
   file starts last.
2. The tests marked ``alone`` (they change host-wide state: sysctls, swap, cgroup
   hierarchies, CPU placement; or their assertions need a quiet machine), one after
   another with nothing else running.

Both phases run whatever the first gave; the exit code is non-zero when either failed.
On any exit, Ctrl-C and SIGTERM included, what a killed worker left is removed
(:mod:`tests.leftovers`). Each phase's wall time is printed, and the last line counts
both: ``suite: N passed, N failed, N skipped``.
"""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from tests import leftovers


def _counts(junit: Path) -> tuple[int, int, int]:
    """(passed, failed, skipped) of one phase, errors counted as failures."""
    try:
        root = ET.parse(junit).getroot()
    except (OSError, ET.ParseError):
        return 0, 1, 0  # the phase died before it wrote its report
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    assert suite is not None
    n, fail, err, skip = (int(suite.get(k, 0)) for k in ("tests", "failures", "errors",
                                                         "skipped"))
    return n - fail - err - skip, fail + err, skip


def _phase(name: str, argv: list[str], junit: Path) -> tuple[int, float]:
    """One pytest, in a process group of its own: interrupted, the whole group (its
    workers too) is stopped before the leftovers are cleaned."""
    print(f"--- make test, {name}: {' '.join(argv[3:])}", flush=True)
    t0 = time.monotonic()
    p = subprocess.Popen([*argv, f"--junitxml={junit}"], start_new_session=True)
    try:
        rc = p.wait()
    except BaseException:
        _stop_group(p)
        raise
    took = time.monotonic() - t0
    print(f"--- {name}: {took / 60:.1f} min", flush=True)
    return rc, took


def _stop_group(p: subprocess.Popen[bytes]) -> None:
    for sig, wait_s in ((signal.SIGINT, 20), (signal.SIGKILL, 10)):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            return
        try:
            p.wait(timeout=wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", default="6")
    ap.add_argument("--junit-dir", help="keep each phase's junit XML here")
    ap.add_argument("pytest_args", nargs="*")
    a = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))  # SystemExit: the finally runs
    if a.junit_dir:  # each test's CPU in its junit record (tests/cpuacct.py)
        os.environ["TEST_CPU_ACCOUNT"] = "1"
    out = Path(a.junit_dir or tempfile.mkdtemp(prefix="harness-test-"))
    out.mkdir(parents=True, exist_ok=True)
    py = [sys.executable, "-m", "pytest", "-q"]
    # every_workload: make test-ab's (compare on the shipped workloads beyond the default);
    # nightly: make test-nightly's (the default nightly over two lab hosts; 5.5 on lab hosts
    # and in containers)
    parallel = ["-m", "not alone and not every_workload and not nightly"]
    alone = ["-m", "alone and not every_workload and not nightly"]
    phases = [("parallel", [*py, "-n", a.workers, "--dist", "loadfile", *parallel,
                            "--durations=10", *a.pytest_args], out / "parallel.xml"),
              ("alone", [*py, "-p", "no:xdist", *alone, "--durations=5",
                         *a.pytest_args], out / "alone.xml")]
    passed = failed = skipped = 0
    codes, total = [], 0.0
    try:
        for name, argv, junit in phases:
            rc, took = _phase(name, argv, junit)
            codes.append(rc)
            total += took
            p, f, s = _counts(junit)
            passed, failed, skipped = passed + p, failed + f, skipped + s
    finally:
        for what in leftovers.clean():
            print(f"removed what a killed test run left: {what}", file=sys.stderr)
    print(f"--- both phases: {total / 60:.1f} min")
    print(f"suite: {passed} passed, {failed} failed, {skipped} skipped")
    return 0 if all(c in (0, 5) for c in codes) and failed == 0 and passed else 1


if __name__ == "__main__":
    sys.exit(main())
