"""The measurement stage: one run's timeline (the main workload watched, side loads and
config changes at their times) with the collectors and the CPU keep-alive around it,
and what the collectors say afterwards."""
from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, ExitStack
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pymysql

from ..collectors import (
    Collector,
    CollectorContext,
    PolledCollector,
    off_by_environment,
    start_all,
)
from ..errors import HarnessError, InputError
from ..host.noise import keep_awake
from ..host.placement import placed
from ..host.profile import CgroupProfile
from ..progress import Progress
from ..providers.base import Server
from ..scenario import ConfigChange, CpuPlacement, LoadedScenario
from ..server.mycnf import norm
from ..server.mysql import connection, set_global, shown_literal, variables
from ..sideloads import SideLoad
from ..stats.quantile import nearest_rank
from ..store import RunRecord, RunSummary
from ..store.activity import Collected, ConfigChangeRun, PollStats, SideLoadRun
from ..store.prepared import Prepared
from ..timeline import Timeline
from ..workloads import workload_for
from ..workloads.base import RunContext, WorkloadResult
from .liveness import Stall, stalled_note, watch_server
from .plan import Cell

if TYPE_CHECKING:
    from .live import LiveMetrics

COOLDOWN_S = 2.0
# How long side loads with until: complete may run on after the main workload: this,
# or twice the main workload's length if longer.
SIDE_LOAD_GRACE_S = 600.0


class ConfigChanger(threading.Thread):
    """One ``config_changes`` entry: SET GLOBAL at its time, recorded as an event; the
    options it resets go back to ``initial`` (the values read before the run began)."""

    def __init__(self, spec: ConfigChange, ctx: RunContext, timeline: Timeline,
                 initial: dict[str, str] | None = None):
        super().__init__(name="config-change", daemon=True)
        self.spec = spec
        self.ctx = ctx
        self.timeline = timeline
        self.reset = {norm(k): (initial or {})[norm(k)] for k in spec.reset}
        self.t: float | None = None  # when it ran (None: its start never came)
        self.error: str | None = None

    def run(self) -> None:
        if not self.timeline.wait_start(self.spec.start):
            return
        t = self.ctx.clock()
        self.t = round(t, 3)
        try:
            with connection(self.ctx.endpoint) as c, c.cursor() as cur:
                for k, v in self.spec.set_global.items():
                    set_global(cur, k, v)
                for k, was in self.reset.items():
                    cur.execute(f"SET GLOBAL {k} = {shown_literal(was)}")
        except pymysql.err.MySQLError as e:
            self.error = f"SET GLOBAL: {e.args[-1]}"
        said = self.outcome().to_json()
        self.ctx.event(t, "config", self.spec.name or "set_global",
                       {**{k: v for k, v in said.items() if k in ("set_global", "reset")},
                        "ok": self.error is None, "error": self.error})
        if self.error and self.spec.stop_run_on_error:
            self.ctx.stop_workload(f"config change {self.spec.name or ''}: {self.error}")
        if self.spec.name:
            self.timeline.mark_end(self.spec.name, self.ctx.clock())


    def outcome(self) -> ConfigChangeRun:
        """How it ran, as the run's summary keeps it."""
        return ConfigChangeRun(self.spec.name, self.t, dict(self.spec.set_global), self.error,
                               dict(self.reset) or None)


def values_now(endpoint: Any, names: set[str]) -> dict[str, str]:
    """The server's global values of ``names`` now, as it shows them (before the
    measured phase: what a config change's ``reset`` sets back)."""
    if not names:
        return {}
    with connection(endpoint) as c:
        shown = variables(c)
    missing = sorted(n for n in {norm(k) for k in names} if shown.get(n) is None)
    if missing:
        raise InputError(f"config_changes reset: the server has no global value of "
                         f"{', '.join(missing)} to set back")
    return {norm(k): shown[norm(k)] for k in names}


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


def _told_threads(started: Sequence[Collector]) -> Callable[[int], None]:
    """What the workload calls at each change of its thread count: every collector
    hears it (a profiler that records only some thread counts starts or stops)."""
    def tell(threads: int) -> None:
        for c in started:
            c.at_threads(threads)
    return tell


def _collector_stats(c: PolledCollector) -> PollStats:
    def pct(xs: Sequence[float], q: float) -> float | None:
        v = nearest_rank(xs, q)
        return None if v is None else round(v * 1000, 3)
    return PollStats(c.interval_s, c.samples, c.failures, pct(c.durations, 0.5),
                     pct(c.durations, 0.99), pct(c.lateness, 0.99))


def _placed(spec: CpuPlacement, server: Server) -> AbstractContextManager[dict[str, Any]]:
    """The scenario's CPU placement, for a mysqld this host runs (a local sandbox)."""
    if server.pid is None or server.container or server.remote_host:
        raise InputError("cpu_placement: pins a mysqld that runs here as a local sandbox; "
                         "this server is not one (a container, a lab host or an external "
                         "server)")
    return placed(*spec.cpus(), server.pid)


@dataclass
class Measured:
    """What one run's timeline gave: the main workload's result, what the collectors
    said, the measured part's window on the run clock, each side load's and config
    change's outcome."""

    result: WorkloadResult
    collectors: Collected
    main_window: list[float]
    side_loads: list[SideLoadRun]
    config_changes: list[ConfigChangeRun]
    stall: str | None = None  # a stall its headline carries (liveness.stalled_note)

    def summary(self, samples: int, prepare: list[Prepared]) -> RunSummary:
        """The run's summary, as the store keeps it."""
        return RunSummary.of_workload(
            self.result.summary, samples=samples, prepare=prepare,
            collectors=self.collectors, workload_failure=self.result.failure,
            main_window=self.main_window, side_loads=self.side_loads,
            config_changes=self.config_changes, stall=self.stall)


class Measurement:
    """Measures each run of a run set; remembers each cell's first run, whose one-off
    captures (the Percona Toolkit fingerprint) its later runs copy."""

    def __init__(self, sc: LoadedScenario, progress: Progress, collectors: bool = True,
                 live: LiveMetrics | None = None):
        self.sc = sc
        self.progress = progress
        self.collectors = collectors  # False: none at all (overhead measurements)
        self.live = live
        self._first_of_cell: dict[int, tuple[str, Path]] = {}  # (run, artifacts)
        if collectors:
            off_by_environment()  # a misspelt name refused before any server starts

    def measure(self, ctx: RunContext, cell: Cell, rec: RunRecord, server: Server,
                art: Path, data: Any, profile: CgroupProfile | None) -> Measured:
        """The timeline (main workload, side loads, config changes), with collectors
        (and the CPU keep-alive) around it."""
        m = self.sc.model
        self.stalls: list[Stall] = []  # the server's hangs while the main workload ran
        self._say_live(cell, server, data)
        cctx = self._collector_context(ctx, cell, server, art)
        timeline = Timeline(ctx.clock)
        loads = self._side_loads(ctx, cell, server, timeline, profile)
        changes = self._config_changers(ctx, server, timeline)
        with ExitStack() as stack:
            self._host_set_up(stack, rec, server)
            started: list[Collector] = []
            if self.collectors:
                cstack, started = start_all(cctx, dict(m.collectors))
                stack.enter_context(cstack)
            ctx.threads_now = _told_threads(started)
            timeline.begin()
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
        rec.details.server_stalls = [asdict(x) for x in self.stalls]
        main = [round(window[0], 3), round(window[1], 3)]
        return Measured(result, self._collected(cctx, started, cell, rec, art),
                        main_window=main, side_loads=[ld.summary() for ld in loads],
                        config_changes=[ch.outcome() for ch in changes],
                        stall=stalled_note(self.stalls, main))

    def _say_live(self, cell: Cell, server: Server, data: Any) -> None:
        """Tell the live metrics endpoint (when on) which run it now serves."""
        if self.live is None:
            return
        ep = server.endpoint
        self.live.start_run(cell.build.name, cell.variant,
                            workload_for(self.sc.model.workload, data).label,
                            node=server.remote_host or socket.gethostname(),
                            address=f"{ep.host}:{ep.port}")

    def _config_changers(self, ctx: RunContext, server: Server, timeline: Timeline
                         ) -> list[ConfigChanger]:
        """The scenario's config changes, each from the values the server has now (an
        external server remembers them, to be set back when done with it)."""
        m = self.sc.model
        initial = values_now(ctx.endpoint, {k for ch in m.config_changes for k in ch.reset})
        if not server.owned:
            server.remember(sorted({norm(k) for ch in m.config_changes
                                    for k in (*ch.set_global, *ch.reset)}))
        return [ConfigChanger(ch, ctx, timeline, initial) for ch in m.config_changes]

    def _host_set_up(self, stack: ExitStack, rec: RunRecord, server: Server) -> None:
        """The CPU keep-alive (before the placement: its spinners on every CPU) and the
        server's CPU placement, undone when ``stack`` closes."""
        m = self.sc.model
        if m.cpu_keepalive:
            method = "auto" if m.cpu_keepalive is True else str(m.cpu_keepalive)
            rec.details.cpu_keepalive = stack.enter_context(keep_awake(method))
        if m.cpu_placement:
            rec.details.cpu_placement = stack.enter_context(
                _placed(m.cpu_placement, server))

    def _collector_context(self, ctx: RunContext, cell: Cell, server: Server,
                           art: Path) -> CollectorContext:
        return CollectorContext(
            endpoint=server.endpoint, flavor=cell.build.flavor,
            version=cell.build.version_tuple, clock=ctx.clock, sample=ctx.sample,
            event=ctx.event, artifacts=art, mysqld_pid=server.pid, container=server.container,
            remote_host=server.remote_host, remote=server.remote_shell, owned=server.owned,
            heavy_ok=frozenset(k for k, v in self.sc.model.collectors.items()
                               if v.allow_external),
            earlier=self._first_of_cell.get(id(cell)))

    def _side_loads(self, ctx: RunContext, cell: Cell, server: Server, timeline: Timeline,
                    profile: CgroupProfile | None) -> list[SideLoad]:
        """The scenario's side loads for this run (read-only on a server the harness
        does not own; in the server's cgroups where they ask for it)."""
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
        with watch_server(server, ctx, self.stalls):
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
                   rec: RunRecord, art: Path) -> Collected:
        """What the collectors say about the run: their notes and statistics, and their
        one-off captures, taken once every one has stopped."""
        collected = Collected(list(cctx.notes), {
            c.name: _collector_stats(c) for c in started
            if isinstance(c, PolledCollector) and c.supported})
        for c in started:
            collected.notes.extend(c.after_stop())
        self._first_of_cell.setdefault(id(cell), (rec.run_id, art))
        return collected
