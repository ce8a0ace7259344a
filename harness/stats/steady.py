"""Where a series reaches its steady state, by MSER-5 (White, 1997; "the MSER-5
truncation rule" in White, Cobb & Spratt, WSC 2000): the series in batch means of 5
seconds, truncated where the standard error of the remaining mean is least, looked
for in the first half.

Two uses. :func:`settled_after` reads a finished run's measured part and says how many
of its first seconds were still settling (a report: how much longer a fixed warmup
should have been). :func:`is_steady` is the online rule behind ``warmup_s: auto``:
asked after each second of a warmup, it says whether what was read so far has settled.
A truncation point at the end of the first half means the series is still moving, or
too short to tell; one inside it, that the rest is its steady state.

Measured on simulated warmups (AR(1) seconds, correlation 0.5, 2% noise, 300 trials;
tests/unit/test_steady.py): a flat series is steady at 20-30 s, an exponential warmup
with a time constant of 8 s at 50-80 s, then at 99.3% or more of its final level; MSER
with batches of 1 or 2 seconds stopped at 71% and 49% of it on a slow warmup.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

BATCH = 5  # seconds a batch mean
LEAST_S = 4 * BATCH  # MSER needs 4 batches to say anything


def _cut(seconds: Sequence[float]) -> tuple[int, np.ndarray]:
    """(MSER's truncation point in batches, the batch means); (0, []) when too short."""
    x = np.asarray(seconds, dtype=float)
    k = len(x) // BATCH
    if k < 4:
        return 0, np.empty(0)
    b = x[: k * BATCH].reshape(k, BATCH).mean(axis=1)
    return int(np.argmin([float(np.var(b[d:]) / (k - d)) for d in range(k // 2 + 1)])), b


def settled_after(seconds: Sequence[float]) -> int:
    """Seconds at the start of a series that are not yet its steady state. MSER cuts
    noise too; a cut is kept only when the batches cut off lie apart from the rest's
    (each beyond 2 standard deviations of the rest's batches, on the same side)."""
    d, b = _cut(seconds)
    if d == 0:
        return 0
    rest = b[d:]
    z = (b[:d] - rest.mean()) / (rest.std(ddof=1) or 1.0)
    return BATCH * d if bool(np.all(z > 2)) or bool(np.all(z < -2)) else 0


def is_steady(seconds: Sequence[float]) -> bool:
    """Whether a series read so far has reached its steady state: at least
    :data:`LEAST_S` seconds, and MSER-5's truncation point inside the first half."""
    d, b = _cut(seconds)
    return len(b) >= 4 and d < len(b) // 2
