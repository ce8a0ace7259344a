"""95% intervals of a finding's statistic, taken where its uncertainty is.

- Within one run: the points of a window (per-second tps, a sampled series) resampled in
  moving blocks of about n^(1/3) points, the statistic recomputed on each resample.
  Consecutive seconds are not independent (a checkpoint, a burst of the dump), and whole
  blocks keep that, where resampling single seconds would make the interval too narrow.
- Across runs: the runs resampled, then each run's points in blocks, and the median of
  the runs' statistics taken (a two-level bootstrap, the level where the variance is:
  Kalibera & Jones, ISMM 2013).
- A ratio resamples its two sides independently.

How close to 95% it comes (tests/unit/test_three_valued.py, seeded): for a 30 s window
against a 90 s one, 97% when seconds are independent, 86% when each second keeps 0.6 of
the last one's deviation (78% if single seconds were resampled): short correlated
windows give intervals a little too narrow, and longer windows bring it closer.

The seed is fixed: the same data gives the same interval. A window with fewer than
``MIN_POINTS`` points gets no interval; its finding is judged on its value alone.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

BOOTSTRAP = 2000
MIN_POINTS = 5
Interval = tuple[float, float]
Points = Sequence[float] | np.ndarray  # one window's points
# A statistic of each row of a (resamples, points) matrix.
RowStat = Callable[[np.ndarray], np.ndarray]


def _stored(x: float) -> float:
    """``x`` as a finding or verdict row stores it: four decimals, or four significant
    digits below 0.01, so that a ratio's interval from too few runs (Welch's t on two
    runs a side can give [4.6e-05, 32084]) keeps its lower bound above 0."""
    x = float(x)
    return round(x, 4) if x == 0 or abs(x) >= 0.01 else float(f"{x:.4g}")


def interval_text(ci: Sequence[float] | None) -> str:
    """A 95% interval as the reports print it: three decimals, but a bound that would
    print as 0.000 and is not 0 in two significant digits (an interval from too few
    runs, [4.6e-05, 32084.113], is not printed as [0.000, 32084.113])."""
    return "-" if ci is None else f"[{bounds_text(ci)}]"


def bounds_text(ci: Sequence[float]) -> str:
    """An interval's two bounds as :func:`interval_text` prints them, without brackets."""
    return ", ".join(f"{x:.3f}" if x == 0 or abs(x) >= 5e-4 else f"{x:.2g}" for x in ci)


def says_nothing(ci: Sequence[float] | None) -> bool:
    """A ratio's interval that holds both half and double (too few runs, or runs that
    disagree): it cannot tell a change of size from none, and a verdict resting on it
    must say so rather than read as "the same"."""
    return ci is not None and ci[0] <= 0.5 and ci[1] >= 2


UNINFORMATIVE = "its interval holds both x0.5 and x2 and says nothing of the size: more runs a side"


def reach(ci: Sequence[float] | None) -> float | None:
    """The smallest change a ratio's interval could have told from none: how far its
    farther bound lies from 1 (0.142 for [0.938, 1.142]). A true change smaller than this
    is consistent with the data, so a comparison that found none says "changes under
    14.2% were not visible", never "the same"."""
    if ci is None:
        return None
    return max(1.0 - float(ci[0]), float(ci[1]) - 1.0, 0.0)


def inside_band(ci: Sequence[float] | None, band: float) -> bool:
    """The whole interval within ``band`` of 1 (0.03: [0.97, 1.03]): the only evidence
    for "no difference" (an interval wider than the band could hide a change of its
    size)."""
    return ci is not None and 1.0 - band <= ci[0] and ci[1] <= 1.0 + band


def reach_text(x: float) -> str:
    """A reach as the verdicts say it: "changes under 14.2% were not visible"."""
    return f"changes under {x:.1%} were not visible in this run"


def stored_ci(ci: Sequence[float] | None) -> list[float] | None:
    """An interval's bounds as :func:`_stored` keeps them (None: no interval)."""
    return None if ci is None else [_stored(x) for x in ci]


def _nearest_rank(q: float) -> RowStat:
    """The value at index int(q * n) of each sorted row (how the phase summary takes
    its p95), so the interval is of the same statistic as the value."""
    def rows(a: np.ndarray) -> np.ndarray:
        k = min(a.shape[1] - 1, int(q * a.shape[1]))
        return np.sort(a, axis=1)[:, k]
    return rows


ROW_STATS: dict[str, RowStat] = {
    "median": lambda a: np.median(a, axis=1),
    "mean": lambda a: np.mean(a, axis=1),
    "p95": _nearest_rank(0.95),
}


def block_len(n: int) -> int:
    return max(1, round(n ** (1 / 3)))


def resample(xs: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` moving-block resamples of ``xs``, one per row, each as long as ``xs``."""
    size = len(xs)
    b = block_len(size)
    blocks = math.ceil(size / b)
    starts = rng.integers(0, size - b + 1, (n, blocks))
    idx = (starts[:, :, None] + np.arange(b)).reshape(n, -1)[:, :size]
    return xs[idx]


def replicates(xs: Points, stat: str, n: int, rng: np.random.Generator
               ) -> np.ndarray:
    """``n`` bootstrap values of ``stat`` over one window's points."""
    return ROW_STATS[stat](resample(np.asarray(xs, dtype=float), n, rng))


def runs_replicates(runs: Sequence[Points], stat: str, n: int,
                    rng: np.random.Generator) -> np.ndarray:
    """``n`` bootstrap values of the median over runs of each run's ``stat``: runs
    resampled, then each picked run's points in blocks."""
    per_run = np.stack([replicates(r, stat, n, rng) for r in runs])  # (runs, n)
    k = len(runs)
    picked = rng.integers(0, k, (n, k))
    column = rng.integers(0, n, (n, k))
    return np.median(per_run[picked, column], axis=1)


def _percentiles(xs: np.ndarray) -> Interval | None:
    xs = xs[np.isfinite(xs)]
    if not xs.size:
        return None
    lo, hi = np.percentile(xs, [2.5, 97.5])
    return float(lo), float(hi)


def _enough(*groups: Sequence[Points], least: int = MIN_POINTS) -> bool:
    return all(g and all(len(r) >= least for r in g) for g in groups)


def value_ci(xs: Points, stat: str = "median", n: int = BOOTSTRAP, seed: int = 0
             ) -> Interval | None:
    """95% interval of ``stat`` over one window's points."""
    if not _enough([xs]):
        return None
    return _percentiles(replicates(xs, stat, n, np.random.default_rng(seed)))


def window_ratio_ci(inside: Points, outside: Points, stat: str = "median",
                    n: int = BOOTSTRAP, seed: int = 0) -> Interval | None:
    """95% interval of stat(inside) / stat(outside), two windows of one run."""
    return ratio_ci([outside], [inside], stat, n, seed)


def share_below_ci(inside: Points, outside: Points, fraction: float, n: int = BOOTSTRAP,
                   seed: int = 0) -> Interval | None:
    """95% interval of the share of ``inside``'s points below ``fraction`` of the
    median of ``outside`` (both windows of one run, each resampled in blocks: a stall
    is a run of seconds, and whole blocks keep it one)."""
    if not _enough([inside], [outside]):
        return None
    rng = np.random.default_rng(seed)
    floor = fraction * replicates(outside, "median", n, rng)
    shares = (resample(np.asarray(inside, dtype=float), n, rng) < floor[:, None]).mean(axis=1)
    return _percentiles(shares)


def ratio_ci(base: Sequence[Points], cand: Sequence[Points],
             stat: str = "median", n: int = BOOTSTRAP, seed: int = 0,
             least: int = MIN_POINTS) -> Interval | None:
    """95% interval of the median over runs of ``stat`` of ``cand`` / the same of
    ``base`` (each a list of runs' points; two-level bootstrap). ``least``: the points
    a run needs (fewer where each point is a whole repeat, say an SSB flight)."""
    if not _enough(base, cand, least=least):
        return None
    rng = np.random.default_rng(seed)
    b = runs_replicates(base, stat, n, rng)
    c = runs_replicates(cand, stat, n, rng)
    ok = b != 0
    return _percentiles(c[ok] / b[ok]) if ok.any() else None



Z95 = 1.959964


def sd_of(ci: Sequence[float] | None) -> float:
    """The standard error a 95% interval stands for (taken as normal); 0 without one."""
    return (ci[1] - ci[0]) / (2 * Z95) if ci else 0.0


def stated_replicates(values: Sequence[float], sds: Sequence[float], n: int,
                      rng: np.random.Generator) -> np.ndarray:
    """``n`` bootstrap medians over runs that each stated a value and its standard
    error: the runs resampled, then each picked run's value drawn around it (never
    below 0 when no value is: a rate or a count cannot go negative, and a ratio of
    two must not)."""
    v, sd = np.asarray(values, dtype=float), np.asarray(sds, dtype=float)
    k = len(v)
    picked = rng.integers(0, k, (n, k))
    draws = v[picked] + rng.normal(0.0, 1.0, (n, k)) * sd[picked]
    if (v >= 0).all():
        draws = np.maximum(draws, 0.0)
    return np.median(draws, axis=1)


def stated_ci(values: Sequence[float], sds: Sequence[float], n: int = BOOTSTRAP,
              seed: int = 0) -> Interval | None:
    """95% interval of the median over runs of their stated values."""
    if not _informative(values, sds):
        return None
    return _percentiles(stated_replicates(values, sds, n, np.random.default_rng(seed)))


def stated_ratio_ci(base: tuple[Sequence[float], Sequence[float]],
                    cand: tuple[Sequence[float], Sequence[float]], n: int = BOOTSTRAP,
                    seed: int = 0) -> Interval | None:
    """95% interval of the ratio of two such medians (each side: values, sds)."""
    if not (_informative(*base) and _informative(*cand)):
        return None
    rng = np.random.default_rng(seed)
    b, c = stated_replicates(*base, n, rng), stated_replicates(*cand, n, rng)
    ok = b != 0
    return _percentiles(c[ok] / b[ok]) if ok.any() else None


def _informative(values: Sequence[float], sds: Sequence[float]) -> bool:
    """Three runs, or runs that each carry a within-run interval: either says how far
    the value could move; one or two bare values say nothing."""
    return len(values) >= 3 or (len(values) >= 1 and all(sd > 0 for sd in sds))
