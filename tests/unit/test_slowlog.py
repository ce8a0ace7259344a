"""The slow log reader on logs real servers wrote (tools/capture_slowlogs.py: two
sessions, interleaved, on MariaDB 10.11 and 11.8, MySQL 5.7.29 and 9.7 with
log_slow_extra), and statement fingerprints held to pt-fingerprint's own."""
from __future__ import annotations

import gzip
import json
import subprocess
from pathlib import Path

import pytest

from harness.errors import InputError
from harness.workloads.fingerprint import digest, fingerprint
from harness.workloads.replay import Pace
from harness.workloads.slowlog import CapturedLog, SlowLog

DATA = Path(__file__).parent.parent / "data"
SERVERS = ["mariadb-10.11", "mariadb-11.8", "mysql-5.7.29", "mysql-9.7"]


def _sessions(server: str, reader: type[CapturedLog] = SlowLog
              ) -> tuple[CapturedLog, dict[int, list], dict[int, list[str]]]:
    """The server's captured log read back by session, and what each session sent."""
    log = reader(DATA / f"{reader.__name__.lower()}-{server}.log")
    by_session: dict[int, list] = {}
    for e in log:
        by_session.setdefault(e.session, []).append(e)
    sent = {int(k): v for k, v in json.loads(
        (DATA / f"slowlog-{server}.json").read_text()).items()}
    return log, by_session, sent


@pytest.mark.parametrize("server", SERVERS)
def test_each_session_reads_back_what_it_sent_in_order(server):
    log, by_session, sent = _sessions(server)
    for session, statements in sent.items():
        mine = [e for e in by_session[session] if not e.admin]
        first = [e.sql for e in mine].index(statements[0])  # after the client's own SET NAMES
        assert [e.sql for e in mine[first:]] == statements, (server, session)
    assert log.skipped == {} and log.binary == 1
    (raw,) = [e for es in by_session.values() for e in es if "bytes" in e.sql]
    assert raw.sql.encode("utf-8", "surrogateescape") == \
        b"INSERT INTO t VALUES (3, '\xff\xfe', 'bytes')"


@pytest.mark.parametrize("server", SERVERS)
def test_each_statement_has_its_database_and_its_figures(server):
    _, by_session, sent = _sessions(server)
    one, two = (by_session[s] for s in sent)
    by_sql = {e.sql: e for e in one + two}
    assert by_sql["CREATE DATABASE one"].db is None
    assert by_sql["SELECT s FROM t WHERE id = 2"].db == "one"
    assert by_sql["SELECT COUNT(*) FROM one.t"].db == "two"
    assert by_sql["SELECT MAX(id) FROM u"].db == "two"  # session one moved to two
    rows = by_sql["SELECT id\n# a comment line inside the statement\nFROM u WHERE id IN (1, 2)"]
    assert rows.rows_sent == 2 and rows.rows_examined >= 2 and rows.query_time > 0
    assert rows.timestamp and rows.timestamp > 1.7e9
    offsets = [e.offset for e in one]
    assert offsets == sorted(offsets) and len(set(offsets)) == len(offsets)
    failed = by_sql["SELECT * FROM no_such_table"]
    assert failed.errno == (1146 if server == "mysql-9.7" else 0)  # log_slow_extra


@pytest.mark.parametrize("server", SERVERS)
def test_each_statement_starts_within_the_second_the_server_stamped_it(server):
    """Its start (MySQL: ``# Time`` less ``Query_time``, or ``Start:``; MariaDB: the
    second) against ``SET timestamp``, which the server set from its own clock."""
    _, by_session, sent = _sessions(server)
    for s in sent:
        timed = [e for e in by_session[s] if not e.admin]
        assert all(e.timestamp <= e.start < e.timestamp + 1 for e in timed), server
        assert [e.start for e in timed] == sorted(e.start for e in timed)
    if server.startswith("mysql"):  # to the microsecond: the statements apart
        assert len({e.start for es in by_session.values() for e in es}) == \
            sum(len(es) for es in by_session.values())


def test_a_paced_replay_is_due_at_its_captured_time_over_the_speed():
    log = list(SlowLog(DATA / "slowlog-mysql-9.7.log"))
    pace = Pace(4.0)
    due = [pace.due(e) for e in log]
    assert [d[0] - due[0][0] for d in due] == pytest.approx(
        [(e.start - log[0].start) / 4 for e in log], abs=1e-6)
    # (a difference of two monotonic times: its float precision is ~1e-10 s)
    assert due[0][1] - due[0][0] == pytest.approx(1e-6 / 4, abs=1e-9)
    second = next(iter(SlowLog(DATA / "slowlog-mariadb-10.11.log")))  # timed to the second
    at, late = Pace(4.0).due(second)
    assert late - at == 0.25
    assert Pace("fast").due(log[0]) is None


@pytest.mark.parametrize("server", ["mysql-5.7.29", "mysql-9.7"])
def test_mysql_logs_the_quit_of_each_connection_as_an_administrator_command(server):
    _, by_session, sent = _sessions(server)
    admin = [e for s in sent for e in by_session[s] if e.admin]
    assert [e.sql for e in admin if e.sql.endswith("Quit")] == \
        ["administrator command: Quit"] * 2
    assert all(by_session[s][-1].admin for s in sent), "a Quit ends its session"
    (init,) = [e for e in admin if e.sql.endswith("Init DB")]  # COM_INIT_DB, logged
    assert init.db == "one", "the database it moved to, for the replay to follow"


def test_a_log_cut_short_or_gzipped_or_restarted_reads_what_is_whole(tmp_path):
    whole = (DATA / "slowlog-mysql-5.7.29.log").read_bytes()
    n = len(list(SlowLog(DATA / "slowlog-mysql-5.7.29.log")))
    cut = tmp_path / "cut.log"
    cut.write_bytes(whole[:whole.rindex(b";")])  # the last statement lost its ';'
    log = SlowLog(cut)
    assert len(list(log)) == n - 1
    assert log.skipped == {"cut short at the end of the log": 1}
    packed = tmp_path / "slow.log.gz"
    packed.write_bytes(gzip.compress(whole))
    assert [e.sql for e in SlowLog(packed)] == [e.sql for e in SlowLog(cut)] + \
        [list(SlowLog(DATA / "slowlog-mysql-5.7.29.log"))[-1].sql]
    restarted = tmp_path / "restarted.log"  # the server's banner again, mid-file
    banner = b"".join(whole.splitlines(keepends=True)[:3])
    restarted.write_bytes(whole + banner + whole[len(banner):])
    assert len(list(SlowLog(restarted))) == 2 * n


@pytest.mark.parametrize("content", [b"", b"[mysqld]\nport = 3306\n" * 40,
                                     b"\x00\x01binary" * 100, b"SELECT 1;\n"])
def test_a_file_that_is_not_a_slow_log_is_refused_naming_it(tmp_path, content):
    f = tmp_path / "not-a-log.txt"
    f.write_bytes(content)
    with pytest.raises(InputError, match=f"{f}: not a slow query log"):
        list(SlowLog(f))
    with pytest.raises(InputError, match="no-such.log: file not found"):
        list(SlowLog(tmp_path / "no-such.log"))


CORPUS = [
    "SELECT c FROM sbtest1 WHERE id=5000",
    "SELECT c FROM sbtest1 WHERE id BETWEEN 100 AND 199",
    "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN 1 AND 100 ORDER BY c ASC",
    "UPDATE sbtest1 SET k=k+1 WHERE id=42",
    "INSERT INTO sbtest1 (id, k, c, pad) VALUES (9, 5012, '1-2-3', 'x-y')",
    "INSERT INTO t VALUES (1,'a'),(2,'b'),(3,'c')",
    "REPLACE IGNORE INTO t (a) VALUES (NULL), (2)",
    "select * from t where a in (1, 2, 3) and b = \"x\" limit 10, 20",
    "SELECT a FROM t WHERE b = 'it\\'s' -- trailing comment\n",
    "SELECT /* hint */ a FROM t /*!40001 SQL_NO_CACHE */ WHERE x = -1.5e3",
    "select a from t1 union select a from t1 union all select a from t1",
    "SELECT * FROM t ORDER BY a ASC, b DESC, c asc LIMIT 5 OFFSET 10",
    "use sbtest",
    "CALL proc(1, 2)",
    "administrator command: Quit",
    "SELECT /*!40001 SQL_NO_CACHE */ * FROM `sbtest1`",
    "SELECT 0x1F, b'0101', x'ab' FROM dual WHERE c IS NULL",
    "  SELECT\n\t a,\n  b FROM   t\nWHERE   c=1\n",
    "SELECT col1, col2 FROM tbl # a hash comment\nWHERE col3 = 12",
    "SELECT * FROM db1.t2 WHERE name LIKE '%abc%' AND id IN (SELECT id FROM t3 WHERE v IN "
    "('a','b'))",
]


def test_fingerprints_are_pt_fingerprints_own():
    logged = [e.sql for s in SERVERS for e in SlowLog(DATA / f"slowlog-{s}.log")
              if "\udcff" not in e.sql]
    for sql in dict.fromkeys(CORPUS + logged):
        pt = subprocess.run(["pt-fingerprint", "--query", sql], capture_output=True,
                            text=True).stdout.rstrip("\n")  # it exits 1 either way
        assert fingerprint(sql) == pt, sql


@pytest.mark.parametrize("server", SERVERS)
def test_digests_are_the_ids_pt_query_digest_reports(server):
    log = DATA / f"slowlog-{server}.log"
    out = subprocess.run(["pt-query-digest", "--output", "json", "--limit", "100%", str(log)],
                         capture_output=True, text=True, check=True).stdout
    theirs = {c["checksum"]: c["fingerprint"] for c in json.loads(out)["classes"]}
    mine = {digest(fingerprint(e.sql)): fingerprint(e.sql) for e in SlowLog(log)}
    assert mine == theirs


def test_capture_statements_follow_the_version_and_quote_the_file(capsys):
    from harness.cli import main
    from harness.collectors.slow_log import capture_statements

    on, off = capture_statements("mysql", (8, 0, 36), "/var/log/it's.log")
    assert on[0] == "SET GLOBAL slow_query_log_file = '/var/log/it''s.log'"
    assert "SET GLOBAL log_slow_extra = ON" in on and on[-1] == "SET GLOBAL slow_query_log = ON"
    assert off == ["SET GLOBAL slow_query_log = OFF"]
    assert "SET GLOBAL log_slow_extra = ON" not in capture_statements("mysql", (5, 7, 44),
                                                                      "f")[0]
    maria = capture_statements("mariadb", (10, 11, 9), "f")[0]
    assert "SET GLOBAL log_slow_rate_limit = 1" in maria and "log_slow_extra" not in str(maria)
    assert main(["capture", "--server", "mysql-9.7"]) == 0
    assert "SET GLOBAL log_slow_extra = ON;" in capsys.readouterr().out
    assert main(["capture", "--version", "eight"]) == 2
    assert "--version eight: a version such as 8.0.36" in capsys.readouterr().err
    assert main(["capture"]) == 2


def test_on_a_server_it_did_not_create_the_capture_only_says_how(tmp_path):
    from harness.collectors.base import CollectorContext
    from harness.collectors.slow_log import SlowLog as Capture
    from harness.server.mysql import Endpoint

    ctx = CollectorContext(endpoint=Endpoint("127.0.0.1", 1, "u", "p"), flavor="mysql",
                           version=(8, 0, 36), clock=lambda: 0.0, sample=lambda *a: None,
                           event=lambda *a: None, artifacts=tmp_path, owned=False)
    with Capture(ctx):  # port 1: a connection attempt would fail
        pass
    (note,) = ctx.notes
    assert note.startswith("slow_log: not turned on (a server the harness did not create)")
    assert "SET GLOBAL long_query_time = 0" in note and not (tmp_path / "slow.log").exists()
