"""Phase windows, the per-phase summary and expected findings, from a run's data.

A phase is a side load's window (its ``phase_start`` to ``phase_end`` events). The main
workload's measured intervals (after warmup) are split into those inside the window and
those outside every side-load window: "sysbench alone" versus "sysbench during the dump".
An interval reported at time t covers (t - 1 s, t]; it is inside a window when they
overlap by half the interval, or by half the window when the window is shorter (a
sub-second dump still gets the interval it mostly fell in).
"""
from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .. import workloads
from ..collectors.buffer_pool_index import INDEX_METRIC
from ..scenario import Expectation
from ..stats.interval import bounds_text, share_below_ci, stored_ci, window_ratio_ci
from ..stats.verdict import NOT_REPRODUCED, verdict
from ..store import Event, Finding, RunReader

Interval = dict[str, float]  # {"t": run-clock seconds, "tps": ..., "latency_ms": ...}
# (t, pages) per "schema.table.index"
IndexSeries = dict[str, list[tuple[float, float]]]


@dataclass
class Window:
    name: str
    start: float
    end: float

    @property
    def seconds(self) -> float:
        return self.end - self.start

    def holds(self, t: float, width: float = 1.0) -> bool:
        overlap = min(t, self.end) - max(t - width, self.start)
        return overlap > 0 and overlap >= min(width, self.seconds) / 2


def windows(events: Iterable[Event], skip: Sequence[str] = ("warmup",)
            ) -> list[Window]:
    """Side-load windows from a run's events, in start order (an unended one is left out)."""
    starts: dict[str, float] = {}
    out: list[Window] = []
    for e in sorted(events, key=lambda e: e.t):
        if e.name in skip:
            continue
        if e.kind == "phase_start":
            starts[e.name] = e.t
        elif e.kind == "phase_end" and e.name in starts:
            out.append(Window(e.name, starts.pop(e.name), e.t))
    return sorted(out, key=lambda w: w.start)


def _median(xs: list[float]) -> float | None:
    return round(statistics.median(xs), 3) if xs else None


def _p(xs: list[float], q: float) -> float | None:
    if not xs:
        return None
    s = sorted(xs)
    return round(s[min(len(s) - 1, int(q * len(s)))], 3)


def index_mb(series: IndexSeries, index: str, w: Window, page_bytes: int
             ) -> tuple[float | None, float | None]:
    """(MB of ``index`` in the pool at the last sample before ``w``, minimum MB in ``w``)."""
    pts = series.get(index, [])
    before = [v for t, v in pts if t <= w.start]
    during = [v for t, v in pts if w.start <= t <= w.end]
    mb = page_bytes / 1048576
    return (round(before[-1] * mb, 2) if before else None,
            round(min(during) * mb, 2) if during else None)


def _p95(intervals: list[Interval]) -> float | None:
    """The 95th percentile of the intervals' latency (those that have one)."""
    return _p([iv["latency_ms"] for iv in intervals if iv.get("latency_ms") is not None],
              0.95)


def phase_summary(intervals: list[Interval], wins: list[Window], series: IndexSeries,
                  watch: Sequence[str], page_bytes: int) -> list[dict[str, Any]]:
    """Per phase: its seconds and the main workload inside vs outside any phase."""
    outside = [iv for iv in intervals if not any(w.holds(iv["t"]) for w in wins)]
    out = []
    for w in wins:
        inside = [iv for iv in intervals if w.holds(iv["t"])]
        row: dict[str, Any] = {
            "phase": w.name, "start_s": round(w.start, 3), "end_s": round(w.end, 3),
            "seconds": round(w.seconds, 3),
            "main_intervals_inside": len(inside), "main_intervals_outside": len(outside),
            "tps_median_inside": _median([iv["tps"] for iv in inside]),
            "tps_median_outside": _median([iv["tps"] for iv in outside]),
            "p95_ms_inside": _p95(inside), "p95_ms_outside": _p95(outside),
        }
        row["tps_ratio"] = _ratio(row["tps_median_inside"], row["tps_median_outside"])
        row["p95_ratio"] = _ratio(row["p95_ms_inside"], row["p95_ms_outside"])
        row["tps_ratio_ci95"] = _ratio_ci(inside, outside, "tps", "median")
        row["p95_ratio_ci95"] = _ratio_ci(inside, outside, "latency_ms", "p95")
        row["tps_collapsed_share"], row["tps_collapsed_share_ci95"] = _collapsed(inside,
                                                                               outside)
        row["indexes"] = {}
        for ix in watch:
            before, low = index_mb(series, ix, w, page_bytes)
            row["indexes"][ix] = {"mb_before": before, "mb_min_during": low,
                                  "ratio": _ratio(low, before)}
        out.append(row)
    return out


# Counters whose rate inside a window explains what the LRU did (buffer_pool_stats).
BP = "mysql_info_schema_innodb_buffer_pool_stats_"
DIAGNOSTIC_COUNTERS = {
    "pages_read_per_s": BP + "number_pages_read_total",
    "pages_made_young_per_s": BP + "pages_made_young_total",
    "pages_not_made_young_per_s": BP + "pages_not_made_young_total",
}
OLD_PAGES = BP + "old_database_pages"
Points = list[tuple[float, float]]


def _span(pts: Points, w: Window) -> Points:
    """The samples covering ``w``: from the last one at or before its start to the first
    one at or after its end, so a phase shorter than the sampling interval still gets a
    rate (over at most one interval more on each side)."""
    pts = sorted(pts)
    lo = max((i for i, (t, _) in enumerate(pts) if t <= w.start), default=0)
    hi = min((i for i, (t, _) in enumerate(pts) if t >= w.end), default=len(pts) - 1)
    return pts[lo:hi + 1]


def _rate(pts: Points, w: Window) -> float | None:
    span = _span(pts, w)
    if len(span) < 2 or span[-1][0] <= span[0][0]:
        return None
    (t0, v0), (t1, v1) = span[0], span[-1]
    return round((v1 - v0) / (t1 - t0), 2)


def diagnostics(w: Window, counters: dict[str, Points], side_bytes: Points | None
                ) -> dict[str, float | None]:
    """Rates inside ``w``: pages read / made young / not made young per second, the side
    load's MB/s, and how long a page read in this window stays in the LRU's old sublist
    (old-sublist pages / pages read per second) - the time innodb_old_blocks_time must
    be well under to protect anything."""
    out: dict[str, float | None] = {k: _rate(counters.get(m, []), w)
                                    for k, m in DIAGNOSTIC_COUNTERS.items()}
    rate = _rate(side_bytes or [], w)
    out["side_load_mb_per_s"] = None if rate is None else round(rate / 1e6, 2)
    old = [v for _, v in _span(counters.get(OLD_PAGES, []), w)]
    reads = out["pages_read_per_s"]
    out["old_sublist_pages_median"] = _median(old)
    out["old_sublist_residence_s"] = round(statistics.median(old) / reads, 2) \
        if old and reads else None
    return out


def _ratio_ci(inside: list[Interval], outside: list[Interval], key: str, stat: str
              ) -> list[float] | None:
    """95% interval of ``stat`` of ``key`` inside the phase / outside every phase
    (blocks of seconds resampled on each side: harness/stats/interval.py)."""
    def points(ivs: list[Interval]) -> list[float]:
        return [iv[key] for iv in ivs if iv.get(key) is not None]
    ci = window_ratio_ci(points(inside), points(outside), stat)
    return stored_ci(ci)


# Below this share of its median rate outside every phase, the main workload has
# collapsed for that second (the side-load post: sysbench "drops by at least 10x").
COLLAPSED = 0.1


def _collapsed(inside: list[Interval], outside: list[Interval]
               ) -> tuple[float | None, list[float] | None]:
    """The share of the phase's seconds in which the main workload ran below a tenth
    of its median rate outside every phase, and its 95% interval. Unlike the ratio of
    medians, it does not flip when a collapse takes half the phase (the median of a
    phase half at full rate and half at 0 is either)."""
    ins = [iv["tps"] for iv in inside if iv.get("tps") is not None]
    out = [iv["tps"] for iv in outside if iv.get("tps") is not None]
    base = _median(out)
    if not ins or base is None:
        return None, None
    share = round(sum(x < COLLAPSED * base for x in ins) / len(ins), 4)
    ci = share_below_ci(ins, out, COLLAPSED)
    return share, stored_ci(ci)


def _ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return round(a / b, 4)


def evaluate(expectations: Sequence[Expectation], phases: list[dict[str, Any]],
             series: IndexSeries, page_bytes: int, server: str, variant: str
             ) -> list[Finding]:
    """Each expectation that applies to this run: its value and whether it held."""
    by_name = {p["phase"]: p for p in phases}
    out = []
    for e in expectations:
        if (e.variant and e.variant != variant) or (e.server and e.server != server) or \
                e.phase is None:
            continue  # not this run's, or not about phases (SSB flights)
        ph = by_name.get(e.phase)
        value, interval, why = (None, None, f"phase {e.phase} did not run") if ph is None \
            else _phase_value(e, ph, by_name, series, page_bytes)
        out.append(verdict(e, value, why, server, variant, interval=interval, phase=e.phase,
                           index=e.index))
    return out


def _phase_value(e: Expectation, ph: dict[str, Any], by_name: dict[str, dict[str, Any]],
                 series: IndexSeries, page_bytes: int
                 ) -> tuple[float | None, Any, str | None]:
    """A phase finding's value in phase ``ph``, its interval and why there is none."""
    if e.metric in ("tps_ratio", "p95_ratio", "tps_collapsed_share"):
        value = ph.get(e.metric)
        return value, ph.get(f"{e.metric}_ci95"), \
            None if value is not None else "no main-workload interval inside or outside " \
            "the phase"
    if e.metric == "index_mb_ratio":
        assert e.index is not None
        before, low = index_mb(series, e.index, Window(str(e.phase), ph["start_s"],
                                                       ph["end_s"]), page_bytes)
        value = _ratio(low, before)
        return value, None, None if value is not None else \
            f"no buffer_pool_index samples of {e.index} before and during the phase"
    if e.metric != "phase_seconds_ratio":
        return None, None, None
    base = by_name.get(e.baseline_phase or "")
    if base is None:
        return None, None, f"phase {e.baseline_phase} did not run"
    return _ratio(ph["seconds"], base["seconds"]), None, None


def describe(x: Finding) -> str:
    """One verdict as a line: what was measured, its value and 95% interval, the bound,
    and the outcome (three-valued: harness/stats/verdict.py)."""
    bounds = " and ".join(b for b in (
        f">= {x.min}" if x.min is not None else "",
        f"<= {x.max}" if x.max is not None else "") if b)
    tail = f" ({x.why_not})" if x.why_not else ""
    return (f"{x.name}: {_what(x)} = {_value(x)} (expected {bounds}): "
            f"{'NOT reproduced' if x.outcome == NOT_REPRODUCED else x.outcome}{tail}")


def _value(x: Finding) -> str:
    if x.value is None:
        return "n/a"
    across = x.own.get("baseline_variant") or x.own.get("baseline_server")
    over = f" over {x.runs} runs" + (" a side" if across else "") if x.runs > 1 else \
        " (one run a side: within-run variation only)" if across and x.ci95 else ""
    if x.ci95:
        return f"{x.value:.3f} [95% CI {bounds_text(x.ci95)}]{over}"
    return f"{x.value:.3f} (one value{over}, no interval)"


def _what(x: Finding) -> str:
    what, own = x.metric, x.own
    if what == "series":
        w = own["window"] if isinstance(own["window"], str) else \
            f"main[{own['window'][0]:g}-{own['window'][1]:g}]"
        what = f"{own['stat']}({own['series']}, {w})"
        if own.get("baseline_variant"):
            what += f" {x.variant} / {own['baseline_variant']}"
        elif own.get("baseline_value") is not None:
            what += " / baseline window"
    if what == "server_ratio":
        what = f"tps at {own['threads']} thread(s), {x.server} / {own['baseline_server']}"
    if what == "server_cpu_ratio":
        what = (f"mysqld CPU per transaction at {own['threads']} thread(s), {x.server} / "
                f"{own['baseline_server']}")
    return what


def _stored_intervals(store: RunReader, run_id: str, events: list[Event]
                      ) -> list[dict[str, Any]]:
    """The main workload's intervals after its warmup, read back from its stored
    throughput and latency series."""
    warm_end = max([e.t for e in events if e.kind == "phase_end"
                    and e.name == "warmup"], default=0.0)
    tps = workloads.throughput(store, run_id)
    lat = workloads.latency(store, run_id)
    lat_at = dict(lat[0].points()) if lat else {}
    return [{"t": t, "tps": v, "latency_ms": lat_at.get(t)}
            for t, v in (tps[0].points() if tps else []) if t > warm_end + 0.5]


def stored_phases(store: RunReader, run_id: str, intervals: list[dict[str, Any]] | None,
                  watch: list[str], page_bytes: int
                  ) -> tuple[list[dict[str, Any]], dict[str, list[tuple[float, float]]]]:
    """The phase summary of a stored run (and the watched indexes' series). Without
    ``intervals``, the main workload's are read back from its stored samples."""
    events = store.events(run_id)
    wins = windows(events)
    if intervals is None:
        intervals = _stored_intervals(store, run_id, events)
    series = index_series(store, run_id, watch)
    rows = phase_summary(intervals, wins, series, watch, page_bytes)
    counters = {x.metric: x.points()
                for x in store.series(run_id, source="buffer_pool_stats")
                if x.metric in (*DIAGNOSTIC_COUNTERS.values(), OLD_PAGES)}
    moved = {x.labels.get("name"): x.points()
             for x in store.series(run_id, source="sideload", metric="bytes_total")}
    for row, w in zip(rows, wins, strict=True):
        row["diagnostics"] = diagnostics(w, counters, moved.get(w.name))
    return rows, series


def index_series(store: RunReader, run_id: str, watch: list[str]) -> dict[str, list[tuple[float,
                                                                                       float]]]:
    """Pages of each watched ``schema.table.index`` at every buffer pool walk; an index
    absent from a walk had no page in the pool then (0, not a gap)."""
    if not watch:
        return {}
    found = store.series(run_id, source="buffer_pool_index", metric=INDEX_METRIC)
    ticks = sorted({float(t) for s in found for t in s.t})
    by_key = {f"{s.labels.get('schema')}.{s.labels.get('name')}.{s.labels.get('index')}": s
              for s in found}
    out = {}
    for w in watch:
        s = by_key.get(w)
        have = dict(zip(map(float, s.t), map(float, s.v), strict=True)) if s is not None else {}
        out[w] = [(t, have.get(t, 0.0)) for t in ticks]
    return out
