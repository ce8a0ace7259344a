"""The workload interface."""
from __future__ import annotations

import abc
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from ..errors import HarnessError
from ..jsonvalue import JsonDict, number
from ..model import DatasetModel, Figure, Metric, WorkloadModel
from ..proc import RemoteShell
from ..server.catalog import Build
from ..server.mysql import Endpoint
from ..store import Finding, RunSummary
from ..store.prepared import Prepared

if TYPE_CHECKING:
    from ..store import RunReader, StoredRun


@dataclass
class RunContext:
    """What a workload needs from the runner: where the server is, the run clock, where
    to put samples, events and raw output."""

    endpoint: Endpoint
    artifacts: Path
    clock: Callable[[], float]  # seconds since the run started (the run clock)
    sample: Callable[[float, str, str, float, dict[str, str] | None], None]
    event: Callable[[float, str, str, JsonDict | None], None]
    progress: Callable[[str], None] = lambda _msg: None  # the status line
    log: Callable[[str], None] = lambda _msg: None  # a line that stays
    server_local: bool = True  # the server's files are on this host (page cache, /proc)
    # The workload says when its measured part begins on the run clock (after any ramp
    # and warmup), as soon as it knows: side loads that start "after: warmup" and
    # findings over the main workload's window go by it.
    measured_from: Callable[[float], None] = lambda _t: None
    # The workload says how many client threads it runs, when it starts them and at each
    # change (a ramp's step, a warmup, the hold): every workload says it, and a profiler
    # told to record only some thread counts goes by it.
    threads_now: Callable[[int], None] = lambda _k: None
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


@dataclass(frozen=True)
class Tick:
    """One of the main workload's reports as the phase summary reads it: when it ended
    on the run clock, its transactions a second and its p95 latency (None: none
    measured in it)."""

    t: float
    tps: float
    latency_ms: float | None = None


@dataclass
class WorkloadResult:
    summary: JsonDict = field(default_factory=dict)  # its figures by name, as stored
    intervals: list[Tick] = field(default_factory=list)  # measured, after the warmup
    # Why the result is not valid although the workload finished (TPC-C's database
    # inconsistent after the run): the run is stored with its figures, marked failed.
    failure: str | None = None

    def figure(self, key: str) -> float:
        """One of its figures as a number; a workload that did not report it is an
        error of the workload."""
        v = number(self.summary.get(key))
        if v is None:
            raise HarnessError(f"the workload reported no {key}")
        return v


# A plugin's own models: its workload's and the dataset entries it runs on.
W = TypeVar("W", bound=WorkloadModel)
D = TypeVar("D", bound=DatasetModel)


class Workload(abc.ABC, Generic[W, D]):
    """A workload of one kind (``spec``) on its dataset entry (``data``)."""

    name: str

    def __init__(self, spec: W, data: D):
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

    @property
    def nominal_s(self) -> float | None:
        """How long a run of it measures, as its spec says (None: it does not say: a
        number of queries, a query set)."""
        return None


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


# A counted run's figure (harness run --measure instructions), whatever its workload:
# regress follows it as it follows tps, calling a change from 0.2% (counts repeat to
# 0.02-0.05%: docs/measurements/instructions.md).
COUNTED_FIGURE = Figure("instructions_per_transaction", "instructions/tx", False,
                        headline=True, regress="instructions", floor=0.002)


class CountedProbe(abc.ABC):
    """What a counted comparison (``compare --measure instructions``) runs of a
    workload: its data loaded natively, then windows, each class of transaction in a
    client connection of its own (the counter cuts a window at a connection's login and
    end, so one class's window is exactly its instructions). One class (``""``) where
    the workload is one kind of transaction; TPC-C's five types where it is not, each
    weighted by its share of the mix."""

    name: str  # what a window runs, as the output says it: "oltp_point_select"
    classes: tuple[str, ...] = ("",)
    default_events: int = 1_000  # transactions a window (of the first class)

    def weights(self) -> dict[str, float]:
        """Each class's share of the workload's transactions (summing to 1)."""
        return {c: 1 / len(self.classes) for c in self.classes}

    def events(self, n: int) -> dict[str, int]:
        """The transactions of each class in a window of ``n`` (the commonest class's
        count; the others in proportion to their weights, at least one each)."""
        w = self.weights()
        top = max(w.values())
        return {c: max(1, round(n * w[c] / top)) for c in self.classes}

    @abc.abstractmethod
    def load(self, ep: Endpoint, progress: Callable[[str], None]) -> None:
        """Load the data on a server started natively (and check it is all there)."""

    @abc.abstractmethod
    def run(self, ep: Endpoint, cls: str, events: int) -> int:
        """One client connection of ``events`` transactions of class ``cls``; how many
        it ran (a HarnessError when not all)."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Remove what ``load`` left on this host (an option file)."""


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


class WorkloadPlugin(Generic[W, D]):
    """One workload kind: its module subclasses this with its own models
    (``WorkloadPlugin[SysbenchWorkload, SysbenchDataset]``) and declares an instance as
    ``PLUGIN``. Class attributes say what the kind is (the scenario models it owns:
    ``kind: <kind>`` in a dataset entry and in ``workload``); methods what it does. A
    method left as it is here means the kind has none of that: no findings of its own,
    no tables in the terminal, no items for compare. The registry (``harness.workloads``)
    finds it; nothing else names the kind. A subclass that declares a workload without
    ``runner``, or a dataset without ``prepare``, ``verify`` and ``tables``, is refused
    where it is defined."""

    kind: ClassVar[str]
    dataset: ClassVar[type[DatasetModel] | None] = None  # None: runs on others' (any_dataset)
    workload: ClassVar[type[WorkloadModel] | None] = None  # None: a dataset only
    default: ClassVar[bool] = False  # the kind of a dataset or workload without ``kind:``
    # Its workload runs on a dataset of any kind (it brings statements, not data).
    any_dataset: ClassVar[bool] = False
    # Its stored series over time, (source, metric), for reports and phases: throughput
    # (with the name it goes by) and latency; None when it has no such series.
    throughput: ClassVar[tuple[str, str, str] | None] = None  # source, metric, label
    latency: ClassVar[tuple[str, str] | None] = None
    # The figures of its run summary (``headline=True``: the one it is compared by).
    figures: ClassVar[tuple[Figure, ...]] = ()
    # Expectation metrics its runs can be judged by, beyond phases and series.
    metrics: ClassVar[tuple[Metric, ...]] = ()
    item_name: ClassVar[str] = "item"  # what its items are called (a replay: "digest")
    # The smallest dataset and workload that exercise it ({"dataset": ..., "workload":
    # ..., "files": {name: text}}, as in a scenario): the plugin suite runs every
    # workload through the runner with it, and a side load that reads this kind of
    # dataset gets this one.
    example: ClassVar[Mapping[str, Any]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not isinstance(getattr(cls, "kind", None), str):
            raise TypeError(f"workload plugin {cls.__name__}: no kind")
        own = [cls._declares(m) for m in ("prepare", "verify", "tables")]
        if (cls.workload is None) != (not cls._declares("runner")) or \
                (cls.workload is None and cls.dataset is None):
            raise TypeError(f"workload plugin {cls.kind}: a workload and its runner, a "
                            "dataset, or both")
        if cls.dataset is not None and not all(own):
            raise TypeError(f"workload plugin {cls.kind}: a dataset needs prepare, verify "
                            "and tables")
        if cls.dataset is None and (any(own) or not cls.any_dataset):
            raise TypeError(f"workload plugin {cls.kind}: without a dataset of its own it "
                            "runs on any (any_dataset=True) and prepares none")

    @classmethod
    def _declares(cls, method: str) -> bool:
        return getattr(cls, method) is not getattr(WorkloadPlugin, method)

    # Its workload (with ``workload``).
    def runner(self, spec: W, data: D) -> Workload[W, D]:
        """The Workload that runs ``spec`` on the dataset entry ``data``."""
        raise NotImplementedError(f"{self.kind}: a dataset only")

    # Its dataset (with ``dataset``).
    def prepare(self, ctx: RunContext, data: Any) -> Prepared:
        """Load the dataset entry; its timings (seconds, rows, rows/s)."""
        raise NotImplementedError(f"{self.kind}: no dataset of its own")

    def verify(self, ep: Endpoint, data: Any) -> list[str]:
        """What is missing or wrong in the dataset on a server (empty: all there)."""
        raise NotImplementedError(f"{self.kind}: no dataset of its own")

    def tables(self, data: Any) -> list[str]:
        """The tables the dataset entry creates (what a re-prepare drops first)."""
        raise NotImplementedError(f"{self.kind}: no dataset of its own")

    def seed(self, data: Any) -> Path | None:
        """A datadir a new sandbox starts on a copy of instead of an initialised one,
        before ``prepare`` (None: the dataset is loaded by ``prepare`` alone)."""
        return None

    def build_problems(self, build: Build, data: Any) -> list[str]:
        """Why the dataset entry cannot be used on ``build`` (empty: it can)."""
        return []

    # Its findings.
    def judge_run(self, expectations: Sequence[Any], summary: RunSummary, server: str,
                  variant: str) -> list[Finding]:
        """The verdicts of the expectations one run of it can judge."""
        return []

    def judge_run_set(self, expectations: Sequence[Any], runs: list[StoredRun]
                      ) -> dict[str, list[Finding]]:
        """The verdicts over a run set of it: {run id: verdicts}."""
        return {}

    # Its reports.
    def report(self, store: RunReader, runs: list[StoredRun],
               print_table: Callable[..., None]) -> None:
        """Its tables in the terminal after a run set."""

    def html(self, plt: Any, store: RunReader, runs: list[StoredRun],
             colour: dict[str, str]) -> list[tuple[str, str, Any]]:
        """Its figures in the HTML report, drawn with ``plt`` (pyplot), a colour per run
        id: (caption, file name, matplotlib figure), which the report saves."""
        return []

    def show(self, summary: RunSummary) -> list[tuple[str, str]]:
        """Lines of its own for ``harness show`` (SSB: each flight), as (label, text)."""
        return []

    # What compare and the upgrade verdict read of it.
    def items(self, summary: RunSummary) -> dict[str, tuple[str, float, float]]:
        """Items of its own that compare judges one by one (a replay's query digests):
        {id: (label, value, share of the run's time)}, the value lower-is-better."""
        return {}

    def results(self, summary: RunSummary) -> dict[str, ItemResults]:
        """Its items' results as checksums in a run (empty: it does not keep them):
        compare reports the items whose results differ between the sides."""
        return {}

    def fingerprints(self, summary: RunSummary) -> dict[str, str]:
        """Each item's result fingerprint in a run (SSB: per query), which the upgrade
        verdict compares across servers, as pt-upgrade does."""
        return {}

    # What a counted comparison runs of it.
    def counted(self, spec: W, data: Any) -> CountedProbe | None:
        """The windows ``compare --measure instructions`` runs of it on ``data`` (None:
        it cannot be counted)."""
        return None

    # What the host's checks borrow of it.
    def wakeup_probe(self, ep: Endpoint, data: Any, folder: Path
                     ) -> AbstractContextManager[Callable[[], float]] | None:
        """The CPU wake-up probe's load on its dataset (None: it has none): a context
        giving a callable that runs a few seconds of single-threaded load and returns
        its tps (host/noise.py measures it twice)."""
        return None
