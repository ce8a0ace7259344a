"""The nearest-rank quantile the workloads and the runner report (no interpolation: a
p95 is a latency some transaction had)."""
from __future__ import annotations

from collections.abc import Sequence


def nearest_rank(xs: Sequence[float], q: float) -> float | None:
    """The value at rank ``q`` of ``xs`` (0 <= q <= 1; 1 is the maximum), None if empty."""
    if not len(xs):
        return None
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]
