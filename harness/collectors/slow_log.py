"""The slow log at long_query_time = 0 while the run goes on: a capture of every
statement, stored with the run as ``slow.log``, which a ``replay`` workload plays again.

Off unless a scenario turns it on (``collectors: {slow_log: {enabled: true}}``): logging
every statement costs the server. On a server the harness created it sets the options
for the run and puts them back after; on one it did not, it changes nothing and notes
the statements a DBA would run there (``harness capture --server NAME`` prints them
too). Connections opened before the capture keep their own ``long_query_time``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pymysql

from ..errors import ProviderError
from ..server import osuser
from ..server.mysql import quoted
from .base import Collector, CollectorContext, Unsupported

FILE = "harness-capture-slow.log"  # in the server's datadir


def capture_statements(flavor: str, version: tuple[int, ...], file: str
                       ) -> tuple[list[str], list[str]]:
    """The statements that start a capture of every statement into ``file`` on this
    server version, and those that stop it."""
    on = [f"SET GLOBAL slow_query_log_file = {quoted(file)}", "SET GLOBAL long_query_time = 0",
          "SET GLOBAL min_examined_row_limit = 0"]
    if flavor == "mysql" and version >= (8, 0, 14):
        on.append("SET GLOBAL log_slow_extra = ON")  # Thread_id, Errno, Start, End ...
    if flavor == "mariadb":
        on.append("SET GLOBAL log_slow_rate_limit = 1")  # every statement, not 1 in N
    return on + ["SET GLOBAL slow_query_log = ON"], ["SET GLOBAL slow_query_log = OFF"]


def _one(row: tuple[Any, ...] | None) -> Any:
    """The value of a one-row, one-column SELECT of a server variable."""
    if row is None:
        raise ProviderError("the server returned no row for a SELECT of a variable")
    return row[0]


class SlowLog(Collector):
    """Every statement of the run, from the server's slow log."""

    name = "slow_log"
    on_by_default = False
    server_access = "adapts"  # sets the slow log options only on a server it owns

    def __init__(self, ctx: CollectorContext, interval_s: float | None = None):
        super().__init__(ctx, interval_s)
        self.before: dict[str, object] = {}
        self.datadir: Path | None = None
        self.conn: pymysql.connections.Connection | None = None

    def __enter__(self) -> SlowLog:
        on, _ = capture_statements(self.ctx.flavor, self.ctx.version, FILE)
        if not self.ctx.owned:
            self.ctx.notes.append("slow_log: not turned on (a server the harness did not "
                                  "create); to capture there, run: " + "; ".join(on))
            return self
        try:
            self._start(on)
        except (Unsupported, pymysql.err.MySQLError) as e:
            self.ctx.notes.append(f"slow_log: not captured: {e}")
            self.datadir = None
        return self

    def _start(self, on: list[str]) -> None:
        if self.ctx.remote_host or self.ctx.container:
            raise Unsupported("the server's datadir is not on this machine")
        # Opened before long_query_time is 0, this session keeps the old value: what it
        # runs, the SET GLOBALs that end the capture included, stays out of the capture.
        self.conn = self.ctx.endpoint.connect()
        with self.conn.cursor() as cur:
            for stmt in on:
                name = stmt.split()[2]
                cur.execute(f"SELECT @@GLOBAL.{name}")
                self.before[name] = _one(cur.fetchone())
                cur.execute(stmt)
            cur.execute("SELECT @@datadir")
            self.datadir = Path(_one(cur.fetchone()))
        self.ctx.event(self.ctx.clock(), "capture_start", self.name, {"file": FILE})

    def __exit__(self, *exc: object) -> None:
        if self.datadir is None:
            return
        try:
            self._put_back()
        except pymysql.err.MySQLError as e:
            self.ctx.notes.append(f"slow_log: the options were not put back: {e}")
        self.ctx.event(self.ctx.clock(), "capture_end", self.name, None)
        src = self.datadir / FILE
        try:  # mysqld's file: never through a link it planted
            if not osuser.copy_mysqld_file(src, self.ctx.artifacts / "slow.log"):
                raise OSError(0, "not a regular file (or gone)")
            src.unlink()
        except OSError as e:
            self.ctx.notes.append(f"slow_log: {src}: {e.strerror or e}")
            return
        size = (self.ctx.artifacts / "slow.log").stat().st_size
        self.ctx.notes.append(f"slow_log: {size} bytes captured into slow.log")


    def _put_back(self) -> None:
        """The options as they were, slow_query_log first, on the session that set them
        (a new one, if the server was restarted, leaves the capture first)."""
        assert self.conn is not None
        try:
            self.conn.ping(reconnect=False)
        except pymysql.err.MySQLError:
            self.conn = self.ctx.endpoint.connect()
        try:
            with self.conn.cursor() as cur:
                cur.execute("SET SESSION long_query_time = 31536000")
                for name, value in reversed(self.before.items()):
                    cur.execute(f"SET GLOBAL {name} = %s", (value,))
        finally:
            self.conn.close()


PLUGIN = SlowLog
