"""How many runs a cell each expected finding needs to be decided (reproduced or not,
not inconclusive) in 19 of 20 repeats of the experiment, from its measured noise.

From stored verdicts of one experiment run once or more (its run sets): per finding
(name, server, variant) the values its runs measured, each with its 95% interval where
it had one. Its spread is the standard deviation of those values across runs where
there are two or more (the run-to-run noise, which includes the within-run one); with
one value it is that value's own interval (within-run only: a floor, and said so), and
never less than the runs' typical within-run interval (what one run a cell gets); with
neither it cannot be planned. Two or three run sets estimate a spread roughly: the
advice is an order of magnitude, not a promise. A repeat over n runs pools them, so its estimate
varies by spread / sqrt(n) and its 95% interval reaches 1.96 of those each side. It is
decided when the interval does not reach the nearest bound, which happens in 95% of
repeats when the distance d from the mean to that bound is at least (1.96 + 1.645) x
spread / sqrt(n), i.e. n >= (3.605 x spread / d)^2. A finding that needs more than
``OUT_OF_PROPORTION`` runs a cell is marked so: it belongs in the scenario as
``inconclusive_by_design``, with these numbers.
"""
from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..store import Finding, StoredRun

Z_INTERVAL, Z_REPEATS = 1.96, 1.645  # a 95% interval; decided in 19 of 20 repeats
OUT_OF_PROPORTION = 20  # runs a cell


@dataclass
class Plan:
    name: str
    server: str
    variant: str
    values: list[float]
    bound: float | None  # the one nearest the values' mean
    spread: float | None
    spread_from: str  # "runs", "within-run interval" or ""
    runs_needed: int | None  # None: no spread to plan from, or the mean sits on the bound
    by_design: bool

    @property
    def advice(self) -> str:
        if not self.values:
            return "no value measured"
        if self.spread is None:
            return "one value, no interval: run the experiment again to measure its spread"
        if self.runs_needed is None:
            return "the mean sits on the bound: no number of runs decides it"
        floor = " at least" if self.spread_from != "runs" else ""
        if self.runs_needed > OUT_OF_PROPORTION:
            return (f"needs{floor} {self.runs_needed} runs a cell: out of proportion, "
                    "inconclusive by design")
        if self.runs_needed <= 1:
            return "one run a cell decides it" + (" (within-run spread only)" if floor else "")
        return f"needs{floor} {self.runs_needed} runs a cell"


def _nearest_bound(x: Finding, mean: float) -> float | None:
    bounds = [b for b in (x.min, x.max) if b is not None]
    return min(bounds, key=lambda b: abs(b - mean)) if bounds else None


def runs_to_decide(spread: float, distance: float) -> int | None:
    """Runs a cell for a 95% interval to clear a bound ``distance`` from the mean in 19
    of 20 repeats, at a run-to-run ``spread`` (None: the mean is on the bound)."""
    if distance <= 0:
        return None
    return max(1, math.ceil(((Z_INTERVAL + Z_REPEATS) * spread / distance) ** 2))


def _spread(values: list[float], intervals: list[list[float]]) -> tuple[float | None, str]:
    """The larger of the run-to-run spread and the typical within-run one (a run's own
    interval is what one run a cell gets), and which it was."""
    between = statistics.stdev(values) if len(values) >= 2 else None
    within = statistics.median((hi - lo) / (2 * Z_INTERVAL) for lo, hi in intervals) \
        if intervals and values else None
    if between is None and within is None:
        return None, ""
    if within is None or (between is not None and between >= within):
        return between, "runs"
    return within, "within-run interval"


def plan_one(verdicts: list[Finding]) -> Plan:
    """One finding's plan from its per-run verdicts (across run sets)."""
    first = verdicts[0]
    values = [float(x.value) for x in verdicts if x.value is not None]
    mean = statistics.fmean(values) if values else math.nan
    bound = _nearest_bound(first, mean) if values else None
    spread, source = _spread(values, [x.ci95 for x in verdicts if x.ci95])
    needed = None
    if spread is not None and bound is not None:
        needed = runs_to_decide(spread, abs(mean - bound))
    return Plan(first.name, first.server, first.variant, values,
                bound, spread, source, needed, bool(first.own.get("by_design")))


def plan(verdicts: Iterable[tuple[str, StoredRun, Finding]]) -> list[Plan]:
    """Each finding among these (run set, run, verdict) triples (one experiment, any
    number of its run sets), planned. Pooled verdicts are left out (their runs' own are
    what varies); a finding across variants, stored with each run of its cell, counts
    once a run set."""
    by: dict[tuple[str, str, str], list[Finding]] = {}
    seen: set[tuple[str, str, str, str]] = set()
    for run_set, r, x in verdicts:
        key = (x.name, x.server or r.server, x.variant or r.variant)
        if x.pooled or (x.own.get("baseline_variant") and (run_set, *key) in seen):
            continue
        seen.add((run_set, *key))
        by.setdefault(key, []).append(x)
    return [plan_one(v) for _, v in sorted(by.items())]


def rows(plans: list[Plan]) -> list[dict[str, Any]]:
    """The plans as table rows."""
    return [{"finding": p.name[:60], "server": p.server, "variant": p.variant,
             "values": ", ".join(f"{v:.3g}" for v in p.values),
             "bound": None if p.bound is None else f"{p.bound:g}",
             "spread": None if p.spread is None else f"{p.spread:.3g}",
             "from": p.spread_from or "-", "advice": p.advice
             + (" (marked inconclusive by design)" if p.by_design else "")}
            for p in plans]
