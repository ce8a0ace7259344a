"""The figures a run's summary reports, whatever its workload: one table that the run
summary, ``harness runs``, the HTML report and ``harness regress`` all read."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Figure:
    key: str  # the run summary's key
    label: str  # a column or axis name
    higher_is_better: bool
    headline: bool = False  # the one figure a workload is compared by
    regress: str | None = None  # its name as a harness regress metric


FIGURES = (
    Figure("tps_median", "tps", True, headline=True, regress="tps"),
    Figure("latency_p95_ms", "p95 ms", False, regress="p95_ms"),
    Figure("cold_s", "SSB cold flight s", False),
    Figure("warm_median_s", "SSB warm flight s", False, headline=True, regress="ssb_warm_s"),
    Figure("rows_per_s_median", "rows/s", True, headline=True, regress="rows_per_s"),
    Figure("batch_p95_ms", "batch p95 ms", False),
)
SUMMARY_KEYS = tuple(f.key for f in FIGURES)
HEADLINES = tuple(f for f in FIGURES if f.headline)
REGRESS_METRICS = {f.regress: (f.key, f.higher_is_better) for f in FIGURES if f.regress}


def headline_of(summary: dict[str, object]) -> Figure:
    """The workload's headline figure in this summary (tps when it has none)."""
    return next((f for f in HEADLINES if summary.get(f.key) is not None), HEADLINES[0])
