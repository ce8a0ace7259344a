"""What a run set is given: its options (RunOptions), the machine it reads (World: the
clocks and the host's facts, fixed by a test), and what each run gives back (RunResult)."""
from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..host import facts
from ..store import RunSummary


@dataclass
class RunOptions:
    servers: list[str] = field(default_factory=list)  # with basedirs: replace the scenario's
    basedirs: list[str] = field(default_factory=list)
    variants: list[str] = field(default_factory=list)  # a subset of the scenario's
    repetitions: int | None = None
    target: str = "local"
    fail_fast: bool = False
    collectors: bool = True  # False: no collectors at all (overhead measurements)
    resume: str | None = None  # a run set to complete: only cells without an ok run
    metrics_port: int | None = None
    pushgateway: str | None = None
    disposable_confirmed: bool = False  # --i-know-this-is-disposable
    interleave: bool = False  # repetition-major, balanced (A B, B A ...): comparisons
    run_set: str | None = None  # store into this (new) run set: a lab host's share
    keep: bool = False  # leave each sandbox running at the end (harness sandboxes ...)
    measure_lock: bool = True  # False: --no-measure-lock
    # Why the runs are made, stored with each (details.purpose): a run of a scenario, or
    # a side of a comparison (harness compare), which regress leaves out of its histories.
    purpose: str = "run"
    # Asked after every run with the results so far: a reason to stop the run set early
    # (a sequential comparison that has decided, or whose budget is spent), or None.
    stop_rule: Callable[[list[RunResult]], str | None] | None = None


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class World:
    """What a run set reads from the machine beside its servers, given so that a test
    can fix it: the wall clock (run ids, start and end times), the run clock (seconds
    since a run began) and this host's facts (stored with each run, and the busy
    processes warned about)."""

    now: Callable[[], datetime] = _utc_now
    monotonic: Callable[[], float] = time.monotonic
    host_facts: Callable[[], dict[str, Any]] = facts.host_facts

    def iso_now(self) -> str:
        # Milliseconds: runs are ordered by their start, and a resumed cell can start
        # within the second its interrupted attempt did.
        return self.now().isoformat(timespec="milliseconds")

    def new_id(self) -> str:
        return self.now().strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)


@dataclass
class RunResult:
    run_id: str
    server: str
    variant: str
    repetition: int
    status: str
    summary: RunSummary = field(default_factory=RunSummary)
    error: str | None = None
