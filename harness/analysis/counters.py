"""A counter's growth over a stretch of a run: the one reading every per-transaction
and per-second figure of a counter uses (what moved, switchback's windows, compare's
metrics), so they cannot drift apart on where a window starts or what too few points
means. (The upgrade verdict's CPU at a thread count interpolates at step boundaries
instead: :func:`.upgrade.cpu_by_threads`.)"""
from __future__ import annotations

import math
from collections.abc import Iterable


def rate_between(points: Iterable[tuple[float, float]], start: float,
                 end: float = math.inf) -> float | None:
    """A counter's growth a second from its first to its last point in [start, end];
    None under two points there, or with no time between them."""
    first = last = None
    for t, v in points:
        if start <= t <= end:
            if first is None:
                first = (t, v)
            last = (t, v)
    if first is None or last is None or last[0] <= first[0]:
        return None
    return (last[1] - first[1]) / (last[0] - first[0])
