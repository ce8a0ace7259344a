"""A DBA's own data as it is on disk: a cold copy of a server's datadir, or a physical
backup prepared for a restore (``mariadb-backup --prepare``, XtraBackup's), which hundreds
of gigabytes arrive as where a logical dump would take a day to load.

```yaml
dataset: {kind: datadir, path: /backups/shop-2026-11-30, database: shop}
workload: {kind: replay, database: shop, log: captured-slow.log}
```

The sandbox starts on a copy of the folder, never on the folder itself: the copy is made
file by file, reading only, and refuses a link, a device or a FIFO anywhere in it (the
source's ``auto.cnf``, pid files and sockets are left out, so the sandbox is a server of
its own). It then starts with the build the scenario names, which must be of the flavor
and series that wrote the folder (read from its redo log's header as InnoDB reads it:
a 10.11 backup starts on MariaDB 10.11, never on 11.8 or MySQL); the source's accounts
are replaced by the harness's own as in every sandbox. After its first start the sandbox's
datadir is kept as the dataset snapshot, so repetitions restore it without copying the
source again. ``database`` names the schema the workload runs on; a replay of the DBA's
captured statements on their own data is the whole "validate before rollout".
"""
from __future__ import annotations

import re
import time
from pathlib import Path
from typing import ClassVar, Literal

import pymysql

from ..errors import HarnessError
from ..jsonvalue import JsonDict
from ..model import DatasetModel, WorkloadModel
from ..server import datadir
from ..server.catalog import Build
from ..server.mysql import Endpoint, connection
from ..store.prepared import Prepared
from .base import RunContext, WorkloadPlugin


class DatadirDataset(DatasetModel):
    """A datadir (a cold copy or a prepared physical backup; relative to the scenario
    file) the sandbox starts on a copy of; ``database``: the schema in it the workload
    reads."""

    kind: Literal["datadir"]
    path: str
    # The DBA's upgrade in place: a datadir of the series before the build's (MySQL 5.7
    # on 8.0), which the server upgrades at its first start; how long that took and how
    # it ended are the load's own figures.
    upgrade: bool = False
    whole_datadir: ClassVar[bool] = True

    def files(self) -> dict[str, str]:
        return {"path": self.path}

    def folders(self) -> set[str]:
        return {"path"}

    def content_problems(self) -> list[str]:
        return datadir.problems(self.path_of(self.path))

    def content_summary(self) -> list[str]:
        w = datadir.writer(self.path_of(self.path))
        return [f"a datadir written by {w.title} (its {w.said_by})"] if w else []


_TABLES = ("SELECT COUNT(*), COALESCE(SUM(TABLE_ROWS), 0) FROM information_schema.TABLES "
           "WHERE TABLE_SCHEMA = %s AND TABLE_TYPE = 'BASE TABLE'")


def _counted(ep: Endpoint, database: str) -> tuple[int, int]:
    """(tables, rows as InnoDB estimates them) of ``database`` on the server."""
    with connection(ep) as c, c.cursor() as cur:
        cur.execute(_TABLES, (database,))
        tables, rows = cur.fetchone() or (0, 0)
    return int(tables), int(rows)


# 2026-12-07T01:30:00.123456Z 2 [System] [MY-013381] [Server] Server upgrade from
# '50700' to '80031' started.  (... completed.)  The server's own words, in its error log
# and in performance_schema.error_log (8.0.22 and later).
_UPGRADE = ("SELECT LOGGED, DATA FROM performance_schema.error_log WHERE ERROR_CODE IN "
            "('MY-013381', 'MY-013327', 'MY-013328', 'MY-013329') ORDER BY LOGGED")
_SERVER_UPGRADE = re.compile(r"Server upgrade from '(\d+)' to '(\d+)' (started|completed)")


def upgraded(ep: Endpoint) -> JsonDict:
    """What the server said of its in-place upgrade at its first start on the copy: from
    and to which version, the seconds it took, and how it ended ("completed", "started
    but not completed", "none at this start": nothing said, as on a restored snapshot)."""
    try:
        with connection(ep) as c, c.cursor() as cur:
            cur.execute(_UPGRADE)
            said = [(t, str(d)) for t, d in cur.fetchall()]
    except pymysql.err.MySQLError as e:
        return {"upgrade": f"unknown: performance_schema.error_log unreadable ({e})"}
    marks = {m.group(3): (t, m) for t, d in said if (m := _SERVER_UPGRADE.search(d))}
    if "started" not in marks:
        return {"upgrade": "none at this start (the server said no upgrade: a snapshot "
                           "restored is upgraded already)"}
    t0, m = marks["started"]
    out: JsonDict = {"upgraded_from": m.group(1), "upgraded_to": m.group(2),
                     "upgrade": "started but not completed"}
    if "completed" in marks:
        out |= {"upgrade": "completed",
                "upgrade_s": round((marks["completed"][0] - t0).total_seconds(), 3)}
    return out


EXAMPLE_LOG = """\
# Time: 2026-11-30T06:00:00.000000Z
# User@Host: app[app] @ localhost []  Id:     7
# Query_time: 0.000100  Lock_time: 0.000000 Rows_sent: 1  Rows_examined: 3
use mysql;
SET timestamp=1795586400;
SELECT COUNT(*) FROM db;
"""


class DatadirPlugin(WorkloadPlugin[WorkloadModel, DatadirDataset]):
    """A datadir the sandbox starts on a copy of; a replay runs on it."""

    kind = "datadir"
    dataset = DatadirDataset
    # The plugin suite's stand-in: a folder saying it is MariaDB 10.11's, whose mysql
    # schema (on the suite's real server) the replay reads.
    example = {"dataset": {"kind": "datadir", "database": "mysql", "path": "example-datadir"},
               "workload": {"kind": "replay", "database": "mysql", "log": "example-slow.log"},
               "files": {"example-datadir/mysql_upgrade_info": "10.11.18-MariaDB",
                         "example-datadir/mysql/db.opt": "",
                         "example-slow.log": EXAMPLE_LOG}}

    def seed(self, data: DatadirDataset) -> Path | None:
        return data.path_of(data.path)

    def build_problems(self, build: Build, data: DatadirDataset) -> list[str]:
        why = datadir.build_problem(data.path_of(data.path), build.flavor, build.version,
                                    build.name, upgrade=data.upgrade)
        return [why] if why else []

    def prepare(self, ctx: RunContext, data: DatadirDataset) -> Prepared:
        """The sandbox started on the copy: what the workload's schema holds in it."""
        t0 = time.monotonic()
        tables, rows = _counted(ctx.endpoint, data.database)
        if tables == 0:
            raise HarnessError(f"dataset {data.path}: the datadir has no tables in "
                               f"database {data.database} (dataset.database names the "
                               "schema the workload reads)")
        own: JsonDict = {"copied_from": str(data.path_of(data.path))}
        if data.upgrade:
            own |= upgraded(ctx.endpoint)
        return Prepared.timed(data.database, rows, time.monotonic() - t0, tables=tables,
                              own=own)

    def verify(self, ep: Endpoint, data: DatadirDataset) -> list[str]:
        tables, _rows = _counted(ep, data.database)
        return [] if tables else [f"database {data.database}: no tables"]

    def tables(self, data: DatadirDataset) -> list[str]:
        return []  # the copy is the dataset: nothing of it is dropped and loaded again


PLUGIN = DatadirPlugin()
