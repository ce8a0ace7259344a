"""Workloads: one module per kind, each declaring a ``PLUGIN`` (its dataset and
workload models, prepare, verify, the tables it makes, how it runs; a replay has no
dataset of its own and runs on any, a dump is a dataset only). This registry finds
them; the scenario's unions and the runner's calls go through it by ``kind``, and
nothing else names a kind.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..model import DatasetModel, WorkloadModel, discover
from ..server.catalog import Build
from ..server.mysql import Endpoint, connection
from ..store import RunSummary
from ..store.prepared import Prepared
from .base import RunContext, Workload, WorkloadPlugin

if TYPE_CHECKING:
    from ..store import RunReader, StoredRun

PLUGINS: dict[str, WorkloadPlugin[Any, Any]] = discover(
    __name__, __path__, lambda p: p.kind if isinstance(p, WorkloadPlugin) else None)
# The kind of a dataset entry or workload that leaves ``kind:`` out.
(DEFAULT_KIND,) = [k for k, p in PLUGINS.items() if p.default]


def plugin(kind: str) -> WorkloadPlugin:
    return PLUGINS[kind]


def of_run(run: StoredRun) -> WorkloadPlugin | None:
    """The plugin whose workload made a stored run (None: unknown, or no summary)."""
    return of_summary(run.summary)


def of_summary(summary: RunSummary) -> WorkloadPlugin | None:
    """The plugin whose workload a run summary names first (``sysbench
    oltp_read_only``); None when it is unknown or there is none."""
    return PLUGINS.get(summary.workload.split(" ")[0])


def runs_by_plugin(runs: list[StoredRun]) -> list[tuple[WorkloadPlugin, list[Any]]]:
    """The runs grouped by the plugin that made them, in registry order."""
    return [(p, mine) for p in PLUGINS.values()
            if (mine := [r for r in runs if of_run(r) is p])]


def prepare_dataset(ctx: RunContext, data: Any) -> Prepared:
    """Load one dataset entry; its timings (seconds, rows, rows/s)."""
    return plugin(data.kind).prepare(ctx, data)


def verify_dataset(ep: Endpoint, data: Any) -> list[str]:
    """What is missing or wrong in a dataset already on a server (empty: all there)."""
    return plugin(data.kind).verify(ep, data)


def dataset_tables(data: Any) -> list[str]:
    """The tables a dataset entry creates (what a re-prepare drops first)."""
    return plugin(data.kind).tables(data)


def seed_datadir(datasets: list[Any]) -> Path | None:
    """The datadir a new sandbox of these datasets starts on a copy of (None: an
    initialised one)."""
    return next((p for d in datasets if (p := plugin(d.kind).seed(d)) is not None), None)


def dataset_build_problems(build: Build, datasets: list[Any]) -> list[str]:
    """Why these datasets cannot be used on ``build`` (empty: they can)."""
    return [f"dataset ({d.kind} {d.database}): {why}" for d in datasets
            for why in plugin(d.kind).build_problems(build, d)]


def drop_dataset(ep: Endpoint, data: Any) -> None:
    """Drop a dataset's tables (only where the guard allowed it: a disposable server)."""
    with connection(ep) as c, c.cursor() as cur:
        for t in dataset_tables(data):
            cur.execute(f"DROP TABLE IF EXISTS `{data.database}`.`{t}`")


def throughput(store: RunReader, run_id: str) -> list[Any]:
    """The run's throughput series over time, whichever workload stored it."""
    return _declared(store, run_id, [p.throughput[:2] for p in PLUGINS.values()
                                     if p.throughput])


def latency(store: RunReader, run_id: str) -> list[Any]:
    """The run's latency series over time, whichever workload stored it."""
    return _declared(store, run_id, [p.latency for p in PLUGINS.values() if p.latency])


def _declared(store: RunReader, run_id: str, series: list[tuple[str, str]]) -> list[Any]:
    """The first of ``series`` (source, metric) the run has."""
    for source, metric in series:
        found = store.series(run_id, source=source, metric=metric)
        if found:
            return list(found)
    return []


def threads(store: RunReader, run_id: str) -> list[Any]:
    """The run's thread count over time, from the source of its throughput series."""
    return _declared(store, run_id, [(p.throughput[0], "threads") for p in PLUGINS.values()
                                     if p.throughput])


def throughput_label() -> str:
    """What the throughput axis shows, per workload that has one."""
    return " or ".join(sorted({p.throughput[2] for p in PLUGINS.values() if p.throughput}))


def workload_for(spec: WorkloadModel, data: DatasetModel) -> Workload[Any, Any]:
    """The Workload that runs ``spec`` on ``data`` (of the same kind: the scenario
    model checks it)."""
    return plugin(spec.kind).runner(spec, data)
