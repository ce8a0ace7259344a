"""``harness compare --measure instructions``: each side's mysqld under a counter
(callgrind), a fixed number of transactions a window, instructions per transaction
judged as the windows come (analysis/counted.py).

The design follows the options, as the time verdict does: options that all change at
run time and settle at once are switched by SET GLOBAL inside one lifetime (quads
ABBA or BAAB at random, a short settle run after each switch, counted but not judged);
any other (a static option, one slow to settle, a side that leaves an option to the
default the other sets) by restarts from the same data, one lifetime a unit, each with
a warm-up run first. The data are loaded once, natively (loading under the counter
would take minutes), then the server runs under callgrind until the comparison ends.

A count does not follow the host's noise, so no measurement lock is taken: a counted
comparison may run beside another benchmark (its wall time swings, its count does not).
"""
from __future__ import annotations

import json
import random
import secrets
import socket
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pymysql

from .. import proc
from ..analysis import counted as judge
from ..analysis.counted import CountedVerdict, FunctionMove, Look, Window
from ..analysis.sequential import parse_duration
from ..analysis.switchback import schedule
from ..counted import callgrind, pmu
from ..errors import InputError, ProviderError, ToolError
from ..paths import private_folder
from ..progress import Progress
from ..providers.local import LocalProvider, Sandbox
from ..scenario import LoadedScenario
from ..server import osuser, settle
from ..server.catalog import Build
from ..server.mycnf import Value
from ..store import Store
from ..store.run import RunRecord
from ..workloads.sysbench import (
    SysbenchDataset,
    SysbenchWorkload,
    parse_output,
    prepare_args,
    verify_tables,
    write_config,
)
from . import switchback
from .request import CompareRequest, compare_pair

BUDGET = "15m"  # the default: a 1% change ends in a minute or three, no change too
MAX_QUADS = 60
PER_LIFETIME = 2  # judged windows a lifetime (restarts)
EVENTS = {"oltp_point_select": 10_000}  # a window's transactions; others: 1,000
OTHER_EVENTS = 1_000
SOURCE, METRIC = "counted", "instructions_per_transaction"


@dataclass
class CountedPlan:
    """What a counted comparison runs: one build, each side's options, how they are
    switched, the workload's test and data, and how long it may take."""

    build: Build
    names: tuple[str, str]
    sides: tuple[dict[str, Value | None], dict[str, Value | None]]
    diff: dict[str, tuple[Any, Any]]
    dynamic: bool
    workload: SysbenchWorkload
    data: SysbenchDataset
    events: int
    budget_s: float
    alpha: float
    band: float
    scenario: str

    @property
    def design(self) -> str:
        return ("switchback: SET GLOBAL in one lifetime" if self.dynamic
                else "restarts from the same data, one lifetime a unit")


@dataclass
class CountedResult:
    """What a counted comparison measured and decided."""

    run_set: str
    run_id: str
    plan: CountedPlan
    windows: list[Window]
    verdict: CountedVerdict
    moved: list[FunctionMove]
    counter: str  # valgrind's version
    hardware: str  # what perf's hardware counter answered
    notes: list[str] = field(default_factory=list)
    server_options: dict[str, Value] = field(default_factory=dict)
    minutes: float = 0.0

    def to_json(self) -> dict[str, Any]:
        p = self.plan
        return {"format": "mysql-harness/counted-compare/1", "run_set": self.run_set,
                "run_id": self.run_id, "measure": "instructions",
                "counter": {"name": callgrind.NAME, "version": self.counter,
                            "threads": "the connection thread",
                            "hardware": self.hardware},
                "server": p.build.name, "baseline": p.names[0], "candidate": p.names[1],
                "design": p.design, "events_per_window": p.events,
                "test": p.workload.test, "options_that_differ": {
                    k: list(v) for k, v in p.diff.items()},
                "counter_server_options": {k: str(v) for k, v in
                                           self.server_options.items()},
                **self.verdict.to_json(), "minutes": self.minutes,
                "moved": [m.to_json() for m in self.moved],
                "windows": [w.to_json() for w in self.windows], "notes": self.notes}


def plan(req: CompareRequest, band: float) -> CountedPlan:
    """The plan of ``req`` (InputError naming the flag or the scenario's field when it
    cannot be counted)."""
    sc, pair = compare_pair(req, req.loaded, awake=False)  # a count needs no awake CPUs
    if len(req.builds) != 1:
        raise InputError(f"--measure instructions: one server at a time ({len(req.builds)} "
                         "given; pick one with --server)")
    build = req.first_build
    wl, data = _sysbench_of(sc)
    sides = tuple(sc.variant_options(v, sc.variant_file(v, build)) for v in pair)
    try:
        diff, dynamic = switchback.differing(sc, pair, build), req.design != "interleaved"
    except switchback.SwitchbackError as e:
        diff, dynamic = _plain_diff(sides[0], sides[1]), False
        req.note(f"design: restarts ({e})")
    if dynamic and (slow := settle.slow(list(diff))):
        dynamic = False
        req.note("design: restarts (" + "; ".join(f"{s.option} is slow to settle: {s.why}"
                                                  for s in slow) + ")")
    try:
        budget = parse_duration(req.budget or BUDGET)
    except ValueError as e:
        raise InputError(f"--budget {e}") from None
    return CountedPlan(build, req.names(pair), (sides[0], sides[1]), diff, dynamic, wl, data,
                       req.events or EVENTS.get(wl.test, OTHER_EVENTS), budget, req.alpha,
                       band, sc.model.name)


def _sysbench_of(sc: LoadedScenario) -> tuple[SysbenchWorkload, SysbenchDataset]:
    wl = sc.model.workload
    data = next((d for d in sc.model.dataset if isinstance(d, SysbenchDataset)), None)
    if not isinstance(wl, SysbenchWorkload) or data is None:
        raise InputError(f"{sc.path}: --measure instructions counts sysbench workloads "
                         f"(this one is {wl.kind}; --workload oltp_point_select is the "
                         "count's probe)")
    if sc.model.side_loads:
        raise InputError(f"{sc.path}: --measure instructions counts the workload alone: "
                         "it has side loads")
    return wl, data


def _plain_diff(a: dict[str, Value | None], b: dict[str, Value | None]
                ) -> dict[str, tuple[Any, Any]]:
    return {k: (a.get(k), b.get(k)) for k in sorted({*a, *b}) if a.get(k) != b.get(k)}


class CountedSession:
    """One counted comparison on one sandbox: the data loaded, the server under the
    counter, windows run and read, each stored as it comes."""

    def __init__(self, p: CountedPlan, store: Store, progress: Progress,
                 say: Any) -> None:
        self.p, self.store, self.progress, self.say = p, store, progress, say
        self.rng = random.SystemRandom()
        self.windows: list[Window] = []
        self.looks: list[Look] = []
        self.fns: tuple[dict[str, float], dict[str, float]] = ({}, {})
        self.lifetime = 0
        self.side: str | None = None  # the side the running server has
        self.seen: set[Path] = set()
        self.t0 = time.monotonic()
        self.box: Sandbox | None = None
        self.cfg: Path | None = None
        self.needs: dict[str, Value] = {}
        self.rec: RunRecord | None = None
        self.store_dir = Path()

    # --- the server ------------------------------------------------------------------

    def provision(self) -> None:
        """A sandbox with the data, loaded natively; then its folder for the dumps."""
        p = self.p
        self.progress.update(f"creating a sandbox of {p.build.name}")
        self.box = box = LocalProvider().provision(p.build)
        box.start(p.sides[0])
        with box.endpoint.connect() as c, c.cursor() as cur:
            cur.execute(f"CREATE DATABASE IF NOT EXISTS `{p.data.database}`")
        self.cfg = write_config(box.dir / "counted-sysbench.cnf", box.endpoint,
                                p.data.database)
        self.progress.update(f"loading {p.data.tables} x {p.data.table_size} rows")
        proc.run(prepare_args(p.data, self.cfg), timeout=3600, what="sysbench prepare")
        if short := verify_tables(box.endpoint, p.data):
            raise ProviderError(f"sysbench prepare: {'; '.join(short)}")
        box.stop()
        out = box.dir / "log" / callgrind.FOLDER
        out.mkdir()
        osuser.hand_over(out, box.account, 0o700)
        box.launcher = callgrind.launcher(out)
        pools = [s.get("innodb_buffer_pool_size") for s in p.sides]
        self.needs = callgrind.server_options(p.build, pools)

    @property
    def dumps_dir(self) -> Path:
        assert self.box is not None
        return self.box.dir / "log" / callgrind.FOLDER

    def start(self, side: str) -> None:
        """A new lifetime under the counter with ``side``'s options."""
        assert self.box is not None
        if self.box.is_running:
            self.box.stop()
        self.lifetime += 1
        self.progress.update(f"starting {self.p.build.name} under callgrind ({side})")
        opts = {**self.p.sides[0 if side == "A" else 1], **self.needs}
        self.box.start(opts)
        self.side = side
        self._drain()  # the start's own connections (the ping, the lock-down)

    def _drain(self) -> None:
        """Every dump the harness's own connections left, read and set aside."""
        time.sleep(0.5)
        while set(callgrind.dumps(self.dumps_dir)) - self.seen:
            callgrind.next_dump(self.dumps_dir, self.seen)

    def switch(self, side: str) -> None:
        """SET GLOBAL the side's values of the options that differ (its connection's
        dump set aside). ProviderError with the server's words when it refuses."""
        assert self.box is not None
        values = switchback.window_change(self.p.diff, 0 if side == "A" else 1)
        conn = self.box.endpoint.connect()
        try:
            with conn.cursor() as cur:
                for k, v in values["set_global"].items():
                    cur.execute(f"SET GLOBAL {k} = %s", (v,))
                for k in values["reset"]:
                    cur.execute(f"SET GLOBAL {k} = DEFAULT")
        except pymysql.err.MySQLError as e:
            raise SwitchRefused(str(e.args[-1]) if e.args else str(e)) from None
        finally:
            conn.close()
        callgrind.next_dump(self.dumps_dir, self.seen)
        self.side = side

    # --- windows ---------------------------------------------------------------------

    def window(self, side: str, events: int, judged: bool) -> Window:
        """One connection of ``events`` transactions, its count read from its dump."""
        assert self.cfg is not None and self.box is not None
        t = time.monotonic()
        argv = [proc.which("sysbench"), f"--config-file={self.cfg}", self.p.workload.test,
                f"--tables={self.p.data.tables}", f"--table-size={self.p.data.table_size}",
                "--threads=1", "--time=0", f"--events={events}", "--db-ps-mode=auto",
                f"--rand-type={self.p.workload.rand_type}", "run"]
        out = proc.run(argv, timeout=3600, what="sysbench (a counted window)").stdout
        reports = parse_output(out).reports
        done = int(reports[-1]["transactions"]) if reports else 0
        if done != events:
            raise ToolError([str(a) for a in argv], 0, out[-2000:],
                            f"sysbench ran {done} of the window's {events} transactions")
        dump = callgrind.next_dump(self.dumps_dir, self.seen)
        w = Window(len(self.windows) + 1, side, self.lifetime, dump.instructions, done,
                   time.monotonic() - t, judged)
        self.windows.append(w)
        if judged:
            self._functions(side, dump)
        self._store_window(w)
        self.progress.log(f"  window {w.index} ({side}, lifetime {w.lifetime}"
                          f"{'' if judged else ', not judged'}): {w.per_tx:,.1f} "
                          f"instructions a transaction ({w.seconds:.1f} s)")
        return w

    def _functions(self, side: str, dump: callgrind.Dump) -> None:
        """The dump's inclusive instructions by function, added to the side's."""
        into = self.store_dir
        fns = self.fns[0 if side == "A" else 1]
        for name, n in callgrind.functions(dump.path, into).items():
            fns[name] = fns.get(name, 0.0) + n
        (into / dump.path.name).unlink(missing_ok=True)

    # --- the store -------------------------------------------------------------------

    def open_run(self, run_set: str) -> RunRecord:
        p = self.p
        run_id = datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)
        art = self.store.artifacts_root() / "runs" / run_id
        private_folder(art)
        self.store_dir = art
        rec = RunRecord(run_id=run_id, run_set=run_set, scenario=p.scenario,
                        server=p.build.name, flavor=p.build.flavor, version=p.build.version,
                        variant="counted", target="local", host=socket.gethostname(),
                        started_at=datetime.now(UTC).isoformat(), artifacts=str(art))
        self.store.create_run(rec)
        self.rec = rec
        return rec

    def _store_window(self, w: Window) -> None:
        assert self.rec is not None
        name = self.p.names[0 if w.side == "A" else 1]
        t = time.monotonic() - self.t0
        self.store.add_event(self.rec.run_id, t, "counted_window", f"{w.index}-{w.side}",
                             w.to_json())
        if w.judged:
            wr = self.store.writer(self.rec.run_id)
            wr.add(t, SOURCE, METRIC, w.per_tx, {"side": name})
            wr.close()

    def close(self, result: CountedResult | None, error: str | None) -> None:
        """The run ended: its record, the result's JSON beside it; the sandbox gone."""
        try:
            if self.box is not None:
                self.box.destroy()
        finally:
            if self.cfg is not None:
                self.cfg.unlink(missing_ok=True)
            if self.rec is not None:
                if result is not None:
                    (self.store_dir / "counted.json").write_text(
                        json.dumps(result.to_json(), indent=2))
                self.store.update_run(self.rec.run_id, status="failed" if error else "ok",
                                      error=error, ended_at=datetime.now(UTC).isoformat())


class SwitchRefused(ProviderError):
    """The server refused a SET GLOBAL of the options that differ (static)."""


def counted_compare(req: CompareRequest, store: Store, band: float) -> CountedResult:
    """Run the counted comparison ``req`` asks for, to its verdict."""
    p = plan(req, band)
    req.note(f"measure: instructions per transaction, counted by callgrind on "
             f"{p.build.name}, {p.events:,} transactions a window, 1 client thread "
             f"({p.workload.test})")
    run_set = datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)
    s = CountedSession(p, store, Progress(quiet=req.quiet), req.say)
    s.open_run(run_set)
    result, error = None, None
    try:
        s.provision()
        if p.dynamic and not _switchback(s, req):
            p.dynamic = False
        if not p.dynamic:
            _restarts(s)
        result = _result(s, run_set, req)
        return result
    except BaseException as e:
        error = str(e) or type(e).__name__
        raise
    finally:
        s.close(result, error)


def _switchback(s: CountedSession, req: CompareRequest) -> bool:
    """Quads in one lifetime until the rule decides; False (nothing judged) when the
    server refuses the first switch: the options are static, restarts follow."""
    p = s.p
    start = "B" if switchback.started_with(p.diff) else "A"
    s.start(start)
    s.window(start, p.events // 2, judged=False)
    for k in range(1, MAX_QUADS + 1):
        for side in schedule(4, s.rng):
            if side != s.side:
                try:
                    s.switch(side)
                except SwitchRefused as e:
                    if s.looks or any(w.judged for w in s.windows):
                        raise
                    req.note(f"design: restarts (the server refused the switch: {e})")
                    return False
                s.window(side, max(p.events // 10, 100), judged=False)
            s.window(side, p.events, judged=True)
        if _look(s, k, by_lifetime=False):
            break
    return True


def _restarts(s: CountedSession) -> None:
    """Quads of lifetimes, each a restart with its side's options, a warm-up run and
    PER_LIFETIME judged windows, until the rule decides."""
    p = s.p
    for k in range(1, MAX_QUADS + 1):
        for side in schedule(4, s.rng):
            s.start(side)
            s.window(side, p.events // 2, judged=False)
            for _ in range(PER_LIFETIME):
                s.window(side, p.events, judged=True)
        if _look(s, k, by_lifetime=True):
            break


def _look(s: CountedSession, k: int, by_lifetime: bool) -> bool:
    """Look ``k``: True when it decided, or another quad would not fit the budget."""
    got = judge.look(s.windows, k, by_lifetime, s.p.alpha, s.p.band)
    if got is not None:
        s.looks.append(got)
        s.progress.log("  " + got.text())
        if got.verdict:
            return True
    spent = time.monotonic() - s.t0
    return spent + spent / k > s.p.budget_s


def _result(s: CountedSession, run_set: str, req: CompareRequest) -> CountedResult:
    p = s.p
    by_lifetime = not p.dynamic
    v = judge.verdict(s.windows, s.looks, by_lifetime, p.alpha, p.band)
    per_side = [sum(w.transactions for w in s.windows if w.judged and w.side == x)
                for x in "AB"]
    base, cand = ({f: n / max(per_side[i], 1) for f, n in s.fns[i].items()} for i in (0, 1))
    total = v.per_tx[0] if v.per_tx else 1.0
    assert s.rec is not None
    return CountedResult(run_set, s.rec.run_id, p, s.windows, v,
                         judge.moved(base, cand, total), callgrind.version(),
                         pmu.hardware_counter(), list(req.notes), s.needs,
                         (time.monotonic() - s.t0) / 60)
