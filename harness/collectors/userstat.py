"""Rows read and changed per table and rows read per index, as the server counts them:
the user statistics Percona Server (5.5 on) and MariaDB keep when ``userstat`` is on
(``information_schema.TABLE_STATISTICS`` and ``INDEX_STATISTICS``), named as
mysqld_exporter names them: ``mysql_info_schema_table_statistics_rows_read_total``,
``..._rows_changed_total`` and ``..._rows_changed_x_indexes_total`` by ``schema`` and
``table``, ``mysql_info_schema_index_statistics_rows_read_total`` by ``schema``,
``table`` and ``index``. Which table and index a workload really reads, and how much:
the question behind a buffer pool too small for its hot set.

Off by default. Turned on, a server the harness starts gets ``userstat=ON`` from
start-up (:meth:`UserStat.start_options`); on a server the harness does not own it
reads what is there and says so when ``userstat`` is off. Oracle MySQL has no such
statistics: a note says so. Only counters that moved since the last sample are stored."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .base import Line, Panel, Point, PolledCollector, Unsupported, changed_only

TABLE = "mysql_info_schema_table_statistics_"
INDEX_READ = "mysql_info_schema_index_statistics_rows_read_total"


class UserStat(PolledCollector):
    name = "userstat"
    panels = (
        Panel("rows read per s, top tables (userstat)", (
            Line("userstat", TABLE + "rows_read_total", rate=True, top=("table", 6)),)),
        Panel("rows read per s, top indexes (userstat)", (
            Line("userstat", INDEX_READ, rate=True, top=("index", 6)),)))
    default_interval_s = 1.0
    on_by_default = False
    server_access = "reads"  # userstat is turned on by a start-up option, not SQL

    @classmethod
    def start_options(cls, flavor: str, version: tuple[int, ...],
                      spec: Any = None) -> dict[str, str]:
        return {} if flavor == "mysql" else {"userstat": "ON"}

    def setup(self) -> None:
        self.last: dict[str, float] = {}
        if self.ctx.flavor == "mysql":
            raise Unsupported("Oracle MySQL keeps no user statistics (Percona Server and "
                              "MariaDB do, with userstat)")
        (row,) = self.query("SELECT @@GLOBAL.userstat")
        if str(row[0]).upper() not in ("1", "ON"):
            raise Unsupported("userstat is off on this server (the harness turns it on "
                              "only on a server it starts)")

    def collect(self) -> Iterable[Point]:
        tables = self.query("SELECT TABLE_SCHEMA, TABLE_NAME, ROWS_READ, ROWS_CHANGED, "
                            "ROWS_CHANGED_X_INDEXES FROM information_schema.TABLE_STATISTICS")
        indexes = self.query("SELECT TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, ROWS_READ "
                             "FROM information_schema.INDEX_STATISTICS")
        points: list[tuple[str, dict[str, str], float]] = []
        for schema, table, read, changed, x_indexes in tables:
            labels = {"schema": str(schema), "table": str(table)}
            points += [(TABLE + "rows_read_total", labels, float(read)),
                       (TABLE + "rows_changed_total", labels, float(changed)),
                       (TABLE + "rows_changed_x_indexes_total", labels, float(x_indexes))]
        points += [(INDEX_READ, {"schema": str(s), "table": str(t), "index": str(i)},
                    float(read)) for s, t, i, read in indexes]
        return changed_only(self.last, points)


PLUGIN = UserStat
