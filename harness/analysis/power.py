"""How small a change can a verdict see here? Variance components, the smallest
detectable change for a budget of machine time, and the rates trials show.

A run's value (its median tps, its p95 latency), taken on the log scale, varies for two
reasons (Kalibera & Jones, ISMM 2013: plan repetitions at the level where the variance
is):

- within the run: its seconds vary, so its value is only as steady as they allow. That
  share is estimated per run by the moving-block bootstrap of :mod:`.interval`, and
  shrinks as 1/T with the run's length T;
- between runs: each run settles at a level of its own (the restored data's placement,
  the host's state) that no run length averages away; only more runs do. It is what
  the runs' spread shows beyond the within-run share.

A comparison of n runs a side has a standard error of sqrt(2 (between + within(T)) / n)
on the log of the ratio, and a test at ``alpha`` sees a change with probability
``power`` when the change is (z(1 - alpha/2) + z(power)) standard errors or more. A
budget of B seconds buys n = B / (2 c) runs a side, c the machine time of one run
(measured seconds, warmup, restore and restart). The run length that makes the most of
a budget is T* = sqrt(o L / between), with L = within(T) T and o the cost of a run
beyond its measured seconds: longer than T* wastes time on seconds, shorter on restarts.
"""
from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..jsonvalue import JsonDict
from ..stats.interval import sd_of, value_ci
from ..stats.logratio import paired_log_ratio, welch_log_ratio
from .sequential import ALPHA, MIN_RUNS, look

POWER = 0.9
# How often harness compare's verdict (a rank test, a bootstrap interval that excludes
# 1 and the 3% floor, all at once) calls a change of detectable(t=True)'s size: 73-80% in
# simulated trials at 4-10 runs a side and 2-6% noise (tests/unit/test_power.py), less
# than the t-test's POWER it is computed for.
VERDICT_POWER = 0.75
Z = statistics.NormalDist()


@dataclass(frozen=True)
class Components:
    """The variance of a run's log value at ``run_s`` measured seconds, in two shares."""

    runs: int
    run_s: float
    total: float  # the runs' variance
    within: float  # what the seconds of one run leave: shrinks as 1 / run_s
    between: float  # what is left of ``total``: the runs' own levels

    def at(self, run_s: float) -> float:
        """A run's variance were it ``run_s`` seconds long."""
        return self.between + self.within * self.run_s / run_s

    @property
    def dominant(self) -> str:
        return "between runs" if self.between >= self.within else "within runs"

    @property
    def between_seen(self) -> bool:
        """The runs vary more than their seconds explain: with no between-run share,
        (n - 1) total / within is chi-square with n - 1 degrees of freedom, and this
        is its one-sided test at 5%."""
        from scipy.stats import chi2

        if self.within <= 0:
            return self.total > 0
        df = self.runs - 1
        return self.total / self.within > float(chi2.ppf(0.95, df)) / df

    def best_run_s(self, overhead_s: float) -> float | None:
        """The run length that buys the most certainty per machine second (None: no
        between-run share was seen, so longer runs always help)."""
        if not self.between_seen:
            return None
        return math.sqrt(overhead_s * self.within * self.run_s / self.between)

    def advice(self, overhead_s: float) -> str:
        best = self.best_run_s(overhead_s)
        share = self.between / self.total if self.total else 0.0
        if best is None:
            return (f"no run-to-run share stands out of the noise of {self.runs} runs: "
                    "longer runs help")
        if best > 2 * self.run_s:
            return (f"within-run variation dominates ({1 - share:.0%}): longer runs help "
                    f"(best about {best:.0f} s)")
        if best < self.run_s / 2:
            return (f"run-to-run variation dominates ({share:.0%}): more runs help, longer "
                    f"ones do not (best about {best:.0f} s a run)")
        which = "run-to-run" if self.dominant == "between runs" else "within-run"
        return (f"{which} variation dominates ({max(share, 1 - share):.0%}), and "
                f"{self.run_s:.0f} s runs are about right: more runs help")

    def noise(self, overhead_s: float, metric: str, settling_s: float = 0.0,
              per_side: int = 0) -> Noise:
        """What a comparison prints and stores of it; ``settling_s``: how far into
        their measured part the runs were still settling (:func:`.steady.settled_after`);
        ``per_side``: the runs a side, for the change they could see (the power)."""
        text = (f"{metric} varies {math.sqrt(self.total):.1%} run to run ({self.runs} runs "
                f"of {self.run_s:.0f} s; within a run {math.sqrt(self.within):.1%}); "
                + self.advice(overhead_s))
        seen = detectable(self.total, per_side, t=True)
        if seen is not None:
            text += (f"; power: with {per_side} runs a side, a change of {seen:.1%} in "
                     f"{metric} is called about {VERDICT_POWER:.0%} of the time, a smaller "
                     "one less often")
        if settling_s:
            text += (f"; the runs were still settling {settling_s:.0f} s into their "
                     f"measured part (MSER-5, median of the runs): a warmup_s that much "
                     "longer leaves it out, or warmup_s: auto waits until it has settled")
        return Noise(self, metric, round(overhead_s, 1), settling_s, per_side,
                     None if seen is None else round(seen, 4), text)

    def to_json(self) -> JsonDict:
        return {**asdict(self), "sd_total_pct": round(100 * math.sqrt(self.total), 2),
                "sd_between_pct": round(100 * math.sqrt(self.between), 2),
                "sd_within_pct": round(100 * math.sqrt(self.within), 2),
                "dominant": self.dominant, "between_seen": self.between_seen}


def components(values: Sequence[float], seconds: Sequence[Sequence[float]],
               run_s: float) -> Components | None:
    """The shares of ``values`` (one per run, > 0) from the runs' measured seconds
    (``seconds[i]``: run i's per-second values of the same metric); None under 3 runs."""
    logs = [math.log(v) for v in values if v > 0]
    if len(logs) < 3:
        return None
    total = statistics.variance(logs)
    within = statistics.fmean([_within(s) for s in seconds]) if seconds else 0.0
    return Components(len(logs), run_s, total, within, max(0.0, total - within))


def _within(seconds: Sequence[float]) -> float:
    """The variance one run's seconds leave on the log of its median."""
    x = np.asarray(seconds, dtype=float)
    x = x[x > 0]
    return sd_of(value_ci(np.log(x))) ** 2 if x.size else 0.0


def merged(a: Components, b: Components) -> Components:
    """Two sides' components as one (each side's variance is about its own level)."""
    runs = a.runs + b.runs
    total = ((a.runs - 1) * a.total + (b.runs - 1) * b.total) / (runs - 2)
    within = (a.runs * a.within + b.runs * b.within) / runs
    return Components(runs, (a.run_s + b.run_s) / 2, total, within, max(0.0, total - within))


def runs_a_side(budget_s: float, run_cost_s: float) -> int:
    """Interleaved runs a side that fit in ``budget_s`` of machine time."""
    return int(budget_s // (2 * run_cost_s))


def detectable(variance: float, runs: int, alpha: float = ALPHA, power: float = POWER,
               t: bool = False) -> float | None:
    """The smallest relative change (0.03: 3%) that ``runs`` runs a side of this
    variance (log scale) see with ``power`` at a two-sided ``alpha``: with the normal's
    quantiles (planning, many runs), or with ``t`` the t distribution's with the two
    sides' 2 (runs - 1) degrees of freedom (the runs at hand: the normal promises too
    much at 3-5 runs a side). None under 2 runs a side."""
    if runs < 2:
        return None
    se = math.sqrt(2 * variance / runs)
    if not t:
        return math.expm1((Z.inv_cdf(1 - alpha / 2) + Z.inv_cdf(power)) * se)
    from scipy.stats import t as student

    df = 2 * (runs - 1)
    return math.expm1((float(student.ppf(1 - alpha / 2, df)) + float(student.ppf(power, df)))
                      * se)


def sequential_verdict(a: Sequence[float], b: Sequence[float], effect: float,
                       higher_is_better: bool = True, alpha: float = ALPHA,
                       paired: bool = True) -> str:
    """What ``harness compare --effect`` says of runs that came in this order, one of
    each side a round, stopping at the first look that decides: better, worse, no
    change larger than X%, or undecided when the rounds run out. ``paired=False``:
    Welch's interval, the two sides taken as independent samples."""
    for k, rounds in enumerate(range(MIN_RUNS, min(len(a), len(b)) + 1), 1):
        seen = look(a[:rounds], b[:rounds], k, effect, higher_is_better, alpha, paired)
        if seen is not None and seen.verdict:
            return seen.verdict
    return "undecided"


@dataclass(frozen=True)
class Noise:
    """Where a metric's run-to-run variation comes from (its components), what helps,
    and the change the runs a side could see (with VERDICT_POWER), as a sentence."""

    components: Components
    metric: str
    overhead_s: float
    settling_s: float
    runs_a_side: int
    detectable: float | None
    text: str

    def to_json(self) -> JsonDict:
        return {**self.components.to_json(), "metric": self.metric,
                "overhead_s": self.overhead_s, "settling_s": self.settling_s,
                "runs_a_side": self.runs_a_side, "detectable": self.detectable,
                "detectable_power": VERDICT_POWER, "text": self.text}


@dataclass
class Rates:
    """How trials came out: called a difference (the wrong one included), found the
    injected change in its direction, ruled a change of the effect out, or undecided."""

    trials: int
    rounds: int
    called: int = 0
    found: int = 0
    no_change: int = 0

    def add(self, verdict: str, expected: str | None) -> None:
        if verdict in ("better", "worse"):
            self.called += 1
            self.found += verdict == expected
        elif verdict.startswith("no change"):
            self.no_change += 1

    def to_json(self) -> JsonDict:
        def share(n: int) -> float | None:
            return round(n / self.trials, 3) if self.trials else None
        return {**asdict(self), "called_rate": share(self.called),
                "found_rate": share(self.found)}


def _expected(shift: float, higher_is_better: bool) -> str | None:
    if shift == 0:
        return None
    return "better" if (shift > 0) == higher_is_better else "worse"


def split_trials(values: Sequence[float], rounds: int, trials: int, effect: float,
                 shift: float = 0.0, higher_is_better: bool = True, seed: int = 0
                 ) -> Rates:
    """Trials on real runs of one configuration: each draws ``2 * rounds`` of them in a
    random order, alternately to either side, scales the candidate's by ``1 + shift``
    (0: an A/A trial; -0.03: a known 3% drop) and takes the sequential verdict. The
    trials share runs, so they show this pool's rate, not independent draws'."""
    rounds = min(rounds, len(values) // 2)
    rates = Rates(trials, rounds)
    v = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    for _ in range(trials):
        order = rng.permutation(len(v))[:2 * rounds]
        a, b = v[order[0::2]], v[order[1::2]] * (1 + shift)
        rates.add(sequential_verdict(list(a), list(b), effect, higher_is_better),
                  _expected(shift, higher_is_better))
    return rates


def log_ratio_ci(a: Sequence[float], b: Sequence[float], level: float = 0.95,
                 paired: bool = False) -> tuple[float, float, float]:
    """b against a as a ratio of geometric means, with its t interval (Welch's; paired:
    ``a[i]`` with ``b[i]``)."""
    interval = paired_log_ratio if paired else welch_log_ratio
    ratio, lo, hi, _ = interval([math.log(x) for x in a], [math.log(x) for x in b],
                                1 - level)
    return ratio, lo, hi


def simulated_trials(variance: float, rounds: int, trials: int, effect: float,
                     shift: float = 0.0, higher_is_better: bool = True, seed: int = 0
                     ) -> Rates:
    """The same trials on runs drawn log-normal with the measured ``variance``:
    independent, as many as asked, and as good as that model of the runs."""
    rates = Rates(trials, rounds)
    rng = np.random.default_rng(seed)
    sd = math.sqrt(variance)
    for _ in range(trials):
        a = np.exp(rng.normal(0.0, sd, rounds))
        b = np.exp(rng.normal(math.log1p(shift), sd, rounds))
        rates.add(sequential_verdict(list(a), list(b), effect, higher_is_better),
                  _expected(shift, higher_is_better))
    return rates


def lag1(xs: Sequence[float]) -> float:
    """The lag-1 autocorrelation of ``xs`` (how much of one value's deviation from the
    mean the next keeps); 0 when they do not vary."""
    m = statistics.fmean(xs)
    dev = [x - m for x in xs]
    den = sum(d * d for d in dev)
    return sum(p * q for p, q in zip(dev[:-1], dev[1:], strict=True)) / den if den else 0.0


# The orders runs of two sides can come in, as the sides of one repeating block.
ORDERS = {"alternating": "AB", "balanced": "ABBA", "blocks of 3": "AAABBB"}


def drifting_runs(rng: np.random.Generator, rounds: int, sd: float, phi: float,
                  order: str, shift: float = 0.0) -> tuple[NDArray[Any], NDArray[Any]]:
    """``rounds`` runs a side whose log levels drift as an AR(1) of correlation ``phi``
    and standard deviation ``sd`` from run to run, in time order ``order`` (a block of
    A and B repeated); the k-th run of each side pairs with the other's k-th."""
    n = 2 * rounds
    x = np.empty(n)
    x[0] = rng.normal(0.0, sd)
    steps = rng.normal(0.0, sd * math.sqrt(1 - phi ** 2), n)
    for i in range(1, n):
        x[i] = phi * x[i - 1] + steps[i]
    sides = np.array(list(order * (n // len(order) + 1))[:n])
    a, b = x[sides == "A"], x[sides == "B"]
    k = min(len(a), len(b))
    return np.exp(a[:k]), np.exp(b[:k] + math.log1p(shift))


def drift_trials(sd: float, phi: float, rounds: int, trials: int, effect: float,
                 shift: float = 0.0, order: str = "ABBA", paired: bool = True,
                 higher_is_better: bool = True, seed: int = 0) -> Rates:
    """The sequential rule on runs of a drifting host (:func:`drifting_runs`): how the
    order the runs come in and pairing the rounds (or not) change what it finds."""
    rates = Rates(trials, rounds)
    rng = np.random.default_rng(seed)
    for _ in range(trials):
        a, b = drifting_runs(rng, rounds, sd, phi, order, shift)
        rates.add(sequential_verdict(list(a), list(b), effect, higher_is_better,
                                     paired=paired), _expected(shift, higher_is_better))
    return rates


def switchback_trials(t: Sequence[float], v: Sequence[float], window_s: float,
                      trials: int, shift: float = 0.0, higher_is_better: bool = True,
                      noise: float = 0.0, seed: int = 0, windows: int | None = None
                      ) -> Rates:
    """Switchback trials on one run's per-second values (``t``, ``v``) with no switch
    in it: each cuts ``windows`` windows of ``window_s`` seconds (as many quads as fit
    when None) from a random offset, in quads of random orientation (ABBA or BAAB, as
    a run draws them), scales the B windows' seconds by ``1 + shift`` and takes the
    paired verdict of ``harness compare --design switchback --noise`` (``noise``: the
    smallest change called, 0 here). The trials re-cut one stream: the rate of this
    run, not of independent runs (for the randomisation test, whose rate holds for
    every stream, the same thing)."""
    from .ab_verdict import Limits
    from .switchback import METRICS, Window, judge, pairs, window_values

    metric = METRICS[0] if higher_is_better else METRICS[1]
    tt, vv = np.asarray(t, dtype=float), np.asarray(v, dtype=float)
    rng, coin = np.random.default_rng(seed), random.Random(seed)
    rates = Rates(trials, 0)
    for _ in range(trials):
        start, sides = _cut(tt, window_s, windows, rng, coin)
        wins = [Window(i, side, start + i * window_s, start + (i + 1) * window_s, True)
                for i, side in enumerate(sides)]
        scaled = vv * np.where(_in_b(tt, start, window_s, sides), 1 + shift, 1.0)
        paired = pairs(window_values(tt, scaled, wins, settle=1))
        rates.rounds = max(rates.rounds, len(paired))
        rates.add(judge(metric, paired, Limits(noise=noise)).verdict or "undecided",
                  _expected(shift, higher_is_better))
    return rates


def _cut(t: NDArray[Any], width: float, windows: int | None, rng: np.random.Generator,
         coin: random.Random) -> tuple[float, list[str]]:
    """Where a re-cut's windows of ``width`` seconds start in the stream ``t`` (drawn
    where ``windows`` of them fit; within the first window's width when None) and
    their sides (``windows`` of them, or every whole quad that fits), drawn as a run
    draws them."""
    from .switchback import schedule

    room = float(t[-1]) - float(t[0]) + 1 - (windows or 0) * width
    start = float(t[0]) - 1 + float(rng.uniform(0, width if windows is None
                                                else max(0.0, room)))
    count = windows if windows is not None else int((float(t[-1]) - start) // width)
    return start, schedule(count, coin)


def _in_b(t: NDArray[Any], start: float, width: float, sides: Sequence[str]) -> NDArray[Any]:
    """Which seconds (an interval reported at t covers (t - 1, t]) fall in a B window."""
    idx = np.ceil((t - start) / width).astype(int) - 1
    inside = (idx >= 0) & (idx < len(sides))
    b = np.array([s == "B" for s in sides] or [False])
    found: NDArray[Any] = inside & b[np.clip(idx, 0, max(0, len(sides) - 1))]
    return found
