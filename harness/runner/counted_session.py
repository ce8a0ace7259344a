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
from functools import partial
from pathlib import Path
from typing import Any

import pymysql

from ..analysis.counted import Look, Window, mixed
from ..counted.callgrind import Counted
from ..errors import ProviderError
from ..paths import private_folder
from ..progress import Progress
from ..providers import get_provider
from ..providers.base import Server
from ..server.mycnf import Value, norm
from ..server.mysql import set_global, shown_literal
from ..store import RunSummary, Store
from ..store.run import RunRecord
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
        self.counter = p.counter
        self.t0 = time.monotonic()
        # Each side's sandbox: one, shared, for two option sets; two for two builds.
        self.boxes: dict[str, Server] = {}
        self.rounds = 0  # windows so far (a window: a connection per class)
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
                self.boxes["B"], self.needs["B"] = self.boxes["A"], self.needs["A"]
                self.counter.share("B", "A")
                break
            self.progress.update(f"creating a sandbox of {build.name}")
            self.boxes[side] = box = get_provider("local").provision(build)
            self._load(box, p.sides[i])
            self.counter.attach(side, box)
            self.needs[side] = self.counter.server_options(build, pools)

    def _load(self, box: Server, options: dict[str, Value | None]) -> None:
        """The data loaded into ``box``, started natively with ``options``."""
        box.start(options)
        self.p.probe.load(box.endpoint, self.progress.update)
        box.stop()

    def start(self, side: str) -> None:
        """A new lifetime under the counter with ``side``'s options (on its build's
        sandbox; the other side's stopped)."""
        for box in self.boxes.values():
            if box.is_running:
                box.stop()
        self.lifetime += 1
        i = 0 if side == "A" else 1
        self.progress.update(f"starting {self.p.builds[i].name} for {self.counter.name} "
                             f"({side})")
        self.boxes[side].start({**self.p.sides[i], **self.needs[side]})
        self.side = side
        self._read_started(side)
        # the start's own connections (the ping, the lock-down, this read) set aside
        self.counter.started(side, self.boxes[side])

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
        self.counter.after_connection()
        self.side = side

    # --- windows ---------------------------------------------------------------------

    def window(self, side: str, events: int, judged: bool) -> Window:
        """One window of ``events`` transactions (of the commonest class; a connection
        per class), each class's count read from the dump its connection's end left;
        the window as the mix sees it."""
        self.rounds += 1
        ep, mine = self.boxes[side].endpoint, []
        for cls, n in self.p.probe.events(events).items():
            t = time.monotonic()
            c = self.counter.count(partial(self.p.probe.run, ep, cls, n))
            mine.append(Window(self.rounds, side, self.lifetime, c.instructions,
                               c.transactions, time.monotonic() - t, judged, cls))
            if judged:
                self._functions(side, c)
        self.windows += mine
        for w in mine:
            self._store_window(w)
        (w,) = mixed(mine, self.p.probe.weights())
        each = "".join(f"{x.cls} {x.per_tx:,.0f}, " for x in mine if x.cls)
        self.progress.log(f"  window {w.index} ({side}, lifetime {w.lifetime}"
                          f"{'' if judged else ', not judged'}): {each}{w.per_tx:,.1f} "
                          f"instructions a transaction{' of the mix' if each else ''} "
                          f"({w.seconds:.1f} s)")
        return w

    def _functions(self, side: str, c: Counted) -> None:
        """The count's inclusive instructions by function (where the counter names
        them), added to the side's."""
        fns = self.fns[0 if side == "A" else 1]
        for name, n in self.counter.functions(c, self.store_dir).items():
            fns[name] = fns.get(name, 0.0) + n

    # --- the store -------------------------------------------------------------------

    def open_run(self, run_set: str, variant: str = "counted") -> RunRecord:
        """The comparison's run (or a counted run's: its variant's) in the store, and
        its folder."""
        p = self.p
        run_id = datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)
        art = self.store.artifacts_root() / "runs" / run_id
        private_folder(art)
        self.store_dir = art
        self.rec = RunRecord(
            run_id=run_id, run_set=run_set, scenario=p.scenario, server=p.server,
            flavor=p.builds[1].flavor, version=p.builds[1].version, variant=variant,
            target="local", host=socket.gethostname(),
            started_at=datetime.now(UTC).isoformat(), artifacts=str(art))
        self.store.create_run(self.rec)
        return self.rec

    def _store_window(self, w: Window) -> None:
        assert self.rec is not None
        t = time.monotonic() - self.t0
        self.store.add_event(self.rec.run_id, t, "counted_window",
                             f"{w.index}-{w.side}{'-' + w.cls if w.cls else ''}", w.to_json())
        if w.judged:
            wr = self.store.writer(self.rec.run_id)
            labels = {"side": self.p.names[w.side == "B"], **({"class": w.cls} if w.cls
                                                             else {})}
            wr.add(t, SOURCE, METRIC, w.per_tx, labels)
            wr.close()

    def close(self, result: dict[str, Any] | None, status: str, error: str | None,
              summary: RunSummary | None = None) -> None:
        """The run ended (``status``: ok, failed, interrupted): its record, the result's
        JSON beside it; the sandbox gone."""
        try:
            for box in {id(b): b for b in self.boxes.values()}.values():
                box.destroy()
        finally:
            self.p.probe.close()
            if self.rec is not None:
                if result is not None:
                    (self.store_dir / "counted.json").write_text(json.dumps(result, indent=2))
                more = {} if summary is None else {"summary": summary}
                self.store.update_run(self.rec.run_id, status=status, error=error,
                                      ended_at=datetime.now(UTC).isoformat(), **more)
