"""Workloads: prepare, run (returns samples and a summary), cleanup. One file per tool.

The runner reaches every kind through the functions here, by the scenario's ``kind``.
"""
from __future__ import annotations

from typing import Any

from ..mysql import Endpoint, connection
from ..scenario import (
    IibenchDataset,
    IibenchWorkload,
    SsbDataset,
    SsbWorkload,
    SysbenchDataset,
    SysbenchWorkload,
)
from .base import RunContext, Workload

AnyDataset = SysbenchDataset | SsbDataset | IibenchDataset


def prepare_dataset(ctx: RunContext, data: AnyDataset) -> dict[str, Any]:
    """Load one dataset entry; its timings (seconds, rows, rows/s)."""
    if isinstance(data, SsbDataset):
        from . import ssb
        return ssb.prepare_dataset(ctx, data)
    if isinstance(data, IibenchDataset):
        from . import iibench
        return iibench.prepare_dataset(ctx, data)
    from . import sysbench
    return sysbench.prepare_dataset(ctx, data)


def verify_dataset(ep: Endpoint, data: AnyDataset) -> list[str]:
    """What is missing or wrong in a dataset already on a server (empty: all there)."""
    if isinstance(data, SsbDataset):
        from . import ssb
        return ssb.verify_dataset(ep, data)
    if isinstance(data, IibenchDataset):
        from . import iibench
        return iibench.verify_dataset(ep, data)
    from . import sysbench
    return sysbench.verify_tables(ep, data)


def dataset_tables(data: AnyDataset) -> list[str]:
    """The tables a dataset entry creates (what a re-prepare drops first)."""
    if isinstance(data, SsbDataset):
        from . import ssb
        return list(ssb.SCHEMA)
    if isinstance(data, IibenchDataset):
        return [data.table]
    return [f"sbtest{i}" for i in range(1, data.tables + 1)]


def drop_dataset(ep: Endpoint, data: AnyDataset) -> None:
    """Drop a dataset's tables (only where the guard allowed it: a disposable server)."""
    with connection(ep) as c, c.cursor() as cur:
        for t in dataset_tables(data):
            cur.execute(f"DROP TABLE IF EXISTS `{data.database}`.`{t}`")


def workload_for(spec: SysbenchWorkload | SsbWorkload | IibenchWorkload,
                 data: AnyDataset) -> Workload:
    if isinstance(spec, SsbWorkload):
        assert isinstance(data, SsbDataset)
        from .ssb import SsbFlights
        return SsbFlights(spec, data)
    if isinstance(spec, IibenchWorkload):
        assert isinstance(data, IibenchDataset)
        from .iibench import InsertBenchmark
        return InsertBenchmark(spec, data)
    assert isinstance(data, SysbenchDataset)
    from .sysbench import SysbenchOLTP
    return SysbenchOLTP(spec, data)
