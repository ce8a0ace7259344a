"""CPU wake-up effects, measured and neutralised.

On the virtual machines this project runs on, a single-threaded client runs ~3x faster
when another core is busy: idle vCPUs halt and wake slowly. A phase with a side load then
looks faster than one without for reasons that have nothing to do with MySQL.
:func:`wakeup_probe` measures the effect at the start of a run, and :func:`keep_awake`
keeps every CPU equally awake so phases compare fairly, by one of two methods:

* ``pm_qos`` (preferred): a PM QoS request of 0 us on /dev/cpu_dma_latency, held open for
  the run. The cpuidle governor then only polls instead of halting; the request ends
  when the file is closed (or the harness dies), so nothing needs restoring. Measured
  here: 1-thread oltp_read_only 507 -> 1303 tps (1449 with a busy core), 2 threads
  2757 -> 2623 tps.
* ``spinner``: idle-priority (SCHED_IDLE) busy loops, where the QoS file is not
  writable. They cost throughput when the workload needs every core (measured here:
  2 threads 2782 -> 1037 tps with one spinner per CPU), so pm_qos is used when it can be.
"""
from __future__ import annotations

import os
import struct
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .. import proc
from ..errors import InputError

_SPIN = ("import os, sys\n"
         "if sys.argv[1] == 'idle':\n"
         "    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))\n"
         "while True:\n    pass\n")


class KeepAwake:
    """Context manager: ``n`` spinner processes (idle priority unless ``idle=False``)."""

    def __init__(self, n: int | None = None, idle: bool = True):
        self.n = n or os.cpu_count() or 1
        self.idle = idle
        self.procs: list[subprocess.Popen[bytes]] = []

    def __enter__(self) -> KeepAwake:
        for _ in range(self.n):
            self.procs.append(proc.spawn_daemon(
                [sys.executable, "-c", _SPIN, "idle" if self.idle else "normal"],
                Path(os.devnull)))
        return self

    def __exit__(self, *exc: object) -> None:
        for p in self.procs:
            proc.stop_process(p, grace_s=1.0, first=15)
        self.procs.clear()


PM_QOS = Path("/dev/cpu_dma_latency")


@contextmanager
def keep_awake(method: str = "auto") -> Iterator[str]:
    """Keep every CPU awake for the block; yields the method used (pm_qos or spinner)."""
    if method in ("auto", "pm_qos"):
        try:
            fd = os.open(PM_QOS, os.O_WRONLY)
        except OSError as e:
            if method == "pm_qos":
                raise InputError(f"cpu_keepalive: pm_qos needs write access to {PM_QOS} "
                                 f"({e.strerror}); use cpu_keepalive: spinner") from None
        else:
            try:
                os.write(fd, struct.pack("i", 0))
                yield "pm_qos"
            finally:
                os.close(fd)  # closing the file withdraws the request
            return
    with KeepAwake():
        yield "spinner"


def wakeup_probe(tps: Callable[[], float]) -> dict[str, Any]:
    """The load ``tps`` (single-threaded, a few seconds: the workload plugin's) measured
    on an idle machine, then with one core kept busy."""
    idle = tps()
    with KeepAwake(n=1, idle=False):
        busy = tps()
    ratio = busy / idle if idle else float("nan")
    return {"idle_tps": round(idle, 1), "one_core_busy_tps": round(busy, 1),
            "ratio": round(ratio, 3), "large": ratio > 1.25 or ratio < 0.8}
