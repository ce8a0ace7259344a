"""``make bench`` section ``seek_disk``: is the model disk the model, and not its own
bottleneck (harness/host/seekdisk.py)?

On a model disk (sata-7200 and the given geometry) in a temporary folder, O_DIRECT reads
of a file on its ext4, from a few threads at once:

* random 16 KB reads with the model on: reads/s and mean latency against the model's
  (one seek plus the transfer, one at a time), and the daemon's CPU per request and
  lateness beyond the model;
* sequential 1 MB reads with the model on: MB/s against the model's rate;
* random 16 KB reads with the model off: how many requests a second the daemon itself
  serves, against the model's at most ~120 - how far it is from being the bottleneck.
"""
from __future__ import annotations

import mmap
import os
import random
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from ..host.seekdisk import PROFILES, Geometry, SeekDisk, measured
from ..jsonvalue import JsonDict

FILE_MB = 256
PAGE = 16384


def _reader(path: Path, size: int, sequential: bool, until: float,
            out: list[float]) -> None:
    """O_DIRECT reads of ``size`` bytes until ``until``; each one's latency in ``out``."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    buf = mmap.mmap(-1, size)
    n, pos = (FILE_MB << 20) // size, random.randrange(FILE_MB)
    try:
        while time.monotonic() < until:
            pos = (pos + 1) % n if sequential else random.randrange(n)
            t = time.monotonic()
            os.preadv(fd, [buf], pos * size)
            out.append(time.monotonic() - t)
    finally:
        os.close(fd)


def _load(path: Path, size: int, sequential: bool, threads: int,
          seconds: float) -> dict[str, float]:
    until = time.monotonic() + seconds
    lat: list[list[float]] = [[] for _ in range(threads)]
    ts = [threading.Thread(target=_reader, args=(path, size, sequential, until, lat[k]))
          for k in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    every = [x for xs in lat for x in xs]
    return {"reads": len(every), "reads_per_s": round(len(every) / seconds, 1),
            "mb_per_s": round(len(every) * size / seconds / 1e6, 2),
            "latency_ms_mean": round(sum(every) / max(len(every), 1) * 1000, 3)}


def _phase(disk: SeekDisk, on: bool, run: Callable[[], dict[str, float]]
           ) -> tuple[dict[str, float], JsonDict]:
    """What the load measured, and the same with what the disk's daemon counted."""
    before = disk.model(on)
    got = run()
    return got, {**got, "daemon": measured(before, disk.model(on))}


def bench_seek_disk(seconds: float, threads: int = 4,
                    log: Callable[[str], None] = print) -> JsonDict:
    g = Geometry(*PROFILES["sata-7200"])
    model_read_ms = g.seek_ms + PAGE / (g.mbps * 1e6) * 1000
    with tempfile.TemporaryDirectory(prefix="bench-seekdisk-") as tmp:
        disk = SeekDisk(Path(tmp), g, 2 << 30)
        fs = disk.attach()
        try:
            data = fs / "data"
            with open(data, "wb") as f:
                for _ in range(FILE_MB):
                    f.write(os.urandom(1 << 20))
                os.fsync(f.fileno())
            log(f"  seek_disk: random 16K reads, model on ({seconds:.0f} s)")
            rnd_got, rnd = _phase(disk, True, lambda: _load(data, PAGE, False, threads, seconds))
            log(f"  seek_disk: sequential 1M reads, model on ({seconds:.0f} s)")
            seq_got, seq = _phase(disk, True, lambda: _load(data, 1 << 20, True, 1, seconds))
            log(f"  seek_disk: random 16K reads, model off ({seconds:.0f} s)")
            free_got, free = _phase(disk, False, lambda: _load(data, PAGE, False, threads, seconds))
        finally:
            disk.detach()
    return {"geometry": {"model": "sata-7200", "seek_ms": g.seek_ms, "mbps": g.mbps},
            "threads": threads, "seconds": seconds,
            "random_16k": {**rnd, "model_reads_per_s": round(1000 / model_read_ms, 1),
                           "model_latency_ms_at_queue_depth": round(
                               model_read_ms * threads, 3)},
            "sequential_1m": {**seq, "model_mb_per_s": g.mbps},
            "passthrough_16k": {**free, "headroom_x": round(
                free_got["reads_per_s"] / (1000 / model_read_ms), 1)}}
