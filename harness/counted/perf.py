"""The hardware counter as the counter, where the host's PMU answers (lab hardware; a
VM without counters answers ``<not supported>``): mysqld runs natively and ``perf stat
-e instructions:u -p PID`` counts its user-space instructions over each window, every
thread of the process (a PMU counts the process, not one connection: purge and the
page cleaner are in the count, so it spreads more than callgrind's), at native speed.
No functions: perf stat counts, it does not attribute.

Not run on the machine this project is built on (it has no PMU); the tests run the
same path with a software event (``HARNESS_PERF_EVENT=task-clock``) to hold the
attach, the stop and the reading, which are the same for any event.
"""
from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from .. import proc
from ..errors import ProviderError
from ..server.catalog import Build
from ..server.mycnf import Value
from .callgrind import Counted, Runnable

NAME = "perf"
ATTACH_S = 0.2  # perf stat's attach to every thread, before the window's first query


def event() -> str:
    """The event counted: instructions:u (HARNESS_PERF_EVENT names another, for tests
    on a host without a PMU)."""
    return os.environ.get("HARNESS_PERF_EVENT", "instructions:u")


def version() -> str:
    """perf's own version line (perf version 6.1 ...)."""
    return proc.run([proc.which("perf"), "--version"], timeout=30,
                    what="perf --version").stdout.strip()


class Counting:
    """``with Counting(pid) as c:`` counts the process ``pid`` while the body runs;
    ``c.count`` after it (a ProviderError when perf counted nothing)."""

    def __init__(self, pid: int) -> None:
        self.pid, self.count = pid, 0
        self.child: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Counting:
        self.child = proc.popen([proc.which("perf"), "stat", "-x,", "-e", event(), "-p",
                                 str(self.pid)], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                env=proc.private_env())
        time.sleep(ATTACH_S)
        if self.child.poll() is not None:
            raise ProviderError(f"perf stat -p {self.pid} ended at once: "
                                f"{self._stderr()[-500:]}")
        return self

    def __exit__(self, kind: type[BaseException] | None, e: BaseException | None,
                 tb: TracebackType | None) -> None:
        assert self.child is not None
        self.child.send_signal(signal.SIGINT)
        text = self._stderr()
        if kind is None:
            self.count = parse(text, self.pid)

    def _stderr(self) -> str:
        assert self.child is not None
        try:
            _, err = self.child.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.child.kill()
            _, err = self.child.communicate()
        return (err or b"").decode(errors="replace")


def parse(text: str, pid: int) -> int:
    """The count of perf stat's CSV line for the event (``1234567,,instructions:u,...``);
    a software event's milliseconds (``27.12,msec,task-clock,...``) as nanoseconds."""
    name = event()
    for line in text.splitlines():
        fields = line.split(",")
        if len(fields) > 2 and fields[2].strip() == name:
            scale = 1e6 if fields[1].strip() == "msec" else 1
            try:
                return round(float(fields[0]) * scale)
            except ValueError:
                raise ProviderError(f"perf stat -p {pid} could not count {name}: "
                                    f"{fields[0].strip() or line}") from None
    raise ProviderError(f"perf stat -p {pid} printed no {name} count: {text[-500:]!r}")


class Perf:
    """The hardware counter a counted comparison drives: mysqld natively, each
    connection counted by ``perf stat -p`` over the process while it runs."""

    name = NAME
    threads = "all of mysqld's threads"

    def __init__(self) -> None:
        self.pid: int | None = None

    def version(self) -> str:
        return version()

    def server_options(self, build: Build, pools: list[Value | None]) -> dict[str, Value]:
        return {}  # natively: nothing to give

    def attach(self, side: str, box: Runnable) -> None:
        pass

    def share(self, side: str, other: str) -> None:
        pass

    def started(self, side: str, box: Runnable) -> None:
        self.pid = box.pid
        if self.pid is None:
            raise ProviderError("perf stat counts a mysqld of this host: no pid")

    def after_connection(self) -> None:
        pass

    def count(self, run: Callable[[], int]) -> Counted:
        assert self.pid is not None
        with Counting(self.pid) as c:
            done = run()
        return Counted(c.count, done)

    def functions(self, c: Counted, into: Path) -> dict[str, int]:
        return {}  # perf stat counts; it does not attribute
