"""Capture real slow and general logs of catalog servers for the log readers' tests in
tests/data/.

Run: .venv/bin/python tools/capture_slowlogs.py [SERVER ...]  (starts each server in a
sandbox with long_query_time = 0 and the general log on, runs the two sessions of
SESSIONS below on it, interleaved, and saves its slow log as
tests/data/slowlog-<server>.log and its general log as tests/data/generallog-<server>.log;
what each session sent, by its thread id, goes to tests/data/slowlog-<server>.json).

Then the same for ORM_SESSIONS, an application's statements (AUTO_INCREMENT inserts and
LAST_INSERT_ID(), after which the servers write ``SET insert_id=...`` and ``SET
last_insert_id=...`` header lines; TRUE and FALSE; a non-ASCII identifier), with
MariaDB's ``log_slow_verbosity`` at ``query_plan,explain`` (its ``# explain:`` lines and
the lone ``#`` around them) and Percona Server's at ``full``, statement-based binary
logging on: tests/data/slowlog-orm-<server>.log and .json.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pymysql

from harness.providers.local import LocalProvider
from harness.server import catalog

DATA = Path(__file__).parent.parent / "tests" / "data"
SERVERS = [a for a in sys.argv[1:] if not a.startswith("--")] or [
    "mariadb-10.11", "mysql-5.7.29", "mysql-9.7", "mariadb-11.8"]

# Two sessions, run step by step in turn: (session, statement as sent). Bytes are sent
# as they are (a statement that is not UTF-8); INIT_DB + name changes the database with
# the protocol's command (COM_INIT_DB), not a statement.
INIT_DB = "\0init_db:"
SESSIONS: list[tuple[int, str | bytes]] = [
    (0, "CREATE DATABASE one"),
    (1, "CREATE DATABASE two"),
    (0, "USE one"),
    (1, "USE two"),
    (0, "CREATE TABLE t (id INT PRIMARY KEY, b VARBINARY(16), s VARCHAR(64))"),
    (1, "CREATE TABLE u (id INT PRIMARY KEY)"),
    (0, "INSERT INTO t VALUES (1, 'a', 'x;y'),\n  (2, 'b', 'two words')"),
    (1, "INSERT INTO u VALUES (1), (2), (3)"),
    (0, b"INSERT INTO t VALUES (3, '\xff\xfe', 'bytes')"),
    (1, "SELECT id\n# a comment line inside the statement\nFROM u WHERE id IN (1, 2)"),
    (0, "SELECT s FROM t WHERE id = 2"),
    (1, "SELECT * FROM no_such_table"),
    (0, "UPDATE t SET s = 'z' WHERE id = 1"),
    (1, "SELECT COUNT(*) FROM one.t"),
    (0, "USE two"),
    (0, "SELECT MAX(id) FROM u"),
    (1, "DELETE FROM u WHERE id = 3"),
    (1, INIT_DB + "one"),
    (1, "SELECT COUNT(*) FROM t"),
]


ORM_SESSIONS: list[tuple[int, str | bytes]] = [
    (0, "CREATE DATABASE orm"),
    (0, "USE orm"),
    (0, "CREATE TABLE items (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(64), "
        "active BOOL, `prix_été` INT)"),
    (1, INIT_DB + "orm"),
    (0, "INSERT INTO items (name, active, `prix_été`) VALUES ('a', TRUE, 1)"),
    (1, "INSERT INTO items (name, active, `prix_été`) VALUES ('b', FALSE, 2)"),
    (0, "SELECT LAST_INSERT_ID()"),
    (0, "INSERT INTO items (name, active, `prix_été`) VALUES ('c', true, 3)"),
    (1, "SELECT id FROM items WHERE active = TRUE"),
    (0, "SELECT id FROM items WHERE active = false AND `PRIX_ÉTÉ` > 1"),
    (1, "UPDATE items SET active = FALSE WHERE id = LAST_INSERT_ID()"),
    (0, "SELECT name FROM items WHERE `prix_été` IN (1, 2) ORDER BY id"),
    (1, "SELECT COUNT(*) FROM items"),
]


def options(build: catalog.Build, log: Path, general: Path) -> dict[str, object]:
    out: dict[str, object] = {"innodb_buffer_pool_size": "64M", "slow_query_log": 1,
                              "long_query_time": 0, "slow_query_log_file": str(log),
                              "general_log": 1, "general_log_file": str(general)}
    if build.flavor == "mysql" and build.version_tuple >= (8, 0, 14):
        out["log_slow_extra"] = "ON"
    return out


def capture(name: str, sessions: list[tuple[int, str | bytes]] = SESSIONS,
            prefix: str = "", verbose: bool = False) -> None:
    build = catalog.resolve(name)
    box = LocalProvider().provision(build)
    log, general = box.datadir / "capture-slow.log", box.datadir / "capture-general.log"
    try:
        opts = options(build, log, general)
        if verbose:  # statement-based binary logging: the SET insert_id lines
            opts.update(log_bin=str(box.datadir / "binlog"), server_id=1,
                        binlog_format="STATEMENT")
            if build.flavor == "mariadb":
                opts["log_slow_verbosity"] = "query_plan,explain"
            elif build.flavor == "percona":
                opts["log_slow_verbosity"] = "full"
        box.start(opts)
        conns = [box.endpoint.connect(), box.endpoint.connect()]
        ids = [c.thread_id() for c in conns]
        sent: dict[str, list[str]] = {str(i): [] for i in ids}
        for who, sql in sessions:
            if isinstance(sql, str) and sql.startswith(INIT_DB):
                conns[who].select_db(sql.removeprefix(INIT_DB))
                continue
            with conns[who].cursor() as cur:
                try:
                    cur.execute(sql)
                except pymysql.err.MySQLError as e:
                    print(f"{name}: session {who}: {e}")
            text = sql if isinstance(sql, str) else sql.decode("utf-8", "surrogateescape")
            sent[str(ids[who])].append(text)
        for c in conns:
            c.close()
        box.stop()  # the server writes an entry after its client has the answer: all in
        (DATA / f"slowlog-{prefix}{name}.log").write_bytes(log.read_bytes())
        if not prefix:
            (DATA / f"generallog-{name}.log").write_bytes(general.read_bytes())
        (DATA / f"slowlog-{prefix}{name}.json").write_text(json.dumps(sent, indent=1) + "\n")
        print(f"{name}: {log.stat().st_size} bytes, sessions {ids}")
    finally:
        box.destroy()


if __name__ == "__main__":
    for server in SERVERS:
        if "--orm-only" not in sys.argv:
            capture(server)
        capture(server, ORM_SESSIONS, prefix="orm-", verbose=True)
