"""A published finding as a check over results: the metrics it may judge and how."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    Field,
    field_validator,
    model_validator,
)

from ..model import (
    Metric,
    Model,
    Name,
)
from ..workloads import PLUGINS

PHASE_METRICS = ("tps_ratio", "p95_ratio", "tps_collapsed_share", "index_mb_ratio",
                 "phase_seconds_ratio")
# The metrics workloads judge themselves, as their plugins declare them.
WORKLOAD_METRICS = {m.name: m for p in PLUGINS.values() for m in p.metrics}
METRIC_NAMES = (*PHASE_METRICS, "series", *WORKLOAD_METRICS)
# Fields only some metrics take.
METRIC_FIELDS = ("baseline_phase", "index", "baseline_variant", "baseline_server", "threads")


class Expectation(Model):
    """A published finding as a check over results (see docs/scenario-files.md).

    metric:
      tps_ratio       main median tps inside ``phase`` / outside any side-load phase
      p95_ratio       the same for the per-second p95 latency
      tps_collapsed_share  the share of ``phase``'s seconds in which the main workload
                      ran below a tenth of its median tps outside any side-load phase
      index_mb_ratio  MB of ``index`` in the pool: minimum during ``phase`` / last before
      phase_seconds_ratio  seconds of ``phase`` / seconds of ``baseline_phase``
      warm_cold_ratio      SSB: median warm flight seconds / the cold flight's, per run
      flight_ratio         SSB: median warm flight seconds of ``variant`` / of
                           ``baseline_variant`` on the same server, or on
                           ``baseline_server`` (over the run set)
      series               a statistic (``stat``) of any stored ``series`` over ``window``,
                           or its ratio to ``baseline_window`` or ``baseline_variant``
                           (harness/analysis/findings.py)
      server_ratio         sysbench: median tps at ``threads`` (default: the hold's) of
                           ``server`` / of ``baseline_server`` over the run set, with a
                           95% interval (harness/analysis/upgrade.py)
      server_cpu_ratio     mysqld's CPU per transaction at ``threads`` (user + system
                           over the seconds server_ratio reads, over their
                           transactions) of ``server`` / of ``baseline_server`` over
                           the run set, with a 95% interval from 2 runs a server
                           (harness/analysis/upgrade.py)
    """

    name: str = Field(min_length=1, max_length=200)
    metric: Literal[METRIC_NAMES]  # type: ignore[valid-type]
    phase: Name | None = None
    baseline_phase: Name | None = None
    index: str | None = None  # schema.table.index
    variant: Name | None = None  # every variant when left out
    baseline_variant: Name | None = None
    server: Name | None = None  # every server when left out
    baseline_server: Name | None = None  # metric: server_ratio, server_cpu_ratio
    threads: int | None = Field(None, ge=1)  # metric: server_(cpu_)ratio (default: the hold's)
    min: float | None = None
    max: float | None = None
    # metric: series
    series: str | None = Field(None, pattern=r"^([a-z_]+/)?[A-Za-z0-9_]+$")
    labels: dict[str, str] | None = None  # the series carrying these labels
    stat: Literal["median", "mean", "min", "max", "last", "delta", "rate"] = "median"
    window: Name | list[float] = "main"
    baseline_window: Name | list[float] | None = None
    scaled: bool = False  # min and max are sizes: harness run --scale multiplies them
    # Why this machine cannot decide the finding in reasonable time: it is measured and
    # shown, and always judged inconclusive (it never flips).
    inconclusive_by_design: str | None = Field(None, min_length=1, max_length=500)

    @field_validator("window", "baseline_window")
    @classmethod
    def _fractions(cls, v: Any) -> Any:
        if isinstance(v, list) and not (len(v) == 2 and 0 <= v[0] < v[1] <= 1):
            raise ValueError(f"{v}: a slice of the main workload is [from, to], fractions "
                             "with 0 <= from < to <= 1 (e.g. [0.75, 1.0])")
        return v

    @model_validator(mode="after")
    def _bounds(self) -> Expectation:
        if self.min is None and self.max is None:
            raise ValueError("give 'min', 'max' or both")
        if self.metric == "series":
            self._series_fields()
            return self
        extra = sorted(f for f in ("series", "labels", "baseline_window", "window", "stat")
                       if f in self.model_fields_set)
        if extra:
            raise ValueError(f"{', '.join(extra)}: for metric: series")
        if self.metric in PHASE_METRICS:
            self._phase_fields()
        else:
            self._workload_metric_fields(WORKLOAD_METRICS[self.metric])
        return self

    def _series_fields(self) -> None:
        if not self.series:
            raise ValueError("metric: series needs 'series: SOURCE/METRIC' (a stored "
                             "series, e.g. iibench/rows_per_s)")
        if self.baseline_window is not None and self.baseline_variant:
            raise ValueError("give baseline_window (same run) or baseline_variant "
                             "(other variant), not both")
        if self.baseline_variant and not self.variant:
            raise ValueError("baseline_variant needs 'variant'")

    def _phase_fields(self) -> None:
        self._only_fields_of(Metric(self.metric, "phases", needs=("phase",),
                                    allows=("baseline_phase", "index")))
        if self.metric == "index_mb_ratio" and (
                not self.index or self.index.count(".") != 2):
            raise ValueError("index_mb_ratio needs 'index: schema.table.index'")
        if self.metric == "phase_seconds_ratio" and not self.baseline_phase:
            raise ValueError("phase_seconds_ratio needs 'baseline_phase'")

    def _workload_metric_fields(self, m: Metric) -> None:
        if self.phase or self.baseline_phase:
            raise ValueError(f"{m.name} is about {m.about}, not phases: no 'phase'")
        self._only_fields_of(m)

    def _only_fields_of(self, m: Metric) -> None:
        """The fields ``m`` needs are given, and no field of another metric."""
        missing = [f for f in m.needs if not getattr(self, f)]
        if missing:
            raise ValueError(f"{m.name} needs " + " and ".join(f"'{f}'" for f in missing))
        for f in METRIC_FIELDS:
            if getattr(self, f) and f not in m.needs + m.allows:
                owners = sorted(x.name for x in WORKLOAD_METRICS.values()
                                if f in x.needs + x.allows)
                raise ValueError(f"'{f}' goes with metric: {' or '.join(owners) or 'series'}"
                                 f", not {m.name}")

