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
import statistics
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from . import catalog
from .catalog import Build
from .collectors import Collector, CollectorContext, PolledCollector, percona_toolkit, start_all
from .errors import HarnessError, InputError, ScenarioError
from .hostinfo import host_facts, meminfo_kb
from .live import LiveMetrics
from .mycnf import MANAGED, norm, parse_size, unknown_options
from .mysql import connection, variables
from .noise import keep_awake, wakeup_probe
from .progress import Progress
from .providers import get_provider
from .providers.base import Server
from .scenario import LoadedScenario, OptionValue, ServerSpec
from .store import RunRecord, Store
from .store.db import SampleWriter
from .workloads.base import RunContext
from .workloads.sysbench import SysbenchOLTP

COOLDOWN_S = 2.0


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


@dataclass
class Cell:
    build: Build
    variant: str
    options: dict[str, OptionValue]


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
    return datetime.now(UTC).isoformat(timespec="seconds")


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
            options = sc.variant_options(v)
            for k in options:
                if norm(k) in MANAGED:
                    where = f"variants.{v}.mysqld" if k in m.variants[v].mysqld else "mysqld"
                    problems.append(f"{where}.{k}: set by the sandbox itself; remove it")
            for k in unknown_options(b, [k for k in options if norm(k) not in MANAGED]):
                where = (f"variants.{v}.mysqld.{k}" if k in m.variants[v].mysqld
                         else f"mysqld.{k}" if k in m.mysqld else f"variants.{v}.my_cnf: {k}")
                problems.append(f"{where}: unknown to {b.name} ({b.flavor} {b.version}); "
                                "this server version does not accept that option")
            problems += _impossible(options, f"variants.{v}.mysqld" if any(
                norm(k) == "innodb_buffer_pool_size" for k in m.variants[v].mysqld) else "mysqld")
            cells.append(Cell(b, v, options))
    if problems:
        raise ScenarioError(str(sc.path), sorted(set(problems)))
    return cells


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
              else catalog.detect_build(Path(s.basedir or "")) for s in specs]
    return check_cells(sc, builds, variants)


class Runner:
    def __init__(self, sc: LoadedScenario, store: Store, opts: RunOptions,
                 progress: Progress | None = None):
        self.sc = sc
        self.store = store
        self.opts = opts
        self.progress = progress or Progress()
        self.provider = get_provider(opts.target)
        self.run_set = opts.resume or new_id()
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
        n = 0
        for cell in cells:
            first = n + 1
            n += reps
            todo = [r for r in range(1, reps + 1)
                    if (cell.build.name, cell.variant, r) not in self.done]
            if not todo:
                self.progress.log(f"{cell.build.name}/{cell.variant}: done in run set "
                                  f"{self.run_set}, skipped")
                continue
            self.progress.prefix = f"[{first}-{n}/{total}] {cell.build.name}/{cell.variant} "
            ok = self._run_cell(cell, todo)
            if not ok and self.opts.fail_fast:
                self.progress.log("stopping: --fail-fast and a run failed")
                break
        self.progress.prefix = ""
        return self.results

    def _new_record(self, cell: Cell, rep: int, facts: dict[str, Any]) -> RunRecord:
        run_id = new_id()
        art = artifacts_root(self.store) / "runs" / run_id
        art.mkdir(parents=True, exist_ok=True)
        (art / "scenario.yaml").write_text(self.sc.text)
        (art / "host.json").write_text(json.dumps(facts, indent=2))
        return RunRecord(
            run_id=run_id, run_set=self.run_set, scenario=self.sc.model.name,
            server=cell.build.name, flavor=cell.build.flavor, version=cell.build.version,
            variant=cell.variant, repetition=rep, target=self.provider.target,
            host=facts.get("hostname") or "", started_at=now_iso(), artifacts=str(art),
            details={"scenario_file": str(self.sc.path), "version_string":
                     cell.build.version_string, "build_root": str(cell.build.root),
                     "options": cell.options, "host": facts})

    def _run_cell(self, cell: Cell, reps: list[int]) -> bool:
        """Provision, prepare once, run every repetition, tear down. False if one failed."""
        m = self.sc.model
        wl = m.workload
        data = m.dataset_for(wl.database)
        facts = host_facts()
        if facts["busy_processes"]:
            self.progress.log("warning: the machine is busy, results may be noisy: "
                              + "; ".join(facts["busy_processes"]))
        server: Server | None = None
        rec: RunRecord | None = None
        all_ok = True
        try:
            self.progress.update("creating sandbox")
            t0 = time.monotonic()
            server = self.provider.provision(cell.build, cell.variant)
            server.start(cell.options)
            ready_s = time.monotonic() - t0
            with connection(server.endpoint) as c:
                server_vars = variables(c)
            prepare: list[dict[str, Any]] = []
            probe: dict[str, Any] | None = None
            for rep in reps:
                rec = self._new_record(cell, rep, facts)
                art = Path(rec.artifacts or ".")
                rec.details["sandbox_ready_s"] = round(ready_s, 3)
                (art / "variables.json").write_text(json.dumps(server_vars, indent=2))
                self.store.create_run(rec)
                self.progress.log(f"run {rec.run_id}: {cell.build.name} ({cell.build.flavor} "
                                  f"{cell.build.version}) variant {cell.variant} rep {rep}")
                ctx, writer = self._context(rec, server, art)
                try:
                    if rep == reps[0]:
                        for d in m.dataset:
                            prepare.append(SysbenchOLTP(wl, d).prepare(ctx))
                            self.progress.log(
                                f"  prepared {d.database}: {prepare[-1]['rows']} rows in "
                                f"{prepare[-1]['seconds']:.1f} s "
                                f"({prepare[-1]['rows_per_s']:.0f} rows/s)")
                        if m.wakeup_probe:
                            probe = self._probe(server, data, art)
                    rec.details["wakeup_probe"] = probe
                    rec.details["cpu_keepalive"] = False  # or the method, once applied
                    result, collected = self._measure(ctx, cell, rec, server, art, data)
                    writer.close()
                    summary = dict(result.summary, samples=self.store.sample_count(rec.run_id),
                                   prepare=prepare, collectors=collected)
                    server.collect_artifacts(art)
                    self.store.update_run(rec.run_id, status="ok", ended_at=now_iso(),
                                          summary=summary, details=rec.details)
                    self.results.append(RunResult(rec.run_id, cell.build.name, cell.variant,
                                                  rep, "ok", summary))
                    self.progress.log(f"  tps median {summary['tps_median']:.1f}, p95 "
                                      f"{summary['latency_p95_ms']:.2f} ms, "
                                      f"{summary['samples']} samples")
                    rec = None
                except BaseException:
                    writer.close()  # keep every sample taken so far
                    raise
        except KeyboardInterrupt:
            self._fail(cell, rec, server, "interrupted", "interrupted by the user (Ctrl-C)")
            raise
        except (HarnessError, OSError) as e:
            all_ok = False
            # A dead server or a full disk is the cause; the client's complaint the symptom.
            causes = [c for c in (server.death(), server.disk_trouble())
                      if c] if server is not None else []
            self._fail(cell, rec, server, "failed",
                       "\n".join(causes) + f"\n  then: {e}" if causes else str(e))
        finally:
            if server is not None:
                self.progress.update("removing sandbox")
                try:
                    server.destroy()
                except HarnessError as e:
                    self.progress.log(f"warning: {e}")
        return all_ok

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
                 art: Path, data: Any) -> tuple[Any, dict[str, Any]]:
        """The workload, with collectors (and the CPU keep-alive) around it."""
        m = self.sc.model
        if self.live is not None:
            self.live.start_run(cell.build.name, cell.variant, f"sysbench {m.workload.test}")
        cctx = CollectorContext(endpoint=server.endpoint, flavor=cell.build.flavor,
                                version=cell.build.version_tuple, clock=ctx.clock,
                                sample=ctx.sample, event=ctx.event, artifacts=art,
                                mysqld_pid=server.pid)
        with ExitStack() as stack:
            if m.cpu_keepalive:
                method = "auto" if m.cpu_keepalive is True else str(m.cpu_keepalive)
                rec.details["cpu_keepalive"] = stack.enter_context(keep_awake(method))
            started: list[Collector] = []
            if self.opts.collectors:
                cstack, started = start_all(cctx, dict(m.collectors))
                stack.enter_context(cstack)
            result = SysbenchOLTP(m.workload, data).run(ctx)
            if started:
                time.sleep(COOLDOWN_S)  # the tail: what the server does once load stops
        collected: dict[str, Any] = {"notes": list(cctx.notes)}
        for c in started:
            if isinstance(c, PolledCollector) and c.supported:
                collected[c.name] = _collector_stats(c)
        if self.opts.collectors:
            collected["notes"] += percona_toolkit.capture(cctx)
        return result, collected

    def _context(self, rec: RunRecord, server: Server, art: Path
                 ) -> tuple[RunContext, SampleWriter]:
        writer = self.store.writer(rec.run_id)
        t0 = time.monotonic()
        run_id = rec.run_id
        live = self.live

        def clock() -> float:
            return time.monotonic() - t0

        def event(t: float, kind: str, name: str, detail: dict[str, Any] | None) -> None:
            self.store.add_event(run_id, t, kind, name, detail)

        def sample(t: float, source: str, metric: str, value: float,
                   labels: dict[str, str] | None = None) -> None:
            writer.add(t, source, metric, value, labels)
            if live is not None:
                live.update(t, source, metric, value, labels)

        ctx = RunContext(endpoint=server.endpoint, artifacts=art, clock=clock,
                         sample=sample, event=event, progress=self.progress.update)
        return ctx, writer

    def _fail(self, cell: Cell, rec: RunRecord | None, server: Server | None, status: str,
              error: str) -> None:
        if rec is None:
            # Failed before a run existed (sandbox creation, start): still store a run so
            # the failure is visible in `harness runs` with its cause.
            rec = self._new_record(cell, 0, host_facts())  # 0: before any repetition
            self.store.create_run(rec)
        if server is not None:
            try:
                server.collect_artifacts(Path(rec.artifacts or "."))
            except OSError:
                pass
        n = self.store.sample_count(rec.run_id)
        self.store.update_run(rec.run_id, status=status, ended_at=now_iso(), error=error,
                              summary={"samples": n})
        self.results.append(RunResult(rec.run_id, cell.build.name, cell.variant,
                                      rec.repetition, status, {"samples": n}, error))
        self.progress.log(f"run {rec.run_id} {status}: {error}")


def _collector_stats(c: PolledCollector) -> dict[str, Any]:
    def pct(xs: list[float], q: float) -> float | None:
        if not xs:
            return None
        s = sorted(xs)
        return round(s[min(len(s) - 1, int(q * len(s)))] * 1000, 3)
    return {"interval_s": c.interval_s, "samples": c.samples, "failures": c.failures,
            "duration_ms_median": pct(c.durations, 0.5), "duration_ms_p99": pct(c.durations, 0.99),
            "lateness_ms_p99": pct(c.lateness, 0.99)}


def summary_table(results: list[RunResult]) -> list[dict[str, Any]]:
    """Per server x variant: runs, median tps and p95 latency (median over repetitions)."""
    groups: dict[tuple[str, str], list[RunResult]] = {}
    for r in results:
        groups.setdefault((r.server, r.variant), []).append(r)
    rows = []
    for (server, variant), rs in groups.items():
        ok = [r for r in rs if r.status == "ok"]
        rows.append({
            "server": server, "variant": variant, "runs": len(rs), "ok": len(ok),
            "tps_median": statistics.median([r.summary["tps_median"] for r in ok]) if ok else None,
            "latency_p95_ms": statistics.median([r.summary["latency_p95_ms"] for r in ok])
            if ok else None,
        })
    return rows
