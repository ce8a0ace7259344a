"""The workload interface."""
from __future__ import annotations

import abc
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..model import DatasetModel, Figure, Metric, WorkloadModel
from ..proc import RemoteShell
from ..server.mysql import Endpoint
from ..store import Finding, RunReader, RunSummary, StoredRun


@dataclass
class RunContext:
    """What a workload needs from the runner: where the server is, the run clock, where
    to put samples, events and raw output."""

    endpoint: Endpoint
    artifacts: Path
    clock: Callable[[], float]  # seconds since the run started (the run clock)
    sample: Callable[[float, str, str, float, dict[str, str] | None], None]
    event: Callable[[float, str, str, dict[str, Any] | None], None]
    progress: Callable[[str], None] = lambda _msg: None  # the status line
    log: Callable[[str], None] = lambda _msg: None  # a line that stays
    server_local: bool = True  # the server's files are on this host (page cache, /proc)
    # The workload says when its measured part begins on the run clock (after any ramp
    # and warmup), as soon as it knows: side loads that start "after: warmup" and
    # findings over the main workload's window go by it.
    measured_from: Callable[[float], None] = lambda _t: None
    # Runs a workload's programs on the server's host instead of this machine (set when
    # the scenario says client: db_host and that host is another machine).
    remote: RemoteShell | None = None
    # A workload adds what stops its programs; stop_workload() calls them when the run
    # cannot go on (the server stopped answering, the store failed, a config change the
    # run depends on was refused), so the run fails at once with that cause instead of
    # waiting minutes on a dead connection or measuring what was not asked for.
    on_stop: list[Callable[[], None]] = field(default_factory=list)
    stopped_because: str | None = None  # the first stop_workload()'s reason
    # Drops the OS page cache of the host mysqld runs on (None when done, else why not);
    # the runner sets it from the server (a lab host only when it is disposable).
    drop_page_cache: Callable[[], str | None] | None = None

    def stop_workload(self, why: str) -> None:
        """Stop the workload's programs now; the run fails with ``why``."""
        self.stopped_because = self.stopped_because or why
        self.log(f"  {why}: stopping the workload")
        for hook in list(self.on_stop):
            hook()


@dataclass
class WorkloadResult:
    summary: dict[str, Any] = field(default_factory=dict)
    # Measured intervals on the run clock: {"t", "tps", "latency_ms"} (phase summaries).
    intervals: list[dict[str, Any]] = field(default_factory=list)
    # Why the result is not valid although the workload finished (TPC-C's database
    # inconsistent after the run): the run is stored with its figures, marked failed.
    failure: str | None = None


class Workload(abc.ABC):
    """A workload of one kind (``spec``) on its dataset entry (``data``)."""

    name: str

    def __init__(self, spec: Any, data: Any):
        self.spec = spec
        self.data = data

    @abc.abstractmethod
    def run(self, ctx: RunContext) -> WorkloadResult:
        """Run and stream samples through ``ctx.sample``; return the summary."""

    def cleanup(self, ctx: RunContext) -> None:  # noqa: B027 - optional hook
        """Drop what prepare created (only ever on a server the harness owns)."""

    @property
    def label(self) -> str:
        return self.name


# One server's median throughput against another's over a run set, at a thread count
# (harness/analysis/upgrade.py): for any workload whose plugin declares it.
SERVER_RATIO = Metric("server_ratio", "servers", needs=("server", "baseline_server"),
                      allows=("threads",))
# One server's mysqld CPU per transaction against another's over a run set (Mark
# Callaghan's "CPU per query"): a wake-up-latency-free view of the same code paths.
SERVER_CPU_RATIO = Metric("server_cpu_ratio", "servers",
                          needs=("server", "baseline_server"), allows=("threads",))
# What a workload with throughput judges across servers.
SERVER_METRICS = (SERVER_RATIO, SERVER_CPU_RATIO)


@dataclass(frozen=True)
class ItemResults:
    """An item's results in one run, as checksums (a replay's digest with checksums on):
    all of them in one, over ``count`` statements, and a sample, the same statements on
    every server, {statement key: (its results' checksum, its text)}, to name one whose
    results differ."""

    label: str
    checksum: str
    count: int
    sample: Mapping[str, tuple[str, str]]


@dataclass(frozen=True)
class WorkloadPlugin:
    """One workload kind, declared by its module as ``PLUGIN``: the scenario models it
    owns (``kind: <kind>`` in a dataset entry and in ``workload``) and what the runner
    does with them. The registry (``harness.workloads``) finds it; nothing else names
    the kind."""

    kind: str
    dataset: type[DatasetModel] | None = None  # None: it runs on others' (any_dataset)
    workload: type[WorkloadModel] | None = None  # None: a dataset only (another's runs)
    runner: Callable[[Any, Any], Workload] | None = None  # runs a spec on a dataset
    # With a dataset of its own (all three):
    prepare: Callable[[RunContext, Any], dict[str, Any]] | None = None  # load: its timings
    verify: Callable[[Endpoint, Any], list[str]] | None = None  # what is missing, if any
    tables: Callable[[Any], list[str]] | None = None  # the tables a dataset creates
    default: bool = False  # the kind of a dataset or workload without ``kind:``
    # Its workload runs on a dataset of any kind (it brings statements, not data).
    any_dataset: bool = False
    # Its stored series over time, (source, metric), for reports and phases: throughput
    # (with the name it goes by) and latency; None when it has no such series.
    throughput: tuple[str, str, str] | None = None  # source, metric, label
    latency: tuple[str, str] | None = None
    # The figures of its run summary (``headline=True``: the one it is compared by).
    figures: tuple[Figure, ...] = ()
    # Expectation metrics its runs can be judged by, beyond phases and series.
    metrics: tuple[Metric, ...] = ()
    # Findings one run can judge (expectations, summary, server, variant): verdicts.
    judge_run: Callable[[Sequence[Any], RunSummary, str, str],
                        list[Finding]] | None = None
    # Findings over a run set (expectations, runs): {run_id: verdicts}.
    judge_run_set: Callable[[Sequence[Any], list[StoredRun]],
                            dict[str, list[Finding]]] | None = None
    # Its tables in the terminal after a run set (store, its runs, print_table).
    report: Callable[[RunReader, list[StoredRun], Callable[..., None]], None] | None = None
    # Its figures in the HTML report, drawn with pyplot for its runs (pyplot, store, its
    # runs, colour per run id): (caption, file name, matplotlib figure), which the
    # report saves.
    html: Callable[[Any, RunReader, list[StoredRun], dict[str, str]],
                   list[tuple[str, str, Any]]] | None = None
    # Items of its own that compare judges one by one (a replay's query digests): per
    # run, {id: (label, value, share of the run's time)}, the value lower-is-better.
    items: Callable[[RunSummary], dict[str, tuple[str, float, float]]] | None = None
    item_name: str = "item"
    # Its items' results as checksums, per run (None: it does not keep them): compare
    # reports the items whose results differ between the sides.
    results: Callable[[RunSummary], dict[str, ItemResults]] | None = None
    # Each item's result fingerprint in a run (SSB: per query), which the upgrade verdict
    # compares across servers, as pt-upgrade does.
    fingerprints: Callable[[RunSummary], dict[str, str]] | None = None
    # Lines of its own for ``harness show`` (SSB: each flight), as (label, text).
    show: Callable[[RunSummary], list[tuple[str, str]]] | None = None
    # The CPU wake-up probe's load on its dataset, where it has one: (endpoint, dataset,
    # a work folder) -> a context giving a callable that runs a few seconds of
    # single-threaded load and returns its tps (host/noise.py measures it twice).
    wakeup_probe: Callable[[Endpoint, Any, Path],
                           AbstractContextManager[Callable[[], float]]] | None = None
    # The smallest dataset and workload that exercise it ({"dataset": ..., "workload":
    # ...}, as in a scenario): the plugin suite runs every workload through the runner
    # with it, and a side load that reads this kind of dataset gets this one.
    example: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if (self.workload is None) != (self.runner is None) or \
                (self.workload is None and self.dataset is None):
            raise TypeError(f"workload plugin {self.kind}: a workload and its runner, a "
                            "dataset, or both")
        own = (self.prepare, self.verify, self.tables)
        if self.dataset is not None and not all(own):
            raise TypeError(f"workload plugin {self.kind}: a dataset needs prepare, verify "
                            "and tables")
        if self.dataset is None and (any(own) or not self.any_dataset):
            raise TypeError(f"workload plugin {self.kind}: without a dataset of its own it "
                            "runs on any (any_dataset=True) and prepares none")
