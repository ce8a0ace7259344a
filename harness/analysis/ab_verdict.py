"""A/B verdicts: is the candidate configuration better, worse, or not distinguishable
from the baseline?

One value per run and metric (the run's median tps over its measured intervals, its
p95 and p99 latency, or any stored series the scenario names: the rate of a counter, the
median of a gauge), then per metric:

- the ratio of the candidate's median to the baseline's, with a bootstrap 95%
  confidence interval (runs resampled within each side, 10,000 times, fixed seed);
- a two-sided Mann-Whitney U test (scipy; exact for small samples);
- the verdict: ``better`` or ``worse`` only when p < alpha, the interval excludes 1
  and the change is larger than the noise threshold; ``no significant difference``
  only when the whole interval lies inside the noise band (1 +- the threshold); else
  ``could not tell``, with the smallest change the run could have seen (its reach:
  the interval's farther bound from 1). No verdict at all when a side has fewer runs
  than the test needs (4: with 3 against 3 the smallest two-sided p is 0.1), or when a
  side's coefficient of variation exceeds the stated limit and the interval does not
  settle it: the runs are too noisy to tell. One bad run does not make a side noisy:
  runs far from their side's median (a modified z-score over 3.5, Iglewicz and
  Hoaglin) are named as outliers and left out of the CV (the test and the interval, on
  ranks and medians, keep them). And noise does not hide the obvious: when p < alpha,
  the sides do not overlap (their outliers left out) and the whole interval is further
  from 1 than the noisier side's CV, it is called (4x fewer tps with one baseline run
  dipped).
"""
from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from ..exits import Exit
from ..jsonvalue import JsonDict
from ..stats.interval import inside_band, interval_text, reach, reach_text
from ..store import StoredRun
from . import defaults
from .figures import HEADLINES
from .stalls import Stalls

if TYPE_CHECKING:  # items.py and moved.py read this module's verdicts
    from .items import ItemVerdict, ResultsDiffer
    from .moved import Moved
    from .power import Noise

ALPHA = 0.05
NOISE = defaults.NOISE  # changes under 3% are not called, however significant
MAX_CV = defaults.MAX_CV  # a side whose runs vary more than 10% gets no verdict
MIN_RUNS = 4
BOOTSTRAP = 10_000
# The verdicts a metric (and a comparison) can have; None is "no verdict".
BETTER, WORSE = "better", "worse"
SAME = "no significant difference"  # the interval lies inside the noise band
UNTOLD = "could not tell"  # neither: the interval is wider than the noise band
# How a comparison's verdicts rank (the first found is the comparison's), and their
# exit codes: 3 a regression, 4 nothing the DBA can act on.
NO_VERDICT = "no verdict"
ORDER = (WORSE, NO_VERDICT, UNTOLD, BETTER, SAME)
EXIT = {WORSE: Exit.WORSE, NO_VERDICT: Exit.NO_VERDICT, UNTOLD: Exit.NO_VERDICT}


@dataclass(frozen=True)
class Metric:
    name: str  # as printed
    higher_is_better: bool
    summary_key: str | None = None  # a key of the run's stored summary
    series: str | None = None  # or a stored series' metric name (optionally source/metric)
    rate: bool = False  # the series is a counter: its rate per second, else its median
    latency: bool = False  # a latency: 0 is what sysbench prints when nothing finished,
    # so a value of 0 is missing (a stalled run's), never the fastest
    per_transaction: bool = False  # the series' rate over the measured part per
    # transaction of that part, times scale (mysqld's CPU microseconds a transaction)
    scale: float = 1.0


BUILTIN = (Metric("tps", True, summary_key="tps_median"),
           Metric("p95_ms", False, summary_key="latency_p95_ms", latency=True),
           # from sysbench's histogram
           Metric("p99_ms", False, summary_key="latency_p99_ms", latency=True))
# mysqld's CPU a transaction, judged beside throughput where the runs sampled it (the
# mysqld_process collector): a change that costs CPU shows there before it costs tps on
# a host with cores to spare (Callaghan judges releases by it).
CPU_PER_TX = Metric("cpu_us_per_tx", False,
                    series="mysqld_process/harness_mysqld_cpu_seconds_total", rate=True,
                    per_transaction=True, scale=1e6)


def headline_metrics(runs: Sequence[StoredRun]) -> list[Metric]:
    """The headline figure of each workload in ``runs`` that tps does not already
    judge (TPC-C's tpmC, SSB's warm flight seconds, the insert benchmark's rows/s)."""
    judged = {m.summary_key for m in BUILTIN}
    return [Metric(f.regress or f.key, f.higher_is_better, summary_key=f.key)
            for f in HEADLINES if f.key not in judged
            and any(r.summary.figure(f.key) is not None for r in runs)]


@dataclass(frozen=True)
class Outlier:
    """A run left out of a side's CV: its side, its name (or #position), its value."""

    side: str
    run: str
    value: float


@dataclass
class MetricVerdict:
    metric: str
    higher_is_better: bool
    baseline: list[float]
    candidate: list[float]
    baseline_median: float | None = None
    candidate_median: float | None = None
    ratio: float | None = None
    ci95: tuple[float, float] | None = None
    p_value: float | None = None
    cv_baseline: float | None = None
    cv_candidate: float | None = None
    verdict: str | None = None  # better | worse | no significant difference |
    # could not tell | None (no verdict)
    why: str = ""  # why there is no verdict, or what decided it
    reach: float | None = None  # the smallest change the interval could tell from none
    outliers: list[Outlier] = field(default_factory=list)

    def to_json(self) -> JsonDict:
        return asdict(self)


@dataclass
class Limits:
    alpha: float = ALPHA
    noise: float = NOISE
    max_cv: float = MAX_CV
    min_runs: int = MIN_RUNS
    bootstrap: int = BOOTSTRAP
    seed: int = 0


def cv(xs: Sequence[float]) -> float | None:
    if len(xs) < 2:
        return None
    m, sd = statistics.fmean(xs), statistics.stdev(xs)
    if sd == 0:
        return 0.0  # identical runs (e.g. a counter that never moved) are not noisy
    return sd / abs(m) if m else math.inf


OUTLIER_Z = 3.5  # modified z-score beyond which a run is an outlier (Iglewicz-Hoaglin)


def outliers(xs: Sequence[float]) -> list[int]:
    """Indexes of the values far from the median: modified z-score 0.6745 |x - median|
    / MAD over 3.5. Fewer than half the values can be outliers; with a MAD of 0 (most
    values equal), every value off the median is one."""
    if len(xs) < 3:
        return []
    med = statistics.median(xs)
    mad = statistics.median(abs(x - med) for x in xs)
    if mad == 0:
        return [i for i, x in enumerate(xs) if x != med]
    return [i for i, x in enumerate(xs) if 0.6745 * abs(x - med) / mad > OUTLIER_Z]


def _resampled_medians(xs: Sequence[float], n: int, rng: np.random.Generator) -> NDArray[Any]:
    """The medians of ``n`` resamples (with replacement) of ``xs``."""
    a = np.asarray(xs, dtype=float)
    medians: NDArray[Any] = np.median(a[rng.integers(0, len(a), (n, len(a)))], axis=1)
    return medians


# The percentile bootstrap of medians holds the true ratio less often than it says
# when a side has few runs: measured on simulated runs (log-normal, 1-8% noise, 1,000
# to 1,500 trials), its 2.5-97.5% interval held it 67% of the time at 2 runs a side,
# 90% at 3, 93% at 4 and 97% at 5 (tests/unit/test_compare_interval.py). At 4 runs the
# 1-99% percentiles hold it 95%; fewer runs get no verdict (MIN_RUNS).
TAIL_PERCENT = {4: 1.0}  # the fewer runs of the two sides -> each tail left out
TAIL_DEFAULT = 2.5


def bootstrap_ratio_ci(a: Sequence[float], b: Sequence[float], n: int, seed: int
                       ) -> tuple[float, float] | None:
    """95% interval of median(b) / median(a), resampling each side's runs (its tails
    wider where the fewer runs need it to hold 95%: :data:`TAIL_PERCENT`)."""
    rng = np.random.default_rng(seed)
    ma = _resampled_medians(a, n, rng)
    mb = _resampled_medians(b, n, rng)
    ok = ma != 0
    if not ok.any():
        return None
    r = mb[ok] / ma[ok]
    tail = TAIL_PERCENT.get(min(len(a), len(b)), TAIL_DEFAULT)
    lo, hi = np.percentile(r, [tail, 100 - tail])
    return float(lo), float(hi)


def bootstrap_median_ci(xs: Sequence[float], n: int = BOOTSTRAP, seed: int = 0
                        ) -> tuple[float, float]:
    """95% interval of the median of ``xs`` (resampled ``n`` times, fixed seed)."""
    meds = _resampled_medians(xs, n, np.random.default_rng(seed))
    lo, hi = np.percentile(meds, [2.5, 97.5])
    return float(lo), float(hi)


def _mw_method(a: Sequence[float], b: Sequence[float]) -> str:
    """The exact test while no value is on both sides (ties within one side leave U as
    it is); scipy's default falls back to the normal approximation on any tie, and on
    6 runs a side that cannot go below p = 0.005, even for two sides that do not
    overlap at all."""
    return "asymptotic" if set(a) & set(b) or len(a) + len(b) > 40 else "exact"


def judge(metric: Metric, a: Sequence[float], b: Sequence[float],
          limits: Limits | None = None,
          runs: tuple[Sequence[str], Sequence[str]] | None = None) -> MetricVerdict:
    """The verdict on one metric, baseline values ``a`` against candidate values ``b``
    (of the runs ``runs``, to name outliers by; else by position)."""
    lim = limits or Limits()
    a, b = [float(x) for x in a], [float(x) for x in b]
    v = MetricVerdict(metric.name, metric.higher_is_better, a, b)
    v.baseline_median = statistics.median(a) if a else None
    v.candidate_median = statistics.median(b) if b else None
    v.cv_baseline, v.cv_candidate = cv(a), cv(b)
    kept = _name_outliers(v, runs)
    if len(a) < lim.min_runs or len(b) < lim.min_runs:
        v.why = (f"too few runs ({len(a)} baseline, {len(b)} candidate): no verdict; "
                 f"{lim.min_runs} a side are the fewest that can give one "
                 f"(--repetitions {lim.min_runs})")
        return v
    if v.baseline_median:
        v.ratio = (v.candidate_median or 0.0) / v.baseline_median
    v.ci95 = bootstrap_ratio_ci(a, b, lim.bootstrap, lim.seed)
    v.p_value = _mann_whitney_p(a, b)
    return _concluded(v, metric, lim, kept)


def _concluded(v: MetricVerdict, metric: Metric, lim: Limits,
               kept: tuple[list[float], list[float]]) -> MetricVerdict:
    """The verdict once ratio, interval and p are known: none when a side is too noisy
    (unless the sides are apart anyway), by the test alone from a baseline of 0, else
    by :func:`decide`."""
    noisy = _too_noisy(v, kept, lim.max_cv)
    if noisy and not _decisive(v, lim, *kept):
        v.why = (f"too noisy ({', '.join(noisy)} > {lim.max_cv:.0%}): no verdict; quiet the "
                 "machine (cpu_keepalive, nothing else running) or run longer")
        return _with_outliers(v)
    if v.ratio is None or v.ci95 is None:
        return _from_zero(v, metric, lim)
    return _with_outliers(decide(v, metric, lim, noisy))


def _mann_whitney_p(a: list[float], b: list[float]) -> float:
    """The two-sided Mann-Whitney p-value (1 when every value is the same)."""
    from scipy.stats import mannwhitneyu

    if len(set(a + b)) == 1:
        return 1.0
    return float(mannwhitneyu(a, b, alternative="two-sided", method=_mw_method(a, b)).pvalue)


def _too_noisy(v: MetricVerdict, kept: tuple[list[float], list[float]], max_cv: float
               ) -> list[str]:
    """Each side whose CV (without its outliers) passes ``max_cv``, said."""
    return [f"{side} CV {c:.1%}" + (" without its outliers" if c != whole else "")
            for side, c, whole in (("baseline", cv(kept[0]), v.cv_baseline),
                                   ("candidate", cv(kept[1]), v.cv_candidate))
            if c is not None and c > max_cv]


def _name_outliers(v: MetricVerdict, runs: tuple[Sequence[str], Sequence[str]] | None
                   ) -> tuple[list[float], list[float]]:
    """Each side's outliers into ``v.outliers``; each side without them."""
    kept = []
    for side, xs, names in (("baseline", v.baseline, runs[0] if runs else None),
                            ("candidate", v.candidate, runs[1] if runs else None)):
        out = outliers(xs)
        v.outliers += [Outlier(side, names[i] if names else f"#{i + 1}", xs[i])
                       for i in out]
        kept.append([x for i, x in enumerate(xs) if i not in out])
    return kept[0], kept[1]


def _from_zero(v: MetricVerdict, metric: Metric, lim: Limits) -> MetricVerdict:
    """A baseline median of 0 (a counter that did not move): no ratio; the sign of the
    difference and the test decide, and any change is above the noise threshold."""
    assert v.p_value is not None
    diff = (v.candidate_median or 0.0) - (v.baseline_median or 0.0)
    if diff and v.p_value < lim.alpha:
        v.verdict = BETTER if (diff > 0) == metric.higher_is_better else WORSE
        v.why = (f"from 0 to {v.candidate_median:.4g}, p = {v.p_value:.3g} < "
                 f"{lim.alpha} (no ratio: the baseline median is 0)")
    elif len(set(v.baseline + v.candidate)) == 1:
        v.verdict = SAME
        v.why = f"every run of both sides is {v.baseline[0]:.4g}"
    else:
        v.verdict = UNTOLD
        v.why = (f"p = {v.p_value:.3g}; the baseline median is 0, so no ratio and no "
                 "interval: the size of a change cannot be told")
    return v


def decide(v: MetricVerdict, metric: Metric, lim: Limits, noisy: list[str]) -> MetricVerdict:
    """better or worse when the test, the interval and the noise threshold all say so;
    no significant difference when the interval lies inside the noise band; else could
    not tell, with each reason and the run's reach."""
    assert v.ratio is not None and v.ci95 is not None and v.p_value is not None
    change = v.ratio - 1
    excludes_one = v.ci95[0] > 1 or v.ci95[1] < 1
    if v.p_value < lim.alpha and excludes_one and abs(change) >= lim.noise:
        v.verdict = BETTER if (change > 0) == metric.higher_is_better else WORSE
        v.why = (f"{change:+.1%}, p = {v.p_value:.3g} < {lim.alpha}, 95% CI of the ratio "
                 f"{interval_text(v.ci95)} excludes 1")
        if noisy:
            v.why += (f", the sides do not overlap and the interval is further from 1 than "
                      f"their CV: decided although {', '.join(noisy)} > {lim.max_cv:.0%}")
        return v
    reasons = []
    if v.p_value >= lim.alpha:
        reasons.append(f"p = {v.p_value:.3g} >= {lim.alpha}")
    if not excludes_one:
        reasons.append(f"95% CI {interval_text(v.ci95)} includes 1")
    if abs(change) < lim.noise:
        reasons.append(f"{change:+.1%} is under the {lim.noise:.0%} noise threshold")
    return _same_or_untold(v, lim, reasons)


def _same_or_untold(v: MetricVerdict, lim: Limits, reasons: list[str]) -> MetricVerdict:
    """No change called: the same when the whole interval lies inside the noise band,
    else could not tell, with the reach (what size of change could hide in it)."""
    v.reach = reached = reach(v.ci95) or 0.0
    if inside_band(v.ci95, lim.noise):
        v.verdict = SAME
        reasons.append(f"the whole interval lies inside the +-{lim.noise:.0%} noise band")
    else:
        v.verdict = UNTOLD
        reasons.append(f"the interval reaches past the +-{lim.noise:.0%} noise band: "
                       + reach_text(reached))
    v.why = "; ".join(reasons)
    return v


def _decisive(v: MetricVerdict, lim: Limits, a: Sequence[float], b: Sequence[float]
              ) -> bool:
    """A change the run-to-run noise of the sides cannot make doubtful: significant,
    the sides (their outliers left out) apart, no run of one among the other's, and the
    whole interval further from 1 than the noisier side's CV (and the noise threshold)."""
    apart = bool(a and b) and (max(a) < min(b) or max(b) < min(a))
    margin = max(lim.noise, *(c for c in (cv(a), cv(b)) if c is not None))
    return (apart and v.p_value is not None and v.p_value < lim.alpha and v.ci95 is not None
            and (v.ci95[0] >= 1 + margin or v.ci95[1] <= 1 - margin))


def _with_outliers(v: MetricVerdict) -> MetricVerdict:
    if v.outliers:
        v.why += "; outlier(s) " + ", ".join(f"{o.side} run {o.run} ({o.value:.4g})"
                                            for o in v.outliers)
    return v


@dataclass
class Comparison:
    baseline: str  # what the baseline is (variant, my.cnf, run set)
    candidate: str
    server: str
    runs_baseline: list[str]
    runs_candidate: list[str]
    metrics: list[MetricVerdict] = field(default_factory=list)
    limits: Limits = field(default_factory=Limits)
    design: str = "interleaved runs"  # or "switchback: ..." (analysis/switchback.py)
    noise: Noise | None = None  # where the throughput's variance is (noise_of)
    # A workload's own items judged one by one (analysis/items.py), most slowed first.
    items: list[ItemVerdict] = field(default_factory=list)
    items_note: str = ""
    # Its items whose results differ between the sides (checksums), and how many were.
    results_differ: list[ResultsDiffer] = field(default_factory=list)
    results_note: str = ""
    # What moved per transaction between the sides, ranked (analysis/moved.py).
    moved: list[Moved] = field(default_factory=list)
    # Windows or runs that made no progress, each side's (analysis/stalls.py).
    stalls: Stalls | None = None

    @property
    def overall(self) -> str:
        """The first of :data:`ORDER` that a metric (or the stalls) has: worse if any
        is worse (a side that stalls where the other does not is worse); no verdict if
        any has none; could not tell if any could not; better if any is better; else no
        significant difference."""
        vs = {m.verdict or NO_VERDICT for m in self.metrics}
        if self.stalls is not None and self.stalls.verdict is not None:
            vs.add(self.stalls.verdict)
        return next((v for v in ORDER if v in vs), NO_VERDICT)

    @property
    def exit_code(self) -> int:
        """0 better or no significant difference, 3 worse, 4 no verdict or could not
        tell (nothing the DBA can act on)."""
        return EXIT.get(self.overall, 0)

    def to_json(self, decided: Final | None = None) -> JsonDict:
        """As compare.json holds it; under a sequential rule (``decided``) the verdict is
        the rule's, and the fixed-size statistics' own is kept apart (``fixed_size``)."""
        verdict, code = (decided.verdict, decided.exit_code) if decided \
            else (self.overall, self.exit_code)
        fixed: JsonDict = {"fixed_size": {"verdict": self.overall, "exit_code": self.exit_code}} \
            if decided else {}
        return {"baseline": self.baseline, "candidate": self.candidate,
                "server": self.server, "runs_baseline": self.runs_baseline,
                "runs_candidate": self.runs_candidate, "verdict": verdict,
                "exit_code": code, **fixed, "limits": asdict(self.limits),
                "design": self.design, "noise": self.noise.to_json() if self.noise else None,
                "metrics": [m.to_json() for m in self.metrics],
                "stalls": self.stalls.to_json() if self.stalls else None,
                "items": [x.to_json() for x in self.items], "items_note": self.items_note,
                "results_differ": [x.to_json() for x in self.results_differ],
                "results_note": self.results_note,
                "moved": [m.to_json() for m in self.moved]}

    def text(self, with_verdict: bool = True) -> str:
        """The table of metrics, their reasons, the noise, items and results, and (unless
        a sequential rule decides: ``with_verdict`` False) the verdict line."""
        def runs(n: int) -> str:
            return f"{n} run" + ("" if n == 1 else "s")

        if self.design.startswith("switchback"):
            lines = [f"compare on {self.server}: baseline {self.baseline} vs candidate "
                     f"{self.candidate}, {self.design}"]
            head_sides = ("A windows", "B windows")
        else:
            lines = [f"compare on {self.server}: baseline {self.baseline} "
                     f"({runs(len(self.runs_baseline))}) vs candidate {self.candidate} "
                     f"({runs(len(self.runs_candidate))})"]
            head_sides = ("baseline", "candidate")
        lines += _metric_table(self.metrics, head_sides)
        lines += [f"  {m.metric}: {m.why}" for m in self.metrics]
        if self.stalls is not None and self.stalls.any:
            lines.append(f"  stalls: {self.stalls.text()}")
        lines += reach_lines(self.metrics)
        if self.noise:
            lines.append(f"  noise: {self.noise.text}")
        lines += _item_lines(self.items, self.items_note)
        lines += _result_lines(self.results_differ, self.results_note)
        lines += moved_lines(self.moved)
        if with_verdict:
            lines.append(Final(self.overall, self.exit_code, self.design).line())
        return "\n".join(lines)


def reach_lines(metrics: Sequence[MetricVerdict]) -> list[str]:
    """What size of change this comparison could have seen, metric by metric where it
    called none: so that no difference found is never read as the same."""
    told = [f"{m.metric} {m.reach:.1%}" for m in metrics if m.reach is not None]
    if not told:
        return []
    return ["  reach: the smallest change each interval could tell from none: "
            + ", ".join(told)]


def _metric_table(metrics: list[MetricVerdict], sides: tuple[str, str]) -> list[str]:
    """The metrics' table, its columns padded, a line each."""
    head = ["metric", *sides, "ratio", "95% CI", "p", "CV b/c", "verdict"]
    rows = [head, *[_metric_row(m) for m in metrics]]
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    return ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True))
            for r in rows]


def _metric_row(m: MetricVerdict) -> list[str]:
    def num(x: float | None) -> str:
        return "-" if x is None else f"{x:.1f}" if abs(x) >= 100 else f"{x:.3g}"

    ci = interval_text(m.ci95)
    cvs = "/".join("-" if c is None else f"{c:.1%}" for c in (m.cv_baseline, m.cv_candidate))
    return [m.metric + (" (higher is better)" if m.higher_is_better else " (lower is better)"),
            num(m.baseline_median), num(m.candidate_median),
            "-" if m.ratio is None else f"{m.ratio:.3f}", ci,
            "-" if m.p_value is None else f"{m.p_value:.3g}", cvs, m.verdict or "NO VERDICT"]


@dataclass
class Final:
    """The one verdict of a ``harness compare``: what the text's last line, the exit code,
    compare.json's top level and compare.html all say."""

    verdict: str  # better, worse, no significant difference, no verdict; a sequential
    # rule's own: no change larger than N%, undecided
    exit_code: int  # 0, 3 worse, 4 no verdict
    by: str  # what decided: the design, or the sequential rule

    def line(self) -> str:
        if self.verdict == UNTOLD:
            return ("verdict: COULD NOT TELL whether the candidate differs from the "
                    "baseline: an interval reaches past the noise band (see reach)"
                    + (f" (exit code {self.exit_code})" if self.exit_code else ""))
        word = {WORSE: "WORSE than", BETTER: "BETTER than",
                SAME: "the same, within the noise band, as",
                NO_VERDICT: "NOT JUDGED against",
                "undecided": "NOT JUDGED against"}.get(self.verdict)
        said = f"the candidate is {word} the baseline" if word else \
            f"{self.verdict} between the candidate and the baseline"
        return f"verdict: {said}" + (f" (exit code {self.exit_code})" if self.exit_code
                                      else "")

    def to_json(self) -> JsonDict:
        return {"verdict": self.verdict, "exit_code": self.exit_code, "decided_by": self.by}


def final_verdict(comparisons: Sequence[Comparison], rule: Any = None) -> Final:
    """The verdict of a comparison over one or more servers: a sequential rule's when one
    decided the runs (``rule.verdict``: its decision is final, the fixed-size statistics
    on the same runs are shown, not counted); else worse if any server's is worse, no
    verdict if any has none, better if any is better, else no significant difference."""
    if rule is not None:
        code = {"worse": 3, "undecided": 4}.get(rule.verdict, 0)
        return Final(rule.verdict, code,
                     f"the sequential rule on {rule.watch or 'the headline figure'}")
    overall = {c.overall for c in comparisons}
    verdict = next((v for v in ORDER if v in overall), SAME)
    designs = sorted({c.design for c in comparisons})
    return Final(verdict, EXIT.get(verdict, 0),
                 "; ".join(designs) or "no comparison")


def moved_lines(moved: Sequence[Moved], indent: str = "") -> list[str]:
    """What moved per transaction (analysis/moved.py), one line a quantity."""
    if not moved:
        return []
    lines = [f"{indent}  what moved per transaction (interval excludes 1 first, then by "
             "size):"]
    for m in moved:
        ci = "" if m.ci95 is None else " " + interval_text(m.ci95)
        lines.append(f"{indent}    {m.quantity}: {m.baseline:.4g} -> {m.candidate:.4g}, "
                     f"{m.ratio_text}{ci}" + ("" if m.apart else " (within noise)"))
    return lines


def _result_lines(differ: list[ResultsDiffer], note: str, top: int = 10) -> list[str]:
    """The items whose results differ, each with a statement that shows it."""
    if not note:
        return []
    lines = [f"  results: {note}"]
    for x in differ[:top]:
        example = (x.example or "no sampled statement differs")[:100].replace("\n", " ")
        lines.append(f"    RESULTS DIFFER: {x.item[:12]} {x.label[:60]}; e.g. {example}")
    return lines


def _item_lines(items: list[ItemVerdict], note: str, top: int = 5) -> list[str]:
    """The items that moved most, each way: ratio, interval, verdict, share of time."""
    if not items:
        return []
    shown = [x for x in items[:top] if (x.ratio or 1) > 1] + \
        [x for x in items[::-1][:top] if (x.ratio or 1) < 1]
    lines = [f"  by item: {note}"]
    for x in shown:
        ci = interval_text(x.judged.ci95)
        lines.append(f"    x{x.ratio:.3f} {ci} {x.judged.verdict or 'NO VERDICT'}, "
                     f"{x.share:.1%} of the time: {x.item[:12]} {x.label[:60]}")
    return lines
