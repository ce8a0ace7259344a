"""Sequential A/B: run baseline and candidate in rounds until the data decide.

A fixed number of runs either wastes machine time on an obvious change or stops short
of a small one. ``harness compare --budget 15m --effect 3%`` looks after every round
(one run of each side, back to back; the rounds in balanced order, A B then B A) and
stops at the first look that decides:

- ``better`` / ``worse``: the interval of the ratio excludes 1;
- ``no change larger than X%``: the whole interval lies within +-X%;
- otherwise the next round, until the budget would be exceeded: ``undecided``, with
  the power the last look had to see a change of X%.

Looking many times must not raise the error rate, so look ``k`` uses the interval at
level ``1 - alpha_k`` with ``alpha_k = alpha * 6 / (pi^2 k^2)``: the alphas of all looks
sum to at most ``alpha``, and by the union bound every interval of the sequence covers
the true ratio with probability ``1 - alpha`` at least, however many looks are taken
(a confidence sequence; conservative next to an alpha-spending design with a planned
number of looks, and valid without one).

The interval is on the logarithms of the runs' values (throughput is a ratio scale: the
ratio of geometric means), and it pairs each round's two runs: the unit is the log of B
over A in one round, and the interval is a t interval on their mean (n - 1 degrees of
freedom). The host drifts: on this project's VM a run's level kept 0.29 to 0.76 of the
last run's deviation (lag-1 autocorrelation of runs in time order, four benches), so
two runs back to back are more alike than two runs apart, and the pair's difference
leaves the shared part out. In balanced order a linear drift adds +d to one round and
-d to the next, so it cancels instead of biasing the mean; what is left of the drift
correlates adjacent rounds' differences only weakly (an AR(1) drift of correlation phi:
phi (1 - phi) / 2, 0.09 at 0.76). Simulated (tests/unit/test_sequential.py): at phi 0.76
pairing finds a 3% change about twice as often as Welch's interval on the two sides as
independent samples does; with no drift at all it costs a little (the degrees of
freedom are halved). ``paired=False`` is Welch's, for runs in no order.
"""
from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ..jsonvalue import JsonDict
from ..model import Figure
from ..stats.logratio import paired_log_ratio, welch_log_ratio
from ..workloads import of_summary
from .figures import headline_of

ALPHA = 0.05
MIN_RUNS = 3  # per side before the first look: a variance needs two, and one to spare


def look_alpha(alpha: float, k: int) -> float:
    """The error allowed to look ``k`` (1, 2, ...): they sum to at most ``alpha``."""
    return alpha * 6 / (math.pi ** 2 * k ** 2)


@dataclass
class Look:
    """What look ``k`` saw: the ratio (candidate / baseline) and its interval."""

    k: int
    runs: tuple[int, int]  # baseline, candidate
    ratio: float
    interval: tuple[float, float]
    level: float  # the interval's coverage at this look
    verdict: str | None  # better | worse | no change larger than X% | None (go on)
    power: float  # to see a change of ``effect`` at this look's noise
    paired: bool = True  # the runs of each round as a pair, else two samples

    def text(self) -> str:
        lo, hi = self.interval
        runs = (f"{self.runs[0]} rounds paired" if self.paired
                else f"{self.runs[0]}+{self.runs[1]} runs")
        return (f"look {self.k} ({runs}): ratio {self.ratio:.3f}"
                f" [{lo:.3f}, {hi:.3f}] at {self.level:.2%}: "
                + (self.verdict or f"go on (power for the effect so far {self.power:.0%})"))

    def to_json(self) -> JsonDict:
        return asdict(self)


def look(a: Sequence[float], b: Sequence[float], k: int, effect: float,
         higher_is_better: bool = True, alpha: float = ALPHA, paired: bool = True
         ) -> Look | None:
    """Look ``k`` at baseline values ``a`` and candidate values ``b`` (all so far; with
    ``paired``, ``a[i]`` and ``b[i]`` ran in round i); None until each side has
    MIN_RUNS positive values (MIN_RUNS rounds with both, paired)."""
    la, lb = _logs(a, b, paired)
    if len(la) < MIN_RUNS or len(lb) < MIN_RUNS:
        return None
    level_alpha = look_alpha(alpha, k)
    ratio, lo, hi, se = (paired_log_ratio if paired else welch_log_ratio)(la, lb, level_alpha)
    bound = math.log(1 + effect)
    verdict = None
    if lo > 1 or hi < 1:
        verdict = "better" if (lo > 1) == higher_is_better else "worse"
    elif math.log(lo) > -bound and math.log(hi) < bound:
        verdict = f"no change larger than {effect:.0%}"
    return Look(k, (len(la), len(lb)), ratio, (lo, hi), 1 - level_alpha, verdict,
                _power(bound, se, level_alpha), paired)


def _logs(a: Sequence[float], b: Sequence[float], paired: bool
          ) -> tuple[list[float], list[float]]:
    """The logs of the positive values; paired, of the pairs with both positive."""
    if not paired:
        return [math.log(x) for x in a if x > 0], [math.log(y) for y in b if y > 0]
    both = [(math.log(x), math.log(y)) for x, y in zip(a, b, strict=True)
            if x > 0 and y > 0]
    return [x for x, _ in both], [y for _, y in both]


def _power(bound: float, se: float, level_alpha: float) -> float:
    """The chance this look's interval would exclude 1 were the change ``bound`` (on
    the log scale), at the noise seen so far."""
    if se == 0:
        return 1.0
    z = statistics.NormalDist()
    return z.cdf(bound / se - z.inv_cdf(1 - level_alpha / 2))


@dataclass
class Budget:
    """Machine time for the whole comparison; a round is only started when the rounds
    so far say it will end in time."""

    seconds: float

    def allows(self, elapsed: float, rounds: int) -> bool:
        """Room for one more round after ``rounds`` took ``elapsed`` seconds."""
        if rounds == 0:
            return True
        return elapsed + elapsed / rounds <= self.seconds


def parse_duration(text: str) -> float:
    """``15m``, ``900s``, ``1h``, ``90`` (seconds) -> seconds."""
    units = {"s": 1, "m": 60, "h": 3600}
    t = text.strip().lower()
    try:
        n = float(t[:-1]) * units[t[-1]] if t and t[-1] in units else float(t)
    except ValueError:
        raise ValueError(f"'{text}' is not a duration like 15m, 900s or 1h") from None
    if n <= 0:
        raise ValueError(f"'{text}': a duration above 0")
    return n


def watched_figure(summary: Any, watch: str | None) -> Figure | None:
    """The figure ``--watch`` names among those of the workload that made ``summary``
    (by its regress name, ``tps`` or ``p95_ms``, or its summary key); the headline
    without one; None when that workload has no such figure."""
    if watch is None:
        return headline_of(summary)
    plugin = of_summary(summary)
    return next((f for f in (plugin.figures if plugin else ())
                 if watch in (f.regress, f.key)), None)


def _rounds(done: list[list[Any]], key: str) -> tuple[list[float], list[float]]:
    """The figure ``key`` of each side's run in every round where both have it."""
    a, b = [], []
    for ra, rb in zip(*done, strict=True):
        va, vb = ra.summary.figure(key), rb.summary.figure(key)
        if va is not None and vb is not None:
            a.append(va)
            b.append(vb)
    return a, b


def _failed(results: Sequence[Any]) -> str | None:
    """The first run that did not end ok: its cell is not run again, so the rounds
    could not go on in pairs."""
    bad = [r for r in results if r.status != "ok"]
    return f"run {bad[0].run_id} ({bad[0].variant}) {bad[0].status}" if bad else None


class SequentialRule:
    """The runner's stopping rule for ``harness compare --budget``: after each round
    (a run of each side) it looks at the runs' watched figure (the headline, median
    tps, unless ``watch`` names another, such as ``p95_ms``) and says why to stop -
    decided, or no room for another round - or None to go on."""

    def __init__(self, baseline: str, candidate: str, effect: float, budget: Budget,
                 alpha: float = ALPHA, log: Callable[[str], None] = print,
                 clock: Callable[[], float] = time.monotonic, watch: str | None = None):
        self.sides = (baseline, candidate)
        self.watch = watch
        self.effect = effect
        self.budget = budget
        self.alpha = alpha
        self.log = log
        self.clock = clock
        self.t0 = clock()
        self.looks: list[Look] = []
        self.stopped = ""

    def __call__(self, results: Sequence[Any]) -> str | None:
        if (failed := _failed(results)) is not None:
            self.stopped = failed
            return self.stopped
        done = [[r for r in results if r.variant == side] for side in self.sides]
        rounds = min(len(d) for d in done)
        if len(done[0]) != len(done[1]):
            return None  # mid-round
        figure = watched_figure(results[0].summary, self.watch) if results else None
        if figure is None:
            self.stopped = f"the workload has no figure '{self.watch}' to watch"
            return self.stopped
        a, b = _rounds(done, figure.key)
        seen = look(a, b, len(self.looks) + 1, self.effect, figure.higher_is_better,
                    self.alpha)
        if seen is not None:
            self.looks.append(seen)
            self.log(f"  sequential: {seen.text()}")
        return self._stop_after(rounds, seen.verdict if seen is not None else None)

    def _stop_after(self, rounds: int, decided: str | None) -> str | None:
        """Why the runs stop after ``rounds`` (a verdict, or no budget for another
        round), or None: go on."""
        if decided:
            self.stopped = f"decided after {rounds} rounds: {decided}"
        elif not self.budget.allows(self.clock() - self.t0, rounds):
            self.stopped = (f"the budget ({self.budget.seconds / 60:.0f} min) has no room for "
                            f"another round after {rounds}")
        else:
            return None
        return self.stopped

    @property
    def verdict(self) -> str:
        last = self.looks[-1] if self.looks else None
        return last.verdict if last and last.verdict else "undecided"

    def text(self) -> str:
        last = self.looks[-1] if self.looks else None
        head = (f"sequential verdict{f' on {self.watch}' if self.watch else ''}: "
                f"{self.verdict} ({len(self.looks)} look(s), effect of "
                f"interest {self.effect:.0%}, {self.stopped or 'the runs ran out'})")
        if last is None:
            return head + "; no look: too few ok runs"
        if not last.verdict:
            head += (f"; at the last look the chance to see a {self.effect:.0%} change was "
                     f"{last.power:.0%}: run longer or quiet the machine")
        return head

    def to_json(self) -> JsonDict:
        return {"verdict": self.verdict, "watch": self.watch or "headline",
                "effect": self.effect, "alpha": self.alpha,
                "budget_s": self.budget.seconds, "stopped": self.stopped,
                "looks": [x.to_json() for x in self.looks]}
