"""One expected finding judged: the verdict every kind of finding stores (phases,
series, a workload's own, servers against a baseline).

Three outcomes, from the finding's 95% interval where it has one:

- ``reproduced``: the whole interval lies within [min, max];
- ``not reproduced``: the whole interval lies outside it;
- ``inconclusive``: the interval straddles a bound - this data cannot say, and another
  run may well come out on the other side.

A finding marked ``inconclusive_by_design`` (what this machine cannot decide in
reasonable time, and why) is measured and shown, and always inconclusive.

A finding without an interval (one observation: an index's low point, a phase's
length, a window with too few points, a run-set finding with fewer than three runs a
side) is judged on its value alone, and says so. A finding without a value (its phase
did not run, no samples) is not reproduced, with the reason; one whose runs failed is not
judged (inconclusive, "not judged: ..."): a failed run says nothing of the server.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from ..store import Finding, StoredRun
from ..store.finding import BY_DESIGN, INCONCLUSIVE, NOT_REPRODUCED, OUTCOMES, REPRODUCED, Outcome
from .interval import stored_ci

__all__ = ["BY_DESIGN", "INCONCLUSIVE", "NOT_JUDGED", "NOT_REPRODUCED", "OUTCOMES",
           "REPRODUCED", "outcome", "verdict", "why_missing"]


class Bounds(Protocol):
    """What a finding is held against (an Expectation's bounds)."""

    @property
    def min(self) -> float | None: ...
    @property
    def max(self) -> float | None: ...


class Expected(Bounds, Protocol):
    """An expected finding as a verdict reads it (scenario/expectation.py's Expectation)."""

    @property
    def name(self) -> str: ...
    @property
    def metric(self) -> str: ...


def _inside(e: Bounds, x: float) -> bool:
    return (e.min is None or x >= e.min) and (e.max is None or x <= e.max)


def outcome(e: Bounds, value: float | None, interval: Sequence[float] | None
            ) -> Outcome:
    """``e`` (with ``min``/``max``) judged at ``value`` and its interval."""
    if value is None:
        return NOT_REPRODUCED
    if interval is None:
        return REPRODUCED if _inside(e, value) else NOT_REPRODUCED
    lo, hi = interval
    if _inside(e, lo) and _inside(e, hi):
        return REPRODUCED
    if (e.min is not None and hi < e.min) or (e.max is not None and lo > e.max):
        return NOT_REPRODUCED
    return INCONCLUSIVE


def verdict(e: Expected, value: float | None, why: str | None, server: str, variant: str,
            interval: Sequence[float] | None = None, runs: int = 1,
            **fields: Any) -> Finding:
    """``e`` (an Expectation) judged at ``value`` with its 95% ``interval`` (or None)
    over ``runs`` runs; ``why`` says why there is no value; ``fields`` are the finding's
    own (its phase, series, ...)."""
    said = INCONCLUSIVE if value is None and (why or "").startswith(NOT_JUDGED) else \
        outcome(e, value, interval)
    by_design = getattr(e, "inconclusive_by_design", None)
    if by_design and value is not None:
        said, why = INCONCLUSIVE, f"{BY_DESIGN}{by_design}"
        fields["by_design"] = by_design
    return Finding(name=e.name, metric=e.metric, outcome=said,
                   value=None if value is None else round(value, 4), min=e.min, max=e.max,
                   ci95=stored_ci(interval),
                   runs=runs, why_not=why, server=server, variant=variant, own=fields)

# A finding whose runs failed was not judged: inconclusive (never "not reproduced", which
# would say the server behaved otherwise), its reason starting with this.
NOT_JUDGED = "not judged: "


def why_missing(runs: Sequence[StoredRun], server: str, variant: str | None,
                otherwise: str) -> str:
    """Why a run-set finding has no value on ``server``: "not judged" when the cell
    (``variant`` None: any variant) has runs and none of them ended ok, else
    ``otherwise``."""
    cell = [r for r in runs if r.server == server
            and (variant is None or r.variant == variant)]
    if cell and not any(r.status == "ok" for r in cell):
        which = f"{variant} on {server}" if variant is not None else server
        return f"{NOT_JUDGED}every run of {which} failed"
    return otherwise
