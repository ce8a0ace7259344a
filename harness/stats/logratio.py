"""Intervals of a ratio on the log scale with Student's t: two independent samples
(Welch's, with the Welch-Satterthwaite degrees of freedom) and paired ones. Pure
arithmetic on numbers, importing nothing of the harness, so that a workload's own
findings (SSB's flight ratio) can use it as the upgrade verdict and the sequential
rule do."""
from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Sequence


def welch_log_ratio(la: Sequence[float], lb: Sequence[float], alpha: float
                    ) -> tuple[float, float, float, float]:
    """Logs ``lb`` against logs ``la``: the ratio of geometric means, its Welch interval
    at ``1 - alpha`` (lo, hi) and the standard error of the log ratio."""
    diff = statistics.fmean(lb) - statistics.fmean(la)
    va, vb = _variance(la) / len(la), _variance(lb) / len(lb)
    se = math.sqrt(va + vb)
    t = _t_quantile(1 - alpha / 2, _welch_df(va, vb, len(la), len(lb)))
    return math.exp(diff), math.exp(diff - t * se), math.exp(diff + t * se), se


def paired_log_ratio(la: Sequence[float], lb: Sequence[float], alpha: float
                     ) -> tuple[float, float, float, float]:
    """Logs ``lb`` against logs ``la``, ``la[i]`` and ``lb[i]`` a pair: the ratio of
    geometric means, the t interval at ``1 - alpha`` of the pairs' mean difference and
    its standard error."""
    d = [y - x for x, y in zip(la, lb, strict=True)]
    mean = statistics.fmean(d)
    se = math.sqrt(_variance(d) / len(d))
    t = _t_quantile(1 - alpha / 2, len(d) - 1)
    return math.exp(mean), math.exp(mean - t * se), math.exp(mean + t * se), se


def _welch_df(va: float, vb: float, na: int, nb: int) -> float:
    """Welch-Satterthwaite degrees of freedom (identical values: the pooled n - 2)."""
    den = (va ** 2 / (na - 1) if va else 0.0) + (vb ** 2 / (nb - 1) if vb else 0.0)
    return (va + vb) ** 2 / den if den else float(na + nb - 2)


def _variance(xs: Sequence[float]) -> float:
    """The sample variance in floats (statistics.variance's exact fractions cost a
    simulation of thousands of comparisons most of its time)."""
    mean = math.fsum(xs) / len(xs)
    return math.fsum((x - mean) ** 2 for x in xs) / (len(xs) - 1)


@functools.lru_cache(maxsize=4096)
def _t_quantile(p: float, df: float) -> float:
    from scipy.stats import t

    return float(t.ppf(p, df))
