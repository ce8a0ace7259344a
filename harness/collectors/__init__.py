"""Collectors sample the server and the OS while workloads run. One file per source."""
from __future__ import annotations

from contextlib import ExitStack
from typing import Any

from .base import Collector, CollectorContext, PolledCollector, Unsupported
from .buffer_pool import BufferPoolIndex, BufferPoolStats
from .global_status import GlobalStatus
from .host import Container, Diskstats, Meminfo, MysqldProcess, Vmstat
from .innodb_metrics import InnodbMetrics
from .innodb_status import InnodbStatus
from .node import ProcStat, ProcVmstat

# name -> class; every one is on by default, at its default interval.
REGISTRY: dict[str, type[Collector]] = {c.name: c for c in (
    GlobalStatus, InnodbMetrics, InnodbStatus, BufferPoolStats, BufferPoolIndex,
    Vmstat, ProcVmstat, ProcStat, Meminfo, Diskstats, MysqldProcess, Container)}


def start_all(ctx: CollectorContext, settings: dict[str, Any] | None = None
              ) -> tuple[ExitStack, list[Collector]]:
    """Enter every enabled collector; the returned stack stops them all.

    ``settings`` maps a collector name to an object with ``enabled`` and ``interval_s``
    (the scenario's ``collectors:`` block); unnamed collectors run at their defaults.
    """
    settings = settings or {}
    stack = ExitStack()
    started: list[Collector] = []
    try:
        for name, cls in REGISTRY.items():
            spec = settings.get(name)
            if spec is not None and not spec.enabled:
                continue
            c = cls(ctx, getattr(spec, "interval_s", None))
            stack.enter_context(c)
            started.append(c)
    except BaseException:
        stack.close()
        raise
    return stack, started


__all__ = ["Collector", "CollectorContext", "PolledCollector", "REGISTRY", "Unsupported",
           "start_all"]
