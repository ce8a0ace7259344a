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

from .. import client, proc
from ..analysis.counted import Look, Window
from ..counted import callgrind
from ..errors import ProviderError, ToolError
from ..paths import private_folder
from ..progress import Progress
from ..providers import get_provider
from ..providers.base import Server
from ..server.mycnf import Value, norm
from ..server.mysql import set_global, shown_literal
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
        # Each side's sandbox: one, shared, for two option sets; two for two builds.
        self.boxes: dict[str, Server] = {}
        self.cfgs: dict[str, Path] = {}
        self.dumps_dirs: dict[str, Path] = {}
        self.needs: dict[str, dict[str, Value]] = {}
        self.started: dict[str, str] = {}  # values read at the start (see switch)
        self.rec: RunRecord | None = None
        self.store_dir = Path()

    # --- the server ------------------------------------------------------------------

    def provision(self) -> None:
        """Each side's sandbox with the data, loaded natively; from then on, mysqld
        under the counter with the options it needs there."""
        p = self.p
        pools = [o.get("innodb_buffer_pool_size") for o in p.sides]
        for i, side in enumerate("AB"):
            build = p.builds[i]
            if i and not p.upgrade:  # one sandbox for two option sets
                self.boxes["B"], self.cfgs["B"] = self.boxes["A"], self.cfgs["A"]
                self.dumps_dirs["B"], self.needs["B"] = self.dumps_dirs["A"], self.needs["A"]
                break
            self.progress.update(f"creating a sandbox of {build.name}")
            self.boxes[side] = box = get_provider("local").provision(build)
            self.cfgs[side] = self._load(box, p.sides[i], side)
            self.dumps_dirs[side] = box.run_under(callgrind.launcher)
            self.needs[side] = callgrind.server_options(build, pools)

    def _load(self, box: Server, options: dict[str, Value | None], side: str) -> Path:
        """The data loaded into ``box``, started natively with ``options``; the
        sysbench option file of its windows."""
        p = self.p
        box.start(options)
        with box.endpoint.connect() as c, c.cursor() as cur:
            cur.execute(f"CREATE DATABASE IF NOT EXISTS `{p.data.database}`")
        cfg = write_config(Path(f"counted-sysbench-{side}.cnf"), box.endpoint,
                           p.data.database)
        self.progress.update(f"loading {p.data.tables} x {p.data.table_size} rows")
        client.run(prepare_args(p.data, cfg), timeout=3600, what="sysbench prepare")
        if short := verify_tables(box.endpoint, p.data):
            raise ProviderError(f"sysbench prepare: {'; '.join(short)}")
        box.stop()
        return cfg

    @property
    def dumps_dir(self) -> Path:
        """The folder of the running side's dumps."""
        assert self.side is not None
        return self.dumps_dirs[self.side]

    def start(self, side: str) -> None:
        """A new lifetime under the counter with ``side``'s options (on its build's
        sandbox; the other side's stopped)."""
        for box in self.boxes.values():
            if box.is_running:
                box.stop()
        self.lifetime += 1
        i = 0 if side == "A" else 1
        self.progress.update(f"starting {self.p.builds[i].name} under callgrind ({side})")
        self.boxes[side].start({**self.p.sides[i], **self.needs[side]})
        self.side = side
        self._read_started(side)
        self._drain()  # the start's own connections (the ping, the lock-down, this read)

    def _read_started(self, side: str) -> None:
        """The values, as the server computed them, of the options a side leaves to the
        default: what a switch back to that side sets."""
        left = [k for k, v in self.p.diff.items() if None in v]
        if not left or self.p.upgrade:
            return
        with self.boxes[side].endpoint.connect() as c, c.cursor() as cur:
            for k in left:
                cur.execute(f"SELECT @@GLOBAL.{norm(k)}")
                self.started[k] = str((cur.fetchone() or ("",))[0])

    def _drain(self) -> None:
        """Every dump the harness's own connections left, read and set aside."""
        time.sleep(0.5)
        while set(callgrind.dumps(self.dumps_dir)) - self.seen:
            callgrind.next_dump(self.dumps_dir, self.seen)

    def switch(self, side: str) -> None:
        """SET GLOBAL the side's values of the options that differ (its connection's
        dump set aside). SwitchRefused with the server's words when it refuses."""
        values = switchback.window_change(self.p.diff, 0 if side == "A" else 1)
        conn = self.boxes[side].endpoint.connect()
        try:
            with conn.cursor() as cur:
                for k, v in values["set_global"].items():
                    set_global(cur, k, v)
                for k in values["reset"]:  # the value the server started with
                    cur.execute(f"SET GLOBAL {norm(k)} = {shown_literal(self.started[k])}")
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
        assert self.side is not None
        p = self.p
        argv = [proc.which("sysbench"), f"--config-file={self.cfgs[self.side]}",
                p.workload.test,
                f"--tables={p.data.tables}", f"--table-size={p.data.table_size}",
                "--threads=1", "--time=0", f"--events={events}", "--db-ps-mode=auto",
                f"--rand-type={p.workload.rand_type}", "run"]
        out = client.run(argv, timeout=3600, what="sysbench (a counted window)").stdout
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
            run_id=run_id, run_set=run_set, scenario=p.scenario, server=p.server,
            flavor=p.builds[1].flavor, version=p.builds[1].version, variant="counted",
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

    def close(self, result: dict[str, Any] | None, status: str, error: str | None) -> None:
        """The run ended (``status``: ok, failed, interrupted): its record, the result's
        JSON beside it; the sandbox gone."""
        try:
            for box in {id(b): b for b in self.boxes.values()}.values():
                box.destroy()
        finally:
            for cfg in self.cfgs.values():
                cfg.unlink(missing_ok=True)
            if self.rec is not None:
                if result is not None:
                    (self.store_dir / "counted.json").write_text(json.dumps(result, indent=2))
                self.store.update_run(self.rec.run_id, status=status, error=error,
                                      ended_at=datetime.now(UTC).isoformat())
