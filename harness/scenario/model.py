"""The scenario model: servers x variants x repetitions, a dataset, a workload and
its side loads, collectors, expectations; every cross-field rule in one place."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

from pydantic import (
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)

from ..model import (
    DatasetModel,
    Model,
    Name,
    SideLoadModel,
    WorkloadModel,
)
from ..server.catalog import DEFAULT_SERVER
from ..sideloads import PLUGINS as SIDE_LOADS
from ..store.hints import Hints
from ..workloads import DEFAULT_KIND, PLUGINS
from .expectation import PHASE_METRICS, Expectation
from .host import CpuPlacement, HostProfile, HostTuning
from .servers import ConfigChange, Options, ServerSpec, Variant


def _side_load_names_ok(names: list[str]) -> None:
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"side_loads: names must be unique; repeated: {', '.join(dup)}")
    bad = [n for n in names if n in ("warmup", "main")]
    if bad:
        raise ValueError(f"side_loads: '{bad[0]}' is reserved for the main workload")





def _kind(default: str) -> Discriminator:
    """Pick the model by ``kind:``, defaulting to ``default`` where it is left out."""
    def pick(v: Any) -> str | None:
        if isinstance(v, dict):
            return str(v.get("kind", default))
        return getattr(v, "kind", None)
    return Discriminator(pick)


# Workload kinds come from their plugins (harness/workloads); side loads join here.
if TYPE_CHECKING:
    Workload = WorkloadModel
    Dataset = DatasetModel
    SideLoad = SideLoadModel
else:
    Workload = Annotated[Union[tuple(Annotated[p.workload, Tag(k)]  # noqa: UP007
                                     for k, p in PLUGINS.items() if p.workload)],
                         _kind(DEFAULT_KIND)]
    Dataset = Annotated[Union[tuple(Annotated[p.dataset, Tag(k)]  # noqa: UP007
                                    for k, p in PLUGINS.items() if p.dataset)],
                        _kind(DEFAULT_KIND)]
    SideLoad = Annotated[Union[tuple(Annotated[m, Tag(k)]  # noqa: UP007
                                     for k, m in SIDE_LOADS.items())], _kind("")]



class CollectorSpec(Model):
    """One collector's settings; collectors not named run at their defaults."""

    enabled: bool = True
    interval_s: float | None = Field(None, gt=0, le=3600)
    # Heavy reads on a server the harness does not own (buffer_pool_index's pool walk
    # above 256 MB of pool): allowed only when the scenario says so.
    allow_external: bool = False
    # Samples a second of a profiling collector (cpu_profile: 99 by default).
    hz: int | None = Field(None, gt=0, le=5000)
    # A profiling collector records only while the workload runs these client thread
    # counts (a ramp's steps, its hold): an upgrade's one-thread cells alone.
    threads: list[Annotated[int, Field(gt=0)]] | None = Field(None, min_length=1)
    # The wait instruments a collector that reads them has a server the harness starts
    # with (wait_events: "all", every one timed; "build_default", the build's own, so
    # the run adds none to its performance_schema; unnamed, build_default on MySQL and
    # Percona Server 5.7.8 and later, all elsewhere).
    instruments: Literal["all", "build_default"] | None = None


def _only_where_taken(settings: dict[str, CollectorSpec], given: Callable[[CollectorSpec], Any],
                      takes: Callable[[Any], Any], says: str) -> None:
    """Refuse a collector setting (``given``) on the collectors that do not declare it
    (``takes``), naming those that do."""
    from ..collectors import REGISTRY

    wrong = sorted(n for n, spec in settings.items() if given(spec) and not takes(REGISTRY[n]))
    if wrong:
        raise ValueError(f"{', '.join(wrong)}: {says} "
                         f"({', '.join(n for n, c in REGISTRY.items() if takes(c))})")


class Scenario(Model):
    """One experiment: servers x variants x repetitions, a dataset and a workload."""

    name: Name
    description: str = ""
    servers: list[ServerSpec] = Field(default_factory=lambda: [ServerSpec(name=DEFAULT_SERVER)],
                                             min_length=1)
    mysqld: Options = Field(default_factory=dict)
    # Over a cell's options while its dataset is prepared (a large pool for a preload
    # that is not part of the experiment); part of the dataset snapshot's key.
    prepare_mysqld: Options = Field(default_factory=dict)
    # Options a server version renamed are rewritten for it, and options it removed are
    # dropped (harness cnf check shows the same judgement); each run stores what changed.
    translate: bool = False
    # An upgrade: every other server judged against this one (throughput per thread
    # count with intervals, SSB result fingerprints); harness run and report print it.
    baseline_server: Name | None = None
    variants: dict[Name, Variant] = Field(default_factory=lambda: {"default": Variant()},
                                          min_length=1)
    dataset: list[Dataset] = Field(min_length=1)
    workload: Workload
    repetitions: int = Field(1, ge=1, le=1000)
    # Repetition-major order (every cell once, then again in reverse: A B, B A, A B ...)
    # so slow drift of the machine hits every variant alike and a linear drift cancels
    # over two rounds; the default runs each cell's repetitions back to back.
    interleave: bool = False
    collectors: dict[str, CollectorSpec] = Field(default_factory=dict)
    wakeup_probe: bool = True
    # Measure only when no other harness run on this host measures (they wait for each
    # other, saying for whom); false measures beside whatever else runs.
    measure_lock: bool = True
    cpu_keepalive: bool | Literal["pm_qos", "spinner"] = False
    side_loads: list[SideLoad] = Field(default_factory=list)
    config_changes: list[ConfigChange] = Field(default_factory=list)
    # Between two runs on one server: restore the dataset snapshot and restart, restart
    # only (data as the last run left it), or keep the server and warm up again (variants
    # that differ only in dynamic variables are then applied with SET GLOBAL).
    between_runs: Literal["restore", "restart", "warmup"] = "restore"
    snapshot: bool = True  # keep a pristine datadir after the first prepare and reuse it
    host_profile: HostProfile | None = None
    cpu_placement: CpuPlacement | None = None
    host: HostTuning | None = None
    watch_indexes: list[str] = Field(default_factory=list)  # schema.table.index
    expectations: list[Expectation] = Field(default_factory=list)
    # What harness compare measures on this scenario: time (tps, latency, CPU seconds)
    # or instructions (mysqld under callgrind, counted: --measure says otherwise).
    measure: Literal["time", "instructions"] = "time"
    # harness compare judges these stored series too, besides tps, p95 and p99:
    # "[SOURCE/]METRIC[:rate|median]:higher|lower" (see harness compare --metric).
    compare_metrics: list[Annotated[str, Field(
        pattern=r"^([a-z_]+/)?[A-Za-z0-9_]+(:rate|:median)?:(higher|lower)$")]] = Field(
        default_factory=list)

    @field_validator("collectors")
    @classmethod
    def _known_collectors(cls, v: dict[str, CollectorSpec]) -> dict[str, CollectorSpec]:
        from ..collectors import REGISTRY

        unknown = sorted(set(v) - set(REGISTRY))
        if unknown:
            raise ValueError(f"unknown collector(s) {', '.join(unknown)}; known: "
                             f"{', '.join(REGISTRY)}")
        _only_where_taken(v, lambda spec: spec.hz or spec.threads,
                          lambda c: c.hz_default, "hz and threads are for a profiling collector")
        _only_where_taken(v, lambda spec: spec.instruments, lambda c: c.instrument_choice,
                          "instruments is for a collector that reads performance_schema's "
                          "waits")
        return v

    @field_validator("dataset", mode="before")
    @classmethod
    def _one_or_many(cls, v: Any) -> Any:
        return [v] if isinstance(v, dict) else v

    @field_validator("servers", mode="before")
    @classmethod
    def _servers(cls, v: Any) -> Any:
        if isinstance(v, str | dict):
            v = [v]
        out = []
        for item in v if isinstance(v, list) else [v]:
            out.append({"name": item} if isinstance(item, str) else item)
        return out

    @model_validator(mode="after")
    def _workload_has_data(self) -> Scenario:
        dbs = {d.database: d for d in self.dataset}
        if len(dbs) != len(self.dataset):
            raise ValueError("dataset: two entries load the same database")
        whole = [d.kind for d in self.dataset if d.whole_datadir]
        if whole and len(self.dataset) > 1:
            raise ValueError(f"dataset: a {whole[0]} dataset is the server's whole datadir, "
                             "so the only entry")
        if self.workload.database not in dbs:
            raise ValueError(f"workload.database '{self.workload.database}' is not prepared by "
                             f"any dataset entry (datasets: {', '.join(sorted(dbs))})")
        if dbs[self.workload.database].kind != self.workload.kind and \
                not PLUGINS[self.workload.kind].any_dataset:
            raise ValueError(f"workload.database '{self.workload.database}' holds a "
                             f"{dbs[self.workload.database].kind} dataset; a "
                             f"{self.workload.kind} workload needs a {self.workload.kind} one")
        return self

    @model_validator(mode="after")
    def _one_cpu_limit(self) -> Scenario:
        if self.cpu_placement and self.host_profile and self.host_profile.cpus:
            raise ValueError("cpu_placement and host_profile.cpus both place mysqld's CPUs: "
                             "give one")
        return self

    @model_validator(mode="after")
    def _timeline(self) -> Scenario:
        """Side loads named once, every ``after:`` naming something that runs, and no
        item waiting (through others) for itself."""
        names = [s.name for s in self.side_loads]
        _side_load_names_ok(names)
        known = {"warmup", "main", *names}
        for where, after in self._afters():
            if after is not None and after not in known:
                raise ValueError(f"{where}.after: '{after}' is not warmup, main or a side "
                                 f"load (side loads: {', '.join(names) or 'none'})")
        self._no_cycle()
        return self

    def _afters(self) -> list[tuple[str, str | None]]:
        """(where, what it waits for) of the workload, each side load and config change."""
        refs: list[tuple[str, str | None]] = [("workload.start", self.workload.start.after)]
        refs += [(f"side_loads[{i}] ({s.name}).start", s.start.after)
                 for i, s in enumerate(self.side_loads)]
        refs += [(f"config_changes[{i}].start", c.start.after)
                 for i, c in enumerate(self.config_changes)]
        return refs

    def _no_cycle(self) -> None:
        """The main waiting for a load that waits for the main (or its warmup)."""
        def node(n: str | None) -> str | None:
            return "main" if n == "warmup" else n
        deps = {"main": node(self.workload.start.after),
                **{s.name: node(s.start.after) for s in self.side_loads}}
        for n in deps:
            seen, cur = [n], deps[n]
            while cur is not None:
                if cur in seen:
                    raise ValueError(f"timeline cycle: {' -> '.join([*seen, cur])} "
                                     "(each waits for the next)")
                seen.append(cur)
                cur = deps.get(cur)

    @model_validator(mode="after")
    def _expectations_refer(self) -> Scenario:
        """Each expected finding names phases, variants and windows the scenario has,
        and a metric its workload can give."""
        for i, e in enumerate(self.expectations):
            self._names_fit(i, e)
            self._metric_fits(i, e)
        for i, w in enumerate(self.watch_indexes):
            if w.count(".") != 2:
                raise ValueError(f"watch_indexes[{i}]: '{w}' is not schema.table.index")
        return self

    def _names_fit(self, i: int, e: Expectation) -> None:
        """The phases, variants and windows expectation ``i`` names are the scenario's."""
        names = [s.name for s in self.side_loads]
        loads = ", ".join(names) or "none"
        for f, v in (("phase", e.phase), ("baseline_phase", e.baseline_phase)):
            if v is not None and v not in {"warmup", "main", *names}:
                raise ValueError(f"expectations[{i}].{f}: '{v}' is not a side load "
                                 f"(side loads: {loads})")
        for f, v in (("variant", e.variant), ("baseline_variant", e.baseline_variant)):
            if v is not None and v not in self.variants:
                raise ValueError(f"expectations[{i}].{f}: unknown variant '{v}'")
        self._servers_fit(i, e)
        self._windows_fit(i, e, names)

    def _servers_fit(self, i: int, e: Expectation) -> None:
        """The servers expectation ``i`` names are the scenario's (where every server
        has a name: a basedir's build is named once it is read)."""
        servers = [s.name for s in self.servers]
        for f, v in (("server", e.server), ("baseline_server", e.baseline_server)):
            if v is not None and None not in servers and v not in servers:
                raise ValueError(f"expectations[{i}].{f}: '{v}' is not one of the "
                                 f"scenario's servers ({', '.join(map(str, servers))})")

    @staticmethod
    def _windows_fit(i: int, e: Expectation, names: list[str]) -> None:
        """The windows expectation ``i`` names are main or a side load's."""
        for f, w in (("window", e.window), ("baseline_window", e.baseline_window)):
            if isinstance(w, str) and w != "main" and w not in names:
                raise ValueError(f"expectations[{i}].{f}: '{w}' is not main or a side "
                                 f"load (side loads: {', '.join(names) or 'none'})")

    def _metric_fits(self, i: int, e: Expectation) -> None:
        """A workload's own metric (SSB's flight_ratio, sysbench's server_ratio) needs
        a workload that declares it."""
        if e.metric in (*PHASE_METRICS, "series") or \
                e.metric in {m.name for m in PLUGINS[self.workload.kind].metrics}:
            return
        owners = [k for k, p in PLUGINS.items() if e.metric in {m.name for m in p.metrics}]
        raise ValueError(f"expectations[{i}].metric: {e.metric} needs a workload of kind "
                         f"{' or '.join(owners)}")

    @model_validator(mode="after")
    def _side_loads_fit(self) -> Scenario:
        """What each side load declares it needs: a host profile's cgroups for its
        programs, and a dataset (of its kind) in the database it reads."""
        kinds = {d.database: d.kind for d in self.dataset}
        for i, s in enumerate(self.side_loads):
            self._side_load_fits(f"side_loads[{i}] ({s.name})", s, kinds)
        return self

    def _side_load_fits(self, where: str, s: Any, kinds: dict[str, str]) -> None:
        if s.in_server_cgroup and (self.host_profile is None or not s.runs_programs):
            runners = ", ".join(k for k, m in SIDE_LOADS.items() if m.runs_programs)
            raise ValueError(f"{where}.in_server_cgroup: needs a host_profile and a side "
                             f"load that runs programs ({runners})")
        db = s.dataset_database()
        if db and db not in kinds:
            raise ValueError(f"{where}.database: '{db}' is not prepared by any dataset "
                             f"entry ({', '.join(sorted(kinds))})")
        if db and s.dataset_kind and kinds[db] != s.dataset_kind:
            raise ValueError(f"{where}.database: '{db}' holds a {kinds[db]} dataset; side "
                             f"loads of kind {s.kind} need a dataset of kind: {s.dataset_kind}")

    @model_validator(mode="after")
    def _host_tuning(self) -> Scenario:
        asks = [f"variants.{n}.sysctls" for n, v in self.variants.items() if v.sysctls]
        if self.host is not None:
            asks = ["host.swap_file"] * bool(self.host.swap_file) + \
                ["host.sysctls"] * bool(self.host.sysctls) + \
                ["host.balloon"] * bool(self.host.balloon) + asks
        if asks and not (self.host and self.host.disposable):
            raise ValueError(f"{asks[0]} changes the whole host: mark it host: "
                             "{disposable: true} (and pass --i-know-this-is-disposable)")
        return self

    def report_hints(self) -> Hints:
        """The hints a run stores for its reports: the indexes its side loads watch and
        its findings name, and its baseline server."""
        return Hints(sorted({*self.watch_indexes, *(e.index for e in self.expectations
                                                    if e.index)}), self.baseline_server)

    def dataset_for(self, database: str) -> DatasetModel:
        return next(d for d in self.dataset if d.database == database)


