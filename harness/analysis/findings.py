"""Expected findings over any stored series (``metric: series``).

A statistic of one series (``series: SOURCE/METRIC``, ``labels`` to pick one of several)
over a window of a run: the main workload's measured part (``main``), a side load's
phase (its name), or a slice of the main workload given as fractions (``[0.75, 1.0]``
is its last quarter). The value is that statistic; with ``baseline_window`` it is the
ratio to the same statistic over the other window of the same run; with
``baseline_variant`` it is the median over the runs of ``variant`` divided by the
median over the runs of ``baseline_variant`` on the same server (judged when the run
set ends, like SSB's flight_ratio).

Statistics: ``median``, ``mean``, ``min``, ``max``, ``last`` of the points in the window;
``delta`` (last minus first) and ``rate`` (delta per second) for counters.

A median or a mean carries a 95% interval from blocks of the window's points (and of
the baseline window's: harness/stats/interval.py). Across variants, each run's value and
interval are kept, and the ratio's interval comes from the runs resampled, then each
run's value drawn within its own interval: with one run a side it holds only the
within-run variation, from three runs on the run-to-run variation too. The other
statistics rest on one or two points: their findings get an interval from three runs a
side, and are judged on their value alone before that.
"""
from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..scenario import Expectation
from ..stats.interval import ROW_STATS, Interval, sd_of, stated_ratio_ci, value_ci, window_ratio_ci
from ..stats.verdict import NOT_JUDGED, why_missing
from ..stats.verdict import verdict as judged
from ..store import Finding, RunReader, RunSummary, StoredRun
from ..store.finding import RunStat
from .phases import Window, windows
from .pooled import pooled_verdicts

STATS = ("median", "mean", "min", "max", "last", "delta", "rate")


def window_of(spec: str | list[float], main: Window, phases: list[Window]) -> Window | None:
    if isinstance(spec, list):
        a, b = spec
        return Window(f"main[{a:g}-{b:g}]", main.start + a * main.seconds,
                      main.start + b * main.seconds)
    if spec == "main":
        return main
    return next((w for w in phases if w.name == spec), None)


def stat(t: NDArray[Any], v: NDArray[Any], w: Window, how: str) -> float | None:
    inside = (t >= w.start) & (t <= w.end)
    if how in ("delta", "rate"):
        # From the last sample at or before the window to the first at or after it.
        lo = np.flatnonzero(t <= w.start)
        hi = np.flatnonzero(t >= w.end)
        i0 = int(lo[-1]) if lo.size else 0
        i1 = int(hi[0]) if hi.size else len(t) - 1
        if i1 <= i0:
            return None
        d = float(v[i1] - v[i0])
        return d if how == "delta" else d / float(t[i1] - t[i0])
    xs = v[inside]
    if not xs.size:
        return None
    if how == "last":
        return float(xs[-1])
    return float(getattr(np, how)(xs))


def _series(store: RunReader, run_id: str, e: Expectation) -> tuple[Any, str | None]:
    assert e.series is not None
    source, _, metric = e.series.rpartition("/")
    found = store.series(run_id, source=source or None, metric=metric)
    if e.labels is not None:
        found = [s for s in found if all((s.labels or {}).get(k) == v
                                         for k, v in e.labels.items())]
    if len(found) != 1:
        return None, _not_one(e, found)
    return found[0], None


def _not_one(e: Expectation, found: list[Any]) -> str:
    """Why ``found`` is not the one series ``e`` names: none, or which labels pick."""
    what = "no" if not found else f"{len(found)}"
    labels = sorted(str(s.labels) for s in found)
    return (f"{what} stored series {e.series}"
            + (f" labels {e.labels}" if e.labels is not None else "")
            + (f" (give labels: one of {labels})" if len(found) > 1 else ""))


def _points(t: NDArray[Any], v: NDArray[Any], w: Window) -> NDArray[Any]:
    return v[(t >= w.start) & (t <= w.end)]


def _interval(s: Any, w: Window, bw: Window | None, how: str) -> Interval | None:
    """The 95% interval of a median or mean over ``w`` (over ``bw`` too: of the ratio),
    from blocks of the window's points; the other statistics rest on one or two points
    and get none."""
    if how not in ROW_STATS:
        return None
    if bw is None:
        return value_ci(_points(s.t, s.v, w), how)
    return window_ratio_ci(_points(s.t, s.v, w), _points(s.t, s.v, bw), how)


def run_values(store: RunReader, run_id: str, e: Expectation, main: Window,
               phases: list[Window]
               ) -> tuple[float | None, float | None, Interval | None, str | None]:
    """(statistic over ``window``, over ``baseline_window`` or None, the interval of the
    statistic or of their ratio, why not); ``phases``: the run's phase windows."""
    s, why = _series(store, run_id, e)
    if s is None:
        return None, None, None, why
    w = window_of(e.window, main, phases)
    if w is None:
        return None, None, None, f"phase {e.window} did not run"
    value = stat(s.t, s.v, w, e.stat)
    base, bw = None, None
    if e.baseline_window is not None:
        bw = window_of(e.baseline_window, main, phases)
        if bw is None:
            return value, None, None, f"phase {e.baseline_window} did not run"
        base = stat(s.t, s.v, bw, e.stat)
    if value is None or (e.baseline_window is not None and base is None):
        return value, base, None, f"no samples of {e.series} in the window"
    return value, base, _interval(s, w, bw, e.stat), None


def verdict(e: Expectation, value: float | None, why: str | None, server: str,
            variant: str, **numbers: Any) -> Finding:
    return judged(e, value, why, server, variant, series=e.series, stat=e.stat,
                  window=e.window, **numbers)


def _applies(e: Expectation, server: str) -> bool:
    return e.metric == "series" and (e.server is None or e.server == server)


def evaluate_run(store: RunReader, run_id: str, expectations: Sequence[Expectation],
                 main: Window, server: str, variant: str
                 ) -> tuple[list[Finding], dict[str, RunStat]]:
    """Per-run verdicts (no baseline_variant) and the numbers the run set needs later:
    ({expectation name: statistic} of this run, stored in its summary)."""
    out: list[Finding] = []
    keep: dict[str, RunStat] = {}
    mine = [e for e in expectations if _applies(e, server) and _of_variant(e, variant)]
    phases = windows(store.events(run_id)) if mine else []
    for e in mine:
        if e.baseline_variant is not None:
            value, _, ci, _ = run_values(store, run_id, e, main, phases)
            keep[e.name] = RunStat(value, [round(x, 6) for x in ci] if ci else None)
        else:
            out.append(_run_finding(store, run_id, e, main, phases, server, variant))
    return out, keep


def _of_variant(e: Expectation, variant: str) -> bool:
    """Whether a run of ``variant`` has a part in ``e``: as one of the two variants it
    compares, or as a variant it judges (every variant when it names none)."""
    if e.baseline_variant:
        return variant in (e.variant, e.baseline_variant)
    return not e.variant or e.variant == variant


def _run_finding(store: RunReader, run_id: str, e: Expectation, main: Window,
                 phases: list[Window], server: str, variant: str) -> Finding:
    """A per-run finding: the statistic over the window, or its ratio to the baseline
    window's."""
    value, base, ci, why = run_values(store, run_id, e, main, phases)
    numbers: dict[str, Any] = {"window_value": value}
    if e.baseline_window is not None:
        numbers["baseline_value"] = base
        value = value / base if value is not None and base else None
        if why is None and value is None:  # no ratio to hold against the bounds
            why = f"{NOT_JUDGED}{e.stat} over {e.baseline_window} is 0: no ratio"
    return verdict(e, value, why, server, variant, interval=ci, **numbers)


def _kept(runs: list[StoredRun], server: str, variant: str | None, name: str
          ) -> tuple[list[float], list[float]]:
    """The statistic each run of ``variant`` on ``server`` kept for expectation
    ``name``, and its standard error (0 without an interval; runs stored before there
    were intervals kept the bare value)."""
    values, sds = [], []
    for r in runs:
        if r.server != server or r.variant != variant:
            continue
        x = r.summary.series_stats.get(name)
        if x is not None and x.value is not None:
            values.append(x.value)
            sds.append(sd_of(x.ci95))
    return values, sds


def evaluate_run_set(expectations: Sequence[Expectation], runs: list[StoredRun]
                     ) -> dict[str, list[Finding]]:
    """baseline_variant findings: {run_id: verdicts to store with that run}."""
    out: dict[str, list[Finding]] = {}
    for e in (e for e in expectations if e.metric == "series" and e.baseline_variant):
        for server in sorted({r.server for r in runs if _applies(e, r.server)}):
            x = _variant_finding(e, runs, server)
            for r in (r for r in runs if r.server == server and r.variant == e.variant):
                out.setdefault(r.run_id, []).append(x)
    return out


def _variant_finding(e: Expectation, runs: list[StoredRun], server: str) -> Finding:
    """One baseline_variant finding on ``server``: the median over the runs of the
    variant's statistic over the baseline variant's, with its interval."""
    ok = [r for r in runs if r.status == "ok"]
    (mine, mine_sd), (base, base_sd) = (_kept(ok, server, v, e.name) for v in (
        e.variant, e.baseline_variant))
    value, why = None, None
    if mine and base and statistics.median(base):
        value = statistics.median(mine) / statistics.median(base)
    elif mine and base:  # no ratio to hold against the bounds
        why = (f"{NOT_JUDGED}{e.baseline_variant}'s {e.stat} is 0 (against "
               f"{statistics.median(mine):.4g}): no ratio")
    else:
        lacking = e.variant if not mine else e.baseline_variant
        why = why_missing(runs, server, lacking,
                          f"no {e.series} {e.stat} of {lacking} on {server}")
    numbers = {"variant_value": statistics.median(mine) if mine else None,
               "baseline_value": statistics.median(base) if base else None,
               "baseline_variant": e.baseline_variant}
    return verdict(e, value, why, server, str(e.variant),
                   interval=stated_ratio_ci((base, base_sd), (mine, mine_sd)),
                   runs=min(len(mine), len(base)), **numbers)


def rejudge(store: RunReader, runs: list[StoredRun], expectations: Sequence[Expectation]
            ) -> list[tuple[StoredRun, Finding]]:
    """``metric: series`` expectations judged afresh on stored runs (say, after a
    threshold changed in the scenario): (run, verdict) pairs; nothing is stored."""
    out: list[tuple[StoredRun, Finding]] = []
    fresh = []
    for r in runs:
        summary = r.summary
        if r.status == "ok" and summary.main_window:
            found, keep = evaluate_run(store, r.run_id, expectations,
                                       Window("main", *summary.main_window),
                                       r.server, r.variant)
            out += [(r, x) for x in found]
            summary = summary.but(series_stats=keep)
        fresh.append(r.but(summary=summary))
    by_id = {r.run_id: r for r in fresh}
    for run_id, xs in evaluate_run_set(expectations, fresh).items():
        out += [(by_id[run_id], x) for x in xs]
    return out + _pooled(runs, out)


def _pooled(runs: list[StoredRun], judged: list[tuple[StoredRun, Finding]]
            ) -> list[tuple[StoredRun, Finding]]:
    """The rejudged per-run findings pooled over each cell's runs, each with the cell's
    first run."""
    mine: dict[str, list[Finding]] = {}
    for r, x in judged:
        mine.setdefault(r.run_id, []).append(x)
    first: dict[tuple[str, str], StoredRun] = {}
    for r in runs:
        first.setdefault((r.server, r.variant), r)
    rs = [r.but(summary=RunSummary(expectations=mine.get(r.run_id, []))) for r in runs]
    return [(first[(x.server, x.variant)], x) for x in pooled_verdicts(rs)]
