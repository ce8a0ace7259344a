"""Compact encoding of one chunk of a time series: times and values as compressed arrays.

A 1 h run sampled every second over ~2,500 series is 9 M points, and the store must hold
it in <= 50 MB, i.e. under 6 bytes a point. Rows of (t, value) cost 30+ bytes a point
in any SQL engine, so points are stored in chunks:

* times: milliseconds since run start, delta-of-delta encoded as int64 then zlib'd;
  a regular 1 s cadence becomes a run of zeros and compresses to almost nothing;
* values: when every value is an integer (counters, gauges of pages or bytes), delta
  encoded int64 then zlib'd; otherwise float64 XOR'd with the previous value (as
  Gorilla does), bytes transposed so like bytes sit together, then zlib'd.
"""
from __future__ import annotations

import zlib

import numpy as np

CODEC_INT_DELTA = 1
CODEC_FLOAT_XOR = 2
_LEVEL = 6


def encode_times(t_s: np.ndarray) -> bytes:
    ms = np.round(np.asarray(t_s, dtype=np.float64) * 1000.0).astype(np.int64)
    dod = np.diff(ms, n=1, prepend=0)
    dod[1:] = np.diff(dod)
    return zlib.compress(dod.astype("<i8").tobytes(), _LEVEL)


def decode_times(blob: bytes) -> np.ndarray:
    dod = np.frombuffer(zlib.decompress(blob), dtype="<i8")
    return np.cumsum(np.cumsum(dod)).astype(np.float64) / 1000.0


def encode_values(v: np.ndarray) -> bytes:
    v = np.asarray(v, dtype=np.float64)
    if v.size and np.all(np.isfinite(v)) and np.all(v == np.round(v)) and np.all(
            np.abs(v) < 2**53):
        ints = v.astype(np.int64)
        delta = np.diff(ints, prepend=0)
        return bytes([CODEC_INT_DELTA]) + zlib.compress(delta.astype("<i8").tobytes(), _LEVEL)
    bits = v.astype("<f8").view("<u8")
    xored = bits ^ np.concatenate(([np.uint64(0)], bits[:-1])) if bits.size else bits
    shuffled = xored.view(np.uint8).reshape(-1, 8).T.copy()
    return bytes([CODEC_FLOAT_XOR]) + zlib.compress(shuffled.tobytes(), _LEVEL)


def decode_values(blob: bytes) -> np.ndarray:
    codec, body = blob[0], zlib.decompress(blob[1:])
    if codec == CODEC_INT_DELTA:
        return np.cumsum(np.frombuffer(body, dtype="<i8")).astype(np.float64)
    if codec == CODEC_FLOAT_XOR:
        raw = np.frombuffer(body, dtype=np.uint8)
        n = raw.size // 8
        xored = raw.reshape(8, n).T.copy().view("<u8").ravel()
        bits = np.bitwise_xor.accumulate(xored) if n else xored
        return bits.view("<f8").astype(np.float64)
    raise ValueError(f"unknown value codec {codec}")
