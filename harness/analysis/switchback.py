"""Switchback: A and B alternate on one running server, and the verdict comes from
adjacent windows paired.

For options that change at run time (SET GLOBAL), one run of the workload is cut into
windows of equal length, and each window sets A or B at its start. The windows come in
quads of two pairs, ABBA or BAAB, each quad's orientation drawn at random when the run
is planned: a slow drift of the host (a neighbour, the page cache filling, thermal
state) adds to both sides of a pair alike, and a linear drift cancels within a quad.
Each window loses its first seconds (the settle time after a switch, measured from the
data: :func:`settle_seconds`, and left out of every window alike), and gives one value
per metric: the median of its per-second tps, or of its per-second p95 latency. Each
pair gives the log of B over A, and each quad their mean: the unit of the test.

The test is the design's own: a randomisation test. Were A and B the same, the run's
seconds would have been what they were whichever orientation each quad drew, and
turning a quad round only flips the sign of its mean log. So the p-value is the share
of all 2^n sign patterns (or 20,000 drawn, past 14 quads) whose mean is at least as far
from 0 as the one observed, and the 95% interval is every shift the same test does not
reject. Its false-alarm rate is alpha by construction, however the seconds are
correlated: it rests on the coin, not on a model of the noise. A t test on quads with
their variance inflated for a lag-1 correlation (the test before) held on simulated
AR(1) seconds but called identical sides different in 8% of re-cuts of a real run whose
seconds kept a correlation of 0.37 at 160 s. The least p that n quads can give is
2 / 2^n, so a verdict at 5% needs at least 6 quads (24 windows), at 1% at least 8.
Better or worse needs the test, the interval and the noise threshold to agree, as for
interleaved runs (analysis/ab_verdict.py).

Reads a stored run's events and series; the driver only builds the windows
(harness/runner/switchback.py).
"""
from __future__ import annotations

import functools
import itertools
import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..store import Event, RunReader, StoredRun
from . import defaults, stalls
from .ab_verdict import CPU_PER_TX, Comparison, Limits, Metric, MetricVerdict, decide
from .counters import rate_between
from .moved import CPU, Found, Moved, Quantity, StoredSeries, from_zero_size, quantities, ranked

EVENT_PREFIX = "switchback-"  # config events: switchback-<window>-<A|B>
MIN_QUADS = 6  # quads before a verdict: the fewest whose least p (2 / 2^n) is under 5%
EXACT_QUADS = 14  # up to this many quads every sign pattern is counted; past it, drawn
DRAWS = 20_000  # sign patterns drawn past EXACT_QUADS (seeded: one answer per data)
# compare's default windows: 132 of 6 s (33 quads, 13.2 minutes). The host's noise here
# is slow (one thread's seconds still correlate 0.57 at 10 s apart), and a pair cancels
# more of it the shorter its windows (6 s found a 3% change in 90-96.5% of re-cuts
# where 10 s found 55.5-79%, at the same A/A rate). How many: 56 windows (5.6 minutes)
# found a 3% tps change in only 70.5-91% of re-cuts in a noisy hour, 132 in 94.5-95.5%
# with identical sides called different in 3.5-4.5%, so the default is 132; in an hour
# whose throughput swung 2x for minutes (2026-12-02) 132 found it in 45% (make
# bench-switchback; the figures and their dates in docs/ab-verdicts.md, "Window
# length"): no count reaches 90% in every hour here, so every comparison prints its
# reach. An option slow to settle is never
# switched (server/settle.py); one that takes longer than half a window (3 s) wants a
# longer --window-s. (The two figures live in defaults.py, which --help reads.)
WINDOW_S, WINDOWS = defaults.WINDOW_S, defaults.WINDOWS


def schedule(windows: int, rng: random.Random) -> list[str]:
    """The side of each window: quads of ABBA or BAAB, each orientation drawn from
    ``rng`` (whole quads only: ``windows`` is cut down to a multiple of 4)."""
    return [side for _ in range(windows // 4)
            for side in ("ABBA" if rng.random() < 0.5 else "BAAB")]


def least_p(quads: int) -> float:
    """The smallest p-value ``quads`` quads can give: all signs alike, either way."""
    return 2.0 / 2.0 ** quads


@dataclass
class Window:
    index: int
    side: str  # A or B
    start: float  # run clock, when its SET GLOBAL took
    end: float
    switched: bool  # the side differs from the window before


def windows_of(events: Sequence[Event], end: float) -> list[Window]:
    """The windows a switchback run made, from its config events (the last ends at
    ``end``, the measured part's end). A window whose SET GLOBAL failed is an error
    of the run, not a window: the caller sees the run failed."""
    marks = sorted((e for e in events if e.kind == "config"
                    and str(e.name).startswith(EVENT_PREFIX)), key=lambda e: e.t)
    out: list[Window] = []
    for i, e in enumerate(marks):
        _, idx, side = str(e.name).rsplit("-", 2)
        stop = marks[i + 1].t if i + 1 < len(marks) else end
        out.append(Window(int(idx), side, float(e.t), float(stop),
                          switched=bool(out) and out[-1].side != side))
    return out


def refusal(events: Sequence[Event]) -> str | None:
    """The server's words when it refused a window's SET GLOBAL (a static option)."""
    for e in events:
        if e.kind == "config" and str(e.name).startswith(EVENT_PREFIX) and \
                not e.detail.get("ok", True):
            return str(e.detail.get("error") or "SET GLOBAL refused")
    return None


SLACK = 0.1  # s: a switch lands this late in its second (SET GLOBAL's own time) and
# a series keeps its times to the millisecond; a second that far over an edge is inside


def seconds_in(t: NDArray[Any], w: Window, skip: float) -> NDArray[Any]:
    """Which of the seconds reported at ``t`` lie inside window ``w`` after its first
    ``skip`` seconds: an interval reported at t covers (t - 1, t], whole seconds only."""
    return (t - 1.0 >= w.start + skip - SLACK) & (t <= w.end + SLACK)


def settle_seconds(t: NDArray[Any], v: NDArray[Any], wins: Sequence[Window]) -> int:
    """Seconds after a switch until the metric has settled, read from the data: each
    second after a switch as a deviation from its window's own level (the median of
    its second half), averaged over the switches to B minus the switches to A (a drift
    of the host moves both alike and cancels); settled at the first second where that
    difference is within twice its standard error. At least 1 (the second the switch
    fell in), at most half a window."""
    width = int(min((w.end - w.start for w in wins), default=0))
    half = width // 2
    devs = _deviations(t, v, [w for w in wins if w.switched], half)
    if width < 4 or not (devs["A"] and devs["B"]):
        return 1
    a, b = np.array(devs["A"]), np.array(devs["B"])
    late = np.concatenate([a[:, half // 2:], b[:, half // 2:]]).ravel()
    se = float(np.std(late)) * math.sqrt(1 / len(a) + 1 / len(b))
    for s in range(half + 1):
        if abs(float(b[:, s].mean() - a[:, s].mean())) <= 2 * se:
            return max(1, s)
    return max(1, half)


def _deviations(t: NDArray[Any], v: NDArray[Any], switched: Sequence[Window], half: int
                ) -> dict[str, list[NDArray[Any]]]:
    """Per side, each switched window's first ``half + 1`` seconds as deviations from
    the window's own level (the median of its second half)."""
    devs: dict[str, list[NDArray[Any]]] = {"A": [], "B": []}
    for w in switched:
        inside = v[seconds_in(t, w, 0.0)]
        level = float(np.median(inside[len(inside) // 2:])) if len(inside) >= 4 else 0.0
        if level and len(inside) > half:
            devs[w.side].append(inside[: half + 1] / level - 1)
    return devs


def window_values(t: NDArray[Any], v: NDArray[Any], wins: Sequence[Window], settle: int,
                  keep: NDArray[Any] | None = None) -> list[tuple[Window, float]]:
    """Each window's median after its first ``settle`` seconds (of the seconds ``keep``
    marks, all by default; a window with none has no value). Every window loses them,
    switched or not, so a window's value does not depend on which side its neighbour
    drew (the randomisation test assumes it does not)."""
    out = []
    for w in wins:
        inside = seconds_in(t, w, settle)
        xs = v[inside if keep is None else inside & keep]
        if len(xs):
            out.append((w, float(np.median(xs))))
    return out


def pairs(values: Sequence[tuple[Window, float]]) -> list[tuple[float, float]]:
    """(A, B) of each pair of adjacent windows (windows 0-1, 2-3, ...), of whole quads
    only: a quad missing a window's value is left out whole, so the list's pairs 0-1,
    2-3, ... are always one quad's two (the unit its coin oriented)."""
    by_index = {w.index: (w.side, x) for w, x in values}
    out = []
    for q in range(0, max(by_index, default=-1) + 1, 4):
        two = [dict([by_index[i], by_index[i + 1]]) for i in (q, q + 2)
               if i in by_index and i + 1 in by_index]
        if len(two) == 2 and all(set(sides) == {"A", "B"} for sides in two):
            out += [(sides["A"], sides["B"]) for sides in two]
    return out


def quads(logs: Sequence[float]) -> list[float]:
    """The mean log of each quad: pairs 0-1, 2-3, ... (an odd last pair left out)."""
    return [(logs[i] + logs[i + 1]) / 2 for i in range(0, len(logs) - 1, 2)]


@functools.cache
def _signs(n: int) -> NDArray[Any]:
    """The orientations the test weighs ``n`` quads' signs by: all 2^n up to
    EXACT_QUADS, else DRAWS drawn with a fixed seed (the observed one first)."""
    if n <= EXACT_QUADS:
        out = np.array(list(itertools.product((1.0, -1.0), repeat=n)))
    else:
        out = np.random.default_rng(0).choice((-1.0, 1.0), size=(DRAWS, n))
        out[0] = 1.0
    out.setflags(write=False)
    return out


@functools.cache
def _sign_sums(n: int) -> NDArray[Any]:
    """Each orientation's sum of signs (what a shift of every quad moves its sum by)."""
    out: NDArray[Any] = _signs(n).sum(axis=1)
    out.setflags(write=False)
    return out


def flip_p(d: NDArray[Any]) -> float:
    """The randomisation test's two-sided p of the quads' mean log ``d``: the share
    of sign patterns whose mean is at least as far from 0."""
    return _flip_p_shifted(_signs(len(d)) @ d, float(d.sum()), len(d), 0.0)


def _flip_p_shifted(signed: NDArray[Any], total: float, n: int, shift: float) -> float:
    """flip_p of ``d - shift`` from ``signed`` = signs @ d and ``total`` = d.sum():
    the signs' product with the shifted quads is ``signed - shift * sign sums``."""
    means = np.abs(signed - shift * _sign_sums(n))
    return float(np.mean(means >= abs(total - shift * n) * (1 - 1e-9) - 1e-15))


def flip_interval(d: NDArray[Any], level: float = 0.95) -> tuple[float, float]:
    """Every shift of the mean log the randomisation test does not reject at
    1 - ``level``: its edges by bisection, inside the quads' own range."""
    alpha, mean = 1 - level, float(d.mean())
    signed, total = _signs(len(d)) @ d, float(d.sum())

    def edge(inside: float, outside: float) -> float:
        for _ in range(40):
            mid = (inside + outside) / 2
            rejected = _flip_p_shifted(signed, total, len(d), mid) < alpha
            inside, outside = (inside, mid) if rejected else (mid, outside)
        return inside

    return edge(mean, float(d.min())), edge(mean, float(d.max()))


def judge(metric: Metric, paired: Sequence[tuple[float, float]],
          limits: Limits | None = None) -> MetricVerdict:
    """The verdict from paired windows: B over A, the quads' mean log ratio with the
    randomisation test's p and interval."""
    lim = limits or Limits()
    a, b = [x for x, _ in paired], [y for _, y in paired]
    v = MetricVerdict(metric.name, metric.higher_is_better, a, b)
    if a:
        v.baseline_median, v.candidate_median = statistics.median(a), statistics.median(b)
    logs = [math.log(y / x) if x > 0 and y > 0 else math.nan for x, y in paired]
    every = quads(logs)
    q = np.array([m for m in every if not math.isnan(m)])  # a stalled window: out
    if len(q) < MIN_QUADS:
        lost = len(every) - len(q)
        v.why = (f"{len(q)} quads to judge by, and {MIN_QUADS} are the fewest that can "
                 "give p < 0.05: no verdict" + (
                     f"; {lost} of {len(every)} quads were left out because a window in "
                     "each made no progress (see stalls)" if lost else
                     f"; at least {4 * MIN_QUADS} windows (--windows)"))
        return v
    v.ratio = math.exp(float(q.mean()))
    v.p_value = flip_p(q)
    lo, hi = flip_interval(q)
    v.ci95 = (math.exp(lo), math.exp(hi))
    return _too_few_quads(decide(v, metric, lim, []), len(q), lim.alpha)


def _too_few_quads(v: MetricVerdict, quads: int, alpha: float) -> MetricVerdict:
    """An undecided verdict says so when its quads could not have decided it."""
    if v.verdict not in ("better", "worse") and least_p(quads) >= alpha:
        v.why += (f"; {quads} quads cannot give p < {alpha} (their least p is "
                  f"{least_p(quads):.3g}): more windows")
    return v


METRICS = (Metric("tps", True), Metric("p95_ms", False))


def compare_run(store: RunReader, run: StoredRun, baseline: str, candidate: str,
                limits: Limits | None = None) -> Comparison:
    """The comparison a stored switchback run makes: tps and p95 per window paired."""
    from .. import workloads

    c = Comparison(baseline, candidate, run.server, [run.run_id], [run.run_id],
                   limits=limits or Limits(), design="switchback")
    window = run.summary.main_window
    tps, lat = workloads.throughput(store, run.run_id), workloads.latency(store,
                                                                           run.run_id)
    if run.status != "ok" or not window or not tps:
        why = f"the switchback run {run.run_id} is {run.status}: " + (
            refusal(store.events(run.run_id)) or run.error or "")
        why = why.strip(": ") + ": no verdict; --design interleaved compares by restarts"
        c.metrics = [MetricVerdict(m.name, m.higher_is_better, [], [], why=why)
                     for m in METRICS]
        return c
    wins = windows_of(store.events(run.run_id), window[1])
    settle = settle_seconds(tps[0].t, tps[0].v, wins)
    by_window = pairs(window_values(tps[0].t, tps[0].v, wins, settle))
    c.stalls = stalls.of_pairs([(a <= 0, b <= 0) for a, b in by_window], c.limits.alpha)
    c.metrics = [judge(METRICS[0], by_window, limits)]
    if lat:  # a second that finished nothing has no latency (sysbench prints 0.00)
        busy = np.isin(lat[0].t, tps[0].t[tps[0].v > 0])
        c.metrics.append(judge(METRICS[1], pairs(window_values(
            lat[0].t, lat[0].v, wins, settle, keep=busy)), limits))
    c.metrics += _cpu_per_transaction(store, run, tps[0], wins, settle, limits)
    c.moved = moved(store, run, tps[0], wins, settle)
    c.design += (f": {len(wins)} windows of {_width(wins):.0f} s in quads ABBA or BAAB "
                 f"at random, each window's first {settle} s left out (the settle time "
                 "measured after a switch); a randomisation test on the quads")
    return c


def _cpu_per_transaction(store: RunReader, run: StoredRun, tps: Any, wins: Sequence[Window],
                         settle: int, limits: Limits | None) -> list[MetricVerdict]:
    """mysqld's CPU a transaction, window by window and paired like tps (none where the
    run did not sample mysqld's CPU)."""
    found = [s.points() for s in StoredSeries(store).of(run.run_id, CPU)]
    if not found:
        return []
    values = [(w, x) for w in wins
              if (x := _per_transaction(found, CPU, tps, w, settle)) is not None]
    return [judge(CPU_PER_TX, pairs(values), limits)]


# --- what moved per transaction, window by window -------------------------------------

def moved(store: RunReader, run: StoredRun, tps: Any, wins: Sequence[Window], settle: int
          ) -> list[Moved]:
    """What moved per transaction between the sides (analysis/moved.py), window by
    window: each quantity's growth over a window's settled seconds over that window's
    transactions, the windows paired as the metrics are and judged by the same
    randomisation test's interval. A quantity at 0 in some window (no writes with the
    log off) has no ratio, and is apart when every B window is above every A window,
    or below."""
    out = []
    stored = StoredSeries(store)
    for q in quantities(stored, [run]):
        found = [s.points() for s in stored.of(run.run_id, q)]
        values = [(w, x) for w in wins
                  if (x := _per_transaction(found, q, tps, w, settle)) is not None]
        paired = pairs(values)
        if found and len(paired) >= 2 * MIN_QUADS and (got := _moved(q.name, paired)):
            out.append(got)
    return ranked(out)


def _per_transaction(found: list[list[tuple[float, float]]], q: Quantity, tps: Any,
                     w: Window, settle: int) -> float | None:
    """Series ``found`` (their points, summed) grown over window ``w``'s settled
    seconds, per transaction of those seconds."""
    rate = 0.0
    for points in found:
        r = rate_between(points, w.start + settle - SLACK, w.end + SLACK)
        if r is None:
            return None
        rate += r
    seconds = np.asarray(tps.v)[seconds_in(np.asarray(tps.t), w, settle)]
    if not len(seconds) or float(seconds.mean()) <= 0:
        return None
    return rate / float(seconds.mean()) * q.scale


def _moved(name: str, paired: Sequence[tuple[float, float]]) -> Found | None:
    """(apart, size, the entry) of one quantity's paired windows (None: 0 on both)."""
    a, b = [x for x, _ in paired], [y for _, y in paired]
    ma, mb = statistics.median(a), statistics.median(b)
    if ma <= 0 and mb <= 0:
        return None
    if min(a) > 0 and min(b) > 0:
        q = np.array(quads([math.log(y / x) for x, y in paired]))
        lo, hi = flip_interval(q)
        ratio: float | None = math.exp(float(q.mean()))
        ci: tuple[float, float] | None = (math.exp(lo), math.exp(hi))
        apart, size = math.exp(lo) > 1 or math.exp(hi) < 1, abs(float(q.mean()))
    else:
        ratio, ci, size = None, None, from_zero_size(ma, mb)
        apart = min(b) > max(a) or min(a) > max(b)
    return apart, size, Moved(name, ma, mb, ratio, ci, apart)


def _width(wins: Sequence[Window]) -> float:
    return statistics.median(w.end - w.start for w in wins) if wins else 0.0
