"""Run one program and leave nothing of it behind: ``python -m harness.reaper UID GID --
ARGV...`` becomes the subreaper of what it starts (a process the program forks and leaves,
``setsid`` or not, is handed to it rather than to init), runs ARGV as that account, waits
for it, then kills every process still below it. For a program not yet the harness's own
(a tarball's mysqld asked what it is): whatever it starts ends with the step.

Imports nothing of the harness: it starts in a few milliseconds.
"""
from __future__ import annotations

import ctypes
import os
import signal
import sys
import time

_PR_SET_CHILD_SUBREAPER = 36


def _children() -> list[int]:
    found = []
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/children") as f:
                found += [int(x) for x in f.read().split()]
        except OSError:
            continue
    return found


def _kill_the_rest() -> int:
    """SIGKILL every process below this one until none is left; how many there were."""
    killed = 0
    deadline = time.monotonic() + 10
    while (left := _children()) and time.monotonic() < deadline:
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
        for _ in left:
            try:
                os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
        time.sleep(0.01)
    while True:  # reap what died
        try:
            if os.waitpid(-1, os.WNOHANG) == (0, 0):
                break
        except ChildProcessError:
            break
    return killed


def main(argv: list[str]) -> int:
    uid, gid, sep, *program = argv
    if sep != "--" or not program:
        print("usage: python -m harness.reaper UID GID -- ARGV...", file=sys.stderr)
        return 2
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        print("reaper: cannot become a subreaper", file=sys.stderr)
        return 2
    pid = os.fork()
    if pid == 0:  # the program, as the account
        try:
            if int(uid) >= 0:
                os.setgroups([])
                os.setgid(int(gid))
                os.setuid(int(uid))
            os.execvp(program[0], program)
        finally:
            os._exit(127)
    _, status = os.waitpid(pid, 0)
    left = _kill_the_rest()
    if left:
        print(f"reaper: {left} process(es) the program left behind were killed",
              file=sys.stderr)
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
