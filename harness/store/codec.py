"""Compact encoding of one chunk of a time series: times and values as compressed arrays.

A 1 h run sampled every second over ~2,500 series is 9 M points, and the store must hold
it in <= 50 MB, i.e. under 6 bytes a point. Rows of (t, value) cost 30+ bytes a point
in any SQL engine, so points are stored in chunks, each array packed as integers:

* times: milliseconds since run start, delta-of-delta; a steady cadence becomes zeros;
* values that are all integers (counters, pages, bytes): deltas;
* values with at most 4 decimals (rates such as tps 3431.67): scaled to integers, deltas;
* any other float: IEEE bits XOR'd with the previous value (as Gorilla does).

Integers are zigzag'd (small negatives become small positives), cut to the narrowest
byte width that holds them, bytes transposed so like bytes sit together (blosc's
shuffle), then zlib'd. Every codec round-trips exactly (times to the millisecond).
"""
from __future__ import annotations

import zlib
from typing import Any

import numpy as np
from numpy.typing import NDArray

CODEC_INT_DELTA = 1
CODEC_FLOAT_XOR = 2
CODEC_DECIMAL_DELTA = 3
_LEVEL = 6
_MAX_EXACT = 2.0 ** 53


def _pack_ints(x: NDArray[Any]) -> bytes:
    """int64 array -> width byte + shuffled, zlib'd zigzag bytes."""
    zz = ((x << 1) ^ (x >> 63)).astype(np.uint64)
    top = int(zz.max()) if zz.size else 0
    width = 1 if top < 1 << 8 else 2 if top < 1 << 16 else 4 if top < 1 << 32 else 8
    narrow = zz.astype(f"<u{width}")
    shuffled = narrow.view(np.uint8).reshape(-1, width).T.tobytes()
    return bytes([width]) + zlib.compress(shuffled, _LEVEL)


def _unpack_ints(blob: bytes) -> NDArray[Any]:
    width = blob[0]
    raw = np.frombuffer(zlib.decompress(blob[1:]), dtype=np.uint8)
    n = raw.size // width
    zz = raw.reshape(width, n).T.copy().view(f"<u{width}").ravel().astype(np.uint64)
    return ((zz >> np.uint64(1)).astype(np.int64) ^ -(zz & np.uint64(1)).astype(np.int64))


def encode_times(t_s: NDArray[Any]) -> bytes:
    ms = np.round(np.asarray(t_s, dtype=np.float64) * 1000.0).astype(np.int64)
    return _pack_ints(np.diff(np.diff(ms, prepend=0), prepend=0))


def decode_times(blob: bytes) -> NDArray[Any]:
    out: NDArray[Any] = np.cumsum(np.cumsum(_unpack_ints(blob))).astype(np.float64) / 1000.0
    return out


def _decimals(v: NDArray[Any]) -> int | None:
    """Smallest k <= 4 such that every value is an exact k-decimal number, else None."""
    for k in range(5):
        scaled = np.round(v * 10.0 ** k)
        if np.all(np.abs(scaled) < _MAX_EXACT) and np.array_equal(scaled / 10.0 ** k, v):
            return k
    return None


def encode_values(v: NDArray[Any]) -> bytes:
    v = np.asarray(v, dtype=np.float64)
    if v.size and np.all(np.isfinite(v)):
        k = _decimals(v)
        if k == 0:
            return bytes([CODEC_INT_DELTA]) + _pack_ints(np.diff(v.astype(np.int64), prepend=0))
        if k is not None:
            ints = np.round(v * 10.0 ** k).astype(np.int64)
            return (bytes([CODEC_DECIMAL_DELTA, k]) + _pack_ints(np.diff(ints, prepend=0)))
    bits = v.astype("<f8").view("<u8")
    xored = bits ^ np.concatenate(([np.uint64(0)], bits[:-1])) if bits.size else bits
    shuffled = xored.view(np.uint8).reshape(-1, 8).T.tobytes()
    return bytes([CODEC_FLOAT_XOR]) + zlib.compress(shuffled, _LEVEL)


def decode_values(blob: bytes) -> NDArray[Any]:
    codec = blob[0]
    if codec == CODEC_INT_DELTA:
        ints: NDArray[Any] = np.cumsum(_unpack_ints(blob[1:])).astype(np.float64)
        return ints
    if codec == CODEC_DECIMAL_DELTA:
        k = blob[1]
        fixed: NDArray[Any] = np.cumsum(_unpack_ints(blob[2:])).astype(np.float64) / 10.0 ** k
        return fixed
    if codec == CODEC_FLOAT_XOR:
        raw = np.frombuffer(zlib.decompress(blob[1:]), dtype=np.uint8)
        n = raw.size // 8
        xored = raw.reshape(8, n).T.copy().view("<u8").ravel()
        bits = np.bitwise_xor.accumulate(xored) if n else xored
        return bits.view("<f8").astype(np.float64)
    raise ValueError(f"unknown value codec {codec}")


__all__ = ["encode_times", "decode_times", "encode_values", "decode_values"]
