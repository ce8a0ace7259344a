"""The figures a run's summary reports, as the workloads declare them (each plugin's
``figures``), and a counted run's (instructions per transaction): one table that the
run summary, ``harness runs``, the HTML report and ``harness regress`` all read."""
from __future__ import annotations

from ..model import Figure
from ..store import RunSummary
from ..workloads import DEFAULT_KIND, PLUGINS, of_summary
from ..workloads.base import COUNTED_FIGURE

__all__ = ["FIGURES", "Figure", "HEADLINES", "REGRESS_FLOORS", "REGRESS_METRICS", "SUMMARY_KEYS",
           "headline_of"]

_ORDER = [PLUGINS[DEFAULT_KIND], *(p for k, p in PLUGINS.items() if k != DEFAULT_KIND)]
FIGURES = (*(f for p in _ORDER for f in p.figures), COUNTED_FIGURE)
SUMMARY_KEYS = tuple(dict.fromkeys(f.key for f in FIGURES))
HEADLINES = tuple(f for f in FIGURES if f.headline)
REGRESS_METRICS = {f.regress: (f.key, f.higher_is_better) for f in FIGURES if f.regress}
REGRESS_FLOORS = {f.regress: f.floor for f in FIGURES if f.regress}


def headline_of(summary: RunSummary) -> Figure:
    """The headline figure of the workload that made this summary (else the first the
    summary has, else the default workload's)."""
    plugin = of_summary(summary)
    mine = [f for f in plugin.figures if f.headline] if plugin else []
    return mine[0] if mine else next(
        (f for f in HEADLINES if summary.figure(f.key) is not None), HEADLINES[0])
