"""A memory balloon: RAM taken away from the whole host for a memory-pressure experiment.

A memory cgroup squeezes one group of processes, and inside it the kernel writes back
and throttles the group's dirty pages as the group fills, whatever ``vm.dirty_ratio``
says. A post's machine had its RAM taken by the server itself: the host-wide dirty
limits decided how much of the rest the page cache could fill. The balloon does that
here: a child process that locks ``size`` bytes of anonymous memory (``mlock``, so it
is neither reclaimed nor swapped) and holds them until it is told to let go.

It cannot outlive the harness: it asks the kernel to kill it when its parent dies
(``PR_SET_PDEATHSIG``, SIGKILL of the harness included), it lets go when its stdin
closes, and its pid is in the host-tuning journal for the next harness to check. Its
``oom_score_adj`` is 1000: if the host runs out of memory anyway, it is the first to
go, not the server under test.
"""
from __future__ import annotations

import ctypes
import mmap
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from .. import proc
from ..errors import HarnessError

PR_SET_PDEATHSIG = 1
STEP = 64 << 20  # locked a piece at a time, so progress can be seen in /proc
MARK = "harness.host.balloon"  # in its command line: a journaled pid is still ours


class BalloonError(HarnessError):
    """The balloon could not take the memory it was asked for."""


def size_for(leave: int, available: int) -> int:
    """The balloon that leaves ``leave`` bytes of the host's ``available`` memory."""
    if available - leave < STEP:
        raise BalloonError(f"host.balloon.leave: {leave >> 20} MB asked to be left, and "
                           f"the host has only {available >> 20} MB available: no balloon "
                           "to inflate")
    return (available - leave) // STEP * STEP


def available_bytes() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    raise BalloonError("/proc/meminfo has no MemAvailable")


class Balloon:
    """The balloon process: ``Balloon(size)`` locks it (or raises), ``close()`` lets go."""

    def __init__(self, size: int, timeout_s: float = 600.0):
        self.size = size
        self.p = proc.popen([sys.executable, "-m", MARK, str(size)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.pid = self.p.pid
        line = self._first_line(timeout_s)
        if line != f"locked {size}":
            err = self.p.stderr.read().decode(errors="replace") \
                if self.p.poll() is not None and self.p.stderr else ""
            self.close()
            raise BalloonError(f"host.balloon: locking {size >> 20} MB failed: "
                               f"{(err or line).strip() or 'no answer'}")

    def _first_line(self, timeout_s: float) -> str:
        """What the child says once it has locked the memory (or failed)."""
        assert self.p.stdout is not None
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.p.poll() is not None:
                return self.p.stdout.readline().decode(errors="replace").strip()
            ready, _, _ = select.select([self.p.stdout], [], [], 0.5)
            if ready:
                return self.p.stdout.readline().decode(errors="replace").strip()
        return "timed out"

    def locked_bytes(self) -> int:
        """What the kernel says the balloon holds locked (VmLck), 0 once it is gone."""
        try:
            status = Path(f"/proc/{self.pid}/status").read_text()
        except OSError:
            return 0
        for line in status.splitlines():
            if line.startswith("VmLck:"):
                return int(line.split()[1]) * 1024
        return 0

    def close(self) -> None:
        """Let go: stdin closed, then SIGKILL if it lingers; the memory is the host's."""
        if self.p.poll() is None:
            try:
                if self.p.stdin:
                    self.p.stdin.close()
                self.p.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                self.p.kill()
                self.p.wait(10)


def kill_orphan(pid: int) -> bool:
    """SIGKILL a journaled balloon still alive after its harness died (its command line
    says it is one); whether there was one."""
    if not proc.runs(pid, MARK):
        return False  # gone, or the pid was reused
    os.kill(pid, signal.SIGKILL)
    return True


def _inflate(size: int) -> None:
    """The child: die with the parent, OOM-killed first, lock ``size`` bytes, say so, and
    hold them until stdin closes."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() == 1:  # the parent died before the line above
        sys.exit(1)
    Path("/proc/self/oom_score_adj").write_text("1000\n")
    m = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    base = ctypes.addressof(ctypes.c_char.from_buffer(m))
    for off in range(0, size, STEP):
        if libc.mlock(ctypes.c_void_p(base + off), ctypes.c_size_t(min(STEP, size - off))):
            err = ctypes.get_errno()
            print(f"mlock at {off >> 20} MB: {os.strerror(err)}", file=sys.stderr)
            sys.exit(1)
    print(f"locked {size}", flush=True)
    sys.stdin.read()


if __name__ == "__main__":
    _inflate(int(sys.argv[1]))
