"""One expected finding as judged and stored with a run: its value and interval, the
bounds it was held against, the outcome, and the fields of its own kind (its phase,
series, statistic, baseline, whether it pools a cell's runs ...).

Stored as one flat JSON object, the fields of its kind beside the common ones, as it
always was; findings stored before there were three outcomes have only ``reproduced``,
and ones stored earlier still lack the fields added since (``metric``, ``runs``,
``server``, ``variant``): they read with those empty. How a finding is judged is
``harness/stats/verdict.py``.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ..jsonvalue import Json, JsonDict, number

__all__ = ["BY_DESIGN", "INCONCLUSIVE", "NOT_REPRODUCED", "OUTCOMES", "REPRODUCED",
           "Finding", "Outcome", "RunStat"]


class Outcome(StrEnum):
    """A finding's three values, stored and printed as their words."""

    REPRODUCED = "reproduced"
    NOT_REPRODUCED = "not reproduced"
    INCONCLUSIVE = "inconclusive"


REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE = (Outcome.REPRODUCED, Outcome.NOT_REPRODUCED,
                                            Outcome.INCONCLUSIVE)
OUTCOMES = tuple(Outcome)
BY_DESIGN = "inconclusive by design: "

# The common fields, in the order they are stored; the rest of a stored finding is its
# kind's own (``own``).
_COMMON = ("name", "metric", "value", "min", "max", "outcome", "reproduced", "ci95", "runs",
           "why_not", "server", "variant")


@dataclass
class Finding:
    name: str
    outcome: Outcome
    value: float | None = None
    ci95: list[float] | None = None  # its 95% interval, where it has one
    min: float | None = None  # the bounds it was held against
    max: float | None = None
    metric: str = ""
    runs: int = 1
    why_not: str | None = None  # why there is no value, or why it is inconclusive
    server: str = ""
    variant: str = ""
    own: dict[str, Any] = field(default_factory=dict)  # its kind's: phase, series ...

    @property
    def reproduced(self) -> bool:
        return self.outcome == REPRODUCED

    @property
    def pooled(self) -> bool:
        """Whether it pools the runs of its cell (one finding for all of them)."""
        return bool(self.own.get("pooled"))

    @property
    def by_design(self) -> str | None:
        """Why it is inconclusive by design (None: it is not); findings stored before the
        field said so only in ``why_not``."""
        return self.own.get("by_design") or (self.why_not or "").partition(BY_DESIGN)[2] \
            or None

    def to_json(self) -> JsonDict:
        common = {k: getattr(self, k) for k in _COMMON}
        return {**common, **self.own}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Finding:
        own = {k: v for k, v in d.items() if k not in _COMMON}
        outcome = Outcome(d.get("outcome") or (REPRODUCED if d.get("reproduced")
                                               else NOT_REPRODUCED))
        return cls(name=str(d.get("name", "")), outcome=outcome, value=d.get("value"),
                   ci95=d.get("ci95"), min=d.get("min"), max=d.get("max"),
                   metric=d.get("metric") or "", runs=int(d.get("runs") or 1),
                   why_not=d.get("why_not"), server=d.get("server") or "",
                   variant=d.get("variant") or "", own=own)


@dataclass(frozen=True)
class RunStat:
    """The statistic one run kept for a run-set finding (a ``baseline_variant``
    comparison of series): its value over the run's window, and its 95% interval."""

    value: float | None
    ci95: list[float] | None = None

    def to_json(self) -> JsonDict:
        return {"value": self.value, "ci95": self.ci95}

    @classmethod
    def from_json(cls, d: Json) -> RunStat:
        """As stored; a run stored before there were intervals kept the bare value."""
        if isinstance(d, Mapping):
            ci = d.get("ci95")
            return cls(number(d.get("value")),
                       [float(x) for x in ci if isinstance(x, int | float)]
                       if isinstance(ci, list) else None)
        return cls(number(d))
