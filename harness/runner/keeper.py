"""One run's record on its way into the results store.

Every sample and event goes into the run's spool as it is taken (store/spool.py) and
into the store as the store can take it. A store that fails while the run measures does
not stop the run: its writes are tried again at each hand-over, and past the writer's
memory bound the spool alone holds the samples. At the run's end each write to the store
is tried again with a growing pause for up to ``PATIENCE_S`` (a store restarting, a
network blink); a store still away then leaves the run in its spool, whose end line says
how the run ended, and the next harness run (or ``harness store replay-spool``) stores it.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy.exc import DBAPIError, DisconnectionError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from ..errors import StoreError
from ..jsonvalue import JsonDict
from ..store import RunRecord, Store
from ..store import replay as replaying
from ..store import spool as spooling
from ..store.db import SampleWriter, why_store_failed

T = TypeVar("T")

# How long the end of a run waits for a store that is away (HARNESS_STORE_PATIENCE_S).
PATIENCE_S = 120.0
PAUSES = (1.0, 2.0, 4.0, 8.0, 15.0)  # between tries, the last repeated


class StoreAway(StoreError):
    """The store could not take a run within the patience: the run is in its spool."""


def patience() -> float:
    try:
        return max(0.0, float(os.environ.get("HARNESS_STORE_PATIENCE_S", PATIENCE_S)))
    except ValueError:
        return PATIENCE_S


def transient(e: BaseException) -> bool:
    """A store error worth trying again for the patience: the store or the way to it
    went away (a restart, a network blink), is locked, read-only, out of space or
    failing its I/O for now; not a refusal of what was written (an integrity error, a
    bad statement: a bug, said at once)."""
    cause = e.__cause__ if isinstance(e, StoreError) and e.__cause__ is not None else e
    if isinstance(cause, (OperationalError, DisconnectionError, PoolTimeout)):
        return True
    return isinstance(cause, DBAPIError) and cause.connection_invalidated


class Keeper:
    """The spool, the sample writer and the store's patience of one run."""

    def __init__(self, store: Store, rec: RunRecord, say: Callable[[str], None]):
        self.store = store
        self.run_id = rec.run_id
        self.say = say
        self.patience_s = patience()
        self.spool = spooling.Spool(Path(rec.artifacts or "."), rec, store.identity())
        self.writer: SampleWriter = store.writer(rec.run_id, spool=self.spool)
        self.events_behind: str | None = None  # why an event missed the store
        self.spool.on_failure = self._spool_failed
        self.spool.on_stuck = self._spool_failed
        self.spool.on_behind = lambda why: say(
            f"  warning: {why}; what the run measures waits in memory (up to "
            f"{self.spool.max_behind >> 20} MB) and is written once it can be")
        self.spool.on_caught_up = lambda s: say(
            f"  the run's spool is written again: {s:.0f} s behind, nothing lost")
        if self.spool.behind:  # refused from its first line, before the hooks were set
            self.spool.on_behind(self.spool.why_behind)

    def event(self, t: float, kind: str, name: str, detail: JsonDict | None) -> None:
        self.spool.event(t, kind, name, detail)
        self.spool.flush()  # an event is in the spool before the store has it
        if self.events_behind is not None:
            return  # into the store from the spool, at the end
        try:
            self.store.add_event(self.run_id, t, kind, name, detail)
        except StoreError as e:
            if not self.spool.holding:  # nothing keeps what the run measures:
                self.writer.fail(f"{e}; and {self.spool.failed or 'its spool is stuck'}")
                return
            self.events_behind = str(e)
            self.say(f"  the results store did not take an event ({e}); the run goes on, "
                     f"its events and samples kept in {self.spool.path}")

    def _spool_failed(self, why: str) -> None:
        """The spool cannot write (past its memory bound, or for longer than its
        patience): with the store in trouble too, nothing keeps what the run measures,
        and it stops with both causes."""
        trouble = self.events_behind or self.writer.store_trouble()
        if trouble is not None:
            self.writer.fail(f"{trouble}; and {why}")

    def patiently(self, what: str, fn: Callable[..., T], *args: Any, **kw: Any) -> T:
        """``fn(*args, **kw)``, tried again while the store is away, for up to the
        patience; StoreAway once it is spent."""
        deadline = time.monotonic() + self.patience_s
        for n in range(1_000_000):
            try:
                return fn(*args, **kw)
            except (StoreError, OperationalError, DisconnectionError, PoolTimeout) as e:
                pause = PAUSES[min(n, len(PAUSES) - 1)]
                if not transient(e) or time.monotonic() + pause > deadline:
                    raise self._away(what, e) from e
                self.say(f"  {_cause(self.store, e)}: {what} is tried again in {pause:.0f} "
                         f"s, for up to {self.patience_s:.0f} s" if n == 0 else
                         f"  the results store is still away: tried again in {pause:.0f} s")
                time.sleep(pause)
        raise AssertionError("unreachable")

    def _away(self, what: str, e: BaseException) -> StoreError:
        if not transient(e):
            return e if isinstance(e, StoreError) else StoreError(_cause(self.store, e))
        return StoreAway(f"{what}: {_cause(self.store, e)}; run {self.run_id}'s "
                         f"{self.writer.count} samples and its events are kept in "
                         f"{self.spool.path}: the next harness run stores them, or "
                         "'harness store replay-spool' once the store is back")

    def close_samples(self) -> None:
        """Every sample and event of the run in the store (waited for)."""
        self.spool.flush()
        if self.writer.deferred is not None or self.events_behind is not None:
            self.say(f"  the run's samples and events go into the store from its spool "
                     f"({self.writer.deferred or self.events_behind})")
            self.patiently("storing the run's samples from its spool",
                           self._from_spool)
        else:
            self.patiently("storing the run's samples", self.writer.flush)
        self.writer.close()

    def _from_spool(self) -> int:
        self.writer.let_go(self.writer.deferred or "events the store missed")
        self.spool.flush()
        return replaying.samples_into(self.store, spooling.read(self.spool.path))

    def end(self, end: spooling.RunEnd) -> None:
        """The run's end: into the spool first (before anything that can fail), then
        the store (waited for); the spool goes once the store holds the whole run."""
        self.spool.end(end)
        self.patiently("storing the run's end", self.store.update_run, self.run_id,
                       status=end.status, ended_at=end.ended_at, summary=end.summary,
                       details=end.details, error=end.error)
        self.spool.discard()

    def close_quietly(self) -> str | None:
        """What the store could not take, if anything (never raises: the run is failing
        already, and its own cause must be kept)."""
        try:
            self.close_samples()
        except StoreError as e:
            return str(e)
        return self.writer.failed


def _cause(store: Store, e: BaseException) -> str:
    if isinstance(e, StoreError):
        return str(e)
    return why_store_failed(store, e)
