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

from .. import workloads
from ..collectors.buffer_pool_index import INDEX_METRIC
from ..scenario import Expectation
from ..stats.interval import bounds_text, share_below_ci, stored_ci, window_ratio_ci
from ..stats.verdict import NOT_REPRODUCED, verdict
from ..store import Event, Finding, RunReader
from ..store.phase import Diagnostics, IndexInPool, Phase
from ..workloads.base import Tick

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


def _latencies(ticks: list[Tick]) -> list[float]:
    return [iv.latency_ms for iv in ticks if iv.latency_ms is not None]


def phase_summary(intervals: list[Tick], wins: list[Window], series: IndexSeries,
                  watch: Sequence[str], page_bytes: int) -> list[Phase]:
    """Per phase: its seconds and the main workload inside vs outside any phase."""
    outside = [iv for iv in intervals if not any(w.holds(iv.t) for w in wins)]
    return [_phase(w, [iv for iv in intervals if w.holds(iv.t)], outside, series, watch,
                   page_bytes) for w in wins]


def _phase(w: Window, inside: list[Tick], outside: list[Tick], series: IndexSeries,
           watch: Sequence[str], page_bytes: int) -> Phase:
    tps_in, tps_out = _median([iv.tps for iv in inside]), _median([iv.tps for iv in outside])
    p95_in, p95_out = _p(_latencies(inside), 0.95), _p(_latencies(outside), 0.95)
    share, share_ci = _collapsed(inside, outside)
    return Phase(
        w.name, round(w.start, 3), round(w.end, 3), round(w.seconds, 3),
        main_intervals_inside=len(inside), main_intervals_outside=len(outside),
        tps_median_inside=tps_in, tps_median_outside=tps_out,
        p95_ms_inside=p95_in, p95_ms_outside=p95_out,
        tps_ratio=_ratio(tps_in, tps_out), p95_ratio=_ratio(p95_in, p95_out),
        tps_ratio_ci95=stored_ci(window_ratio_ci(
            [iv.tps for iv in inside], [iv.tps for iv in outside], "median")),
        p95_ratio_ci95=stored_ci(window_ratio_ci(_latencies(inside), _latencies(outside),
                                                 "p95")),
        tps_collapsed_share=share, tps_collapsed_share_ci95=share_ci,
        indexes={ix: _in_pool(*index_mb(series, ix, w, page_bytes)) for ix in watch})


def _in_pool(before: float | None, low: float | None) -> IndexInPool:
    return IndexInPool(before, low, _ratio(low, before))


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
                ) -> Diagnostics:
    """Rates inside ``w``: pages read / made young / not made young per second, the side
    load's MB/s, and how long a page read in this window stays in the LRU's old sublist
    (old-sublist pages / pages read per second) - the time innodb_old_blocks_time must
    be well under to protect anything."""
    def rate(counter: str) -> float | None:
        return _rate(counters.get(DIAGNOSTIC_COUNTERS[counter], []), w)
    side = _rate(side_bytes or [], w)
    old = [v for _, v in _span(counters.get(OLD_PAGES, []), w)]
    reads = rate("pages_read_per_s")
    return Diagnostics(
        pages_read_per_s=reads, pages_made_young_per_s=rate("pages_made_young_per_s"),
        pages_not_made_young_per_s=rate("pages_not_made_young_per_s"),
        side_load_mb_per_s=None if side is None else round(side / 1e6, 2),
        old_sublist_pages_median=_median(old),
        old_sublist_residence_s=round(statistics.median(old) / reads, 2)
        if old and reads else None)


# Below this share of its median rate outside every phase, the main workload has
# collapsed for that second (the side-load post: sysbench "drops by at least 10x").
COLLAPSED = 0.1


def _collapsed(inside: list[Tick], outside: list[Tick]
               ) -> tuple[float | None, list[float] | None]:
    """The share of the phase's seconds in which the main workload ran below a tenth
    of its median rate outside every phase, and its 95% interval. Unlike the ratio of
    medians, it does not flip when a collapse takes half the phase (the median of a
    phase half at full rate and half at 0 is either)."""
    ins = [iv.tps for iv in inside]
    out = [iv.tps for iv in outside]
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


def evaluate(expectations: Sequence[Expectation], phases: list[Phase],
             series: IndexSeries, page_bytes: int, server: str, variant: str
             ) -> list[Finding]:
    """Each expectation that applies to this run: its value and whether it held."""
    by_name = {p.phase: p for p in phases}
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


def _phase_value(e: Expectation, ph: Phase, by_name: dict[str, Phase],
                 series: IndexSeries, page_bytes: int
                 ) -> tuple[float | None, list[float] | None, str | None]:
    """A phase finding's value in phase ``ph``, its interval and why there is none."""
    if e.metric in ("tps_ratio", "p95_ratio", "tps_collapsed_share"):
        value, interval = ph.ratio(e.metric)
        return value, interval, \
            None if value is not None else "no main-workload interval inside or outside " \
            "the phase"
    if e.metric == "index_mb_ratio":
        assert e.index is not None
        before, low = index_mb(series, e.index, Window(str(e.phase), ph.start_s, ph.end_s),
                               page_bytes)
        value = _ratio(low, before)
        return value, None, None if value is not None else \
            f"no buffer_pool_index samples of {e.index} before and during the phase"
    if e.metric != "phase_seconds_ratio":
        return None, None, None
    base = by_name.get(e.baseline_phase or "")
    if base is None:
        return None, None, f"phase {e.baseline_phase} did not run"
    return _ratio(ph.seconds, base.seconds), None, None


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


def _stored_intervals(store: RunReader, run_id: str, events: list[Event]) -> list[Tick]:
    """The main workload's intervals after its warmup, read back from its stored
    throughput and latency series."""
    warm_end = max([e.t for e in events if e.kind == "phase_end"
                    and e.name == "warmup"], default=0.0)
    tps = workloads.throughput(store, run_id)
    lat = workloads.latency(store, run_id)
    lat_at = dict(lat[0].points()) if lat else {}
    return [Tick(t, v, lat_at.get(t))
            for t, v in (tps[0].points() if tps else []) if t > warm_end + 0.5]


def stored_phases(store: RunReader, run_id: str, intervals: list[Tick] | None,
                  watch: list[str], page_bytes: int
                  ) -> tuple[list[Phase], IndexSeries]:
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
        row.diagnostics = diagnostics(w, counters, moved.get(w.name))
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
