"""``harness compare --measure instructions``: each side's mysqld under a counter
(callgrind), a fixed number of transactions a window, instructions per transaction
judged as the windows come (analysis/counted.py).

The design follows the options, as the time verdict does: options that all change at
run time and settle at once are switched by SET GLOBAL inside one lifetime (quads
ABBA or BAAB at random, a short settle run after each switch, counted but not judged);
any other (a static option, one slow to settle, a side that leaves an option to the
default the other sets) by restarts from the same data, one lifetime a unit, each with
a warm-up run first. The data are loaded once, natively (loading under the counter
would take minutes), then the server runs under callgrind until the comparison ends.

A count does not follow the host's noise, so no measurement lock is taken: a counted
comparison may run beside another benchmark (its wall time swings, its count does not).
"""
from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .. import formats
from ..analysis import counted as judge
from ..analysis.counted import ClassVerdict, CountedVerdict, FunctionMove, Window
from ..analysis.switchback import schedule
from ..progress import Progress
from ..server.mycnf import Value
from ..store import Store
from . import switchback
from .counted_plan import CountedPlan, plan
from .counted_session import CountedSession, SwitchRefused
from .request import CompareRequest

MAX_QUADS = 60
PER_LIFETIME = 2  # judged windows a lifetime (restarts)


@dataclass
class CountedResult:
    """What a counted comparison measured and decided."""

    run_set: str
    run_id: str
    plan: CountedPlan
    windows: list[Window]
    verdict: CountedVerdict
    moved: list[FunctionMove]
    counter: str  # the counter's version (valgrind-3.19.0, perf version 6.1 ...)
    hardware: str  # what perf's hardware counter answered
    notes: list[str] = field(default_factory=list)
    # what each side's mysqld was given to run under the counter (A's, B's)
    server_options: list[dict[str, Value]] = field(default_factory=list)
    minutes: float = 0.0
    classes: list[ClassVerdict] = field(default_factory=list)  # TPC-C's types, each

    def to_json(self) -> dict[str, Any]:
        p = self.plan
        return {"format": formats.COUNTED_COMPARE.marker(), "run_set": self.run_set,
                "run_id": self.run_id, "measure": "instructions",
                "counter": {"name": p.counter.name, "version": self.counter,
                            "threads": p.counter.threads, "hardware": self.hardware},
                "server": p.server, "baseline": p.names[0], "candidate": p.names[1],
                "design": p.design, "events_per_window": p.events,
                "test": p.probe.name, "options_that_differ": {
                    k: list(v) for k, v in p.diff.items()},
                "counter_server_options": [{k: str(v) for k, v in o.items()}
                                           for o in self.server_options],
                **self.verdict.to_json(), "minutes": self.minutes,
                "moved": [m.to_json() for m in self.moved],
                "weights": p.probe.weights(),
                "classes": [c.to_json() for c in self.classes],
                "windows": [w.to_json() for w in self.windows], "notes": self.notes}


def counted_compare(req: CompareRequest, store: Store, band: float) -> CountedResult:
    """Run the counted comparison ``req`` asks for, to its verdict."""
    p = plan(req, band)
    each = ("" if len(p.probe.classes) < 2 else
            ", a connection a transaction type: " + ", ".join(
                f"{n:,} {c}" for c, n in p.probe.events(p.events).items()))
    req.note(f"measure: instructions per transaction, counted by {p.counter.name} on "
             f"{p.server}, {p.events:,} transactions a window{each}, 1 client thread "
             f"({p.probe.name})")
    run_set = datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)
    s = CountedSession(p, store, Progress(quiet=req.quiet))
    s.open_run(run_set)
    result, error, status = None, None, "ok"
    try:
        s.provision()
        if p.dynamic and not p.upgrade and not _switchback(s, req):
            p.dynamic = False
        if not p.dynamic:
            _restarts(s)
        result = _result(s, run_set, req)
        return result
    except BaseException as e:
        error = str(e) or type(e).__name__
        status = "failed" if isinstance(e, Exception) else "interrupted"  # Ctrl-C, SIGTERM
        raise
    finally:
        s.close(result.to_json() if result is not None else None, status, error)


def _switchback(s: CountedSession, req: CompareRequest) -> bool:
    """Quads in one lifetime until the rule decides; False (nothing judged) when the
    server refuses a switch, tried both ways before any window: the options are
    static, restarts follow."""
    p = s.p
    start = "B" if switchback.started_with(p.diff) else "A"
    s.start(start)
    try:
        s.switch("A" if start == "B" else "B")
        s.switch(start)
    except SwitchRefused as e:
        req.note(f"design: restarts (the server refused the switch: {e})")
        return False
    s.window(start, p.events, judged=False)  # a warm-up: the first is higher
    for k in range(1, MAX_QUADS + 1):
        for side in schedule(4, s.rng):
            if side != s.side:
                s.switch(side)
                s.window(side, max(p.events // 10, 1), judged=False)
            s.window(side, p.events, judged=True)
        if _look(s, k, by_lifetime=False):
            break
    return True


def _restarts(s: CountedSession) -> None:
    """Quads of lifetimes, each a restart with its side's options, a warm-up run and
    PER_LIFETIME judged windows, until the rule decides."""
    p = s.p
    for k in range(1, MAX_QUADS + 1):
        for side in schedule(4, s.rng):
            s.start(side)
            s.window(side, p.events, judged=False)  # a warm-up
            for _ in range(PER_LIFETIME):
                s.window(side, p.events, judged=True)
        if _look(s, k, by_lifetime=True):
            break


def _look(s: CountedSession, k: int, by_lifetime: bool) -> bool:
    """Look ``k``: True when it decided, or another quad would not fit the budget."""
    got = judge.look(judge.mixed(s.windows, s.p.probe.weights()), k, by_lifetime,
                     s.p.alpha, s.p.band)
    if got is not None:
        s.looks.append(got)
        s.progress.log("  " + got.text())
        if got.verdict:
            return True
    spent = time.monotonic() - s.t0
    return spent + spent / k > s.p.budget_s


def _result(s: CountedSession, run_set: str, req: CompareRequest) -> CountedResult:
    p = s.p
    by_lifetime = not p.dynamic
    v = judge.verdict(judge.mixed(s.windows, p.probe.weights()), s.looks, by_lifetime,
                      p.alpha, p.band)
    per_side = [sum(w.transactions for w in s.windows if w.judged and w.side == x)
                for x in "AB"]
    base, cand = ({f: n / max(per_side[i], 1) for f, n in s.fns[i].items()} for i in (0, 1))
    total = v.per_tx[0] if v.per_tx else 1.0
    assert s.rec is not None
    return CountedResult(run_set, s.rec.run_id, p, s.windows, v,
                         judge.moved(base, cand, total), p.counter.version(),
                         p.hardware, list(req.notes), [s.needs[x] for x in "AB"],
                         (time.monotonic() - s.t0) / 60,
                         judge.by_class(s.windows, p.probe.classes, len(s.looks), by_lifetime,
                                        p.alpha, p.band))
