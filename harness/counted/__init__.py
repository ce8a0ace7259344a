"""Counters of mysqld's instructions: what ``--measure instructions`` counts with.
:mod:`.callgrind` runs mysqld under valgrind's callgrind (a software counter that runs
anywhere: the connection thread's count, exact, ~8-30x slower, functions named);
:mod:`.perf` reads the hardware counter with ``perf stat -p`` where the host's PMU
answers (every thread of mysqld, at native speed, no functions); :mod:`.pmu` says
whether it does. ``--counter auto`` (the default) takes the hardware's where it counts,
else callgrind's."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from ..errors import InputError
from ..server.catalog import Build
from ..server.mycnf import Value
from . import pmu
from .callgrind import Callgrind, Counted, Runnable
from .perf import Perf

KINDS = ("auto", "callgrind", "perf")


class Counter(Protocol):
    """What a counted comparison asks of its counter, window by window."""

    name: str
    threads: str  # what its count covers: "the connection thread"

    def version(self) -> str: ...
    def server_options(self, build: Build, pools: list[Value | None]
                       ) -> dict[str, Value]: ...
    def attach(self, side: str, box: Runnable) -> None: ...
    def share(self, side: str, other: str) -> None: ...
    def started(self, side: str, box: Runnable) -> None: ...
    def after_connection(self) -> None: ...
    def count(self, run: Callable[[], int]) -> Counted: ...
    def functions(self, c: Counted, into: Path) -> dict[str, int]: ...


def choose(kind: str) -> tuple[Counter, str]:
    """The counter ``kind`` names (auto: the hardware's where it counts, else
    callgrind), and what the hardware counter answered here. InputError for ``perf``
    where the hardware does not count."""
    answer = pmu.hardware_counter()
    counts = pmu.counts(answer)
    if kind == "perf" and not counts:
        raise InputError(f"--counter perf: the hardware counter does not count here "
                         f"({answer}); --counter callgrind counts in software")
    if kind == "perf" or (kind == "auto" and counts):
        return Perf(), answer
    return Callgrind(), answer
