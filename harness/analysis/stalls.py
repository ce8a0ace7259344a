"""Stalls: windows or runs in which the server made no progress, counted per side.

A window (of a switchback) or a run (of interleaved runs) stalled when most of its
measured seconds completed no transaction: its median per-second throughput is 0. Such
a stretch has no throughput ratio (the log of 0) and no latency (sysbench prints 0.00
for a second in which nothing finished: a latency of nothing, not a fast one), so the
interval machinery cannot weigh it; yet a side that stalls where the other does not is
the plainest regression there is. So stalls are counted and tested on their own:

- windows, paired as the switchback pairs them: the pairs in which exactly one side
  stalled, by a two-sided sign test (McNemar's exact test): were the sides the same,
  either is as likely to be the one that stalled;
- runs: Fisher's exact test on each side's stalled and unstalled runs.

A side that stalled significantly more often is worse, whatever the other metrics say.
Too few stalls to test are shown, never dropped.
"""
from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from ..jsonvalue import JsonDict

WINDOWS, RUNS = "windows", "runs"


@dataclass
class Stalls:
    """Each side's stalled windows (or runs) out of how many, and what they say."""

    unit: str  # WINDOWS or RUNS
    baseline: int
    baseline_of: int
    candidate: int
    candidate_of: int
    p_value: float | None = None  # None: no stall on either side
    verdict: str | None = None  # "worse" or "better" (the candidate), None: no finding

    @property
    def any(self) -> bool:
        return bool(self.baseline or self.candidate)

    def text(self) -> str:
        """What the stalls were, and what they decided."""
        said = (f"the candidate made no progress in {self.candidate} of its "
                f"{self.candidate_of} {self.unit}, the baseline in {self.baseline} of "
                f"{self.baseline_of}")
        if self.verdict is not None:
            side = "candidate" if self.verdict == "worse" else "baseline"
            return (f"{said}: the {side} stalls where the other does not (p = "
                    f"{self.p_value:.3g}), so the candidate is {self.verdict.upper()}")
        if self.p_value is not None:
            return f"{said} (p = {self.p_value:.3g}: too few to tell the sides apart by)"
        return said

    def to_json(self) -> JsonDict:
        return asdict(self)


def stalled(values: Sequence[float]) -> bool:
    """A stretch (its per-second throughput) stalled: most of its seconds finished
    nothing (its median is 0). An empty stretch did not stall: it was not measured."""
    return len(values) > 0 and statistics.median(values) <= 0


def of_pairs(pairs: Sequence[tuple[bool, bool]], alpha: float) -> Stalls:
    """Stalls of paired windows ((baseline stalled, candidate stalled) per pair), the
    discordant pairs judged by the exact sign test."""
    a_only = sum(a and not b for a, b in pairs)
    b_only = sum(b and not a for a, b in pairs)
    out = Stalls(WINDOWS, sum(a for a, _ in pairs), len(pairs),
                 sum(b for _, b in pairs), len(pairs))
    if a_only + b_only:
        from scipy.stats import binomtest

        out.p_value = float(binomtest(b_only, a_only + b_only, 0.5).pvalue)
        out.verdict = _which(out.p_value, alpha, b_only - a_only)
    elif out.any:
        out.p_value = 1.0  # both sides stalled in the same pairs: no difference
    return out


def of_runs(baseline: Sequence[bool], candidate: Sequence[bool], alpha: float) -> Stalls:
    """Stalls of each side's runs (stalled or not), judged by Fisher's exact test."""
    out = Stalls(RUNS, sum(baseline), len(baseline), sum(candidate), len(candidate))
    if out.any and baseline and candidate:
        from scipy.stats import fisher_exact

        table = [[out.baseline, out.baseline_of - out.baseline],
                 [out.candidate, out.candidate_of - out.candidate]]
        out.p_value = float(fisher_exact(table).pvalue)
        share = (out.candidate / out.candidate_of) - (out.baseline / out.baseline_of)
        out.verdict = _which(out.p_value, alpha, share)
    return out


def _which(p: float, alpha: float, more_in_candidate: float) -> str | None:
    if p >= alpha or not more_in_candidate:
        return None
    return "worse" if more_in_candidate > 0 else "better"
