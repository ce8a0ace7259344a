"""The general log reader on logs real servers wrote (tools/capture_slowlogs.py: the same
two sessions as the slow logs beside them, with the general log on), and the reader's
choice between a general log and a slow log."""
from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import pytest

from harness.errors import InputError
from harness.workloads.generallog import GeneralLog
from harness.workloads.querylog import open_log
from harness.workloads.slowlog import SlowLog

from .test_slowlog import _sessions as sessions_of

DATA = Path(__file__).parent.parent / "data"
SERVERS = ["mariadb-10.11", "mariadb-11.8", "mysql-5.7.29", "mysql-9.7"]


def _sessions(server: str) -> tuple[Any, dict[int, list], dict[int, list[str]]]:
    return sessions_of(server, GeneralLog)


@pytest.mark.parametrize("server", SERVERS)
def test_each_session_reads_back_what_it_sent_in_order(server):
    log, by_session, sent = _sessions(server)
    for session, statements in sent.items():
        mine = [e.sql for e in by_session[session] if not e.admin]
        first = mine.index(statements[0])  # after the client's own SET NAMES
        assert mine[first:] == statements, (server, session)
    own = {"the server's own statements (thread 0, at its start)"}
    assert set(log.skipped) <= own and log.binary == 1
    assert bool(log.skipped) == (server == "mysql-9.7"), "its general log was on at start"


@pytest.mark.parametrize("server", SERVERS)
def test_the_general_log_holds_what_the_slow_log_holds(server):
    """Same capture, two logs: each session's statements, in the same order with the
    same databases, logged by the general log while the slow log says it ran (the
    general log writes a command as it starts, the slow log when it ends: across
    sessions their order may differ)."""
    _, general, sent = _sessions(server)
    _, slow, _ = sessions_of(server, SlowLog)
    for s in sent:
        g = [e for e in general[s] if not e.admin]
        w = [e for e in slow[s] if not e.admin]
        assert [(e.sql, e.db) for e in g] == [(e.sql, e.db) for e in w], (server, s)
        for a, b in zip(g, w, strict=True):
            assert b.start - b.start_precision <= a.start <= \
                b.start + b.query_time + b.start_precision, a.sql  # while it ran


@pytest.mark.parametrize("server", SERVERS)
def test_init_db_and_quit_reach_the_replay_as_commands(server):
    _, by_session, sent = _sessions(server)
    one, two = (by_session[s] for s in sent)
    (init,) = [e for e in two if e.sql == "administrator command: Init DB"]
    assert init.db == "one"
    assert two[two.index(init) + 1].sql == "SELECT COUNT(*) FROM t"
    assert [e.sql for e in one + two if e.sql.endswith("Quit")] == \
        ["administrator command: Quit"] * 2


MYSQL_LINES = (
    b"/usr/sbin/mysqld, Version: 8.0.40 (MySQL Community Server - GPL). started with:\n"
    b"Tcp port: 3306  Unix socket: /run/mysqld/mysqld.sock\n"
    b"Time                 Id Command    Argument\n"
    b"2026-11-25T05:49:00.100000Z\t   12 Connect\tapp@10.0.0.7 on shop using TCP/IP\n"
    b"2026-11-25T05:49:00.100100Z\t   12 Prepare\tSELECT name FROM item WHERE id=?\n"
    b"2026-11-25T05:49:00.100200Z\t   12 Execute\tSELECT name FROM item WHERE id=42\n"
    b"2026-11-25T05:49:00.100300Z\t   12 Query\tSELECT id\nFROM item\nWHERE price > 10\n"
    b"2026-11-25T05:49:00.100400Z\t   12 Close stmt\t\n"
    b"2026-11-25T05:49:00.200000+01:00\t   12 Ping\t\n"
    b"2026-11-25T05:49:00.300000Z\t   12 Query\tUPDATE item SET price = 1 WHERE id = 4")


def test_prepared_statements_run_as_their_executes_and_the_last_line_counts(tmp_path):
    f = tmp_path / "general.log.gz"
    f.write_bytes(gzip.compress(MYSQL_LINES))
    log = open_log(f)
    entries = list(log)
    assert isinstance(log, GeneralLog)
    assert [(e.sql, e.db) for e in entries] == [
        ("SELECT name FROM item WHERE id=42", "shop"),
        ("SELECT id\nFROM item\nWHERE price > 10", "shop"),
        ("administrator command: Ping", "shop"),
        ("UPDATE item SET price = 1 WHERE id = 4", "shop")]
    assert log.skipped == {
        "prepared statements' Prepare (each Execute runs as a statement)": 1,
        "prepared statements' Close stmt": 1}
    assert entries[1].start - entries[0].start == pytest.approx(0.0001, abs=1e-6)
    assert entries[0].start - entries[2].start == pytest.approx(3600 - 0.0998, abs=1e-6)


def test_a_slow_log_is_read_as_one_and_neither_is_refused(tmp_path):
    assert isinstance(open_log(DATA / "slowlog-mysql-9.7.log"), SlowLog)
    f = tmp_path / "notes.txt"
    f.write_text("SELECT 1;\n")
    with pytest.raises(InputError, match=f"{f}: not a slow query log .* nor a general log"):
        list(open_log(f))
    with pytest.raises(InputError, match="no-such.log: file not found"):
        open_log(tmp_path / "no-such.log")
