"""The ownership guard reads what each workload, side load and collector declares: on
a server the harness did not create, every write is refused before anything runs, and
whatever does not declare itself read-only counts as writing."""
from __future__ import annotations

from pathlib import Path

import pytest

from harness import collectors
from harness.collectors.base import Collector
from harness.errors import OwnershipError
from harness.inputs.sqlread import _read_local_load, first_write, local_load, split
from harness.runner import guard
from harness.scenario import parse_scenario
from harness.sideloads.mysqldump import mysqldump_flag
from harness.workloads.querylog import open_log

EXTERNAL = """\
name: ext
servers: [{host: 127.0.0.1, port: 3999, user: bench, password_env: EXT_PW, label: staging}]
dataset: {database: app, tables: 1, table_size: 100}
workload: {test: oltp_read_only, database: app, duration_s: 4}
"""


def _refused(text: str, tmp_path: Path) -> list[str]:
    f = tmp_path / "ext.yaml"
    f.write_text(text)
    sc = parse_scenario(f, text)
    try:
        guard.check_static(sc, list(sc.model.servers), {"default": {}})
    except OwnershipError as e:
        return str(e).splitlines()[1:]
    return []


def test_a_read_only_scenario_passes(tmp_path):
    assert _refused(EXTERNAL + """\
side_loads:
  - {kind: sql, name: report, start: 1, query: "SELECT COUNT(*) FROM app.sbtest1; SHOW STATUS"}
  - {kind: mysqldump, name: dump, start: 1, database: app, options: [--single-transaction, -q]}
""", tmp_path) == []


def test_every_writing_side_load_is_named(tmp_path):
    (tmp_path / "maint.sql").write_text("SELECT 1;\n-- a comment; DROP TABLE x\n"
                                        "SELECT ';' FROM t;\nFLUSH TABLES;\n")
    bad = _refused(EXTERNAL + """\
side_loads:
  - {kind: sql, name: s1, start: 1, query: ["SELECT 1", "SET GLOBAL innodb_old_blocks_time = 0"]}
  - {kind: sql, name: s2, start: 1, query: "DROP DATABASE app"}
  - {kind: sql, name: s3, start: 1, query: ["SELECT 1", "KILL 5"]}
  - {kind: sql, name: s4, start: 1, file: maint.sql}
  - {kind: command, name: c1, start: 1, argv: [true]}
  - {kind: mysqldump, name: d1, start: 1, database: app, options: [--delete-master-logs]}
  - {kind: mysqldump, name: d2, start: 1, database: app, options: [-Fq]}
  - {kind: mysqldump, name: d3, start: 1, database: app, options: [--flush-logs]}
""", tmp_path)
    assert [b.split(")")[0].strip() for b in bad] == [
        f"side_loads[{i}] ({n}" for i, n in enumerate(
            ["s1", "s2", "s3", "s4", "c1", "d1", "d2", "d3"])]
    assert "SET GLOBAL innodb_old_blocks_time" in bad[0]
    assert "file: maint.sql, line 4 - " in bad[3] and "FLUSH" in bad[3], bad[3]


def test_a_side_loads_file_is_named_by_its_line_never_shown(tmp_path):
    """A file: side load is read by root: judged against a foreign server, its text is
    never printed (it may be no SQL at all, /etc/shadow), only where the refusal is."""
    (tmp_path / "secret.txt").write_text("root:$6$hunter2hash:19000:0:99999:7:::\n")
    bad = _refused(EXTERNAL + """\
side_loads:
  - {kind: sql, name: s, start: 1, file: secret.txt}
""", tmp_path)
    assert len(bad) == 1 and "file: secret.txt, line 1 - " in bad[0], bad
    assert "hunter2hash" not in bad[0]


def test_a_collector_that_says_nothing_counts_as_writing(tmp_path, monkeypatch):
    class Quiet(Collector):
        name = "quiet"

        def __enter__(self): return self

        def __exit__(self, *exc): return None

    monkeypatch.setitem(collectors.REGISTRY, "quiet", Quiet)
    bad = _refused(EXTERNAL, tmp_path)
    assert bad == ["  collectors.quiet: it does not declare that it only reads (disable it: "
                   "collectors: {quiet: {enabled: false}})"]
    assert _refused(EXTERNAL + "collectors: {quiet: {enabled: false}}\n", tmp_path) == []
    # Every shipped collector says what it does.
    assert all(c.server_access in ("reads", "adapts") for n, c in collectors.REGISTRY.items()
               if n != "quiet")


def test_a_disposable_server_is_not_refused_by_validate(tmp_path):
    text = EXTERNAL.replace("label: staging", "label: staging, disposable: true")
    assert _refused(text.replace("oltp_read_only", "oltp_read_write"), tmp_path) == []


@pytest.mark.parametrize("sql, why", [
    ("SELECT 1; SHOW GLOBAL STATUS; EXPLAIN DELETE FROM t; SET SESSION sort_buffer_size = 1",
     None),
    ("SELECT * FROM t WHERE a = 'x; DROP TABLE t'", None),
    ("SELECT `drop` FROM t -- ; DROP TABLE t", None),
    ("SELECT 1 # ; DROP TABLE t\n", None),
    ("START TRANSACTION READ ONLY; SELECT 1; COMMIT", None),
    ("SET GLOBAL x = 1", "SET of a global setting"),
    ("SET @@global.x = 1", "SET of a global setting"),
    ("SET PERSIST x = 1", "SET of a global setting"),
    ("SELECT 1 /*!50000 , (SELECT 1) */", "executable"),
    ("SELECT a INTO OUTFILE '/tmp/x' FROM t", "writes a file"),
    ("SELECT * FROM t FOR UPDATE", "locks rows"),
    ("SELECT * FROM t LOCK IN SHARE MODE", "locks rows"),
    ("WITH c AS (SELECT 1) UPDATE t SET a = 1", "UPDATE is not"),
    ("EXPLAIN ANALYZE DELETE FROM t", "DELETE is not"),
    ("ANALYZE TABLE t", "index statistics"),
    ("START SLAVE", "START SLAVE"),
    ("LOCK TABLES t READ", "LOCK is not"),
    ("KILL QUERY 5", "KILL is not"),
    ("CALL p()", "CALL is not"),
])
def test_read_only_sql_is_parsed_not_grepped(sql, why):
    found = first_write(sql)
    assert (found is None) if why is None else (found is not None and why in found[1])


# What an attacker and a careless user tried (issue 36), and more: each reads as a write,
# a second statement or unreadable text, never as read-only.
@pytest.mark.parametrize("sql, why", [
    ("SET --\nGLOBAL max_connections=7", "global setting"),  # "--" ends at its newline
    ("SELECT 1 --\n; SET GLOBAL read_only=1", "more than one statement"),
    ("SELECT 1 --\t\n; SET GLOBAL read_only=1", "more than one statement"),
    ("SELECT 1 -- x\r; SET GLOBAL read_only=1", None),  # \r does not end a comment
    ("SELECT 1 --\xa0; SET GLOBAL read_only=1", "more than one statement"),  # not a space
    ("SELECT 1 --'\n; SET GLOBAL x=1; -- '", "more than one statement"),  # ORACLE mode
    ("SET STATEMENT max_statement_time=1 FOR DELETE FROM t", "statement's variables"),
    ("SET SESSION TRANSACTION READ WRITE", "READ WRITE"),
    ("SET TRANSACTION READ WRITE", "READ WRITE"),
    ("START TRANSACTION READ WRITE", "only READ ONLY"),
    ("START TRANSACTION READ ONLY, READ WRITE", "only READ ONLY"),
    ("SET tx_read_only = 0", "leaves the read-only session"),
    ("SET @@session.transaction_read_only = OFF", "leaves the read-only session"),
    ("SET @@SESSION . tx_read_only = 0", "leaves the read-only session"),
    ("SET `transaction_read_only` = 0", "leaves the read-only session"),
    ("SET @a = 1, GLOBAL max_connections = 7", "global setting"),
    ("SET @@GLOBAL . max_connections = 7", "global setting"),
    ("SET gtid_next = 'aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa:1'", "transaction"),
    ("SET NAMES gbk", "character set"),
    ("SET CHARACTER SET", "character set"),  # no value: refused, not a crash
    ("SET CHARACTER SET 'sjis'", "character set"),
    ("SET character_set_client = big5", "character set"),
    ("SET NAMES latin1", "changes the session's character set from utf8mb4 (to latin1)"),
    ("SET NAMES cp1250", "character set"),
    ("SET character_set_client = DEFAULT", "character set"),
    ("SET NAMES DEFAULT", "SET of a global setting"),
    ("SET collation_connection = 'latin1_swedish_ci'", "character set"),
    ("SET character_set_results = latin2", "character set"),
    ("SELECT 1\udca0; SET\udca0GLOBAL max_connections = 1",
     "a byte 0xA0 at character 8 that is not UTF-8"),
    ("SET DEFAULT ROLE ALL TO u", "role"),
    ("SET ROLE ALL", "role"),
    ("BEGIN NOT ATOMIC DELETE FROM t", "compound"),
    ("LOAD DATA LOCAL INFILE '/etc/passwd' INTO TABLE t", "LOAD is not"),
    ("SELECT 'a\\'; SET GLOBAL x=1; -- '", "more than one statement"),  # NO_BACKSLASH..
    ('SELECT "a\\"; SET GLOBAL x=1; -- "', "more than one statement"),  # ANSI_QUOTES
    ("SELECT 'it\\'s", "unreadable"),
    ("SELECT 1 /* ; SET GLOBAL x=1", "unreadable"),
    ("SELECT `a", "unreadable"),
    ("SELECT 1\0; SET GLOBAL x=1", "unreadable"),
    ("SELECT 1 /*M!100000 , (SELECT 1) */", "executable"),
    ("(SELECT 1) UNION (SELECT a FROM t FOR UPDATE)", "locks rows"),
    ("SET @x = (SELECT a FROM t FOR UPDATE)", "locks rows"),
    ("EXPLAIN FORMAT=TREE ANALYZE DELETE FROM t", "DELETE is not"),
    ("ANALYZE FORMAT=JSON DELETE FROM t", "index statistics"),
    ("WITH d AS (SELECT 1) DELETE FROM t", "DELETE is not"),
    ("PREPARE s FROM 'DELETE FROM t'", "PREPARE is not"),
    ("HANDLER t OPEN", "HANDLER is not"),
    ("XA START 'x'", "XA is not"),
    ("(SELECT 1) UNION (SELECT 2)", None),
    ("WITH c AS (SELECT 1) SELECT REPLACE(a, 'x', 'y'), INSERT('ab', 1, 1, 'c') FROM c", None),
    ("SET NAMES utf8mb4 COLLATE utf8mb4_general_ci", None),
    ("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED", None),
    ("SELECT 'it''s' /* a ; comment */ -- ; x\n", None),
    ("SELECT 'C:\\\\dir'", None),  # a backslash, escaped: one string in every reading
])
def test_the_bypasses_read_as_the_server_reads_them(sql, why):
    found = first_write(sql, several=False)
    assert (found is None) if why is None else (found is not None and why in found[1]), found


@pytest.mark.parametrize("sql, local", [
    ("LOAD DATA LOCAL INFILE '/etc/passwd' INTO TABLE t", True),
    ("load xml local infile '/etc/passwd' into table t", True),
    ("LoAd DaTa LoCaL INFILE 'x' INTO TABLE t", True),
    ("SELECT 1; LOAD DATA LOCAL INFILE 'x' INTO TABLE t", True),
    ("SELECT 'a\\'; LOAD DATA LOCAL INFILE 'x' INTO TABLE t; -- '", True),  # one reading
    ("LOAD DATA LOCAL INFILE 'x", True),  # unreadable: judged by its words
    ("LOAD DATA INFILE 'x' INTO TABLE t", False),
    ("LOAD DATA /* local */ INFILE 'x' INTO TABLE t", False),
    ("SELECT 'LOAD DATA LOCAL INFILE' FROM t", False),
    ("SELECT c FROM sbtest1 WHERE id = 7", False),
])
def test_a_local_load_is_found_in_any_reading(sql, local):
    assert local_load(sql) is local


def test_the_quick_look_for_local_loads_agrees_with_the_long_reading():
    """A statement without the letters of LOCAL is passed without its six readings:
    on every statement of the logs captured from the servers here, and on every text
    the guard's tests above try, both say the same."""
    data = Path(__file__).parents[1] / "data"
    texts = [e.sql for f in sorted(data.glob("*log-*.log")) for e in open_log(f)
             if not e.admin]
    texts += [sql for mark in (test_read_only_sql_is_parsed_not_grepped,
                               test_the_bypasses_read_as_the_server_reads_them,
                               test_a_local_load_is_found_in_any_reading)
              for sql, _ in mark.pytestmark[0].args[1]]
    assert len(texts) > 400 and sum(map(local_load, texts)) >= 6
    assert [local_load(t) for t in texts] == [_read_local_load(t) for t in texts]


def test_statements_split_outside_strings_and_comments():
    assert split("SELECT ';'; /* ; */ SELECT 2 ;\n-- ;\n") == ["SELECT ';'", "/* ; */ SELECT 2"]


@pytest.mark.parametrize("option, kind, writes", [
    ("-hdb2", "connection", False), ("-P3307", "connection", False),
    ("-uroot", "connection", False), ("--hos=db2", "connection", False),
    ("--loose-user=x", "connection", False), ("-r/etc/passwd", "connection", False),
    ("--single-transaction", None, False), ("-q", None, False),
    ("-Fq", None, True), ("--flush-l", None, True), ("--skip-flush-logs", None, False),
    ("--delete-master-logs", None, True), ("--tab=/tmp", None, True),
    # what the client would do as root, or a name no reading option has: refused on
    # every server (an allow-list, not a deny-list)
    ("-w1=1", "refused", True), ("--where=1 INTO OUTFILE '/tmp/x'", "refused", True),
    ("--plugin-dir=/tmp/evil", "refused", True), ("--default-auth=evil", "refused", True),
    ("--log-error=/etc/passwd", "refused", True), ("--debug=d:t:o,/tmp/x", "refused", True),
    ("--character-sets-dir=/tmp", "refused", True), ("--single-tr", "refused", True),
    ("-qj", "refused", True), ("sbtest1", "refused", True),
    ("--skip-opt", None, False), ("--hex-blob", None, False), ("-qce", None, False),
])
def test_mysqldump_flags_are_read_as_mysqldump_reads_them(option, kind, writes):
    k, w = mysqldump_flag(option)
    assert k == kind and bool(w) == writes, (k, w)


def test_a_dump_option_outside_the_allow_list_fails_the_scenario(tmp_path):
    from harness.errors import ScenarioError
    from harness.scenario import load_scenario

    f = tmp_path / "dump.yaml"
    f.write_text(EXTERNAL + """\
side_loads:
  - {kind: mysqldump, name: d, start: 1, database: app, options: [--plugin-dir=/tmp/x]}
""")
    with pytest.raises(ScenarioError, match="--plugin-dir is not one of the reading"):
        load_scenario(f)


def test_a_side_load_kind_that_says_nothing_counts_as_writing():
    from typing import Literal

    from harness.model import SideLoadModel

    class Quiet(SideLoadModel):
        kind: Literal["quiet"] = "quiet"

    load = Quiet(name="q", start={"at": 1})
    assert load.writes(Path(".")) == ["quiet: it does not declare that it is read-only"]


def test_a_replay_writes_unless_it_is_read_only(tmp_path):
    (tmp_path / "captured.log").write_text("# Time: 2026-11-25T06:00:00Z\nSELECT 1;\n")
    replay = EXTERNAL.replace("workload: {test: oltp_read_only, database: app, duration_s: 4}",
                              "workload: {kind: replay, database: app, log: captured.log}")
    (refusal,) = _refused(replay, tmp_path)
    assert "replays captured.log, whose statements may write" in refusal
    assert _refused(replay.replace("log: captured.log", "log: captured.log, read_only: true"),
                    tmp_path) == []


@pytest.mark.parametrize("line, writes", [
    ("GRANT USAGE ON *.* TO `ro`@`%` IDENTIFIED BY PASSWORD '*0123'", []),
    ("GRANT SELECT, SHOW VIEW, PROCESS, REPLICATION CLIENT ON *.* TO 'ro'@'%'", []),
    ("GRANT SELECT (`a ON b`, c), INSERT (`d`) ON `x`.`t` TO `u`@`%`", ["INSERT ON `x`.`t`"]),
    ("GRANT SELECT ON `a ON b`.* TO `u`@`%` WITH GRANT OPTION", ["GRANT OPTION ON `a ON b`.*"]),
    ("GRANT EXECUTE ON `app`.* TO `u`@`%`", ["EXECUTE ON `app`.*"]),  # DEFINER routines
    ("GRANT LOCK TABLES, SELECT ON *.* TO `u`@`%`", ["LOCK TABLES ON *.*"]),
    ("GRANT `app_rw`@`%` TO `u`@`%`", ["role `app_rw`@`%` (its privileges are not read; "
                                       "grant them to the account itself)"]),
    ("GRANT SOMETHING_NEW ON *.* TO `u`@`%`", ["SOMETHING_NEW ON *.*"]),  # unknown: writes
    ("REVOKE INSERT ON `mysql`.* FROM `u`@`%`", []),  # not subtracted from the GRANT
    ("SET DEFAULT ROLE `app_rw` FOR `u`@`%`", []),
])
def test_show_grants_lines_fail_closed(line, writes):
    from harness.server.grants import grant_writes
    assert grant_writes(line) == writes


@pytest.mark.parametrize("sql", [
    "LOAD DATA /*!LOCAL*/ INFILE '/root/secret' INTO TABLE t",
    "LOAD DATA /*!50000 LOCAL*/ INFILE '/root/secret' INTO TABLE t",
    "LOAD DATA /*M!LOCAL*/ INFILE '/root/secret' INTO TABLE t",
    "LOAD DATA /*M!100000 LOCAL */ INFILE '/root/secret' INTO TABLE t",
    "/*!LOAD DATA LOCAL INFILE '/root/secret' INTO TABLE t*/",
    "LOAD DATA `LOCAL` INFILE '/root/secret' INTO TABLE t",
    "LOAD DATA\u00a0LOCAL INFILE '/root/secret' INTO TABLE t",  # 0xA0: a space in latin1
    "LOAD DATA\udca0LOCAL INFILE '/root/secret' INTO TABLE t",  # the raw byte, kept
    "LOAD\u00a0DATA LOCAL INFILE '/root/secret' INTO TABLE t",
])
def test_a_local_load_hidden_from_a_plain_reading_is_found(sql):
    """What an executable comment holds is code the server runs; a character over 0x7f
    may be a space to it."""
    assert local_load(sql)


@pytest.mark.parametrize("sql, refused", [
    ("SET SESSION sql_mode='MSSQL'", "MSSQL"),
    ("SET sql_mode = 'STRICT_TRANS_TABLES,MSSQL'", "MSSQL"),
    ("SET @@sql_mode = 'ORACLE'", "ORACLE"),
    ("SET @@session.sql_mode = 'db2'", "DB2"),
    ("SET sql_mode = CONCAT(@@sql_mode, ',MSSQL')", "a quoted list"),
    ("SET sql_mode = @m", "a quoted list"),
    ("SET sql_mode = 'NOT_A_MODE'", "NOT_A_MODE"),
    ("SET sql_mode = 'STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION'", None),
    ("SET SESSION sql_mode = 'ANSI_QUOTES,NO_BACKSLASH_ESCAPES'", None),  # read either way
    ("SET @sql_mode = 'MSSQL'", None),  # a user variable
])
def test_a_session_sql_mode_the_guard_does_not_read_is_refused(sql, refused):
    found = first_write(sql, several=False)
    assert (found is None) if refused is None else (found is not None and refused in
                                                   found[1]), found


def test_the_mssql_bracket_attack_is_refused_before_it_reads():
    """MariaDB's MSSQL mode quotes [x#] as a name: the guard would read '#' as a comment
    and miss the writes after it; the SET that turns the mode on is refused."""
    sql = ("SET SESSION sql_mode='MSSQL'; SELECT c AS [x#] FROM t WHERE id=2; "
           "SET SESSION TRANSACTION READ WRITE; DELETE FROM t WHERE id <= 50")
    found = first_write(sql)
    assert found is not None and "MSSQL" in found[1], found
