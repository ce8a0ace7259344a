"""provision -> prepare -> workload -> teardown -> store, for every cell of a scenario.

A cell is one server x one variant; each repetition of a cell is one stored run. The
whole matrix is checked before anything starts (unknown servers, variants and options
unknown to a server version are bad input, reported at once), a failed cell is stored
as failed with its cause and the next cell goes on (unless ``fail_fast``), and Ctrl-C
stores the current run as interrupted and removes its sandbox.

The stages, each its own module: ``plan`` (the matrix resolved and checked),
``lifecycle`` (the server each run starts on), ``measure`` (one run's timeline with
its collectors) and ``judge`` (the findings of a run and of the run set). This module
runs them in order and stores each run; the provider is given or made from the target.
"""
from __future__ import annotations

import json
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pymysql
from sqlalchemy.exc import SQLAlchemyError

from .. import locks, workloads
from ..analysis.figures import FIGURES, SUMMARY_KEYS
from ..analysis.phases import describe
from ..analysis.pooled import standing, tally
from ..errors import HarnessError, InputError
from ..host import tuning
from ..host.noise import wakeup_probe
from ..paths import private_folder
from ..progress import Progress
from ..providers import get_provider
from ..providers.base import Provider, Server
from ..report.select import hints_of_scenario
from ..scenario import LoadedScenario
from ..server.mysql import Endpoint, connection, variables
from ..store import RunRecord, RunSummary, Store
from ..store import replay as replaying
from ..store.spool import RunEnd
from ..workloads.base import RunContext
from . import judge
from .keeper import Keeper, StoreAway
from .lifecycle import ServerLifecycle
from .measure import Measurement, Stall, stalled_failure
from .plan import Cell, RunOptions, RunResult, World, plan

if TYPE_CHECKING:
    from .live import LiveMetrics

__all__ = ["Runner", "RunOptions", "RunResult", "World", "summary_table", "headline", "new_id"]

NO_ENDPOINT = Endpoint("", 0, "", "")  # until the run's server is ready


def new_id() -> str:
    """A new run set's id: its start, to the second, and four hex digits."""
    return World().new_id()


def _done_before(store: Store, run_set: str, scenario: str) -> set[tuple[str, str, int]]:
    """The cells' repetitions a run set being resumed already has ok: (server,
    variant, repetition); refused when it is no run set of ``scenario``."""
    previous = store.runs(run_set=run_set)
    if not previous:
        raise InputError(f"--resume {run_set}: no such run set in the store")
    if {r.scenario for r in previous} != {scenario}:
        raise InputError(f"--resume {run_set}: that run set is of scenario "
                         f"{previous[0]['scenario']}, not {scenario}")
    return {(r.server, r.variant, r.repetition) for r in previous
            if r.status == "ok"}


def _live_metrics(opts: RunOptions, scenario: str, log: Callable[[str], None]
                  ) -> LiveMetrics | None:
    """The live metrics a run serves (--metrics-port) or pushes (--pushgateway)."""
    if opts.metrics_port is None and not opts.pushgateway:
        return None
    from .live import LiveMetrics  # prometheus_client: only when asked for

    live = LiveMetrics()
    if opts.metrics_port is not None:
        live.serve(opts.metrics_port)
        log(f"serving live metrics on http://127.0.0.1:{opts.metrics_port}/metrics")
    if opts.pushgateway:
        live.push_every(opts.pushgateway, job=f"harness-{scenario}")
    return live


class Runner:
    def __init__(self, sc: LoadedScenario, store: Store, opts: RunOptions,
                 progress: Progress | None = None, provider: Provider | None = None,
                 world: World | None = None):
        self.sc = sc
        self.world = world or World()
        self.store = store
        self.opts = opts
        self.progress = progress or Progress()
        self.provider = provider or get_provider(opts.target)
        self.provider.progress = self.progress.update
        for name in self.provider.remove_stale():
            self.progress.log(f"removed {name}, left by a harness that was killed")
        # A run set of its own, or the one of a parent process that spread a matrix
        # over lab hosts (each host's harness stores into the same run set).
        self.run_set = opts.resume or opts.run_set or self.world.new_id()
        self.done = _done_before(store, opts.resume, sc.model.name) if opts.resume \
            else set()
        self.servers = ServerLifecycle(sc, self.provider, self.progress, self.run_set,
                                       keep=opts.keep, monotonic=self.world.monotonic)
        self.results: list[RunResult] = []
        self._probes: dict[int, dict[str, Any] | None] = {}  # the wake-up probe of each cell
        self._announced: set[int] = set()  # cells whose my.cnf notes were said
        self._busy_warned = ""
        self.tuner: tuning.HostTuner | None = None
        self.swap: dict[str, Any] = {}
        self.balloon: dict[str, Any] = {}  # host.balloon's, while it is inflated
        self.live = _live_metrics(opts, sc.model.name, self.progress.log)
        self.measurement = Measurement(sc, self.progress, opts.collectors, self.live)

    def close(self) -> None:
        if self.live is not None:
            self.live.close()

    def run(self) -> list[RunResult]:
        try:
            return self._run()
        finally:
            self.close()

    def _replay_spools(self) -> None:
        """Runs a store that was away could not take, stored now from their spools (a
        dead harness's; this store's only)."""
        done, problems = replaying.replay_all(self.store, self.store.artifacts_root(),
                                              by="the next harness run")
        for r in done:
            self.progress.log(f"note: run {r.run_id} waited in its spool: {r.samples} "
                              f"samples and {r.events} events stored, {r.status}")
        for p in problems:
            self.progress.log(f"warning: a spool left as it is: {p}")

    def _mark_dead_runs(self) -> None:
        """Runs a dead harness left ``running`` (its process gone from this machine):
        marked interrupted now, with its last event as the cause, not at the next
        ``store check --repair``."""
        for run_id, why in self.store.mark_dead_runs(by="the next harness run"):
            self.progress.log(f"note: run {run_id} was left running ({why}): marked "
                              "interrupted")

    def _run(self) -> list[RunResult]:
        cells = plan(self.sc, self.opts, self.progress.log)
        reps = self.opts.repetitions or self.sc.model.repetitions
        total = len(cells) * reps
        self.progress.log(f"run set {self.run_set}: {len(cells)} cell(s) x {reps} "
                          f"repetition(s) of {self.sc.model.name}")
        # Cell-major (every repetition of a cell, then the next) by default; with
        # interleave, repetition-major in balanced order (A B, B A, A B, ...) so drift
        # hits both sides alike and a linear one cancels over two rounds.
        interleave = self.opts.interleave or self.sc.model.interleave
        order = ([(c, r) for r in range(1, reps + 1)
                  for c in (cells if r % 2 else cells[::-1])] if interleave
                 else [(c, r) for c in cells for r in range(1, reps + 1)])
        for what in tuning.recover():
            self.progress.log(f"restored a host setting left by a killed harness: {what}")
        self._replay_spools()
        self._mark_dead_runs()
        try:
            self._tune_host()
            self._run_in_order(order, total)
        except BaseException:
            self.servers.drop(keep=False)  # interrupted or broken: nothing left running
            raise
        finally:
            self.servers.drop()
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
            if self.servers.live is not None and \
                    self.servers.live.server.build.name != cell.build.name:
                self.servers.drop()
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
        """This host's swap file and memory balloon, when the scenario asks for them (lab
        hosts tune themselves through their provider)."""
        host = self.sc.model.host
        if host is None or hasattr(self.provider, "tune"):
            return
        self.tuner = tuning.HostTuner()
        if host.swap_file:
            self.progress.update(f"making a {host.swap_file} swap file (the host has none)")
            self.swap = self.tuner.ensure_swap(host.swap_file)
            self.progress.log(f"host swap: {_describe_swap(self.swap)}")
        if host.balloon:
            self.progress.update("inflating the memory balloon (host.balloon)")
            self.balloon = self.tuner.inflate(**host.balloon.sizes())
            self.progress.log(f"host memory: a balloon of {self.balloon['bytes'] >> 20} MB "
                              f"locked, {self.balloon['available_after'] >> 20} MB available "
                              f"(was {self.balloon['available_before'] >> 20})")

    def _untune_host(self) -> None:
        """Every host setting put back as it was, and said so."""
        if hasattr(self.provider, "untune"):
            self.provider.untune()
        if self.tuner is None:
            return
        restored = sorted(self.tuner.original)
        if self.swap.get("swap") == "file":
            restored.append("swap file off and removed")
        if self.balloon:
            restored.insert(0, "memory balloon let go")
            self.balloon = {}
        self.tuner.close()
        self.tuner = None
        if restored:
            self.progress.log("host settings restored: " + ", ".join(restored))

    def _run_set_findings(self) -> None:
        """The run set's own verdicts, stored with the runs they judge, and said."""
        found, stored = judge.judge_run_set(self.store, self.sc.model, self.run_set)
        for res in self.results:
            if res.run_id in stored:
                res.summary.expectations = stored[res.run_id]
        said = []
        for x in (x for xs in found.values() for x in xs if x not in said):
            said.append(x)
            self.progress.log(f"[{x.server} / {x.variant}] " + describe(x))
        judged = standing(self.store.runs(run_set=self.run_set))
        if judged:
            self.progress.log(f"run set {self.run_set}: {tally(judged)}")

    def _new_record(self, cell: Cell, rep: int, facts: dict[str, Any]) -> RunRecord:
        run_id = self.world.new_id()
        art = self.store.artifacts_root() / "runs" / run_id
        private_folder(art)
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
            started_at=self.world.iso_now(), artifacts=str(art),
            details={"scenario_file": str(self.sc.path), "scale": self.sc.scale,
                     "report": hints_of_scenario(self.sc.model).to_json(),
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
        facts = self.world.host_facts()
        busy = "; ".join(facts["busy_processes"])
        if busy and busy != self._busy_warned:
            self.progress.log(f"warning: the machine is busy, results may be noisy: {busy}")
            self._busy_warned = busy
        for rep in reps:
            rec = self._new_record(cell, rep, facts)
            self.store.create_run(rec)
            self._announce(cell, rec, rep, first=id(cell) not in self._announced)
            keeper = Keeper(self.store, rec, self.progress.log)
            ctx: RunContext | None = None
            try:
                ctx = self._context(rec, Path(rec.artifacts or "."), keeper)
                self._one_run(cell, rep, rec, ctx, keeper)
            except KeyboardInterrupt:
                lost = keeper.close_quietly()  # keep every sample taken so far
                self._fail(cell, rec, keeper, "interrupted", "interrupted by the user "
                           "(Ctrl-C)" + (f"; {lost}" if lost else ""))
                raise
            except StoreAway:
                keeper.spool.release()  # the run is in its spool, said so
                raise  # and a store that is away takes no more runs
            except (HarnessError, OSError, pymysql.err.MySQLError) as e:
                causes = self._causes(ctx, keeper.close_quietly())
                self._fail(cell, rec, keeper, "failed",
                           "\n".join(causes) + f"\n  then: {e}" if causes else str(e))
                self.servers.drop()
                return False
        return True

    def _causes(self, ctx: RunContext | None, lost: str | None) -> list[str]:
        """Why a run failed, before the client's complaint (the symptom): a dead server,
        a full disk, the reason the workload was stopped, samples the store lost."""
        srv = self.servers.live.server if self.servers.live else None
        found = [srv.death(), srv.disk_trouble()] if srv else []
        found += [ctx.stopped_because if ctx else None, lost]
        return list(dict.fromkeys(c for c in found if c))

    def _announce(self, cell: Cell, rec: RunRecord, rep: int, first: bool) -> None:
        self.progress.log(f"run {rec.run_id}: {cell.build.name} ({cell.build.flavor} "
                          f"{cell.build.version}) variant {cell.variant} rep {rep}")
        if not first:  # once per cell, also when its runs are interleaved with others'
            return
        self._announced.add(id(cell))
        for note in (cell.my_cnf or {}).get("notes", []):
            self.progress.log(f"  my.cnf: {note}")
        for t in cell.translation:
            self.progress.log(f"  translate: {t['option']} "
                              + (f"-> {t['new_name']} = {t['new_value']}"
                                 if t.get("new_name") else "dropped") + f" ({t['note']})")

    def _one_run(self, cell: Cell, rep: int, rec: RunRecord, ctx: RunContext,
                 keeper: Keeper) -> None:
        """One repetition: the host tuned, the server ready, the timeline measured, the
        findings judged and the run stored."""
        m = self.sc.model
        art = Path(rec.artifacts or ".")
        data = m.dataset_for(m.workload.database)
        self._tune_for(cell, rec)
        live = self.servers.ready(cell, ctx, rec)
        server = live.server
        self._wire(ctx, rec, server)
        with connection(server.endpoint) as c:
            server_vars = variables(c)
        (art / "variables.json").write_text(json.dumps(server_vars, indent=2))
        with locks.measuring(f"measuring {rec.run_id} of {m.name} ({cell.build.name}, "
                             f"{cell.variant})", self.opts.measure_lock and m.measure_lock,
                             host=server.remote_host, say=self.progress.log) as lock:
            rec.details["measure_lock"] = lock
            if m.wakeup_probe and id(cell) not in self._probes:  # once per cell
                self._probes[id(cell)] = self._probe(server, data, art)
            rec.details["wakeup_probe"] = self._probes.get(id(cell))
            rec.details["cpu_keepalive"] = False  # or the method, once applied
            result, collected, extra = self._measure(ctx, cell, rec, server, art, data)
        summary = RunSummary.of_workload(
            result.summary, samples=keeper.writer.count,
            prepare=live.prepare if live.prepared_by == rec.run_id else [],
            collectors=collected, workload_failure=result.failure, **extra)
        server.collect_artifacts(art)
        keeper.spool.end(self._end(rec, summary))  # kept before the store is tried
        keeper.close_samples()
        summary.samples = keeper.patiently("counting the stored samples",
                                           self.store.sample_count, rec.run_id)
        keeper.patiently("judging the run", judge.judge_run, self.store, self.sc.model,
                         rec.run_id, cell.build.name, cell.variant, result, summary,
                         int(server_vars.get("innodb_page_size") or 16384))
        keeper.patiently("storing the run's files", self._store_files, rec)
        self._store(rec, cell, rep, summary, keeper)

    def _measure(self, ctx: RunContext, cell: Cell, rec: RunRecord, server: Server,
                 art: Path, data: Any) -> tuple[Any, dict[str, Any], dict[str, Any]]:
        """The measured part, with the model disk charging seeks while it runs."""
        profile = self.servers.live.profile if self.servers.live else None
        self.servers.disk_model(True, rec)
        try:
            return self.measurement.measure(ctx, cell, rec, server, art, data, profile)
        finally:
            self.servers.disk_model(False, rec)

    def _tune_for(self, cell: Cell, rec: RunRecord) -> None:
        """The variant's vm.* sysctls, on this host or through a lab host's provider."""
        host = self.sc.model.host
        if self.tuner is not None:
            wanted = {k: tuning.sysctl_value(k, v)
                      for k, v in self.sc.variant_sysctls(cell.variant).items()}
            rec.details["host_tuning"] = {"sysctls": self.tuner.set_sysctls(wanted),
                                          **self.swap}
            if self.balloon:
                rec.details["host_tuning"]["balloon"] = self.balloon
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

    def _end(self, rec: RunRecord, summary: RunSummary) -> RunEnd:
        """How a finished run ended: failed when its workload found its result invalid,
        its server hung, or a side load or config change failed (the main workload
        finished)."""
        failures = _failures(rec, summary)
        return RunEnd(status="failed" if failures else "ok", ended_at=self.world.iso_now(),
                      error="\n".join(failures) or None, summary=summary,
                      details=rec.details)

    def _store(self, rec: RunRecord, cell: Cell, rep: int, summary: RunSummary,
               keeper: Keeper) -> None:
        """The finished run stored, with its line in the progress."""
        end = self._end(rec, summary)
        keeper.end(end)
        failures = _failures(rec, summary)
        self.results.append(RunResult(rec.run_id, cell.build.name, cell.variant, rep,
                                      end.status, summary, end.error))
        self.progress.log("  " + headline(summary))
        for line in failures:
            self.progress.log(f"  {line} (the main workload finished; run marked failed)")
        for x in summary.expectations:
            self.progress.log("  " + describe(x))

    def _probe(self, server: Server, data: Any, art: Path) -> dict[str, Any] | None:
        """The CPU wake-up probe on the dataset's load (None: its kind has none)."""
        load = workloads.plugin(data.kind).wakeup_probe(server.endpoint, data, art)
        if load is None:
            return None
        self.progress.update("measuring the CPU wake-up effect")
        with load as tps:
            probe = wakeup_probe(tps)
        if probe["large"]:
            said = (f"single-threaded tps is {probe['one_core_busy_tps']} with one busy core "
                    f"vs {probe['idle_tps']} idle (x{probe['ratio']}): idle CPUs wake slowly "
                    "here")
            if self.sc.model.cpu_keepalive:  # the measured part keeps them awake
                self.progress.log(f"  note: {said}; cpu_keepalive keeps every CPU awake "
                                  "while this run measures")
            else:
                self.progress.log(
                    f"  warning: {said}, so phases with and without side load do not "
                    "compare fairly; set cpu_keepalive: true in the scenario to keep every "
                    "CPU awake")
        return probe

    def _context(self, rec: RunRecord, art: Path, keeper: Keeper) -> RunContext:
        writer = keeper.writer
        monotonic = self.world.monotonic
        t0 = monotonic()
        rec.details["clock_origin"] = self.world.now().timestamp()  # t = 0, epoch seconds
        rec.details["purpose"] = self.opts.purpose
        live = self.live

        def clock() -> float:
            return monotonic() - t0

        def sample(t: float, source: str, metric: str, value: float,
                   labels: dict[str, str] | None = None) -> None:
            writer.add(t, source, metric, value, labels)
            if live is not None:
                live.update(t, source, metric, value, labels)

        ctx = RunContext(endpoint=NO_ENDPOINT, artifacts=art, clock=clock,
                         sample=sample, event=keeper.event, progress=self.progress.update,
                         log=self.progress.log)

        writer.on_failure.append(ctx.stop_workload)  # the run fails with the cause
        return ctx

    def _store_files(self, rec: RunRecord) -> None:
        """The run's folder into the store, so a shared store has it on every machine;
        what is too large to belong there is named in the run's details."""
        left = self.store.save_artifacts(rec.run_id, Path(rec.artifacts or "."))
        if left:
            rec.details["artifacts_only_in_folder"] = left

    def _fail(self, cell: Cell, rec: RunRecord, keeper: Keeper, status: str,
              error: str) -> None:
        live = self.servers.live
        if live is not None:
            try:
                live.server.collect_artifacts(Path(rec.artifacts or "."))
            except OSError:
                pass
        n = keeper.writer.count
        end = RunEnd(status=status, ended_at=self.world.iso_now(), error=error,
                     summary=RunSummary(samples=n), details=rec.details)
        keeper.spool.end(end)  # the cause, kept before anything that can fail
        try:
            keeper.patiently("storing the run's files", self._store_files, rec)
            n = end.summary.samples = keeper.patiently("counting the stored samples",
                                                       self.store.sample_count, rec.run_id)
            keeper.end(end)
        except (HarnessError, SQLAlchemyError, OSError) as e:
            keeper.spool.release()
            self.progress.log(f"run {rec.run_id}: not stored as {status} ({e})")
        self.results.append(RunResult(rec.run_id, cell.build.name, cell.variant,
                                      rec.repetition, status, RunSummary(samples=n), error))
        self.progress.log(f"run {rec.run_id} {status}: {error}")


def _describe_swap(swap: dict[str, Any]) -> str:
    size = f"{swap['bytes'] / 2**30:.1f} GiB"
    if swap.get("swap") == "file":
        return f"{size} swap file {swap['path']} (removed when the run set ends)"
    return f"{size} already active ({', '.join(a['path'] for a in swap['areas'])}), kept"


def headline(summary: RunSummary) -> str:
    """One line on a finished run, whatever its workload: its own headline, else the
    figures its summary has (a summary with none says so; it never raises)."""
    samples = f"{summary.samples} samples"
    if summary.headline:
        return f"{summary.headline}, {samples}"
    figures = [f"{f.label} {v:.0f}" if abs(v) >= 1e4 else f"{f.label} {v:.4g}"
               for f in FIGURES if (v := summary.figure(f.key)) is not None]  # never 4e+04
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
            vals = [v for r in ok if (v := r.summary.figure(key)) is not None]
            if vals or any(key in r.summary.measured for r in rs):
                row[key] = statistics.median(vals) if vals else None
        rows.append(row)
    return rows


def _failures(rec: RunRecord, summary: RunSummary) -> list[str]:
    """Why a run whose main workload finished is not ok: its workload found its result
    invalid, its server answered nothing for most of its measured part, or a side load
    or config change failed."""
    failures = [summary.workload_failure] if summary.workload_failure else []
    hung = stalled_failure([Stall(**x) for x in rec.details.get("server_stalls") or []],
                           summary.main_window)
    failures += [hung] if hung else []
    return failures + [x["error"] for x in summary.side_loads if x["error"]] + \
        [f"config change at {x['t']} s failed: {x['error']}"
         for x in summary.config_changes if x.get("error")]
