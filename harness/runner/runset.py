"""A run set, stage by stage: the matrix planned, the host tuned, each run (its server
ready, its timeline measured, its findings judged, its record stored), then the run
set's own findings. The duties beside the stages live in their modules: ``order``
(which runs, in which order), ``hostwork`` (the host's settings), ``records`` (the
store's side of each run)."""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pymysql

from .. import locks, workloads
from ..analysis.phases import describe
from ..analysis.pooled import standing, tally
from ..errors import HarnessError
from ..host.noise import wakeup_probe
from ..progress import Progress
from ..providers import get_provider
from ..providers.base import Provider, Server
from ..scenario import LoadedScenario
from ..server.mysql import Endpoint, connection, variables
from ..store import RunRecord, Store
from ..workloads.base import RunContext
from . import judge
from .hostwork import HostWork
from .keeper import Keeper, StoreAway
from .lifecycle import ServerLifecycle
from .measure import Measured, Measurement
from .options import RunOptions, RunResult, World
from .order import done_before, run_order
from .plan import Cell, plan
from .records import Records

if TYPE_CHECKING:
    from .live import LiveMetrics

NO_ENDPOINT = Endpoint("", 0, "", "")  # until the run's server is ready


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
        self.done = done_before(store, opts.resume, sc.model.name) if opts.resume else set()
        self.servers = ServerLifecycle(sc, self.provider, self.progress, self.run_set,
                                       keep=opts.keep, monotonic=self.world.monotonic)
        self.records = Records(sc, store, self.world, self.provider, self.run_set,
                               self.progress.log)
        self.host = HostWork(sc, self.provider, opts.disposable_confirmed,
                             self.progress.update, self.progress.log)
        self.results: list[RunResult] = []
        self._probes: dict[int, dict[str, Any] | None] = {}  # the wake-up probe of each cell
        self._announced: set[int] = set()  # cells whose my.cnf notes were said
        self._busy_warned = ""
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

    def _run(self) -> list[RunResult]:
        cells = plan(self.sc, self.opts, self.progress.log)
        reps = self.opts.repetitions or self.sc.model.repetitions
        self.progress.log(f"run set {self.run_set}: {len(cells)} cell(s) x {reps} "
                          f"repetition(s) of {self.sc.model.name}")
        order = run_order(cells, reps, self.opts.interleave or self.sc.model.interleave)
        self.records.recover()
        try:
            self.host.start()
            self._run_in_order(order, len(order))
        except BaseException:
            self.servers.drop(keep=False)  # interrupted or broken: nothing left running
            raise
        finally:
            self.servers.drop()
            self.progress.prefix = ""
            self.host.stop()
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
            if not self._run_cell(cell, rep):
                failed.add(id(cell))
                if self.opts.fail_fast:
                    self.progress.log("stopping: --fail-fast and a run failed")
                    return
            why = self.opts.stop_rule(self.results) if self.opts.stop_rule else None
            if why:
                self.progress.log(f"stopping: {why}")
                return

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

    def _run_cell(self, cell: Cell, rep: int) -> bool:
        """One repetition of a cell on a ready server. False if it failed (the rest of
        the cell is then skipped: its server is gone or its config does not work)."""
        facts = self.world.host_facts()
        busy = "; ".join(facts["busy_processes"])
        if busy and busy != self._busy_warned:
            self.progress.log(f"warning: the machine is busy, results may be noisy: {busy}")
            self._busy_warned = busy
        rec = self.records.new(cell, rep, facts)
        keeper = Keeper(self.store, rec, self.progress.log)
        ctx: RunContext | None = None
        # Nothing between the run's first row and the try: a Ctrl-C the moment the row
        # is there (a user who saw it running) still ends it interrupted.
        self.store.create_run(rec)
        try:
            self._announce(cell, rec, rep, first=id(cell) not in self._announced)
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

    def _fail(self, cell: Cell, rec: RunRecord, keeper: Keeper, status: str,
              error: str) -> None:
        server = self.servers.live.server if self.servers.live else None
        self.results.append(self.records.fail(cell, rec, keeper, server, status, error))

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
        for note in cell.my_cnf.notes if cell.my_cnf else []:
            self.progress.log(f"  my.cnf: {note}")
        for t in cell.translation:
            self.progress.log(f"  translate: {t.option} "
                              + (f"-> {t.new_name} = {t.new_value}"
                                 if t.new_name else "dropped") + f" ({t.note})")

    def _one_run(self, cell: Cell, rep: int, rec: RunRecord, ctx: RunContext,
                 keeper: Keeper) -> None:
        """One repetition: the host tuned, the server ready, the timeline measured, the
        findings judged and the run stored."""
        m = self.sc.model
        art = Path(rec.artifacts or ".")
        data = m.dataset_for(m.workload.database)
        self.host.for_run(cell.variant, rec)
        live = self.servers.ready(cell, ctx, rec)
        server = live.server
        self._wire(ctx, rec, server)
        with connection(server.endpoint) as c:
            server_vars = variables(c)
        (art / "variables.json").write_text(json.dumps(server_vars, indent=2))
        wait = locks.measure_wait_s(workloads.workload_for(m.workload, data).nominal_s)
        with locks.measuring(f"measuring {rec.run_id} of {m.name} ({cell.build.name}, "
                             f"{cell.variant})", self.opts.measure_lock and m.measure_lock,
                             host=server.remote_host, say=self.progress.log,
                             timeout_s=wait) as lock:
            rec.details.measure_lock = lock
            if m.wakeup_probe and id(cell) not in self._probes:  # once per cell
                self._probes[id(cell)] = self._probe(server, data, art)
            rec.details.wakeup_probe = self._probes.get(id(cell))
            rec.details.cpu_keepalive = False  # or the method, once applied
            measured = self._measure(ctx, cell, rec, server, art, data)
        summary = measured.summary(keeper.writer.count,
                                   live.prepare if live.prepared_by == rec.run_id else [])
        result = measured.result
        server.collect_artifacts(art)
        if keeper.spool.gaps:
            rec.details.spool_gaps = [asdict(g) for g in keeper.spool.gaps]
        keeper.spool.end(self.records.end(rec, summary))  # kept before the store is tried
        keeper.close_samples()
        summary.samples = keeper.patiently("counting the stored samples",
                                           self.store.sample_count, rec.run_id)
        keeper.patiently("judging the run", judge.judge_run, self.store, self.sc.model,
                         rec.run_id, cell.build.name, cell.variant, result, summary,
                         int(server_vars.get("innodb_page_size") or 16384))
        keeper.patiently("storing the run's files", self.records.store_files, rec)
        self.results.append(self.records.finish(rec, cell, rep, summary, keeper))

    def _measure(self, ctx: RunContext, cell: Cell, rec: RunRecord, server: Server,
                 art: Path, data: Any) -> Measured:
        """The measured part, with the model disk charging seeks while it runs."""
        profile = self.servers.live.profile if self.servers.live else None
        self.servers.disk_model(True, rec)
        try:
            return self.measurement.measure(ctx, cell, rec, server, art, data, profile)
        finally:
            self.servers.disk_model(False, rec)

    def _wire(self, ctx: RunContext, rec: RunRecord, server: Server) -> None:
        """The run context pointed at the ready server: its endpoint, its host's page
        cache, and the workload's programs on that host when the scenario asks."""
        m = self.sc.model
        ctx.endpoint = server.endpoint
        host_ok = bool(m.host and m.host.disposable and self.opts.disposable_confirmed)
        ctx.drop_page_cache = lambda: server.drop_page_cache(host_ok)
        if getattr(m.workload, "client", "controller") == "db_host":
            ctx.remote = server.remote_shell  # None: that host is this machine
            rec.details.workload_client = (ctx.remote.where if ctx.remote
                                              else "this machine (the db host)")

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
        rec.details.clock_origin = self.world.now().timestamp()  # t = 0, epoch seconds
        rec.details.purpose = self.opts.purpose
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
