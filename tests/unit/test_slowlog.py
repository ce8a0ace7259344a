"""The slow log reader on logs real servers wrote (tools/capture_slowlogs.py: two
sessions, interleaved, on MariaDB 10.11 and 11.8, MySQL 5.7.29 and 9.7 with
log_slow_extra; and an application's statements with MariaDB's explain verbosity), held
to pt-query-digest: the same statements, counted the same per fingerprint, and the same
fingerprints."""
from __future__ import annotations

import gzip
import json
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from harness.errors import InputError
from harness.workloads.fingerprint import digest, fingerprint
from harness.workloads.replay import Pace
from harness.workloads.slowlog import CapturedLog, SlowLog

DATA = Path(__file__).parent.parent / "data"
SERVERS = ["mariadb-10.11", "mariadb-11.8", "mysql-5.7.29", "mysql-9.7"]


def _sessions(server: str, reader: type[CapturedLog] = SlowLog, capture: str = ""
              ) -> tuple[CapturedLog, dict[int, list], dict[int, list[str]]]:
    """The server's captured log read back by session, and what each session sent."""
    log = reader(DATA / f"{reader.__name__.lower()}-{capture}{server}.log")
    by_session: dict[int, list] = {}
    for e in log:
        by_session.setdefault(e.session, []).append(e)
    sent = {int(k): v for k, v in json.loads(
        (DATA / f"slowlog-{capture}{server}.json").read_text()).items()}
    return log, by_session, sent


ORM_CAPTURES = sorted(p.stem.removeprefix("slowlog-orm-")
                      for p in DATA.glob("slowlog-orm-*.json"))


@pytest.mark.parametrize("server", ORM_CAPTURES)
def test_an_applications_statements_read_back_as_sent(server):
    """AUTO_INCREMENT inserts, LAST_INSERT_ID(), TRUE and FALSE, a non-ASCII identifier,
    on every build of the catalog (MySQL 5.5 to 9.7, Percona Server 5.5 and 5.6 with
    log_slow_verbosity=full, MariaDB 10.1 to 11.8 with query_plan,explain, whose
    '# explain:' lines and lone '#' lines come before a statement: they were read as its
    first line)."""
    log, by_session, sent = _sessions(server, capture="orm-")
    if list(by_session) == [0]:  # MySQL 5.5 logs no thread id: one stream, in order
        got = [e.sql for e in by_session[0] if not e.admin]
        assert not Counter(s for ss in sent.values() for s in ss) - Counter(got), server
        assert server == "mysql-5.5.55" and log.skipped == {}
        return
    for session, statements in sent.items():
        mine = [e for e in by_session[session] if not e.admin]
        first = [e.sql for e in mine].index(statements[0])
        assert [e.sql for e in mine[first:]] == statements, (server, session)
        assert all(e.start for e in mine), "every statement keeps its start time"
    assert log.skipped == {}
    if server in ("mariadb-10.11", "mariadb-11.8"):
        raw = (DATA / f"slowlog-orm-{server}.log").read_bytes()
        assert b"\n#\n# explain: " in raw  # the lines the reader now passes over
    assert len(ORM_CAPTURES) >= 10


def _pt_counts(log: Path) -> dict[str, int]:
    out = subprocess.run(["pt-query-digest", "--output", "json", "--limit", "100%", str(log)],
                         capture_output=True, text=True, check=True).stdout
    return {c["checksum"]: c["query_count"] for c in json.loads(out)["classes"]}


@pytest.mark.parametrize("log", sorted(p.name for p in DATA.glob("slowlog-*.log")))
def test_each_fingerprint_counts_what_pt_query_digest_counts(log):
    mine: dict[str, int] = {}
    for e in SlowLog(DATA / log):
        d = digest(fingerprint(e.sql))
        mine[d] = mine.get(d, 0) + 1
    assert mine == _pt_counts(DATA / log)


# Headers pt-query-digest's parser takes that the servers here no longer write: SET lines
# before a statement (5.0/5.1 with statement-based binary logging), a '# Time:' and its
# '# User@Host:' on one line, an entry whose first header is '# Thread_id:' or
# '# Query_time:' right after a statement.
OLD_FORMS = b"""\
# Time: 091201 10:00:01 # User@Host: app[app] @ web1 [10.0.0.5]
# Thread_id: 31
# Query_time: 0.000300  Lock_time: 0.000050  Rows_sent: 0  Rows_examined: 0
use shop;
SET insert_id=812,timestamp=1259661601;
INSERT INTO orders (customer, total)
VALUES (7, 19.90);
# Thread_id: 31
# Query_time: 0.000120  Lock_time: 0.000000  Rows_sent: 1  Rows_examined: 0
SET last_insert_id=812,timestamp=1259661601;
SELECT LAST_INSERT_ID();
# Query_time: 0.000400  Lock_time: 0.000060  Rows_sent: 0  Rows_examined: 1
SET timestamp=1259661602;
UPDATE orders SET paid = TRUE WHERE id = 812;
# User@Host: app[app] @ web1 [10.0.0.5]
# Thread_id: 32
# Query_time: 0.000200  Lock_time: 0.000040  Rows_sent: 2  Rows_examined: 2
SET timestamp=1259661603;
SELECT id FROM orders WHERE paid = false;
"""


def test_the_header_forms_pt_query_digest_reads(tmp_path):
    log = tmp_path / "old.log"
    log.write_bytes(OLD_FORMS)
    entries = list(SlowLog(log))
    assert [e.sql for e in entries] == [
        "INSERT INTO orders (customer, total)\nVALUES (7, 19.90)", "SELECT LAST_INSERT_ID()",
        "UPDATE orders SET paid = TRUE WHERE id = 812",
        "SELECT id FROM orders WHERE paid = false"]
    assert [e.timestamp for e in entries] == [1259661601, 1259661601, 1259661602, 1259661603]
    assert [e.session for e in entries] == [31, 31, 0, 32] and entries[0].db == "shop"
    counts: dict[str, int] = {}
    for e in entries:
        counts[digest(fingerprint(e.sql))] = counts.get(digest(fingerprint(e.sql)), 0) + 1
    assert counts == _pt_counts(log)


def test_a_general_log_whose_tabs_became_spaces_is_refused_naming_it(tmp_path):
    from harness.workloads.querylog import open_log

    spaced = tmp_path / "general.log"
    spaced.write_bytes((DATA / "generallog-mysql-9.7.log").read_bytes().replace(b"\t", b"    "))
    with pytest.raises(InputError, match=f"{spaced}: a general query log whose tab after "
                       "each thread id is gone"):
        open_log(spaced)
    assert sum(1 for _ in open_log(DATA / "generallog-mysql-9.7.log")) > 10  # as written


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


def test_true_and_false_fold_and_only_ascii_is_lowered_as_in_pt_query_digest():
    assert fingerprint("SELECT id FROM t WHERE a = TRUE AND b = false AND truely = 1") == \
        "select id from t where a = ? and b = ? and truely = ?"
    # Perl lowercases bytes: a non-ASCII identifier keeps its case
    assert fingerprint("SELECT `PRIX_ÉTÉ` FROM Été") == "select `prix_ÉtÉ` from Été"


def test_fingerprints_are_pt_fingerprints_own():
    logged = [e.sql for s in SERVERS for e in SlowLog(DATA / f"slowlog-{s}.log")
              if "\udcff" not in e.sql]
    for sql in dict.fromkeys(CORPUS + logged):
        pt = subprocess.run(["pt-fingerprint", "--query", sql], capture_output=True,
                            text=True).stdout.rstrip("\n")  # it exits 1 either way
        assert fingerprint(sql) == pt, sql  # (pt-fingerprint 3.2.1 leaves TRUE/FALSE)


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
