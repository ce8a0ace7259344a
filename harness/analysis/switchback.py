"""Switchback: A and B alternate on one running server, and the verdict comes from
adjacent windows paired.

For options that change at run time (SET GLOBAL), one run of the workload is cut into
windows of equal length, and each window sets A or B at its start. The windows come
in pairs, alternately A then B and B then A (ABBA ABBA ...), so a slow drift of the
host (a neighbour, the page cache filling, thermal state) adds to both sides of a pair
alike and a linear drift cancels over two pairs. Each window loses its first seconds
after a switch (the settle time, measured from the data: :func:`settle_seconds`), and
gives one value per metric: the median of its per-second tps, or of its per-second p95
latency. Each pair gives the log of B over A, and each ABBA quad (two adjacent pairs)
their mean: the unit of the test. Seconds are correlated, so adjacent windows are alike
and so are the pairs that share a boundary (B B in ABBA, A A between quads): a t test
on single pairs called A against A different 6-9% of the time at alpha 5% on
correlated seconds, and did so 8.5% on this machine. On quads, with their variance
inflated for what correlation is left between neighbours ((1 + r) / (1 - r), r their
lag-1 autocorrelation, clipped to [0, 0.5]), simulated AR(1) seconds at correlations
0.6-0.95 came out at 3.9-5.2% (tests/unit/test_switchback.py). The quads' mean, its t
interval and t test make the verdict, with the same rules as interleaved runs
(analysis/compare.py): better or worse when the test, the interval and the noise
threshold all say so.

Reads a stored run's events and series; the driver only builds the windows
(harness/switchback.py).
"""
from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .compare import Comparison, Limits, Metric, MetricVerdict, _decide
from .power import lag1

EVENT_PREFIX = "switchback-"  # config events: switchback-<window>-<A|B>
MIN_QUADS = 3  # ABBA quads (12 windows) before a verdict
MAX_R = 0.5  # the neighbours' correlation the variance is inflated for, at most


def schedule(windows: int) -> list[str]:
    """The side of each window: pairs AB, BA, AB, ... (an even number of windows)."""
    return [side for i in range(windows // 2) for side in (("A", "B") if i % 2 == 0
                                                           else ("B", "A"))]


@dataclass
class Window:
    index: int
    side: str  # A or B
    start: float  # run clock, when its SET GLOBAL took
    end: float
    switched: bool  # the side differs from the window before


def windows_of(events: Sequence[dict[str, Any]], end: float) -> list[Window]:
    """The windows a switchback run made, from its config events (the last ends at
    ``end``, the measured part's end). A window whose SET GLOBAL failed is an error
    of the run, not a window: the caller sees the run failed."""
    marks = sorted((e for e in events if e["kind"] == "config"
                    and str(e["name"]).startswith(EVENT_PREFIX)), key=lambda e: e["t"])
    out: list[Window] = []
    for i, e in enumerate(marks):
        _, idx, side = str(e["name"]).rsplit("-", 2)
        stop = marks[i + 1]["t"] if i + 1 < len(marks) else end
        out.append(Window(int(idx), side, float(e["t"]), float(stop),
                          switched=bool(out) and out[-1].side != side))
    return out


def refusal(events: Sequence[dict[str, Any]]) -> str | None:
    """The server's words when it refused a window's SET GLOBAL (a static option)."""
    for e in events:
        if e["kind"] == "config" and str(e["name"]).startswith(EVENT_PREFIX) and \
                not (e.get("detail") or {}).get("ok", True):
            return str((e.get("detail") or {}).get("error") or "SET GLOBAL refused")
    return None


def _inside(t: np.ndarray, w: Window, skip: float) -> np.ndarray:
    # an interval reported at t covers (t - 1, t]: whole seconds inside the window
    return (t - 1.0 >= w.start + skip - 1e-6) & (t <= w.end + 1e-6)


def settle_seconds(t: np.ndarray, v: np.ndarray, wins: Sequence[Window]) -> int:
    """Seconds after a switch until the metric has settled, read from the data: each
    second after a switch as a deviation from its window's own level (the median of
    its second half), averaged over the switches to B minus the switches to A (a drift
    of the host moves both alike and cancels); settled at the first second where that
    difference is within twice its standard error. At least 1 (the second the switch
    fell in), at most half a window."""
    switched = [w for w in wins if w.switched]
    width = int(min((w.end - w.start for w in wins), default=0))
    half = width // 2
    devs: dict[str, list[np.ndarray]] = {"A": [], "B": []}
    for w in switched:
        inside = v[_inside(t, w, 0.0)]
        level = float(np.median(inside[len(inside) // 2:])) if len(inside) >= 4 else 0.0
        if level and len(inside) > half:
            devs[w.side].append(inside[: half + 1] / level - 1)
    if width < 4 or not (devs["A"] and devs["B"]):
        return 1
    a, b = np.array(devs["A"]), np.array(devs["B"])
    late = np.concatenate([a[:, half // 2:], b[:, half // 2:]]).ravel()
    se = float(np.std(late)) * math.sqrt(1 / len(a) + 1 / len(b))
    for s in range(half + 1):
        if abs(float(b[:, s].mean() - a[:, s].mean())) <= 2 * se:
            return max(1, s)
    return max(1, half)


def window_values(t: np.ndarray, v: np.ndarray, wins: Sequence[Window], settle: int
                  ) -> list[tuple[Window, float]]:
    """Each window's median after its settle seconds (the whole window when its side
    did not change)."""
    out = []
    for w in wins:
        xs = v[_inside(t, w, settle if w.switched or w.index == 0 else 0.0)]
        if len(xs):
            out.append((w, float(np.median(xs))))
    return out


def pairs(values: Sequence[tuple[Window, float]]) -> list[tuple[float, float]]:
    """(A, B) of each pair of adjacent windows (windows 0-1, 2-3, ...)."""
    by_index = {w.index: (w.side, x) for w, x in values}
    out = []
    for i in range(0, max(by_index, default=-1) + 1, 2):
        if i in by_index and i + 1 in by_index:
            sides = dict([by_index[i], by_index[i + 1]])
            if set(sides) == {"A", "B"}:
                out.append((sides["A"], sides["B"]))
    return out


def quads(logs: Sequence[float]) -> list[float]:
    """The mean log of each ABBA quad: pairs 0-1, 2-3, ... (an odd last pair left out)."""
    return [(logs[i] + logs[i + 1]) / 2 for i in range(0, len(logs) - 1, 2)]


def inflation(xs: Sequence[float]) -> float:
    """How much more the mean of ``xs`` varies than independent values' would, were
    neighbours correlated as their lag-1 autocorrelation says (clipped to [0, MAX_R])."""
    r = min(max(lag1(xs), 0.0), MAX_R)
    return (1 + r) / (1 - r)


def judge(metric: Metric, paired: Sequence[tuple[float, float]],
          limits: Limits | None = None) -> MetricVerdict:
    """The verdict from paired windows: B over A, with a t interval and a t test on the
    ABBA quads' mean logs (their variance inflated for their neighbours' correlation)."""
    from scipy import stats

    lim = limits or Limits()
    a, b = [x for x, _ in paired], [y for _, y in paired]
    v = MetricVerdict(metric.name, metric.higher_is_better, a, b)
    if a:
        v.baseline_median, v.candidate_median = statistics.median(a), statistics.median(b)
    q = quads([math.log(y / x) for x, y in paired if x > 0 and y > 0])
    if len(q) < MIN_QUADS:
        v.why = (f"too few window pairs ({len(paired)}; at least {2 * MIN_QUADS}: "
                 f"{MIN_QUADS} ABBA quads): no verdict")
        return v
    mean = statistics.fmean(q)
    se = statistics.stdev(q) / math.sqrt(len(q)) * math.sqrt(inflation(q))
    v.ratio = math.exp(mean)
    if se == 0:
        v.ci95, v.p_value = (v.ratio, v.ratio), 1.0 if mean == 0 else 0.0
    else:
        df = len(q) - 1
        t = float(stats.t.ppf(0.975, df))
        v.ci95 = (math.exp(mean - t * se), math.exp(mean + t * se))
        v.p_value = float(2 * stats.t.sf(abs(mean) / se, df))
    return _decide(v, metric, lim, [])


METRICS = (Metric("tps", True), Metric("p95_ms", False))


def compare_run(store: Any, run: dict[str, Any], baseline: str, candidate: str,
                limits: Limits | None = None) -> Comparison:
    """The comparison a stored switchback run makes: tps and p95 per window paired."""
    from .. import workloads

    c = Comparison(baseline, candidate, run["server"], [run["run_id"]], [run["run_id"]],
                   limits=limits or Limits(), design="switchback")
    window = run["summary"].main_window
    tps, lat = workloads.throughput(store, run["run_id"]), workloads.latency(store,
                                                                           run["run_id"])
    if run["status"] != "ok" or not window or not tps:
        why = f"the switchback run {run['run_id']} is {run['status']}: " + (
            refusal(store.events(run["run_id"])) or run["error"] or "")
        c.metrics = [MetricVerdict(m.name, m.higher_is_better, [], [], why=why.strip(": "))
                     for m in METRICS]
        return c
    wins = windows_of(store.events(run["run_id"]), window[1])
    settle = settle_seconds(tps[0].t, tps[0].v, wins)
    c.metrics = [judge(m, pairs(window_values(s.t, s.v, wins, settle)), limits)
                 for m, s in zip(METRICS, (tps[0], lat[0] if lat else None), strict=True)
                 if s is not None]
    c.design += (f": {len(wins)} windows of {_width(wins):.0f} s, each side's first "
                 f"{settle} s after a switch left out (measured settle time)")
    return c


def _width(wins: Sequence[Window]) -> float:
    return statistics.median(w.end - w.start for w in wins) if wins else 0.0
