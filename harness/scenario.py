"""Scenario files: YAML validated by pydantic v2 models.

Every model forbids unknown keys so a typo is an error, and :func:`load_scenario`
reports every problem at once, each with the file, the field path and the line:
``scenarios/x.yaml:12: workload.duraton_s: Extra inputs are not permitted``.
"""
from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

import yaml
from pydantic import (
    AfterValidator,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
)

from .errors import InputError, ScenarioError
from .host.placement import parse_cpus
from .host.profile import Limits
from .host.seekdisk import PROFILES, Geometry
from .inputs import inputfile
from .model import (
    DatasetModel,
    Metric,
    Model,
    Name,
    SideLoadModel,
    Start,
    WorkloadModel,
    parse_start,
)
from .server import hostpaths, optionfile
from .server.catalog import CATALOG, DEFAULT_SERVER, Build, installed_files
from .server.mycnf import option_problem, parse_mycnf, parse_size, value_problem
from .server.optionfile import OptionFile
from .sideloads import PLUGINS as SIDE_LOADS
from .workloads import DEFAULT_KIND, PLUGINS

MAX_SCENARIO_BYTES = 1 << 20
OptionValue = str | int | float | bool | None


def _safe_options(opts: dict[str, OptionValue]) -> dict[str, OptionValue]:
    """mysqld options that render as themselves (no name or value that adds options)
    and keep the sandbox in its folder (no path of the host: :mod:`hostpaths`)."""
    for k, v in opts.items():
        why = option_problem(k, v) or value_problem(k, v) or hostpaths.refusal(k, v)
        if why:
            raise ValueError(why)
    return opts


Options = Annotated[dict[str, OptionValue], AfterValidator(_safe_options)]



class ServerSpec(Model):
    """A server: a catalog name, an unpacked tarball by path, or an external server the
    harness did not create (``host``, over TCP): it is benchmarked as it is - never
    prepared, dropped, reconfigured or restarted unless marked ``disposable``."""

    name: Name | None = None
    basedir: str | None = None
    # A name or an address: nothing a client option file or a URL could read as more.
    host: str | None = Field(None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,252}$")
    port: int = Field(3306, ge=1, le=65535)
    # MySQL account names may hold most characters, never a control character.
    user: str | None = Field(None, pattern=r"^[^\x00-\x1f\x7f]{1,80}$")
    # The name of an environment variable holding the password (never the password).
    password_env: str | None = Field(None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    label: Name | None = None
    disposable: bool = False
    # The account can only read: checked with SHOW GRANTS before anything runs.
    read_only_account: bool = False

    @model_validator(mode="before")
    @classmethod
    def _no_password(cls, v: Any) -> Any:
        if isinstance(v, dict) and "password" in v:
            raise ValueError("never write a password into a scenario: set 'password_env' to "
                             "the name of an environment variable that holds it")
        return v

    @model_validator(mode="after")
    def _one_of(self) -> ServerSpec:
        given = [k for k in ("name", "basedir") if getattr(self, k) is not None]
        if self.external:
            given.append("host")
        if len(given) != 1:
            raise ValueError("give exactly one of 'name' (a catalog server), 'basedir' (an "
                             "unpacked tarball) or 'host' (an external server)")
        if self.name is not None and self.name not in CATALOG and \
                self.name not in installed_files():
            known = sorted([*CATALOG, *installed_files()])
            raise ValueError(f"unknown server '{self.name}'; known: {', '.join(known)}")
        self._account_fits()
        return self

    def _account_fits(self) -> None:
        """An account for an external server, and none for one the harness creates."""
        if self.external and not self.user:
            raise ValueError("an external server needs 'user' (and 'password_env', the name "
                             "of an environment variable holding its password)")
        if not self.external and (self.user or self.password_env or self.disposable
                                  or self.read_only_account):
            raise ValueError("'user', 'password_env', 'disposable' and 'read_only_account' "
                             "are for external servers (host); the harness owns the servers "
                             "it creates")

    @property
    def external(self) -> bool:
        return self.host is not None

    @property
    def title(self) -> str:
        """How messages and the store name this server."""
        if self.label:
            return self.label
        if self.name:
            return self.name
        if self.basedir:
            return f"basedir:{self.basedir}"
        return f"{self.host}:{self.port}"


class Variant(Model):
    """A my.cnf overlay: options inline, and/or the [mysqld] section of a file."""

    description: str = ""
    mysqld: Options = Field(default_factory=dict)
    my_cnf: str | None = None
    # Host settings for this variant's runs, over host.sysctls (a disposable host only).
    sysctls: dict[str, int | str] = Field(default_factory=dict)

    _sysctls = field_validator("sysctls")(classmethod(lambda cls, v: _sysctls(v)))


def _size(v: str | None) -> str | None:
    if v is not None and not re.fullmatch(r"[1-9][0-9]*[KMGT]?", str(v)):
        raise ValueError(f"'{v}': a size like 4G")
    return v


SYSCTL_PAIRS = (("vm.dirty_ratio", "vm.dirty_bytes"),
                ("vm.dirty_background_ratio", "vm.dirty_background_bytes"))


def _sysctl_value_ok(name: str, x: int | str) -> bool:
    """A non-negative integer, or for a *_bytes setting a size like 64M."""
    if isinstance(x, str):
        return name.endswith("_bytes") and re.fullmatch(r"[1-9][0-9]*[KMGT]?", x) is not None
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def _sysctls(v: dict[str, int | str]) -> dict[str, int | str]:
    for k, x in v.items():
        if not re.fullmatch(r"vm\.[a-z_]+", k):
            raise ValueError(f"'{k}': only vm.* settings (vm.swappiness, vm.dirty_ratio, "
                             "vm.dirty_bytes, ...)")
        if not _sysctl_value_ok(k, x):
            raise ValueError(f"{k}: '{x}' is not a non-negative integer"
                             + (" or a size like 64M" if k.endswith("_bytes") else ""))
    for a, b in SYSCTL_PAIRS:
        if a in v and b in v:
            raise ValueError(f"{a} and {b} are one setting (writing one zeroes the other): "
                             "give one")
    return v


def _side_load_names_ok(names: list[str]) -> None:
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"side_loads: names must be unique; repeated: {', '.join(dup)}")
    bad = [n for n in names if n in ("warmup", "main")]
    if bad:
        raise ValueError(f"side_loads: '{bad[0]}' is reserved for the main workload")


class BalloonModel(Model):
    """Host memory locked away by a balloon process for the run set: ``size``, or all
    of the host's available memory but ``leave`` (sized when the run set starts)."""

    size: str | None = None
    leave: str | None = None

    _sizes = field_validator("size", "leave")(classmethod(lambda cls, v: _size(v)))

    @model_validator(mode="after")
    def _one(self) -> BalloonModel:
        if (self.size is None) == (self.leave is None):
            raise ValueError("give one of size (the balloon's) or leave (what it leaves)")
        return self

    def sizes(self) -> dict[str, int | None]:
        """``inflate``'s arguments, in bytes."""
        return {"size": parse_size(self.size) if self.size else None,
                "leave": parse_size(self.leave) if self.leave else None}


class HostTuning(Model):
    """Settings of the whole host for memory-pressure experiments: a swap file (made
    only when the host has no swap), vm.* sysctls and a memory balloon, applied only
    when the host is marked disposable here and on the command line, and undone
    afterwards."""

    disposable: bool = False
    swap_file: str | None = None  # a size, like 4G
    sysctls: dict[str, int | str] = Field(default_factory=dict)
    balloon: BalloonModel | None = None

    _sysctls = field_validator("sysctls")(classmethod(lambda cls, v: _sysctls(v)))

    _swap_file = field_validator("swap_file")(classmethod(lambda cls, v: _size(v)))


class ConfigChange(Model):
    """``SET GLOBAL`` at a point of the timeline, recorded as a ``config`` event (an
    empty ``set_global`` only marks the time). ``reset``: options set back to the value
    the server had when the measured phase began (read then: for an option no my.cnf
    sets, the server's own default, as it computed it). ``stop_run_on_error``: a refused
    SET stops the main workload at once (the run fails either way)."""

    name: Name | None = None
    start: Start
    set_global: Options = Field(default_factory=dict)
    reset: list[str] = Field(default_factory=list)
    stop_run_on_error: bool = False

    _start = field_validator("start", mode="before")(classmethod(lambda cls, v: parse_start(v)))


class BackgroundCpu(Model):
    """InnoDB's background ``threads`` (purge: the coordinator and its workers;
    page_cleaner; master) held together to ``cpus`` CPUs (a CFS quota: 0.05 is 5% of one
    CPU, 0.001 the least) and/or weighed ``weight`` against mysqld's other threads (1 to
    10000, a thread's default 100: they get the CPU the others leave), found by their OS
    thread ids in performance_schema (MySQL 5.7 and later)."""

    threads: list[Literal["purge", "page_cleaner", "master"]] = Field(min_length=1)
    cpus: float | None = Field(None, ge=0.001, le=64)  # the kernel's least: 1 ms a second
    weight: int | None = Field(None, ge=1, le=10000)

    @model_validator(mode="after")
    def _some(self) -> BackgroundCpu:
        if self.cpus is None and self.weight is None:
            raise ValueError("give cpus (a quota), weight (a share against mysqld's other "
                             "threads), or both")
        return self


class DiskModel(Model):
    """The datadir on a disk that charges seeks (harness/host/seekdisk.py): ``model``
    names a drive (sata-7200, sas-15k, laptop-5400); ``seek_ms`` and ``mbps`` give or
    override its numbers; ``size`` is its file system's (sparse: only what is written
    takes space)."""

    model: Literal["sata-7200", "sas-15k", "laptop-5400"] | None = None
    seek_ms: float | None = Field(None, gt=0, le=1000)
    mbps: float | None = Field(None, gt=0, le=100_000)
    size: str = "8G"

    _size = field_validator("size")(classmethod(lambda cls, v: _size(v)))

    @model_validator(mode="after")
    def _known(self) -> DiskModel:
        if self.model is None and (self.seek_ms is None or self.mbps is None):
            raise ValueError("name a model (sata-7200, sas-15k, laptop-5400) or give both "
                             "seek_ms and mbps")
        return self

    def geometry(self) -> Geometry:
        seek, mbps = PROFILES[self.model] if self.model else (0.0, 0.0)
        return Geometry(self.seek_ms or seek, self.mbps or mbps)

    def size_bytes(self) -> int:
        n = parse_size(self.size)
        assert n is not None
        return n


class HostProfile(Model):
    """Limits on the server, applied with cgroups: IO on the datadir's device, CPUs,
    memory, and CPU for InnoDB's background threads. A limit that cannot be applied is
    an error, never silently ignored."""

    read_iops: int | None = Field(None, ge=1)
    write_iops: int | None = Field(None, ge=1)
    read_mbps: float | None = Field(None, gt=0)
    write_mbps: float | None = Field(None, gt=0)
    cpus: int | None = Field(None, ge=1)
    # CPU time for all of mysqld, in CPUs: a CFS quota on its cgroup (0.5 is half of one
    # CPU), where ``cpus`` pins it to whole CPUs
    cpu_quota: float | None = Field(None, ge=0.01, le=1024)
    memory: str | None = None
    background_cpu: BackgroundCpu | None = None
    disk: DiskModel | None = None
    description: str = ""

    _memory = field_validator("memory")(classmethod(lambda cls, v: _size(v)))

    @model_validator(mode="after")
    def _one_cpu_quota(self) -> HostProfile:
        if self.cpu_quota and self.background_cpu:
            raise ValueError("cpu_quota and background_cpu cannot be combined: one CPU "
                             "limit on mysqld's cgroup, or one on its background threads")
        return self

    def limits(self) -> Limits:
        """The limits in the units cgroups take."""
        return Limits(self.read_iops, self.write_iops, self.read_mbps, self.write_mbps,
                      self.cpus, parse_size(self.memory) if self.memory else None,
                      *((self.background_cpu.cpus, self.background_cpu.weight)
                        if self.background_cpu else (None, None)),
                      cpu_quota=self.cpu_quota)


class CpuPlacement(Model):
    """mysqld's threads on ``server``'s CPUs, the harness and the clients it starts on
    ``client``'s (lists like ``1`` or ``0-1,3``; harness/host/placement.py)."""

    server: str
    client: str

    @field_validator("server", "client", mode="before")
    @classmethod
    def _cpus(cls, v: Any) -> str:
        cpus = parse_cpus(str(v))
        have = os.cpu_count() or 1
        if max(cpus) >= have:
            raise ValueError(f"CPU {max(cpus)} is not on this host (CPUs 0-{have - 1})")
        return str(v)

    def cpus(self) -> tuple[set[int], set[int]]:
        return parse_cpus(self.server), parse_cpus(self.client)


PHASE_METRICS = ("tps_ratio", "p95_ratio", "tps_collapsed_share", "index_mb_ratio",
                 "phase_seconds_ratio")
# The metrics workloads judge themselves, as their plugins declare them.
WORKLOAD_METRICS = {m.name: m for p in PLUGINS.values() for m in p.metrics}
METRIC_NAMES = (*PHASE_METRICS, "series", *WORKLOAD_METRICS)
# Fields only some metrics take.
METRIC_FIELDS = ("baseline_phase", "index", "baseline_variant", "baseline_server", "threads")


class Expectation(Model):
    """A published finding as a check over results (see docs/scenario-files.md).

    metric:
      tps_ratio       main median tps inside ``phase`` / outside any side-load phase
      p95_ratio       the same for the per-second p95 latency
      tps_collapsed_share  the share of ``phase``'s seconds in which the main workload
                      ran below a tenth of its median tps outside any side-load phase
      index_mb_ratio  MB of ``index`` in the pool: minimum during ``phase`` / last before
      phase_seconds_ratio  seconds of ``phase`` / seconds of ``baseline_phase``
      warm_cold_ratio      SSB: median warm flight seconds / the cold flight's, per run
      flight_ratio         SSB: median warm flight seconds of ``variant`` / of
                           ``baseline_variant`` on the same server, or on
                           ``baseline_server`` (over the run set)
      series               a statistic (``stat``) of any stored ``series`` over ``window``,
                           or its ratio to ``baseline_window`` or ``baseline_variant``
                           (harness/analysis/findings.py)
      server_ratio         sysbench: median tps at ``threads`` (default: the hold's) of
                           ``server`` / of ``baseline_server`` over the run set, with a
                           95% interval (harness/analysis/upgrade.py)
      server_cpu_ratio     mysqld's CPU per transaction at ``threads`` (user + system
                           over the seconds server_ratio reads, over their
                           transactions) of ``server`` / of ``baseline_server`` over
                           the run set, with a 95% interval from 2 runs a server
                           (harness/analysis/upgrade.py)
    """

    name: str = Field(min_length=1, max_length=200)
    metric: Literal[METRIC_NAMES]  # type: ignore[valid-type]
    phase: Name | None = None
    baseline_phase: Name | None = None
    index: str | None = None  # schema.table.index
    variant: Name | None = None  # every variant when left out
    baseline_variant: Name | None = None
    server: Name | None = None  # every server when left out
    baseline_server: Name | None = None  # metric: server_ratio, server_cpu_ratio
    threads: int | None = Field(None, ge=1)  # metric: server_(cpu_)ratio (default: the hold's)
    min: float | None = None
    max: float | None = None
    # metric: series
    series: str | None = Field(None, pattern=r"^([a-z_]+/)?[A-Za-z0-9_]+$")
    labels: dict[str, str] | None = None  # the series carrying these labels
    stat: Literal["median", "mean", "min", "max", "last", "delta", "rate"] = "median"
    window: Name | list[float] = "main"
    baseline_window: Name | list[float] | None = None
    scaled: bool = False  # min and max are sizes: harness run --scale multiplies them
    # Why this machine cannot decide the finding in reasonable time: it is measured and
    # shown, and always judged inconclusive (it never flips).
    inconclusive_by_design: str | None = Field(None, min_length=1, max_length=500)

    @field_validator("window", "baseline_window")
    @classmethod
    def _fractions(cls, v: Any) -> Any:
        if isinstance(v, list) and not (len(v) == 2 and 0 <= v[0] < v[1] <= 1):
            raise ValueError(f"{v}: a slice of the main workload is [from, to], fractions "
                             "with 0 <= from < to <= 1 (e.g. [0.75, 1.0])")
        return v

    @model_validator(mode="after")
    def _bounds(self) -> Expectation:
        if self.min is None and self.max is None:
            raise ValueError("give 'min', 'max' or both")
        if self.metric == "series":
            self._series_fields()
            return self
        extra = sorted(f for f in ("series", "labels", "baseline_window", "window", "stat")
                       if f in self.model_fields_set)
        if extra:
            raise ValueError(f"{', '.join(extra)}: for metric: series")
        if self.metric in PHASE_METRICS:
            self._phase_fields()
        else:
            self._workload_metric_fields(WORKLOAD_METRICS[self.metric])
        return self

    def _series_fields(self) -> None:
        if not self.series:
            raise ValueError("metric: series needs 'series: SOURCE/METRIC' (a stored "
                             "series, e.g. iibench/rows_per_s)")
        if self.baseline_window is not None and self.baseline_variant:
            raise ValueError("give baseline_window (same run) or baseline_variant "
                             "(other variant), not both")
        if self.baseline_variant and not self.variant:
            raise ValueError("baseline_variant needs 'variant'")

    def _phase_fields(self) -> None:
        self._only_fields_of(Metric(self.metric, "phases", needs=("phase",),
                                    allows=("baseline_phase", "index")))
        if self.metric == "index_mb_ratio" and (
                not self.index or self.index.count(".") != 2):
            raise ValueError("index_mb_ratio needs 'index: schema.table.index'")
        if self.metric == "phase_seconds_ratio" and not self.baseline_phase:
            raise ValueError("phase_seconds_ratio needs 'baseline_phase'")

    def _workload_metric_fields(self, m: Metric) -> None:
        if self.phase or self.baseline_phase:
            raise ValueError(f"{m.name} is about {m.about}, not phases: no 'phase'")
        self._only_fields_of(m)

    def _only_fields_of(self, m: Metric) -> None:
        """The fields ``m`` needs are given, and no field of another metric."""
        missing = [f for f in m.needs if not getattr(self, f)]
        if missing:
            raise ValueError(f"{m.name} needs " + " and ".join(f"'{f}'" for f in missing))
        for f in METRIC_FIELDS:
            if getattr(self, f) and f not in m.needs + m.allows:
                owners = sorted(x.name for x in WORKLOAD_METRICS.values()
                                if f in x.needs + x.allows)
                raise ValueError(f"'{f}' goes with metric: {' or '.join(owners) or 'series'}"
                                 f", not {m.name}")


# Size options that --scale multiplies (a page size or a buffer per connection does not
# grow with the machine's memory).
SCALED_OPTIONS = ("innodb_buffer_pool_size", "innodb_log_file_size")



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
    from .collectors import REGISTRY

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
    # harness compare judges these stored series too, besides tps, p95 and p99:
    # "[SOURCE/]METRIC[:rate|median]:higher|lower" (see harness compare --metric).
    compare_metrics: list[Annotated[str, Field(
        pattern=r"^([a-z_]+/)?[A-Za-z0-9_]+(:rate|:median)?:(higher|lower)$")]] = Field(
        default_factory=list)

    @field_validator("collectors")
    @classmethod
    def _known_collectors(cls, v: dict[str, CollectorSpec]) -> dict[str, CollectorSpec]:
        from .collectors import REGISTRY

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

    def dataset_for(self, database: str) -> DatasetModel:
        return next(d for d in self.dataset if d.database == database)


def _scale_sizes(d: dict[str, Any], factor: float) -> None:
    """``factor`` times the sizes of a dumped scenario ``d``, in place: buffer pool and
    redo log options wherever they are set, vm.*_bytes sysctls, the profile's memory,
    the swap file, the balloon, side loads' sizes."""
    variants = list((d.get("variants") or {}).values())
    host = d.get("host") or {}
    for opts in (d.get("mysqld"), d.get("prepare_mysqld"),
                 *[v.get("mysqld") for v in variants],
                 *[ch.get("set_global") for ch in d.get("config_changes") or []]):
        _scale_keys(opts or {}, lambda k: k.replace("-", "_") in SCALED_OPTIONS, factor)
    for sysctls in (host.get("sysctls"), *[v.get("sysctls") for v in variants]):
        _scale_keys(sysctls or {}, lambda k: k.endswith("_bytes"), factor)
    _scale_memory(d, host, factor)


def _scale_memory(d: dict[str, Any], host: dict[str, Any], factor: float) -> None:
    """The profile's memory, the swap file, the balloon and side loads' sizes."""
    balloon = host.get("balloon") or {}
    for holder, key in ((d.get("host_profile") or {}, "memory"), (host, "swap_file"),
                        (balloon, "size"), (balloon, "leave"),
                        *[(ld, "size") for ld in d.get("side_loads") or []]):
        if holder.get(key):
            holder[key] = str(_scaled_size(holder[key], factor))


def _scale_keys(values: dict[str, Any], sized: Callable[[str], bool], factor: float
                ) -> None:
    """``factor`` times each value of ``values`` whose key is ``sized``, in place."""
    for k in [k for k in values if sized(k)]:
        values[k] = _scaled_size(values[k], factor)


def _scaled_size(v: Any, factor: float) -> Any:
    n = parse_size(v)
    return v if n is None or isinstance(v, bool) else int(n * factor)


class LoadedScenario:
    """A validated scenario plus where it came from."""

    def __init__(self, path: Path, text: str, model: Scenario, scale: float = 1.0):
        self.path = path
        self.text = text
        self.model = model
        self.scale = scale

    def scaled(self, factor: float) -> LoadedScenario:
        """The scenario at ``factor`` times its sizes, for larger (lab) hardware: the
        datasets, the buffer pool and redo log (everywhere they are set), the memory
        limit, the swap file, the balloon, side loads' sizes, vm.*_bytes sysctls and the
        bounds of expectations marked ``scaled: true``. Durations, thread counts and IO
        limits stay: a scenario names those for the machine it runs on."""
        if factor == 1:
            return self
        d = self.model.model_dump(exclude_unset=True)
        _scale_sizes(d, factor)
        for ds, model_ds in zip(d["dataset"], self.model.dataset, strict=True):
            ds.update(model_ds.scaled(factor))
        for e in d.get("expectations") or []:
            if e.get("scaled"):
                for k in ("min", "max"):
                    if e.get(k) is not None:
                        e[k] = e[k] * factor
        model = Scenario.model_validate(d)
        _locate(model, self.path.parent)
        text = f"# scaled x{factor:g} (harness run --scale)\n{self.text}"
        return LoadedScenario(self.path, text, model, scale=factor)

    def amended(self, change: Callable[[dict[str, Any]], None]) -> LoadedScenario:
        """This scenario with ``change`` made to its YAML document (after ``extends``),
        validated again, at the same scale: the scenario a command runs in place of the
        one it was given (compare's my.cnf variants, switchback's windows)."""
        data = yaml.safe_load(self.text)
        change(data)
        return parse_scenario(self.path, yaml.safe_dump(data, sort_keys=False)
                              ).scaled(self.scale)

    def variant_sysctls(self, variant: str) -> dict[str, int | str]:
        """host.sysctls overlaid with the variant's (a ratio replaces its _bytes twin)."""
        out = dict(self.model.host.sysctls) if self.model.host else {}
        for k, v in self.model.variants[variant].sysctls.items():
            for pair in SYSCTL_PAIRS:
                if k in pair:
                    for twin in pair:
                        out.pop(twin, None)
            out[k] = v
        return out

    def variant_options(self, variant: str, file: OptionFile | None = None
                        ) -> dict[str, OptionValue]:
        """Base ``mysqld`` options overlaid with the variant's file, then its inline
        options. The file as one build reads it (:func:`variant_file`), or without a
        build its ``[mysqld]`` section (what the guard looks at before any build)."""
        v = self.model.variants[variant]
        opts = dict(self.model.mysqld)
        if file is not None:
            opts.update(file.options)
        elif v.my_cnf:
            opts.update(parse_mycnf(read_small_text(self.path.parent / v.my_cnf)))
        opts.update(v.mysqld)
        return opts

    def variant_file(self, variant: str, build: Build) -> OptionFile | None:
        """The variant's my.cnf as ``build``'s mysqld reads it (None without a file)."""
        v = self.model.variants[variant]
        if not v.my_cnf:
            return None
        try:
            return optionfile.read(self.path.parent / v.my_cnf, build)
        except InputError as e:
            raise ScenarioError(str(self.path), [f"variants.{variant}.my_cnf: {e}"]) from None


def _line_of(root: yaml.Node | None, loc: tuple[Any, ...]) -> int | None:
    """1-based line of the YAML node at ``loc``, or of its nearest existing parent."""
    node, line = root, None
    for key in loc:
        if node is None:
            break
        line = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            nxt = None
            for k, v in node.value:
                if k.value == str(key):
                    nxt, line = v, k.start_mark.line + 1
                    break
            node = nxt
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int):
            node = node.value[key] if key < len(node.value) else None
        else:
            node = None
    if node is not None:
        line = node.start_mark.line + 1
    return line


_TAGS = (*PLUGINS, *SIDE_LOADS)


def _yaml_loc(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    # pydantic puts discriminator tags and validator names in locs; keep the YAML path.
    return tuple(p for p in loc if not (isinstance(p, str) and (
        p in _TAGS or p.startswith("function-") or p.startswith("constrained-"))))


class _UniqueKeys(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """A key given twice is an error: a second ``mysqld:`` block must not silently
    replace the first. On libyaml's parser where PyYAML has it (the same YAML, parsed
    in C)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> Any:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.setdefault(key, key_node.start_mark.line + 1)
            except TypeError:
                continue  # an unhashable key: the constructor reports it
            if first != key_node.start_mark.line + 1:
                raise yaml.constructor.ConstructorError(
                    None, None, f"'{key}' is given twice (first on line {first})",
                    key_node.start_mark)
        return super().construct_mapping(node, deep=deep)


def _merge(base: Any, over: Any) -> Any:
    """``over`` on ``base``: mappings merge key by key, anything else replaces."""
    if isinstance(base, dict) and isinstance(over, dict):
        return {**base, **{k: _merge(base.get(k), v) for k, v in over.items()}}
    return over


def _extended(path: Path, data: dict[str, Any], seen: list[Path]) -> dict[str, Any]:
    """``data`` over the scenario file its ``extends`` names (which may extend another)."""
    data = dict(data)
    ref = data.pop("extends")
    if not isinstance(ref, str):
        raise ScenarioError(str(path), ["extends: a scenario file name (relative to this "
                                        "file)"])
    base_path = (path.parent / ref).resolve()
    if base_path in seen:
        raise ScenarioError(str(path), [f"extends: {ref}: a cycle ("
                                        f"{' -> '.join(x.name for x in [*seen, base_path])})"])
    base = _base_scenario(path, ref, base_path)
    if "extends" in base:
        base = _extended(base_path, base, [*seen, base_path])
    return dict(_merge(base, data))


def _base_scenario(path: Path, ref: str, base_path: Path) -> dict[str, Any]:
    """The document of the file ``extends`` names, refused unless it reads as a
    scenario (saying why in a few words, never its contents: it may be any file)."""
    try:
        base = yaml.load(read_small_text(base_path), Loader=_UniqueKeys)
    except (OSError, ValueError) as e:
        raise ScenarioError(str(path), [f"extends: {ref}: {getattr(e, 'strerror', None) or e}"]
                            ) from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark else ""
        raise ScenarioError(str(path), [f"extends: {ref}: not a YAML scenario{where}: "
                                        f"{getattr(e, 'problem', None) or 'unreadable'}"]
                            ) from None
    if not isinstance(base, dict):
        raise ScenarioError(str(path), [f"extends: {ref}: not a scenario (a mapping)"])
    strange = [k for k in base if k not in Scenario.model_fields and k != "extends"]
    if strange:
        raise ScenarioError(str(path), [f"extends: {ref}: not a scenario: "
                                        + _unknown_fields(strange)])
    return base


def _unknown_fields(strange: list[Any]) -> str:
    """How many unknown top-level fields, named only when every one looks like a field
    name (the file may be any file: its contents are not shown)."""
    shown = [k for k in strange if isinstance(k, str) and re.fullmatch(r"\w{1,40}", k)]
    return (f"{len(strange)} unknown top-level field(s)"
            + (f" ({', '.join(shown[:5])})" if len(shown) == len(strange) else ""))


def parse_scenario(path: Path, text: str) -> LoadedScenario:
    """Validate scenario text; raise :class:`ScenarioError` listing every problem."""
    p = str(path)
    data, root = _yaml_document(p, text)
    if "extends" in data:
        data = _extended(path, data, [path.resolve()])
        text = f"# {path}, merged with what it extends\n" + yaml.safe_dump(data,
                                                                             sort_keys=False)
    try:
        model = Scenario.model_validate(data)
    except ValidationError as e:
        raise ScenarioError(p, [_problem(err, root) for err in e.errors()]) from None
    _locate(model, path.parent)
    problems = _file_problems(path, model)
    if problems:
        raise ScenarioError(p, problems)
    return LoadedScenario(path, text, model)


def _locate(model: Scenario, base_dir: Path) -> None:
    """Its datasets and workload find the files they name in the scenario's folder."""
    for part in [*model.dataset, model.workload]:
        part.located(base_dir)


def _yaml_document(p: str, text: str) -> tuple[dict[str, Any], yaml.Node | None]:
    """The scenario's mapping and its YAML nodes (for line numbers), or ScenarioError."""
    if len(text.encode()) > MAX_SCENARIO_BYTES:
        raise ScenarioError(p, [f"file is larger than {MAX_SCENARIO_BYTES} bytes; "
                                "a scenario is a short YAML document"])
    loader = _UniqueKeys(text)
    try:  # one parse: the nodes (for line numbers), then the mapping built from them
        root = loader.get_single_node()
        data = loader.construct_document(root) if root is not None else None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark else ""
        raise ScenarioError(p, [f"{where}not valid YAML: {getattr(e, 'problem', e)}"]) from None
    finally:
        loader.dispose()
    if data is None:
        raise ScenarioError(p, ["file is empty; see scenarios/quickstart.yaml for an example"])
    if not isinstance(data, dict):
        raise ScenarioError(p, [f"top level must be a mapping of fields, not "
                                f"{type(data).__name__}"])
    return data, root


def _problem(err: Any, root: yaml.Node | None) -> str:
    """One validation error as ``line N: field.path: message``."""
    loc = _yaml_loc(tuple(err["loc"]))
    line = _line_of(root, loc)
    msg = re.sub(r"^Value error, ", "", err["msg"])
    if err["type"] == "union_tag_invalid" and not err["ctx"]["tag"]:
        msg = f"'kind' is required; known kinds: {err['ctx']['expected_tags']}"
    elif err["type"] == "union_tag_invalid":
        msg = (f"unknown kind '{err['ctx']['tag']}'; known kinds: "
               f"{err['ctx']['expected_tags']}")
    where = ".".join(str(x) for x in loc) or "(top level)"
    return f"{'line ' + str(line) + ': ' if line else ''}{where}: {msg}"


def _file_problems(path: Path, model: Scenario) -> list[str]:
    """What a valid model still gets wrong about the files around it."""
    problems = _input_problems(model)
    for i, ld in enumerate(model.side_loads):
        problems += [f"side_loads[{i}] ({ld.name}).file: {why}"
                     for why in ld.file_problems(path.parent)]
    if model.between_runs == "restore" and not model.snapshot:
        problems.append("between_runs: 'restore' needs snapshot: true (there is nothing to "
                        "restore from); use restart or warmup")
    for name, v in model.variants.items():
        if v.my_cnf:
            problems += _my_cnf_problems(path.parent / v.my_cnf, f"variants.{name}.my_cnf")
    return problems


def _input_problems(model: Scenario) -> list[str]:
    """The datasets' and the workload's input files: missing, unreadable, or wrong
    inside (each plugin says what it reads)."""
    problems = []
    parts = [(f"dataset[{i}]", d) for i, d in enumerate(model.dataset)]
    for where, part in [*parts, ("workload", model.workload)]:
        found = [f"{where}.{field_name}: {why}" for field_name, name in part.files().items()
                 if not (field_name in part.folders() and part.path_of(name).is_dir())
                 and (why := inputfile.problem(part.path_of(name), "input file"))]
        problems += found or [f"{where}: {why}" for why in part.content_problems()]
    return problems


def read_small_text(path: Path, limit: int = MAX_SCENARIO_BYTES) -> str:
    """A small regular UTF-8 text file (a scenario, a my.cnf), or ValueError that says
    what is wrong with it in a few words (never its contents)."""
    try:
        return inputfile.read_text(path, "my.cnf", limit)
    except inputfile.InputFileError as e:
        raise ValueError(e.why) from None


def _my_cnf_problems(file: Path, where: str) -> list[str]:
    try:
        opts = parse_mycnf(read_small_text(file))
    except (OSError, ValueError) as e:
        return [f"{where}: {e}: {file}"]
    return [f"{where}: {file}: {why}" for k, v in opts.items()
            if (why := option_problem(k, v) or value_problem(k, v))]


def load_scenario(path: str | Path) -> LoadedScenario:
    path = Path(path)
    try:
        text = inputfile.read_text(path, "scenario", MAX_SCENARIO_BYTES)
    except inputfile.InputFileError as e:
        raise ScenarioError(str(path), [e.why]) from None
    return parse_scenario(path, text)
