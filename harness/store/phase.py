"""One side load's phase of a run, as the run's summary keeps it: its window, the main
workload inside it against outside every phase, the watched indexes in the pool, and
the counters that explain what the buffer pool did (analysis/phases.py makes it)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from ..jsonvalue import JsonDict

__all__ = ["Diagnostics", "IndexInPool", "Phase"]

Interval = list[float] | None  # a 95% interval as stored: [low, high]


@dataclass(frozen=True)
class IndexInPool:
    """A watched index's MB in the pool before the phase and at its minimum in it."""

    mb_before: float | None = None
    mb_min_during: float | None = None
    ratio: float | None = None


@dataclass(frozen=True)
class Diagnostics:
    """Rates inside the phase: pages read, made young and not, the side load's MB/s,
    the old sublist's pages and how long a page read in the phase stays in it."""

    pages_read_per_s: float | None = None
    pages_made_young_per_s: float | None = None
    pages_not_made_young_per_s: float | None = None
    side_load_mb_per_s: float | None = None
    old_sublist_pages_median: float | None = None
    old_sublist_residence_s: float | None = None


@dataclass
class Phase:
    phase: str  # the side load's name
    start_s: float = 0.0  # on the run clock
    end_s: float = 0.0
    seconds: float = 0.0
    main_intervals_inside: int = 0
    main_intervals_outside: int = 0
    tps_median_inside: float | None = None
    tps_median_outside: float | None = None
    p95_ms_inside: float | None = None
    p95_ms_outside: float | None = None
    tps_ratio: float | None = None  # inside over outside
    p95_ratio: float | None = None
    tps_ratio_ci95: Interval = None
    p95_ratio_ci95: Interval = None
    # the share of the phase's seconds the main workload ran below a tenth of its rate
    tps_collapsed_share: float | None = None
    tps_collapsed_share_ci95: Interval = None
    indexes: dict[str, IndexInPool] = field(default_factory=dict)
    diagnostics: Diagnostics | None = None
    # read from a store written before the collapsed share or the diagnostics were
    # kept: the phase report works them out again from the run's samples
    partial: bool = field(default=False, compare=False)

    def ratio(self, metric: str) -> tuple[float | None, Interval]:
        """A phase finding's ratio (tps_ratio, p95_ratio, tps_collapsed_share) and its
        interval."""
        return {"tps_ratio": (self.tps_ratio, self.tps_ratio_ci95),
                "p95_ratio": (self.p95_ratio, self.p95_ratio_ci95),
                "tps_collapsed_share": (self.tps_collapsed_share,
                                        self.tps_collapsed_share_ci95)}[metric]

    def to_json(self) -> JsonDict:
        out = asdict(self)
        del out["partial"]
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Phase:
        """A stored phase, of any age: a field it lacks takes its default, and a phase
        without the collapsed share or the diagnostics is marked ``partial``."""
        known = {f.name for f in fields(cls)} - {"indexes", "diagnostics", "partial"}
        diag = d.get("diagnostics")
        return cls(**{k: v for k, v in d.items() if k in known},
                   indexes={ix: IndexInPool(**v) for ix, v in (d.get("indexes") or {}).items()},
                   diagnostics=Diagnostics(**diag) if diag else None,
                   partial=diag is None or "tps_collapsed_share" not in d)
