"""Every bad input gets its exit code (2 usage, 8 a file wrong as checked, 9 not there)
and one clear line naming the file, field or flag: no traceback, no silent default, and
nothing of an unrelated file echoed back."""
from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest

from harness.cli import main
from harness.errors import ScenarioError
from harness.scenario import load_scenario

GOOD = """\
name: t
dataset: {tables: 2, table_size: 100}
workload: {kind: sysbench, test: oltp_read_only, duration_s: 5}
"""


def _validate(tmp_path: Path, text: str, capsys) -> str:
    f = tmp_path / "s.yaml"
    f.write_text(text)
    assert main(["validate", str(f)]) == 8  # the file is wrong, as checked
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.startswith(f"error: {f}")
    return err


@pytest.mark.parametrize("extra, needle", [
    ("mysqld: {a: 1}\nmysqld: {b: 2}\n", "'mysqld' is given twice (first on line 4)"),
    ("mysqld: {innodb_buffer_pool_size: 4Q}\n", "'4Q' is not a size"),
    ("mysqld: {max_allowed_packet: lots}\n", "'lots' is not a size"),
    ('mysqld: {innodb_buffer_pool_size: "128M\\ndatadir=/var/lib/mysql\\nskip-grant-tables"}\n',
     "control character"),
    ('mysqld: {"skip-grant-tables\\nx": 1}\n', "option name"),
    ('mysqld: {"[client]": 1}\n', "option name"),
    ('mysqld: {"a=b": 1}\n', "option name"),
    ("config_changes: [{start: 1, set_global: {\"x\\ny\": 1}}]\n", "option name"),
    ('servers: [{host: "db1\\nport=1", user: u, password_env: X}]\n', "servers.0.host"),
    ('servers: [{host: db1, user: "u\\npassword=x", password_env: X}]\n', "servers.0.user"),
])
def test_bad_scenario_values(tmp_path, capsys, extra, needle):
    assert needle in _validate(tmp_path, GOOD + extra, capsys)


@pytest.mark.parametrize("old, new, needle", [
    ("table_size: 100", "table_size: 1e29", "table_size"),
    ("table_size: 100", "table_size: 99999999999", "table_size"),
    ("duration_s: 5", "duration_s: 5, threads: true", "threads: a number, not true"),
    ("tables: 2", "tables: false", "tables: a number, not false"),
])
def test_numbers_are_numbers(tmp_path, capsys, old, new, needle):
    assert needle in _validate(tmp_path, GOOD.replace(old, new), capsys)


def test_extends_never_reads_or_echoes_what_is_not_a_scenario(tmp_path, capsys):
    (tmp_path / "latin1.yaml").write_bytes("name: caf\xe9\n".encode("latin-1"))
    secret = tmp_path / "secret.txt"
    secret.write_text("root:$6$S3cr3tHash:19000:0:99999:7:::\nbin:*:19000:0:99999:7:::\n")
    for ref, needle in (("/dev/zero", "not a regular file"),
                        ("latin1.yaml", "not a text file (not UTF-8)"),
                        (str(secret), "not a scenario: 2 unknown top-level field(s)"),
                        ("missing.yaml", "file not found")):
        err = _validate(tmp_path, f"extends: {ref}\n" + GOOD, capsys)
        assert needle in err, err
        assert "S3cr3tHash" not in err


def test_a_my_cnf_that_is_not_text_or_smuggles_options(tmp_path, capsys):
    (tmp_path / "bad.cnf").write_bytes(b"[mysqld]\ninnodb_buffer_pool_size = 1\xff\n")
    err = _validate(tmp_path, GOOD + "variants: {v: {my_cnf: bad.cnf}}\n", capsys)
    assert "variants.v.my_cnf: " in err and "bad.cnf: option innodb_buffer_pool_size: " \
        "its value holds a byte that is not UTF-8 (0xFF)" in err, err
    (tmp_path / "size.cnf").write_text("[mysqld]\ninnodb_log_file_size = 4Q\n")
    err = _validate(tmp_path, GOOD + "variants: {v: {my_cnf: size.cnf}}\n", capsys)
    assert "'4Q' is not a size" in err


@pytest.mark.parametrize("argv, needle", [
    (["run", "x.yaml", "--metrics-port", "70000"], "--metrics-port: 70000: a port is 1 to 65535"),
    (["run", "x.yaml", "--metrics-port", "-5"], "a port is 1 to 65535"),
    (["regress", "--since", "garbage"], "--since: 'garbage' is not an ISO date"),
    (["regress", "--window", "0"], "--window: 0: at least 1"),
    (["regress", "--p-value", "2"], "--p-value: 2.0: between 0 and 1"),
])
def test_bad_flags(argv, needle, capsys):
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    assert needle in capsys.readouterr().err


@pytest.mark.parametrize("argv, needle, code", [
    (["runs", "--results", "sqlite:///"], "names no file", 2),
    (["runs", "--results", "sqlite:////proc/x/y.db"], "cannot write in /proc/x", 9),
    (["show", "_1"], "no run '_1'", 9),
    (["show", "%"], "no run '%'", 9),
])
def test_bad_store_and_run_names(argv, needle, code, capsys, results):
    """A URL wrong as written is usage (2); a store or run not there, nothing checked (9)."""
    assert main(argv) == code
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err


def test_outputs_that_cannot_be_written(tmp_path, results, capsys):
    from harness.store import RunRecord, open_store
    store = open_store()
    store.create_run(RunRecord(run_id="r1", run_set="s1", scenario="t", server="m",
                               flavor="mariadb", version="10.11.19", variant="default",
                               target="local", host="h", started_at="2026-11-24T00:00:00"))
    assert main(["export", "r1", "-o", "/proc/nope/x.csv"]) == 9
    assert "-o /proc/nope/x.csv: cannot write it" in capsys.readouterr().err
    assert main(["report", "r1", "-o", "/proc/nope"]) == 9
    assert "-o /proc/nope: cannot write the report there" in capsys.readouterr().err


def test_a_metrics_port_in_use_is_named(tmp_path, results, capsys):
    f = tmp_path / "s.yaml"
    f.write_text(GOOD)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert main(["run", str(f), "--metrics-port", str(port)]) == 9
    err = capsys.readouterr().err
    assert f"--metrics-port {port}: cannot listen on 127.0.0.1:{port}" in err


# --- every input file is checked for what it is (issue 36, item 4) ----------------------------

def _fifo(tmp_path: Path, name: str) -> Path:
    f = tmp_path / name
    os.mkfifo(f)
    return f


def test_a_fifo_as_a_scenario_is_refused_not_waited_on(tmp_path):
    f = _fifo(tmp_path, "s.yaml")
    with pytest.raises(ScenarioError, match="a FIFO, not a regular file"):
        load_scenario(f)  # (a FIFO that nobody writes would hang a plain open)


@pytest.mark.parametrize("target, why", [("/dev/zero", "a character device"),
                                         ("fifo", "a FIFO"), ("dir", "a directory")])
def test_side_load_files_and_logs_that_are_not_regular_files(tmp_path, target, why):
    if target == "fifo":
        _fifo(tmp_path, "fifo")
    if target == "dir":
        (tmp_path / "dir").mkdir()
    path = target if target.startswith("/") else str(tmp_path / target)
    text = EXTERNAL_FREE % {"path": path}
    f = tmp_path / "s.yaml"
    f.write_text(text)
    with pytest.raises(ScenarioError) as e:
        load_scenario(f)
    assert [p for p in e.value.problems if "side_loads[0] (q).file: sql file" in p
            and f"{why}, not a regular file" in p], e.value.problems
    assert [p for p in e.value.problems if "workload.log: input file" in p
            and f"{why}, not a regular file" in p], e.value.problems


EXTERNAL_FREE = """\
name: files
dataset: {kind: sysbench, tables: 1, table_size: 100}
workload: {kind: replay, database: sbtest, log: %(path)s, read_only: true}
side_loads:
  - {kind: sql, name: q, start: 1, file: %(path)s}
"""


def test_a_device_is_read_by_a_backup_split_only_up_to_a_size(tmp_path):
    f = tmp_path / "s.yaml"
    base = ("name: b\ndataset: {tables: 1, table_size: 100}\nworkload: {test: oltp_read_only}\n"
            "side_loads:\n"
            "  - {kind: backup_split, name: b, start: 1, file: /dev/zero%s}\n")
    f.write_text(base % ", size: 4M")
    load_scenario(f)  # /dev/zero, 4 MB of it: the published experiment's stand-in
    f.write_text(base % "")
    with pytest.raises(ScenarioError, match="a device is read only up to a 'size'"):
        load_scenario(f)


def test_a_sql_file_over_its_limit_is_refused_with_its_size(tmp_path):
    from harness.inputs import inputfile
    big = tmp_path / "big.sql"
    with big.open("wb") as out:
        out.truncate(inputfile.LIMITS["sql file"] + 1)  # sparse: no disk used
    with pytest.raises(inputfile.InputFileError, match="64.0 MiB, more than the 64.0 MiB"):
        inputfile.read_text(big, "sql file")


def test_a_huge_statement_in_a_log_is_skipped_in_bounded_memory(tmp_path):
    """A slow log whose one statement is larger than MAX_STATEMENT: counted, skipped,
    and the reader never holds it whole (the line is read in bounded pieces)."""
    import tracemalloc

    from harness.workloads import slowlog
    log = tmp_path / "slow.log"
    n = 32 * (1 << 20)
    with log.open("wb") as out:
        out.write(b"# Time: 2026-11-26T10:00:00.000001Z\n# User@Host: a[a] @ localhost []"
                  b"  Id: 7\n# Query_time: 0.1  Lock_time: 0.0 Rows_sent: 1"
                  b"  Rows_examined: 1\nSET timestamp=1764151200;\nSELECT '")
        out.write(b"x" * n)
        out.write(b"';\n# Time: 2026-11-26T10:00:01.000001Z\n# User@Host: a[a] @ localhost"
                  b" []  Id: 7\n# Query_time: 0.1  Lock_time: 0.0 Rows_sent: 1"
                  b"  Rows_examined: 1\nSET timestamp=1764151201;\nSELECT 2;\n")
    old = slowlog.MAX_STATEMENT
    slowlog.MAX_STATEMENT = 1 << 20
    try:
        tracemalloc.start()
        reader = slowlog.SlowLog(log)
        got = [e.sql for e in reader]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        slowlog.MAX_STATEMENT = old
    assert got == ["SELECT 2"]
    assert reader.skipped == {slowlog.TOO_LONG: 1}
    assert peak < 8 * (1 << 20), f"{peak >> 10} KiB at the peak, for a 32 MiB statement"


@pytest.mark.parametrize("url, secret", [
    ("mysql+pymysql://bench:s3cr@t/x@127.0.0.1:1/results", "s3cr@t/x"),  # unencoded @ and /
    ("mysql+pymysql://bench@127.0.0.1:1/results?password=hunter2&charset=utf8", "hunter2"),
    ("mysql+pymysql://bench:p%40ss@127.0.0.1:1/results", "p@ss"),
    ("mysql+pymysql://bench:pw@@@[bad", "pw@@"),  # SQLAlchemy cannot parse it at all
    ("nosuchdialect://bench:topsecret@127.0.0.1/results", "topsecret"),
])
def test_a_store_password_is_never_shown_however_it_is_written(url, secret, capsys):
    """The store URL as a DBA might mistype it: whatever fails (parse, dialect, connect),
    neither the message nor anything printed holds the password."""
    from harness.store import url as store_url
    assert secret not in store_url.masked(url) and "***" in store_url.masked(url)
    code = main(["runs", "--results", url])
    out = capsys.readouterr()
    assert code != 0
    for part in {secret, secret.replace("@", "%40")}:
        assert part not in out.err + out.out, out.err


def test_a_replays_log_is_read_when_the_scenario_loads(tmp_path):
    """harness validate (and run, before any server is set up) reads the capture as the
    replay will: a file that is not a log, or a log without a statement, is refused
    naming the workload's field; a real capture loads."""
    from pathlib import Path

    data = Path(__file__).parent.parent / "data"
    f = tmp_path / "s.yaml"
    f.write_text("name: r\ndataset: {kind: sysbench, tables: 1, table_size: 100}\n"
                 "workload: {kind: replay, database: sbtest, log: captured.log}\n")
    (tmp_path / "captured.log").write_text("[mysqld]\nport = 3306\n")
    with pytest.raises(ScenarioError, match=r"workload: .*captured.log: not a slow query log"):
        load_scenario(f)
    banner = (data / "slowlog-mysql-9.7.log").read_bytes().splitlines(keepends=True)[:3]
    (tmp_path / "captured.log").write_bytes(b"".join(banner))  # restarted, nothing ran
    with pytest.raises(ScenarioError, match=r"workload: captured.log: no statement in it"):
        load_scenario(f)
    (tmp_path / "captured.log").write_bytes((data / "slowlog-mysql-9.7.log").read_bytes())
    assert load_scenario(f).model.workload.log == "captured.log"


def test_validate_says_what_a_capture_holds_and_exits_8_on_one_it_refuses(tmp_path, capsys):
    from pathlib import Path

    from harness.cli import main
    from harness.workloads.slowlog import SlowLog

    data = Path(__file__).parent.parent / "data"
    f = tmp_path / "s.yaml"
    f.write_text("name: r\nservers: [mariadb-10.11]\n"
                 "dataset: {kind: sysbench, tables: 1, table_size: 100}\n"
                 "workload: {kind: replay, database: sbtest, log: captured.log}\n")
    log = tmp_path / "captured.log"
    log.write_bytes((data / "slowlog-orm-mariadb-10.11.log").read_bytes())
    entries = list(SlowLog(log))
    statements = sum(not e.admin for e in entries)
    assert main(["validate", str(f)]) == 0
    out = capsys.readouterr().out
    assert (f"  workload: captured.log (SlowLog): {statements} statements and "
            f"{len(entries) - statements} administrator commands in "
            f"{len({e.session for e in entries})} sessions, ") in out, out
    log.write_bytes(log.read_bytes().replace(b"\t", b"    ")[:2000].replace(b"#", b""))
    assert main(["validate", str(f)]) == 8
    assert "workload: captured.log" in capsys.readouterr().err


@pytest.mark.parametrize("url, words", [
    ("sqlite:///{d}/h.db?timeout=30", "with no query options"),
    ("sqlite:///file:{d}/h.db?mode=memory&uri=true", "with no query options"),
    ("mysql+pymysql://bench:pw@127.0.0.1:1/results?charset=latin1", "speaks utf8mb4"),
    ("mysql+pymysql://bench:pw@127.0.0.1:1/results?ssl_key=/nonexistent",
     "ssl_key: /nonexistent is not a readable file"),
    ("mysql+pymysql://bench:pw@127.0.0.1:1/results?init_command=SET%20GLOBAL%20x%3D1",
     "query option 'init_command' is not one the harness passes"),
])
def test_a_store_url_takes_only_the_options_its_driver_is_given(url, words, tmp_path, capsys):
    """Query options are an allow-list per driver: SQLite's would make a second file (and
    leave the real one 0644) or a database that vanishes with the process; a driver's
    unknown keyword was a traceback. Each is refused, naming the option, nothing made."""
    url = url.format(d=tmp_path)
    assert main(["runs", "--results", url]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err, err
    assert not list(tmp_path.iterdir())


def test_a_webhook_that_trickles_is_cut_at_one_deadline_and_a_bad_url_is_not_shown(
        monkeypatch):
    """A server that answers a byte a second keeps every read inside its timeout: the
    post has one deadline for all of it. A URL with a space or a CRLF is refused without
    printing it (its path is the secret)."""
    import socket
    import threading
    import time

    from harness import notify
    from harness.errors import HarnessError, InputError

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    stop = threading.Event()

    def trickle() -> None:
        conn, _ = srv.accept()
        conn.recv(65536)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
        while not stop.wait(0.5):
            try:
                conn.sendall(b"x")
            except OSError:
                return
        conn.close()

    threading.Thread(target=trickle, daemon=True).start()
    monkeypatch.setattr(notify, "TOTAL_S", 2.0)
    t0 = time.monotonic()
    with pytest.raises(HarnessError, match="did not finish answering within 2 s"):
        notify.post(f"http://127.0.0.1:{srv.getsockname()[1]}/T0/s3cret", "x", {})
    assert time.monotonic() - t0 < 5
    stop.set()
    srv.close()
    for bad in ("https://hooks.example/T0/s3cret x", "https://hooks.example/T0/s3cret\r\nX: y"):
        monkeypatch.setenv(notify.ENV, bad)
        with pytest.raises(InputError) as e:
            notify.target(None)
        assert "s3cret" not in str(e.value)


def test_an_unknown_server_to_install_is_told_how_to_give_a_tarball(capsys):
    # servers install has no --basedir: it is told to install a vendor's file instead
    assert main(["servers", "install", "nope"]) == 2
    err = capsys.readouterr().err
    assert "unknown server 'nope'" in err and "'harness servers install FILE'" in err
    assert "give its path" in err and "one unpacked already: its folder" in err


def test_servers_without_an_action_lists_the_catalog(capsys):
    assert main(["servers", "--json"]) == 0
    bare = json.loads(capsys.readouterr().out)
    assert main(["servers", "list", "--json"]) == 0
    assert bare == json.loads(capsys.readouterr().out) and bare
