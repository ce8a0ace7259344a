"""provision -> prepare -> workload -> teardown -> store, for every cell of a scenario.

A cell is one server x one variant; each repetition of a cell is one stored run. The
whole matrix is checked before anything starts (unknown servers, variants and options
unknown to a server version are bad input, reported at once), a failed cell is stored
as failed with its cause and the next cell goes on (unless ``fail_fast``), and Ctrl-C
stores the current run as interrupted and removes its sandbox.
"""
from __future__ import annotations

import json
import secrets
import socket
import statistics
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pymysql
from sqlalchemy.exc import SQLAlchemyError

from . import catalog, cnfcheck, guard, proc, snapshot, workloads
from .analysis import findings
from .analysis.figures import FIGURES, SUMMARY_KEYS
from .analysis.phases import Window, describe, evaluate, stored_phases
from .analysis.quantile import nearest_rank
from .catalog import Build
from .collectors import Collector, CollectorContext, PolledCollector, percona_toolkit, start_all
from .errors import (
    HarnessError,
    InputError,
    MissingToolError,
    OwnershipError,
    ScenarioError,
    StoreError,
)
from .host import tuning
from .host.facts import host_facts, meminfo_kb
from .host.noise import keep_awake, wakeup_probe
from .host.profile import CgroupProfile, Limits, ProfileError, try_on_host
from .live import LiveMetrics
from .mycnf import MANAGED, norm, parse_size, unknown_options
from .mysql import Endpoint, connection, variables
from .paths import sandbox_dir
from .progress import Progress
from .providers import external, get_provider
from .providers.base import Server
from .report import upgrade
from .scenario import (
    ConfigChange,
    LoadedScenario,
    OptionValue,
    ServerSpec,
)
from .sideloads import SideLoad
from .store import RunRecord, Store
from .store.db import SampleWriter
from .timeline import Timeline
from .workloads import drop_dataset, prepare_dataset, verify_dataset, workload_for
from .workloads.base import RunContext, WorkloadResult

if TYPE_CHECKING:
    from .providers.ansible import Host as LabHost

COOLDOWN_S = 2.0
NO_ENDPOINT = Endpoint("", 0, "", "")  # until the run's server is ready
# How long side loads with until: complete may run on after the main workload: this,
# or twice the main workload's length if longer.
SIDE_LOAD_GRACE_S = 600.0


@dataclass
class LiveServer:
    """The server a run set keeps between runs (and variants) of one build."""

    server: Server
    key: str  # its dataset snapshot key: a run with another key needs another server
    options: dict[str, OptionValue] | None = None  # as last started or SET
    prepare: list[dict[str, Any]] = field(default_factory=list)
    prepared_by: str | None = None  # the run whose summary reports the prepare
    profile: CgroupProfile | None = None


class ConfigChanger(threading.Thread):
    """One ``config_changes`` entry: SET GLOBAL at its time, recorded as an event."""

    def __init__(self, spec: ConfigChange, ctx: RunContext, timeline: Timeline):
        super().__init__(name="config-change", daemon=True)
        self.spec = spec
        self.ctx = ctx
        self.timeline = timeline
        self.result: dict[str, Any] = {"name": spec.name, "t": None,
                                       "set_global": dict(spec.set_global), "error": None}

    def run(self) -> None:
        if not self.timeline.wait_start(self.spec.start):
            return
        t = self.ctx.clock()
        self.result["t"] = round(t, 3)
        try:
            with connection(self.ctx.endpoint) as c, c.cursor() as cur:
                for k, v in self.spec.set_global.items():
                    set_global(cur, k, v)
        except pymysql.err.MySQLError as e:
            self.result["error"] = f"SET GLOBAL: {e.args[-1]}"
        self.ctx.event(t, "config", self.spec.name or "set_global",
                       {"set_global": self.result["set_global"],
                        "ok": self.result["error"] is None, "error": self.result["error"]})
        if self.spec.name:
            self.timeline.mark_end(self.spec.name, self.ctx.clock())


def set_global(cur: Any, option: str, v: OptionValue) -> None:
    """``SET GLOBAL`` one my.cnf option to its value (as the variable and literal)."""
    cur.execute(f"SET GLOBAL {norm(option)} = {sql_value(v)}")


def sql_value(v: OptionValue) -> str:
    """A my.cnf value as a SET GLOBAL literal: sizes in bytes, booleans ON/OFF."""
    if isinstance(v, bool):
        return "ON" if v else "OFF"
    if isinstance(v, int | float):
        return str(v)
    size = parse_size(v)
    if size is not None:
        return str(size)
    return "'" + str(v).replace("\\", "\\\\").replace("'", "''") + "'"


@dataclass
class RunOptions:
    servers: list[str] = field(default_factory=list)  # with basedirs: replace the scenario's
    basedirs: list[str] = field(default_factory=list)
    variants: list[str] = field(default_factory=list)  # a subset of the scenario's
    repetitions: int | None = None
    target: str = "local"
    fail_fast: bool = False
    collectors: bool = True  # False: no collectors at all (overhead measurements)
    resume: str | None = None  # a run set to complete: only cells without an ok run
    metrics_port: int | None = None
    pushgateway: str | None = None
    disposable_confirmed: bool = False  # --i-know-this-is-disposable
    interleave: bool = False  # repetition-major order (A B A B ...) for comparisons
    run_set: str | None = None  # store into this (new) run set: a lab host's share
    keep: bool = False  # leave each sandbox running at the end (harness sandboxes ...)
    # Asked after every run with the results so far: a reason to stop the run set early
    # (a sequential comparison that has decided, or whose budget is spent), or None.
    stop_rule: Callable[[list[RunResult]], str | None] | None = None


@dataclass
class Cell:
    build: Build
    variant: str
    options: dict[str, OptionValue]
    spec: ServerSpec | None = None  # set for an external server
    # What translate: true renamed or dropped for this build (cnfcheck.Verdict.to_json).
    translation: list[dict[str, object]] = field(default_factory=list)
    # The variant's my.cnf as this build read it: files, groups, what was set aside.
    my_cnf: dict[str, Any] | None = None


@dataclass
class RunResult:
    run_id: str
    server: str
    variant: str
    repetition: int
    status: str
    summary: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


def now_iso() -> str:
    # Milliseconds: runs are ordered by their start, and a resumed cell can start within
    # the second its interrupted attempt did.
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def new_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)


def artifacts_root(store: Store) -> Path:
    """Raw artifacts live beside an SQLite store, else under HARNESS_RESULTS."""
    from .paths import results_dir
    if store.url.startswith("sqlite:///"):
        return Path(store.url[len("sqlite:///"):]).parent
    return results_dir()


def select_servers(sc: LoadedScenario, opts: RunOptions) -> list[ServerSpec]:
    # --server and --basedir together replace the scenario's list of servers.
    for name in opts.servers:
        catalog.get_entry(name)  # an unknown name fails before anything is installed
    specs = [ServerSpec(name=s) for s in opts.servers] + [ServerSpec(basedir=b)
                                                          for b in opts.basedirs]
    return specs or list(sc.model.servers)


def select_variants(sc: LoadedScenario, opts: RunOptions) -> list[str]:
    unknown = [v for v in opts.variants if v not in sc.model.variants]
    if unknown:
        raise InputError(f"{sc.path}: unknown variant(s) {', '.join(unknown)}; the scenario "
                         f"has: {', '.join(sc.model.variants)}")
    return opts.variants or list(sc.model.variants)


def check_cells(sc: LoadedScenario, builds: list[Build], variants: list[str]) -> list[Cell]:
    """Every (build, variant) cell, or a ScenarioError naming each option a build rejects."""
    m = sc.model
    problems = []
    cells = []
    for b in builds:
        for v in variants:
            try:
                file = sc.variant_file(v, b)
            except ScenarioError as e:
                problems += e.problems
                continue
            options = sc.variant_options(v, file)
            for k in options:
                if norm(k) in MANAGED:
                    where = (f"variants.{v}.mysqld.{k}" if k in m.variants[v].mysqld
                             else f"mysqld.{k}" if k in m.mysqld
                             else f"variants.{v}.my_cnf: {k}")
                    problems.append(f"{where}: set by the sandbox itself; remove it")
            options, translation = _translated(b, options) if m.translate else (options, [])
            for k in unknown_options(b, [k for k in options if norm(k) not in MANAGED]):
                where = (f"variants.{v}.mysqld.{k}" if k in m.variants[v].mysqld
                         else f"mysqld.{k}" if k in m.mysqld else f"variants.{v}.my_cnf: {k}")
                problems.append(f"{where}: unknown to {b.name} ({b.flavor} {b.version}); "
                                f"{_unknown_why(b, k, options)}")
            problems += _impossible(options, f"variants.{v}.mysqld" if any(
                norm(k) == "innodb_buffer_pool_size" for k in m.variants[v].mysqld) else "mysqld")
            cells.append(Cell(b, v, options, translation=translation,
                              my_cnf=file.to_json() if file else None))
        for k in unknown_options(b, list(m.prepare_mysqld)):
            problems.append(f"prepare_mysqld.{k}: unknown to {b.name} ({b.flavor} "
                            f"{b.version})")
        for i, ch in enumerate(m.config_changes):
            for k in unknown_options(b, list(ch.set_global)):
                problems.append(f"config_changes[{i}].set_global.{k}: unknown to {b.name} "
                                f"({b.flavor} {b.version})")
    if problems:
        raise ScenarioError(str(sc.path), sorted(set(problems)))
    return cells


def _translated(b: Build, options: dict[str, OptionValue]
                ) -> tuple[dict[str, OptionValue], list[dict[str, object]]]:
    """translate: true: the options as ``b`` takes them, and what was renamed or dropped."""
    verdicts = cnfcheck.judge(b, options, cnfcheck.installed_knows(b))
    changed = [v.to_json() for v in verdicts
               if v.status in (cnfcheck.RENAMED, cnfcheck.REMOVED)]
    return dict(cnfcheck.translate(verdicts)), changed


def _unknown_why(b: Build, option: str, options: dict[str, OptionValue]) -> str:
    """Why ``b`` refuses ``option``: renamed (to what) or removed, when the cnf check
    knows, else that the version does not accept it."""
    (v,) = cnfcheck.judge(b, {option: options[option]}, cnfcheck.installed_knows(b))
    if v.status == cnfcheck.RENAMED:
        return (f"renamed to {v.new_name} ({v.note}): write {v.new_name} = {v.new_value}, or "
                "set translate: true in the scenario")
    if v.status == cnfcheck.REMOVED:
        return f"removed ({v.note}): remove it, or set translate: true in the scenario"
    return "this server version does not accept that option"


def _impossible(options: dict[str, OptionValue], where: str) -> list[str]:
    """Values no server on this host can honour (a buffer pool larger than the memory)."""
    pool = next((parse_size(v) for k, v in options.items()
                 if norm(k) == "innodb_buffer_pool_size"), None)
    mem_kb = meminfo_kb("MemTotal")
    mem_mb = mem_kb // 1024 if mem_kb else None
    if pool and mem_mb and pool > mem_mb << 20:
        return [f"{where}.innodb_buffer_pool_size: {pool >> 20} MB is larger than this host's "
                f"memory ({mem_mb} MB)"]
    return []


def plan(sc: LoadedScenario, opts: RunOptions, log: Callable[[str], None]) -> list[Cell]:
    """Resolve servers (installing catalog builds) and check every cell's options."""
    specs = select_servers(sc, opts)
    variants = select_variants(sc, opts)
    builds = [catalog.resolve(s.name, log=log) if s.name
              else external.detect(s, f"{sc.path}: servers[{i}]") if s.external
              else catalog.detect_build(Path(s.basedir or "")) for i, s in enumerate(specs)]
    cells = check_cells(sc, builds, variants)
    by_name = {b.name: s for s, b in zip(specs, builds, strict=True) if s.external}
    for c in cells:
        c.spec = by_name.get(c.build.name)
    guard.check(sc, specs, builds, {v: sc.variant_options(v) for v in variants},
                opts.disposable_confirmed)
    m = sc.model
    for i, ld in enumerate(m.side_loads):
        try:
            for program, hint in ld.programs():
                proc.which(program, hint)
        except MissingToolError as e:
            raise MissingToolError(f"{sc.path}: side_loads[{i}] ({ld.name}): {e}") from None
    lab = opts.target.startswith("ansible:")
    if lab and m.host is not None and m.host.swap_file:
        raise InputError(f"{sc.path}: host.swap_file: not on lab hosts (--target "
                         f"{opts.target}); give them swap in their provisioning")
    # Lab hosts are tuned by their os_tuning role (the same rule: disposable, and the
    # command line repeats it); this machine's settings are not theirs to change.
    if guard.check_host(sc, variants, sorted(by_name), opts.disposable_confirmed) and \
            not lab:
        for v in variants:
            unknown = tuning.unknown_sysctls(list(sc.variant_sysctls(v)))
            if unknown:
                raise InputError(f"{sc.path}: variants.{v} (or host.sysctls): "
                                 f"{', '.join(unknown)}: no such setting on this host "
                                 f"(no {tuning.sysctl_file(unknown[0])})")
    if m.host_profile is not None:
        for line in try_profile(sc, m.host_profile.limits(), opts.target, bool(by_name)):
            log(f"  host_profile {line}")
    return cells


def try_profile(sc: LoadedScenario, limits: Limits, target: str,
                external: bool) -> list[str]:
    """Apply the host profile once where the sandboxes of ``target`` will run (this
    machine, or each lab host) and take it away: how each controller applies there, or
    ProfileError, before anything is provisioned."""
    from .providers import ansible

    def where(h: str, got: dict[str, Any]) -> str:
        return f"on {h}: " + ", ".join(f"{c} on cgroup {v}"
                                       for c, v in got.get("cgroup", {}).items())
    try:
        if not target.startswith("ansible:"):
            return [] if external else [where("this host", try_on_host(
                limits, sandbox_dir()))]
        out = []
        for h in _lab_hosts(target):
            _profile_off_host(sc, h)
            out.append(where(h.name, ansible.try_profile(ansible.parse_target(target)[0], h,
                                                         limits, lambda _m: None)))
        return out
    except ProfileError as e:
        raise ProfileError(f"{sc.path}: {e}") from None


def _lab_hosts(target: str) -> list[LabHost]:
    from .providers import ansible

    inventory, pinned = ansible.parse_target(target)
    return [h for h in ansible.inventory_hosts(inventory) if pinned in (None, h.name)]


def _profile_off_host(sc: LoadedScenario, h: LabHost) -> None:
    """A side load in the server's cgroups runs on the controller: only where the lab
    host is this machine."""
    for i, ld in enumerate(sc.model.side_loads):
        if ld.in_server_cgroup and not h.local:
            raise ProfileError(f"side_loads[{i}] ({ld.name}).in_server_cgroup: lab host "
                               f"{h.name} is another machine, and side loads run on this "
                               "one; its cgroups are out of their reach")


@contextmanager
def watch_server(server: Server, ctx: RunContext, interval_s: float = 2.0,
                 misses: int = 2) -> Iterator[None]:
    """While the main workload runs: when the server stops answering (mysqld gone, its
    container stopped, its lab host off the network) ``misses`` checks in a row, say so
    and stop the workload's programs, so the run fails now with the cause rather than
    after a dead connection's timeouts. Not for an external server: the only check there
    is a new connection, which a busy production server may be slow to grant."""
    if isinstance(server, external.ExternalServer):
        yield
        return
    stop = threading.Event()

    def watch() -> None:
        missed = 0
        while not stop.wait(interval_s):
            try:
                answering = server.is_running
            except Exception:  # noqa: BLE001 - a check that cannot tell (docker API
                answering = True  # hiccup) must not stop a healthy run
            missed = 0 if answering else missed + 1
            if missed == misses:
                ctx.event(ctx.clock(), "server_lost", server.name,
                          {"checks": misses, "interval_s": interval_s})
                ctx.log(f"  {server.name} stopped answering; stopping the workload")
                for hook in list(ctx.on_server_lost):
                    hook()
                return

    t = threading.Thread(target=watch, daemon=True, name="server-watch")
    t.start()
    try:
        yield
    finally:
        stop.set()
        t.join(interval_s + 5)


class Runner:
    def __init__(self, sc: LoadedScenario, store: Store, opts: RunOptions,
                 progress: Progress | None = None):
        self.sc = sc
        self.store = store
        self.opts = opts
        self.progress = progress or Progress()
        self.provider = get_provider(opts.target)
        self.provider.progress = self.progress.update
        for name in self.provider.remove_stale():
            self.progress.log(f"removed {name}, left by a harness that was killed")
        # A run set of its own, or the one of a parent process that spread a matrix
        # over lab hosts (each host's harness stores into the same run set).
        self.run_set = opts.resume or opts.run_set or new_id()
        # Dataset snapshots need the datadir on this machine.
        self.snapshots = sc.model.snapshot and self.provider.snapshots
        self.done: set[tuple[str, str, int]] = set()
        if opts.resume:
            previous = store.runs(run_set=opts.resume)
            if not previous:
                raise InputError(f"--resume {opts.resume}: no such run set in the store")
            if {r["scenario"] for r in previous} != {sc.model.name}:
                raise InputError(f"--resume {opts.resume}: that run set is of scenario "
                                 f"{previous[0]['scenario']}, not {sc.model.name}")
            self.done = {(r["server"], r["variant"], r["repetition"]) for r in previous
                         if r["status"] == "ok"}
        self.results: list[RunResult] = []
        self._probes: dict[int, dict[str, Any]] = {}  # the wake-up probe of each cell
        self._fingerprints: dict[int, tuple[str, Path]] = {}  # pt-*: (run, artifacts)
        self._busy_warned = ""
        self.live_server: LiveServer | None = None
        self.tuner: tuning.HostTuner | None = None
        self.swap: dict[str, Any] = {}
        self.live: LiveMetrics | None = None
        if opts.metrics_port is not None or opts.pushgateway:
            self.live = LiveMetrics()
            if opts.metrics_port is not None:
                self.live.serve(opts.metrics_port)
                self.progress.log(f"serving live metrics on http://127.0.0.1:"
                                  f"{opts.metrics_port}/metrics")
            if opts.pushgateway:
                self.live.push_every(opts.pushgateway, job=f"harness-{sc.model.name}")

    def close(self) -> None:
        if self.live is not None:
            self.live.close()

    def run(self) -> list[RunResult]:
        try:
            return self._run()
        finally:
            self.close()

    def _run(self) -> list[RunResult]:
        cells = plan(self.sc, self.opts, self.progress.log)
        reps = self.opts.repetitions or self.sc.model.repetitions
        total = len(cells) * reps
        self.progress.log(f"run set {self.run_set}: {len(cells)} cell(s) x {reps} "
                          f"repetition(s) of {self.sc.model.name}")
        # Cell-major (every repetition of a cell, then the next) by default; with
        # interleave, repetition-major (A B A B ...) so drift hits both sides alike.
        interleave = self.opts.interleave or self.sc.model.interleave
        order = ([(c, r) for r in range(1, reps + 1) for c in cells] if interleave
                 else [(c, r) for c in cells for r in range(1, reps + 1)])
        for what in tuning.recover():
            self.progress.log(f"restored a host setting left by a killed harness: {what}")
        try:
            self._tune_host()
            self._run_in_order(order, total)
        except BaseException:
            self._drop_server(keep=False)  # interrupted or broken: nothing left running
            raise
        finally:
            self._drop_server()
            self.progress.prefix = ""
            self._untune_host()
        self._run_set_findings()
        return self.results

    def _run_in_order(self, order: list[tuple[Cell, int]], total: int) -> None:
        """Each (cell, repetition) not done yet; a cell whose run failed is not run
        again (its server is gone or its config does not work)."""
        failed: set[int] = set()
        for n, (cell, rep) in enumerate(order, 1):
            if id(cell) in failed:
                continue
            if (cell.build.name, cell.variant, rep) in self.done:
                self.progress.log(f"{cell.build.name}/{cell.variant} rep {rep}: done in "
                                  f"run set {self.run_set}, skipped")
                continue
            if self.live_server is not None and \
                    self.live_server.server.build.name != cell.build.name:
                self._drop_server()
            of = "" if self.opts.stop_rule else f"/{total}"  # a sequential run set: open
            self.progress.prefix = f"[{n}{of}] {cell.build.name}/{cell.variant} "
            if not self._run_cell(cell, [rep]):
                failed.add(id(cell))
                if self.opts.fail_fast:
                    self.progress.log("stopping: --fail-fast and a run failed")
                    return
            why = self.opts.stop_rule(self.results) if self.opts.stop_rule else None
            if why:
                self.progress.log(f"stopping: {why}")
                return

    def _tune_host(self) -> None:
        """This host's swap file, when the scenario asks for one (lab hosts tune
        themselves through their provider)."""
        host = self.sc.model.host
        if host is None or hasattr(self.provider, "tune"):
            return
        self.tuner = tuning.HostTuner()
        if host.swap_file:
            self.progress.update(f"making a {host.swap_file} swap file (the host has none)")
            self.swap = self.tuner.ensure_swap(host.swap_file)
            self.progress.log(f"host swap: {_describe_swap(self.swap)}")

    def _untune_host(self) -> None:
        """Every host setting put back as it was, and said so."""
        if hasattr(self.provider, "untune"):
            self.provider.untune()
        if self.tuner is None:
            return
        restored = sorted(self.tuner.original)
        if self.swap.get("swap") == "file":
            restored.append("swap file off and removed")
        self.tuner.close()
        self.tuner = None
        if restored:
            self.progress.log("host settings restored: " + ", ".join(restored))

    def _run_set_findings(self) -> None:
        """Findings that compare variants (a workload's own, a series' baseline_variant)
        or servers (server_ratio), once every run is stored; each verdict is kept with
        the runs it judges."""
        m = self.sc.model
        if not m.expectations:
            return
        runs = self.store.runs(run_set=self.run_set)
        found: dict[str, list[dict[str, Any]]] = {}
        judges = [p.judge_run_set(m.expectations, mine)
                  for p, mine in workloads.runs_by_plugin(runs) if p.judge_run_set]
        for judged in (*judges, findings.evaluate_run_set(m.expectations, runs),
                       upgrade.evaluate_run_set(self.store, m.expectations, runs)):
            for run_id, xs in judged.items():
                found.setdefault(run_id, []).extend(xs)
        for r in runs:
            if r["run_id"] not in found:
                continue
            summary = dict(r["summary"] or {})
            names = {x["name"] for x in found[r["run_id"]]}
            summary["expectations"] = [x for x in summary.get("expectations", [])
                                       if x["name"] not in names] + found[r["run_id"]]
            self.store.update_run(r["run_id"], summary=summary)
            for res in self.results:
                if res.run_id == r["run_id"]:
                    res.summary["expectations"] = summary["expectations"]
        for xs in found.values():
            for x in xs:
                self.progress.log(f"[{x['server']} / {x['variant']}] " + describe(x))

    def _new_record(self, cell: Cell, rep: int, facts: dict[str, Any]) -> RunRecord:
        run_id = new_id()
        art = artifacts_root(self.store) / "runs" / run_id
        art.mkdir(parents=True, exist_ok=True)
        (art / "scenario.yaml").write_text(self.sc.text)
        (art / "host.json").write_text(json.dumps(facts, indent=2))
        return RunRecord(
            run_id=run_id, run_set=self.run_set, scenario=self.sc.model.name,
            server=cell.build.name, flavor=cell.build.flavor, version=cell.build.version,
            variant=cell.variant, repetition=rep,
            target="external" if cell.spec else self.provider.target,
            # The server's host: an external server is not on this machine (its facts
            # are still in details.host).
            host=f"{cell.spec.host}:{cell.spec.port}" if cell.spec
            else self.provider.host_name or facts.get("hostname") or "",
            started_at=now_iso(), artifacts=str(art),
            details={"scenario_file": str(self.sc.path), "scale": self.sc.scale,
                     "version_string":
                     cell.build.version_string, "build_root": str(cell.build.root),
                     "options": cell.options, "host": facts,
                     **({"cnf_translation": cell.translation} if cell.translation else {}),
                     **({"my_cnf": cell.my_cnf} if cell.my_cnf else {}),
                     **({"lab_host": self.provider.host_facts()}
                        if self.provider.host_name else {})})

    def _run_cell(self, cell: Cell, reps: list[int]) -> bool:
        """Repetitions of one cell on a ready server. False if one failed (the rest of
        the cell is then skipped: its server is gone or its config does not work)."""
        facts = host_facts()
        busy = "; ".join(facts["busy_processes"])
        if busy and busy != self._busy_warned:
            self.progress.log(f"warning: the machine is busy, results may be noisy: {busy}")
            self._busy_warned = busy
        for rep in reps:
            rec = self._new_record(cell, rep, facts)
            self.store.create_run(rec)
            self._announce(cell, rec, rep, first=rep == reps[0])
            writer: SampleWriter | None = None
            try:
                ctx, writer = self._context(rec, Path(rec.artifacts or "."))
                self._one_run(cell, rep, rec, ctx, writer)
            except KeyboardInterrupt:
                lost = _close_quietly(writer)  # keep every sample taken so far
                self._fail(cell, rec, "interrupted", "interrupted by the user (Ctrl-C)"
                           + (f"; {lost}" if lost else ""))
                raise
            except (HarnessError, OSError, pymysql.err.MySQLError) as e:
                lost = _close_quietly(writer)
                # A dead server or a full disk is the cause; the client's complaint the symptom.
                srv = self.live_server.server if self.live_server else None
                causes = [c for c in (srv.death(), srv.disk_trouble(), lost) if c] if srv \
                    else [c for c in (lost,) if c]
                self._fail(cell, rec, "failed",
                           "\n".join(causes) + f"\n  then: {e}" if causes else str(e))
                self._drop_server()
                return False
        return True

    def _announce(self, cell: Cell, rec: RunRecord, rep: int, first: bool) -> None:
        self.progress.log(f"run {rec.run_id}: {cell.build.name} ({cell.build.flavor} "
                          f"{cell.build.version}) variant {cell.variant} rep {rep}")
        if not first:
            return
        for note in (cell.my_cnf or {}).get("notes", []):
            self.progress.log(f"  my.cnf: {note}")
        for t in cell.translation:
            self.progress.log(f"  translate: {t['option']} "
                              + (f"-> {t['new_name']} = {t['new_value']}"
                                 if t.get("new_name") else "dropped") + f" ({t['note']})")

    def _one_run(self, cell: Cell, rep: int, rec: RunRecord, ctx: RunContext,
                 writer: SampleWriter) -> None:
        """One repetition: the host tuned, the server ready, the timeline measured, the
        findings judged and the run stored."""
        m = self.sc.model
        art = Path(rec.artifacts or ".")
        data = m.dataset_for(m.workload.database)
        self._tune_for(cell, rec)
        live = self._ready(cell, ctx, rec)
        server = live.server
        self._wire(ctx, rec, server)
        with connection(server.endpoint) as c:
            server_vars = variables(c)
        (art / "variables.json").write_text(json.dumps(server_vars, indent=2))
        if m.wakeup_probe and workloads.plugin(data.kind).wakeup_probe and \
                id(cell) not in self._probes:  # once per cell (it runs sysbench)
            self._probes[id(cell)] = self._probe(server, data, art)
        rec.details["wakeup_probe"] = self._probes.get(id(cell))
        rec.details["cpu_keepalive"] = False  # or the method, once applied
        result, collected, extra = self._measure(ctx, cell, rec, server, art, data)
        writer.close()
        summary = dict(result.summary, samples=self.store.sample_count(rec.run_id),
                       prepare=live.prepare if live.prepared_by == rec.run_id else [],
                       collectors=collected, **extra)
        if result.failure:
            summary["workload_failure"] = result.failure
        self._judge(rec, cell, result, summary, int(server_vars.get("innodb_page_size")
                                                    or 16384))
        server.collect_artifacts(art)
        self._store_files(rec)
        self._store(rec, cell, rep, summary)

    def _tune_for(self, cell: Cell, rec: RunRecord) -> None:
        """The variant's vm.* sysctls, on this host or through a lab host's provider."""
        host = self.sc.model.host
        if self.tuner is not None:
            wanted = {k: tuning.sysctl_value(k, v)
                      for k, v in self.sc.variant_sysctls(cell.variant).items()}
            rec.details["host_tuning"] = {"sysctls": self.tuner.set_sysctls(wanted),
                                          **self.swap}
        elif host is not None and hasattr(self.provider, "tune"):
            wanted = {k: str(tuning.sysctl_value(k, v))
                      for k, v in self.sc.variant_sysctls(cell.variant).items()}
            rec.details["host_tuning"] = {
                "host": self.provider.host_name,
                "sysctls": self.provider.tune(wanted, host.disposable
                                              and self.opts.disposable_confirmed)}

    def _wire(self, ctx: RunContext, rec: RunRecord, server: Server) -> None:
        """The run context pointed at the ready server: its endpoint, its host's page
        cache, and the workload's programs on that host when the scenario asks."""
        m = self.sc.model
        ctx.endpoint = server.endpoint
        host_ok = bool(m.host and m.host.disposable and self.opts.disposable_confirmed)
        ctx.drop_page_cache = lambda: server.drop_page_cache(host_ok)
        if getattr(m.workload, "client", "controller") == "db_host":
            ctx.remote = server.remote_shell  # None: that host is this machine
            rec.details["workload_client"] = (ctx.remote.where if ctx.remote
                                              else "this machine (the db host)")

    def _judge(self, rec: RunRecord, cell: Cell, result: WorkloadResult,
               summary: dict[str, Any], page: int) -> None:
        """Phases and the expected findings one run can judge, into ``summary``."""
        m = self.sc.model
        self._phases(rec, cell, result, summary, page)
        judge = workloads.plugin(m.workload.kind).judge_run
        if judge and m.expectations:
            summary["expectations"] = summary.get("expectations", []) + \
                judge(m.expectations, summary, cell.build.name, cell.variant)
        if any(e.metric == "series" for e in m.expectations):
            found, keep = findings.evaluate_run(
                self.store, rec.run_id, m.expectations,
                Window("main", *summary["main_window"]), cell.build.name, cell.variant)
            summary["expectations"] = summary.get("expectations", []) + found
            summary["series_stats"] = keep

    def _store(self, rec: RunRecord, cell: Cell, rep: int, summary: dict[str, Any]) -> None:
        """The finished run stored: failed when its workload found its result invalid,
        or a side load or config change failed (the main workload finished), with its
        line in the progress."""
        failures = [summary["workload_failure"]] if summary.get("workload_failure") else []
        failures += [x["error"] for x in summary["side_loads"] if x["error"]] + \
            [f"config change at {x['t']} s failed: {x['error']}"
             for x in summary["config_changes"] if x.get("error")]
        status = "failed" if failures else "ok"
        self.store.update_run(rec.run_id, status=status, ended_at=now_iso(),
                              summary=summary, details=rec.details,
                              error="\n".join(failures) or None)
        self.results.append(RunResult(rec.run_id, cell.build.name, cell.variant, rep,
                                      status, summary, "\n".join(failures) or None))
        self.progress.log("  " + headline(summary))
        for line in failures:
            self.progress.log(f"  {line} (the main workload finished; run marked failed)")
        for x in summary.get("expectations", []):
            self.progress.log("  " + describe(x))

    # --- servers: provision once per build, reuse across runs and variants ------------

    def _drop_server(self, keep: bool = True) -> None:
        """Done with the live server: removed, or with ``--keep`` left running (not
        when the run set was interrupted)."""
        live, self.live_server = self.live_server, None
        if live is None:
            return
        if self.opts.keep and keep and live.server.owned and self._kept(live):
            return
        self.progress.update("letting go of the external server"
                             if isinstance(live.server, external.ExternalServer)
                             else "removing sandbox")
        try:
            live.server.destroy()
        except HarnessError as e:
            self.progress.log(f"warning: {e}")
        finally:
            if live.profile is not None:
                live.profile.close()

    def _kept(self, live: LiveServer) -> bool:
        self.progress.update("keeping the sandbox")
        try:
            how = live.server.keep(self.run_set)
        except HarnessError as e:
            self.progress.log(f"warning: {live.server.name} could not be kept ({e}); "
                              "removing it")
            return False
        if live.profile is not None:  # mysqld was restarted outside its cgroups
            live.profile.close()
        self.progress.log(f"kept {live.server.name} ({live.server.build.name}) running; "
                          f"connect: {how}")
        return True

    def _start(self, live: LiveServer, options: dict[str, OptionValue],
               measured: bool = True) -> None:
        """Start with ``options``; a start for the measured part begins inside the host
        profile's cgroups (its memory counts from mysqld's first allocation)."""
        live.server.cgroups = live.profile.enter() if live.profile and measured else []
        live.server.io_limits = live.profile.io_limits if live.profile and measured else {}
        live.server.start(options)
        live.options = dict(options)

    def _ready(self, cell: Cell, ctx: RunContext, rec: RunRecord) -> LiveServer:
        """A running server in the state the scenario asks for at the start of a run:
        a new sandbox (from the snapshot, or prepared and snapshotted), or the last one
        reset by ``between_runs``. What was done is stored in the run's details."""
        if cell.spec is not None:
            return self._ready_external(cell, ctx, rec)
        key = snapshot.snapshot_key(cell.build, self.sc.model.dataset, cell.options,
                                    self.sc.model.prepare_mysqld)
        live = self.live_server
        if live is not None and (live.key != key or not live.server.is_running):
            self._drop_server()
            live = None
        t0 = time.monotonic()
        if live is None:
            live, how = self._new_sandbox(cell, ctx, rec, key)
        else:
            ctx.endpoint = live.server.endpoint
            how = self._reset(live, cell, ctx, key)
        rec.details["server_state"] = {"how": how, "seconds": round(time.monotonic() - t0, 3),
                                       "snapshot": key if self.snapshots else None,
                                       "sandbox": live.server.name,
                                       "mysqld_pid": live.server.pid}
        if live.profile is not None and live.server.is_running:
            # Only the measured part runs under the profile: prepare and snapshot copies
            # are not part of the experiment (and would take ages on a throttled disk).
            # A measured start began inside the cgroups; a server kept from its prepare
            # (no snapshot) is moved there now.
            rec.details["host_profile"] = live.profile.attach(live.server.pid)
        self.progress.log(f"  server: {how} ({time.monotonic() - t0:.1f} s)")
        for note in live.server.notes:
            self.progress.log(f"  warning: {note}")
            rec.details["server_state"].setdefault("notes", []).append(note)
        return live

    def _new_sandbox(self, cell: Cell, ctx: RunContext, rec: RunRecord,
                     key: str) -> tuple[LiveServer, str]:
        """A new sandbox, from the dataset snapshot or prepared (and then snapshotted);
        the live server and how it was made."""
        m = self.sc.model
        snap = snapshot.find(key) if self.snapshots else None
        self.progress.update("creating sandbox" + (" from the dataset snapshot"
                                                   if snap else ""))
        server = self.provider.provision(cell.build, cell.variant, datadir_from=snap)
        live = self.live_server = LiveServer(server, key)
        ctx.endpoint = server.endpoint
        if m.host_profile is not None:
            live.profile = server.host_profile(m.host_profile.limits())
            live.profile.apply()
        if snap is not None:
            self._start(live, cell.options)
            return live, "new sandbox from snapshot"
        self._start(live, {**cell.options, **m.prepare_mysqld}, measured=False)
        for d in m.dataset:
            live.prepare.append(prepare_dataset(ctx, d))
            p = live.prepare[-1]
            self.progress.log(f"  prepared {d.database}: {p['rows']} rows in "
                              f"{p['seconds']:.1f} s ({p['rows_per_s']:.0f} rows/s)")
        live.prepared_by = rec.run_id
        if self.snapshots:
            self.progress.update("saving the dataset snapshot")
            server.stop()
            path, secs = server.save_datadir(key, {
                "build": cell.build.name, "datasets": [d.model_dump() for d in m.dataset],
                "prepare_s": sum(p["seconds"] for p in live.prepare)})
            self.progress.log(f"  dataset snapshot saved in {secs:.1f} s: {path}")
            rec.details["snapshot_saved_s"] = round(secs, 3)
            self._start(live, cell.options)
            return live, "new sandbox, prepared, snapshot saved"
        if m.prepare_mysqld:
            server.stop()
            self._start(live, cell.options)
            return live, "new sandbox, prepared, restarted without prepare_mysqld"
        return live, "new sandbox"

    def _reset(self, live: LiveServer, cell: Cell, ctx: RunContext, key: str) -> str:
        """The last run's server made ready for this one, as ``between_runs`` says:
        the snapshot restored, a restart, or kept running (a new variant's options
        by SET GLOBAL where they are dynamic). How, in words."""
        m = self.sc.model
        if m.between_runs == "restore" and self.snapshots:
            self.progress.update("restoring the dataset snapshot")
            snap = snapshot.find(key)
            if snap is None:
                raise HarnessError(f"snapshot {key} disappeared from "
                                   f"{snapshot.snapshot_root()} during the run set")
            live.server.stop()
            live.server.replace_datadir(snap)
            self._start(live, cell.options)
            return "snapshot restored, restarted"
        if m.between_runs == "restart" or live.options is None:
            self.progress.update("restarting the server")
            live.server.stop()
            self._start(live, cell.options)
            return "restarted"
        # warmup: keep it running; apply a new variant's options with SET GLOBAL
        diff = {k: v for k, v in cell.options.items() if live.options.get(k) != v}
        diff.update({k: None for k in live.options if k not in cell.options})
        if not diff:
            return "kept running"
        if self._set_global(live, diff, ctx):
            live.options = dict(cell.options)
            return f"kept running, SET GLOBAL {', '.join(sorted(diff))}"
        live.server.stop()
        self._start(live, cell.options)
        return "restarted (a changed option is not dynamic)"

    def _ready_external(self, cell: Cell, ctx: RunContext, rec: RunRecord) -> LiveServer:
        """An external server as it is: connect, check the dataset is there (or prepare
        it on a disposable one: the guard allowed it), apply a variant with SET GLOBAL
        (disposable only; the old values are set back when the run set lets it go)."""
        m = self.sc.model
        spec = cell.spec
        assert spec is not None
        t0 = time.monotonic()
        live = self.live_server
        how = "external server, kept running"
        if live is None:
            self.progress.update(f"connecting to {spec.title}")
            ep = external.endpoint_of(spec, spec.title)
            server = external.ExternalServer(spec, cell.build, ep)
            live = self.live_server = LiveServer(server, f"external:{spec.title}", options={})
            ctx.endpoint = ep
            ctx.server_local = False
            for d in m.dataset:
                wrong = verify_dataset(ep, d)
                if not wrong:
                    continue
                self.progress.log(f"  {spec.title} is disposable: preparing {d.database} "
                                  f"({wrong[0]})")
                drop_dataset(ep, d)
                live.prepare.append(prepare_dataset(ctx, d))
                live.prepared_by = rec.run_id
                how = "external server (disposable), dataset prepared"
        ctx.endpoint = live.server.endpoint
        ext = live.server
        assert isinstance(ext, external.ExternalServer)
        old = live.options or {}
        diff = {k: v for k, v in cell.options.items() if old.get(k) != v}
        back = [k for k in old if k not in cell.options]
        if diff or back:
            failed = ext.put_back([norm(k) for k in back])
            if failed:
                raise HarnessError(f"{spec.title}: could not set back {'; '.join(failed)}")
            ext.remember([norm(k) for k in diff])
            with connection(ext.endpoint) as c, c.cursor() as cur:
                for k, v in diff.items():
                    try:
                        set_global(cur, k, v)
                    except pymysql.err.MySQLError as e:
                        raise OwnershipError(
                            f"{spec.title}: variant {cell.variant} sets {k}, which cannot be "
                            f"set at runtime ({e.args[-1]}); the harness does not restart a "
                            "server it did not create") from None
            live.options = dict(cell.options)
            ctx.event(ctx.clock(), "config", "variant", {"set_global": diff, "ok": True,
                                                         "set_back": back})
            how += f", SET GLOBAL {', '.join(sorted([*diff, *back]))}"
        rec.details["server_state"] = {"how": how, "seconds": round(time.monotonic() - t0, 3),
                                       "snapshot": None, "external": spec.title,
                                       "disposable": spec.disposable}
        self.progress.log(f"  server: {how} ({time.monotonic() - t0:.1f} s)")
        for note in live.server.notes:
            self.progress.log(f"  warning: {note}")
            rec.details["server_state"].setdefault("notes", []).append(note)
        return live

    def _set_global(self, live: LiveServer, diff: dict[str, OptionValue | None],
                    ctx: RunContext) -> bool:
        """Apply changed options with SET GLOBAL; False if one is not dynamic (or was
        removed from the variant: its default comes back only with a restart)."""
        if any(v is None for v in diff.values()):
            return False
        with connection(live.server.endpoint) as c, c.cursor() as cur:
            for k, v in diff.items():
                try:
                    set_global(cur, k, v)
                except pymysql.err.MySQLError as e:
                    self.progress.log(f"  {k} cannot be set at runtime ({e.args[-1]}); "
                                      "restarting instead")
                    return False
        ctx.event(ctx.clock(), "config", "variant", {"set_global": diff, "ok": True})
        return True

    def _probe(self, server: Server, data: Any, art: Path) -> dict[str, Any]:
        self.progress.update("measuring the CPU wake-up effect")
        probe = wakeup_probe(server.endpoint, data, art)
        if probe["large"]:
            self.progress.log(
                f"  warning: single-threaded tps is {probe['one_core_busy_tps']} with one "
                f"busy core vs {probe['idle_tps']} idle (x{probe['ratio']}): idle CPUs wake "
                "slowly here, so phases with and without side load do not compare fairly; "
                "set cpu_keepalive: true in the scenario to keep every CPU awake")
        return probe

    def _measure(self, ctx: RunContext, cell: Cell, rec: RunRecord, server: Server,
                 art: Path, data: Any) -> tuple[WorkloadResult, dict[str, Any], dict[str, Any]]:
        """The timeline (main workload, side loads, config changes), with collectors
        (and the CPU keep-alive) around it."""
        m = self.sc.model
        if self.live is not None:
            ep = server.endpoint
            self.live.start_run(cell.build.name, cell.variant,
                                workload_for(m.workload, data).label,
                                node=server.remote_host or socket.gethostname(),
                                address=f"{ep.host}:{ep.port}")
        cctx = self._collector_context(ctx, cell, server, art)
        timeline = Timeline(ctx.clock)
        loads = self._side_loads(ctx, cell, server, timeline)
        changes = [ConfigChanger(ch, ctx, timeline) for ch in m.config_changes]
        if isinstance(server, external.ExternalServer):  # to set back when done with it
            server.remember(sorted({norm(k) for ch in m.config_changes for k in ch.set_global}))
        with ExitStack() as stack:
            if m.cpu_keepalive:
                method = "auto" if m.cpu_keepalive is True else str(m.cpu_keepalive)
                rec.details["cpu_keepalive"] = stack.enter_context(keep_awake(method))
            started: list[Collector] = []
            if self.opts.collectors:
                cstack, started = start_all(cctx, dict(m.collectors))
                stack.enter_context(cstack)
            for t in [*loads, *changes]:
                t.start()
            try:
                result, window = self._main(ctx, timeline, server, data, loads)
            finally:
                timeline.abort()  # wakes anything still waiting; a no-op once all ran
                for ld in loads:
                    ld.stop()
                for t in [*loads, *changes]:
                    t.join(15)
            if started:
                time.sleep(COOLDOWN_S)  # the tail: what the server does once load stops
        extra = {"main_window": [round(window[0], 3), round(window[1], 3)],
                 "side_loads": [ld.summary() for ld in loads],
                 "config_changes": [ch.result for ch in changes]}
        return result, self._collected(cctx, started, cell, rec, art), extra

    def _collector_context(self, ctx: RunContext, cell: Cell, server: Server,
                           art: Path) -> CollectorContext:
        return CollectorContext(
            endpoint=server.endpoint, flavor=cell.build.flavor,
            version=cell.build.version_tuple, clock=ctx.clock, sample=ctx.sample,
            event=ctx.event, artifacts=art, mysqld_pid=server.pid, container=server.container,
            remote_host=server.remote_host, remote=server.remote_shell, owned=server.owned,
            heavy_ok=frozenset(k for k, v in self.sc.model.collectors.items()
                               if v.allow_external))

    def _side_loads(self, ctx: RunContext, cell: Cell, server: Server,
                    timeline: Timeline) -> list[SideLoad]:
        """The scenario's side loads for this run (read-only on a server the harness
        does not own; in the server's cgroups where they ask for it)."""
        profile = self.live_server.profile if self.live_server else None
        loads = []
        for spec in self.sc.model.side_loads:
            ld = SideLoad(spec, ctx, timeline, server.scratch, self.sc.path.parent,
                          tools=cell.build.client_tools(), log=self.progress.log)
            ld.read_only = not server.owned
            if spec.in_server_cgroup and profile is not None:
                ld.cgroups = list(profile.dirs.values())
            loads.append(ld)
        return loads

    def _main(self, ctx: RunContext, timeline: Timeline, server: Server, data: Any,
              loads: list[SideLoad]) -> tuple[WorkloadResult, tuple[float, float]]:
        """The main workload at its start on the timeline, watched; then the side loads
        that run to completion get their grace. Its result and measured window."""
        w = self.sc.model.workload
        if not timeline.wait_start(w.start):
            raise HarnessError("the run was aborted before the main workload started")
        if w.start.after:
            ctx.event(ctx.clock(), "note", "main_start", {"after": w.start.after})
        # "after: warmup" means the measured part: after a ramp and the warmup, from
        # when the workload says it begins.
        measured: list[float] = []

        def measured_from(t: float) -> None:
            measured.append(t)
            timeline.mark_end("warmup", t)
        ctx.measured_from = measured_from
        t_start = ctx.clock()
        with watch_server(server, ctx):
            result = workload_for(w, data).run(ctx)
        main_end = ctx.clock()
        if not measured:
            timeline.mark_end("warmup", t_start)
        timeline.mark_end("main")
        for ld in loads:
            ld.main_ended()
        waiting = [ld for ld in loads if ld.is_alive() and ld.spec.until == "complete"]
        grace = max(SIDE_LOAD_GRACE_S, 2 * (main_end - t_start))
        if waiting:
            self.progress.log(f"  main workload done; waiting for side load(s) "
                              f"{', '.join(ld.spec.name for ld in waiting)} (at most "
                              f"{grace:.0f} s)")
        _wait_for_loads(loads, time.monotonic() + grace, self.progress.log)
        return result, (measured[0] if measured else t_start, main_end)

    def _collected(self, cctx: CollectorContext, started: list[Collector], cell: Cell,
                   rec: RunRecord, art: Path) -> dict[str, Any]:
        """What the collectors say about the run: their notes and statistics, and the
        Percona Toolkit fingerprints (captured once per cell, copied to its other runs)."""
        collected: dict[str, Any] = {"notes": list(cctx.notes)}
        for c in started:
            if isinstance(c, PolledCollector) and c.supported:
                collected[c.name] = _collector_stats(c)
        if self.opts.collectors:
            first = self._fingerprints.get(id(cell))
            if first is None:
                collected["notes"] += percona_toolkit.capture(cctx)
                self._fingerprints[id(cell)] = (rec.run_id, art)
            else:
                collected["notes"] += percona_toolkit.copy_from(first[1], first[0], cctx)
        return collected

    def _phases(self, rec: RunRecord, cell: Cell, result: WorkloadResult,
                summary: dict[str, Any], page_bytes: int) -> None:
        """Per-phase summary and expected findings into ``summary`` (after the samples
        are stored: the buffer pool walk's series come from the store)."""
        m = self.sc.model
        if not m.side_loads:
            return
        watch = sorted({*m.watch_indexes, *(e.index for e in m.expectations if e.index)})
        summary["phases"], series = stored_phases(self.store, rec.run_id, result.intervals,
                                                  watch, page_bytes)
        if m.expectations:
            summary["expectations"] = evaluate(m.expectations, summary["phases"], series,
                                               page_bytes, cell.build.name, cell.variant)

    def _context(self, rec: RunRecord, art: Path) -> tuple[RunContext, SampleWriter]:
        writer = self.store.writer(rec.run_id)
        t0 = time.monotonic()
        rec.details["clock_origin"] = time.time()  # wall clock of t = 0 (epoch seconds)
        run_id = rec.run_id
        live = self.live

        def clock() -> float:
            return time.monotonic() - t0

        def event(t: float, kind: str, name: str, detail: dict[str, Any] | None) -> None:
            try:
                self.store.add_event(run_id, t, kind, name, detail)
            except StoreError as e:  # the run stops with this cause (close() raises it)
                writer.fail(str(e))

        def sample(t: float, source: str, metric: str, value: float,
                   labels: dict[str, str] | None = None) -> None:
            writer.add(t, source, metric, value, labels)
            if live is not None:
                live.update(t, source, metric, value, labels)

        ctx = RunContext(endpoint=NO_ENDPOINT, artifacts=art, clock=clock,
                         sample=sample, event=event, progress=self.progress.update,
                         log=self.progress.log)

        def store_failed(why: str) -> None:  # stop now; the run fails with the cause
            self.progress.log(f"  {why}: stopping the run")
            for hook in list(ctx.on_server_lost):
                hook()
        writer.on_failure.append(store_failed)
        return ctx, writer

    def _store_files(self, rec: RunRecord) -> None:
        """The run's folder into the store, so a shared store has it on every machine;
        what is too large to belong there is named in the run's details."""
        left = self.store.save_artifacts(rec.run_id, Path(rec.artifacts or "."))
        if left:
            rec.details["artifacts_only_in_folder"] = left

    def _fail(self, cell: Cell, rec: RunRecord, status: str, error: str) -> None:
        live = self.live_server
        if live is not None:
            try:
                live.server.collect_artifacts(Path(rec.artifacts or "."))
            except OSError:
                pass
        try:
            self._store_files(rec)
        except (HarnessError, SQLAlchemyError, OSError) as e:
            self.progress.log(f"run {rec.run_id}: its files stay in {rec.artifacts} only ({e})")
        n = 0
        try:
            n = self.store.sample_count(rec.run_id)
            self.store.update_run(rec.run_id, status=status, ended_at=now_iso(), error=error,
                                  summary={"samples": n}, details=rec.details)
        except (HarnessError, SQLAlchemyError, OSError) as e:
            self.progress.log(f"run {rec.run_id}: its row could not be marked {status} ({e}); "
                              "'harness store check --repair' marks it later")
        self.results.append(RunResult(rec.run_id, cell.build.name, cell.variant,
                                      rec.repetition, status, {"samples": n}, error))
        self.progress.log(f"run {rec.run_id} {status}: {error}")


def _wait_for_loads(loads: list[SideLoad], deadline: float,
                    log: Callable[[str], None]) -> None:
    """Join the side loads; one still running at ``deadline`` is stopped and marked."""
    for ld in loads:
        while ld.is_alive():
            if time.monotonic() >= deadline:
                log(f"  side load {ld.spec.name} still runs long after the main workload: "
                    "stopping it (its summary says deadline_hit)")
                ld.deadline_hit = True
                ld.stop()
                ld.join(15)
                break
            ld.join(0.5)


def _close_quietly(writer: SampleWriter | None) -> str | None:
    """Write what the writer holds; what went wrong, if anything (never raises: the run
    is failing already, and its own cause must be stored)."""
    if writer is None:
        return None
    try:
        writer.close()
    except HarnessError as e:
        return str(e)
    return writer.failed


def _describe_swap(swap: dict[str, Any]) -> str:
    size = f"{swap['bytes'] / 2**30:.1f} GiB"
    if swap.get("swap") == "file":
        return f"{size} swap file {swap['path']} (removed when the run set ends)"
    return f"{size} already active ({', '.join(a['path'] for a in swap['areas'])}), kept"


def _collector_stats(c: PolledCollector) -> dict[str, Any]:
    def pct(xs: Sequence[float], q: float) -> float | None:
        v = nearest_rank(xs, q)
        return None if v is None else round(v * 1000, 3)
    return {"interval_s": c.interval_s, "samples": c.samples, "failures": c.failures,
            "duration_ms_median": pct(c.durations, 0.5), "duration_ms_p99": pct(c.durations, 0.99),
            "lateness_ms_p99": pct(c.lateness, 0.99)}


def headline(summary: dict[str, Any]) -> str:
    """One line on a finished run, whatever its workload: its own headline, else the
    figures its summary has (a summary with none says so; it never raises)."""
    samples = f"{summary.get('samples', 0)} samples"
    if summary.get("headline"):
        return f"{summary['headline']}, {samples}"
    figures = [f"{f.label} {summary[f.key]:.4g}" for f in FIGURES
               if isinstance(summary.get(f.key), int | float)]
    return ", ".join(figures or ["no headline figure in its summary"]) + f", {samples}"


def summary_table(results: list[RunResult]) -> list[dict[str, Any]]:
    """Per server x variant: runs, and the median over repetitions of each headline
    figure its workload reports (tps and p95 latency; an SSB flight's cold and warm
    seconds)."""
    groups: dict[tuple[str, str], list[RunResult]] = {}
    for r in results:
        groups.setdefault((r.server, r.variant), []).append(r)
    rows = []
    for (server, variant), rs in groups.items():
        ok = [r for r in rs if r.status == "ok"]
        row: dict[str, Any] = {"server": server, "variant": variant, "runs": len(rs),
                               "ok": len(ok)}
        for key in SUMMARY_KEYS:
            vals = [r.summary[key] for r in ok if r.summary.get(key) is not None]
            if vals or any(key in (r.summary or {}) for r in rs):
                row[key] = statistics.median(vals) if vals else None
        rows.append(row)
    return rows
