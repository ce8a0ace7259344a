"""One counted comparison's server and windows: a sandbox with the data loaded
natively, then mysqld under the counter (callgrind) for every start; each window one
sysbench connection of a fixed number of transactions, its count read from the dump
its end left, stored as it comes (an event a window, a series point a judged one)."""
from __future__ import annotations

import json
import random
import secrets
import socket
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pymysql

from .. import proc
from ..analysis.counted import Look, Window
from ..counted import callgrind
from ..errors import ProviderError, ToolError
from ..paths import private_folder
from ..progress import Progress
from ..providers import get_provider
from ..providers.base import Server
from ..server.mycnf import Value
from ..store import Store
from ..store.run import RunRecord
from ..workloads.sysbench import parse_output, prepare_args, verify_tables, write_config
from . import switchback
from .counted_plan import CountedPlan

SOURCE, METRIC = "counted", "instructions_per_transaction"


class SwitchRefused(ProviderError):
    """The server refused a SET GLOBAL of the options that differ (a static one)."""


class CountedSession:
    """One counted comparison on one sandbox."""

    def __init__(self, p: CountedPlan, store: Store, progress: Progress) -> None:
        self.p, self.store, self.progress = p, store, progress
        self.rng = random.SystemRandom()
        self.windows: list[Window] = []
        self.looks: list[Look] = []
        self.fns: tuple[dict[str, float], dict[str, float]] = ({}, {})
        self.lifetime = 0
        self.side: str | None = None  # the side the running server has
        self.seen: set[Path] = set()
        self.t0 = time.monotonic()
        self.box: Server | None = None
        self.cfg: Path | None = None
        self.dumps_dir = Path()
        self.needs: dict[str, Value] = {}
        self.rec: RunRecord | None = None
        self.store_dir = Path()

    # --- the server ------------------------------------------------------------------

    def provision(self) -> None:
        """A sandbox with the data, loaded natively; from then on, mysqld under the
        counter with the options it needs there."""
        p = self.p
        self.progress.update(f"creating a sandbox of {p.build.name}")
        self.box = box = get_provider("local").provision(p.build)
        box.start(p.sides[0])
        with box.endpoint.connect() as c, c.cursor() as cur:
            cur.execute(f"CREATE DATABASE IF NOT EXISTS `{p.data.database}`")
        self.cfg = write_config(Path("counted-sysbench.cnf"), box.endpoint,
                                p.data.database)
        self.progress.update(f"loading {p.data.tables} x {p.data.table_size} rows")
        proc.run(prepare_args(p.data, self.cfg), timeout=3600, what="sysbench prepare")
        if short := verify_tables(box.endpoint, p.data):
            raise ProviderError(f"sysbench prepare: {'; '.join(short)}")
        box.stop()
        self.dumps_dir = box.run_under(callgrind.launcher)
        pools = [s.get("innodb_buffer_pool_size") for s in p.sides]
        self.needs = callgrind.server_options(p.build, pools)

    def start(self, side: str) -> None:
        """A new lifetime under the counter with ``side``'s options."""
        assert self.box is not None
        if self.box.is_running:
            self.box.stop()
        self.lifetime += 1
        self.progress.update(f"starting {self.p.build.name} under callgrind ({side})")
        self.box.start({**self.p.sides[0 if side == "A" else 1], **self.needs})
        self.side = side
        self._drain()  # the start's own connections (the ping, the lock-down)

    def _drain(self) -> None:
        """Every dump the harness's own connections left, read and set aside."""
        time.sleep(0.5)
        while set(callgrind.dumps(self.dumps_dir)) - self.seen:
            callgrind.next_dump(self.dumps_dir, self.seen)

    def switch(self, side: str) -> None:
        """SET GLOBAL the side's values of the options that differ (its connection's
        dump set aside). SwitchRefused with the server's words when it refuses."""
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
        t = time.monotonic()
        done = self._sysbench(events)
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

    def _sysbench(self, events: int) -> int:
        """One sysbench run of ``events`` transactions on 1 thread; how many it ran
        (ToolError when not all)."""
        assert self.cfg is not None
        p = self.p
        argv = [proc.which("sysbench"), f"--config-file={self.cfg}", p.workload.test,
                f"--tables={p.data.tables}", f"--table-size={p.data.table_size}",
                "--threads=1", "--time=0", f"--events={events}", "--db-ps-mode=auto",
                f"--rand-type={p.workload.rand_type}", "run"]
        out = proc.run(argv, timeout=3600, what="sysbench (a counted window)").stdout
        reports = parse_output(out).reports
        done = int(reports[-1]["transactions"]) if reports else 0
        if done != events:
            raise ToolError([str(a) for a in argv], 0, out[-2000:],
                            f"sysbench ran {done} of the window's {events} transactions")
        return done

    def _functions(self, side: str, dump: callgrind.Dump) -> None:
        """The dump's inclusive instructions by function, added to the side's."""
        fns = self.fns[0 if side == "A" else 1]
        for name, n in callgrind.functions(dump.path, self.store_dir).items():
            fns[name] = fns.get(name, 0.0) + n
        (self.store_dir / dump.path.name).unlink(missing_ok=True)

    # --- the store -------------------------------------------------------------------

    def open_run(self, run_set: str) -> RunRecord:
        """The comparison's run in the store, and its folder."""
        p = self.p
        run_id = datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)
        art = self.store.artifacts_root() / "runs" / run_id
        private_folder(art)
        self.store_dir = art
        self.rec = RunRecord(
            run_id=run_id, run_set=run_set, scenario=p.scenario, server=p.build.name,
            flavor=p.build.flavor, version=p.build.version, variant="counted",
            target="local", host=socket.gethostname(),
            started_at=datetime.now(UTC).isoformat(), artifacts=str(art))
        self.store.create_run(self.rec)
        return self.rec

    def _store_window(self, w: Window) -> None:
        assert self.rec is not None
        t = time.monotonic() - self.t0
        self.store.add_event(self.rec.run_id, t, "counted_window", f"{w.index}-{w.side}",
                             w.to_json())
        if w.judged:
            wr = self.store.writer(self.rec.run_id)
            wr.add(t, SOURCE, METRIC, w.per_tx, {"side": self.p.names[w.side == "B"]})
            wr.close()

    def close(self, result: dict[str, Any] | None, error: str | None) -> None:
        """The run ended: its record, the result's JSON beside it; the sandbox gone."""
        try:
            if self.box is not None:
                self.box.destroy()
        finally:
            if self.cfg is not None:
                self.cfg.unlink(missing_ok=True)
            if self.rec is not None:
                if result is not None:
                    (self.store_dir / "counted.json").write_text(json.dumps(result, indent=2))
                self.store.update_run(self.rec.run_id, status="failed" if error else "ok",
                                      error=error, ended_at=datetime.now(UTC).isoformat())
