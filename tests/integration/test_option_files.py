"""A DBA's my.cnf as it is: a Debian-style file with includes, several groups,
comments, ``loose-`` options and the options a sandbox sets itself, read as each
build's mysqld reads it and run as such."""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pymysql
import pytest

from harness.errors import InputError, ProviderError
from harness.providers.local import LocalProvider, Sandbox
from harness.server import catalog, optionfile, osuser
from harness.server.mycnf import MANAGED, norm

from ..conftest import ROOT, harness

pytestmark = pytest.mark.integration

DEBIAN = ROOT / "tests/data/mycnf/debian/my.cnf"

# What each build takes from DEBIAN: [mysqld-5.7] only on 5.7, [mariadb] on every
# MariaDB, [mariadb-10.11] only on 10.11; later lines win.
IO_CAPACITY = {"mysql-5.6.24": "300", "mysql-5.7.29": "700", "mysql-9.7": "300",
               "mariadb-10.1.23": "800", "mariadb-10.2.11": "800", "mariadb-10.11": "800",
               "mariadb-11.8": "800"}
MAX_CONNECTIONS = {"mysql-5.7.29": "57", "mariadb-10.11": "111"}


@pytest.mark.parametrize("name", list(IO_CAPACITY))
def test_a_debian_my_cnf_is_read_as_each_build_reads_it(name):
    build = catalog.resolve(name)
    read = optionfile.read(DEBIAN, build)  # and mysqld --print-defaults agreed
    assert read.options["innodb_io_capacity"] == IO_CAPACITY[name]
    assert read.options["max_connections"] == MAX_CONNECTIONS.get(name, "90")
    assert read.options["innodb_buffer_pool_size"] == "96M"  # the comment after it is gone
    assert read.options["init_connect"] == "SET @x = 1 # kept: inside quotes"
    assert read.set_aside["skip-name-resolve"] is None  # a flag: the sandbox has it too
    assert "loose-innodb_no_such_option" in read.options
    assert {"datadir", "pid-file", "user", "bind-address"} <= set(read.set_aside)
    # [client-server] is a server group on MariaDB only
    assert ("port" in read.set_aside) == (build.flavor == "mariadb")
    assert [Path(f).name for f in read.files] == ["my.cnf", "50-server.cnf", "mysqld.cnf"]
    notes = "\n".join(read.notes)
    assert "conf.d/README (mysqld reads only *.cnf" in notes
    assert "[mysqld_safe]" in notes and ("[mysqld-5.7]" in notes) == (name != "mysql-5.7.29")


def test_what_mysqld_would_skip_or_refuse_is_refused_with_the_file(tmp_path):
    build = catalog.resolve("mysql-5.7.29")
    f = tmp_path / "my.cnf"
    f.write_text("[mysqld]\nmax_connections = 5\n!include missing.cnf\n")
    with pytest.raises(InputError, match=r"my.cnf, line 3: !include missing.cnf: no such"):
        optionfile.read(f, build)
    f.write_text("[mysqld]\n!includedir nowhere/\n")
    with pytest.raises(InputError, match=r"line 2: !includedir nowhere/: no such folder"):
        optionfile.read(f, build)
    f.write_text("max_connections = 5\n[mysqld]\n")
    with pytest.raises(InputError, match=r"my.cnf: not a my.cnf mysql-5.7.29 can read"):
        optionfile.read(f, build)
    (tmp_path / "inc.cnf").write_text("[mysqld]\nbad\\nname = 1\n")
    f.write_text("[mysqld]\n!include inc.cnf\n")
    with pytest.raises(InputError, match="only letters"):
        optionfile.read(f, build)


def test_an_include_fan_out_or_a_fifo_is_refused_before_any_tool_reads_it(tmp_path):
    build = catalog.resolve("mariadb-10.11")
    d, d2 = tmp_path / "conf.d", tmp_path / "more.d"
    d.mkdir()
    d2.mkdir()
    for n in range(9):  # nine files that each include nine: 90 reads
        (d / f"{n}.cnf").write_text(f"[mysqld]\n!includedir {d2}\n")
        (d2 / f"{n}.cnf").write_text("[mysqld]\nmax_connections = 9\n")
    f = tmp_path / "my.cnf"
    f.write_text(f"[mysqld]\n!includedir {d}\n")
    with pytest.raises(InputError, match=r"my.cnf: the includes read more than 64 files"):
        optionfile.read(f, build)
    (d / "0.cnf").write_text(f"[mysqld]\n!includedir {d}\n")  # a folder including itself
    with pytest.raises(InputError, match=r"includes nest deeper than 10 files"):
        optionfile.read(f, build)
    os.mkfifo(tmp_path / "fifo.cnf")
    f.write_text("[mysqld]\n!include fifo.cnf\n")
    with pytest.raises(InputError, match=r"fifo.cnf: a FIFO, not a regular file"):
        optionfile.read(f, build)  # not a hang
    (tmp_path / "big.cnf").write_text("[mysqld]\n" + "# padding\n" * 120_000)
    f.write_text("[mysqld]\n!include big.cnf\n")
    with pytest.raises(InputError, match=r"big.cnf: 1.1 MiB, more than the 1.0 MiB"):
        optionfile.read(f, build)


def test_every_option_a_sandbox_sets_is_known_as_managed(tmp_path):
    for name in ("mysql-9.7", "mariadb-11.8"):  # the builds with the most of them
        box = Sandbox(catalog.resolve(name), tmp_path / name)
        assert {norm(k) for k in box.base_options()} <= MANAGED


def _scenario(at: Path, my_cnf: Path) -> Path:
    """A two-second point-select run on MariaDB 10.11 whose one variant is ``my_cnf``."""
    at.write_text(f"""\
name: {at.stem}
servers: [mariadb-10.11]
variants:
  prod: {{my_cnf: {my_cnf}}}
dataset: {{tables: 1, table_size: 1000}}
workload: {{test: oltp_point_select, threads: 1, duration_s: 2}}
wakeup_probe: false
collectors: {{buffer_pool_index: {{enabled: false}}}}
""")
    return at


def test_a_debian_my_cnf_runs_with_the_managed_options_set_aside(tmp_path, results):
    f = _scenario(tmp_path / "deb.yaml", DEBIAN)
    out = harness("validate", str(f), check=True).stdout
    assert "variants.prod.my_cnf on mariadb-10.11: 5 options from 3 file(s); set aside" in out
    harness("run", str(f), check=True)
    (run,) = json.loads(harness("runs", "--json", check=True).stdout)["runs"]
    show = json.loads(harness("show", run["run_id"], "--json", check=True).stdout)
    server = json.loads((Path(show["artifacts"]) / "variables.json").read_text())
    assert server["innodb_io_capacity"] == "800" and server["max_connections"] == "111"
    assert server["innodb_buffer_pool_size"] == str(96 << 20)
    assert server["init_connect"] == "SET @x = 1 # kept: inside quotes"
    read = show["details"]["my_cnf"]
    assert read["set_aside"]["datadir"] == "/var/lib/mysql"
    assert server["datadir"] != "/var/lib/mysql/"  # the sandbox's own
    assert any("README" in n for n in read["notes"])


@pytest.fixture
def host_folder() -> Iterator[Path]:
    """A folder of the host that mysqld's account can reach and write, as a real
    server's log folder is (/var/log/mysql, the account's own); pytest's tmp_path is
    root's alone."""
    top = Path(tempfile.mkdtemp(prefix="harness-host-"))
    try:
        top.chmod(0o755)  # passable, as /var/log is
        folder = top / "log"
        folder.mkdir()
        osuser.hand_over(folder, osuser.mysqld_account(), 0o750)
        yield folder
    finally:
        shutil.rmtree(top)


def test_a_production_files_host_paths_stay_out_of_the_sandbox(tmp_path, host_folder,
                                                                results):
    """A production my.cnf's log paths are written in the sandbox's datadir (binary
    logging still on), its host folders set aside; the host's folder, which mysqld's
    account could write, gets nothing."""
    host = host_folder
    cnf = tmp_path / "prod.cnf"
    cnf.write_text(f"[mysqld]\nlog_bin = {host}/mysql-bin.log\nserver_id = 1\n"
                   f"slow_query_log = 1\nslow-query-log-file = {host}/slow.log\n"
                   f"innodb_undo_directory = {host}\n")
    ran = harness("run", str(_scenario(tmp_path / "prod.yaml", cnf)))
    assert sorted(p.name for p in host.iterdir()) == []
    assert ran.returncode == 0, ran.stdout + ran.stderr
    (run,) = json.loads(harness("runs", "--json", check=True).stdout)["runs"]
    show = json.loads(harness("show", run["run_id"], "--json", check=True).stdout)
    server = json.loads((Path(show["artifacts"]) / "variables.json").read_text())
    assert server["log_bin"] == "ON"
    assert server["log_bin_basename"] == server["datadir"] + "mysql-bin", server
    assert server["slow_query_log_file"] == "slow.log"  # the datadir's
    assert not server["innodb_undo_directory"].startswith(str(host)), server
    read = show["details"]["my_cnf"]
    assert read["set_aside"]["innodb_undo_directory"] == str(host), read
    assert f"log_bin = {host}/mysql-bin.log: written in the sandbox's datadir as " \
           "mysql-bin.log" in "\n".join(read["notes"]), read["notes"]


def test_a_host_path_no_rule_places_is_refused_before_anything_runs(tmp_path, host_folder):
    host = host_folder
    cnf = tmp_path / "prod.cnf"
    cnf.write_text(f"[mysqld]\nssl_key = {host}/server-key.pem\n")  # read: set aside
    p = harness("cnf", "check", str(cnf), "--server", "mariadb-10.11", "--json")
    assert p.returncode == 0 and f"ssl_key = {host}/server-key.pem: set aside, a path " \
        "of the host" in p.stdout, p.stdout + p.stderr
    (tmp_path / "conf.d").mkdir()  # the line in an included file: that file is named
    (tmp_path / "conf.d" / "words.cnf").write_text(
        f"[mysqld]\nft_stopword_file = {host}/stopwords.txt\n")
    # a line of the given file whose name starts the same is not the one named
    cnf.write_text("[mysqld]\nft_stopword_file_x = 1\n!includedir conf.d\n")
    p = harness("cnf", "check", str(cnf), "--server", "mariadb-10.11")
    assert p.returncode == 8, p.stdout + p.stderr
    assert f"{tmp_path}/conf.d/words.cnf (included by {cnf}): option ft_stopword_file = " \
           f"'{host}/stopwords.txt' names a path outside the sandbox" in p.stderr, p.stderr
    inline = tmp_path / "inline.yaml"
    inline.write_text("name: inline\ndataset: {tables: 1, table_size: 100}\n"
                      "workload: {test: oltp_read_only, duration_s: 1}\n"
                      f"mysqld: {{general_log_file: '{host}/../general.log'}}\n")
    p = harness("validate", str(inline))
    assert p.returncode == 8 and "option general_log_file" in p.stderr, p.stderr
    # and a sandbox is never started with one, whichever way it came
    box = Sandbox(catalog.resolve("mariadb-10.11"), tmp_path / "box")
    with pytest.raises(ProviderError, match="names a path outside the sandbox"):
        box.config_options({"innodb_data_file_path": f"ibdata1:12M;{host}/ibdata2:12M"})
    assert list(host.iterdir()) == []


def _listening(pid: int) -> list[str]:
    """The addresses:ports process ``pid`` listens on (TCP), as ss shows them."""
    out = subprocess.run(["ss", "-Hltnp"], capture_output=True, text=True, check=True)
    return [ln.split()[3] for ln in out.stdout.splitlines() if f"pid={pid}," in ln]


def test_a_production_files_listeners_stay_off_the_hosts_addresses(tmp_path):
    """MySQL 8.0.14+'s admin interface on an address of this host: taken as written, a
    sandbox listened there (seen: 192.0.2.2:33999 beside 127.0.0.1); set aside, it
    listens on 127.0.0.1 at its own port only, and cnf check still says 5.7 would not
    start with the lines."""
    address = next(a for a in _host_addresses() if not a.startswith("127."))
    cnf = tmp_path / "prod.cnf"
    cnf.write_text(f"[mysqld]\nadmin_address = {address}\nadmin_port = 33999\n"
                   "max_connections = 50\n")
    build = catalog.resolve("mysql-9.7")
    read = optionfile.read(cnf, build)
    assert set(read.set_aside) == {"admin_address", "admin_port"}, read
    box = LocalProvider().provision(build)
    try:
        box.start(read.options)
        assert box.pid is not None
        assert _listening(box.pid) == [f"127.0.0.1:{box.port}"]
    finally:
        box.destroy()
    with pytest.raises(ProviderError, match="a listener a sandbox does not open"):
        box.config_options({"admin_address": address})
    p = harness("cnf", "check", str(cnf), "--server", "mysql-5.7.29", "--json")
    assert p.returncode == 8, p.stdout + p.stderr
    not_taken = {v["option"]: v["note"] for v in json.loads(p.stdout)["servers"][
        "mysql-5.7.29"] if v["status"] != "accepted"}
    assert set(not_taken) == {"admin_address", "admin_port"}, not_taken
    assert all(n.startswith("added after mysql-5.7.29") for n in not_taken.values())


def test_a_name_spelled_another_way_gets_past_nothing(tmp_path, host_folder):
    """MariaDB takes an unambiguous prefix of a name, and a modifier before it, as the
    option: ``bind_addr = 0.0.0.0`` listened on every address, ``enable-skip-grant``
    let anyone in without a password. Each is judged as the option the build takes it
    for: set aside, refused or placed as the full name would be."""
    host = host_folder
    cnf = tmp_path / "prod.cnf"
    cnf.write_text(f"[mysqld]\nbind_addr = 0.0.0.0\nenable-skip-grant\nloose-extra-p = 33998\n"
                   f"slow_query_log = 1\nslow_query_log_f = {host}/slow.log\n"
                   "max_connections = 50\n")
    build = catalog.resolve("mariadb-10.11")
    read = optionfile.read(cnf, build)
    assert set(read.set_aside) == {"bind_addr", "enable-skip-grant", "loose-extra-p"}, read
    notes = "\n".join(read.notes)
    assert "bind_addr = 0.0.0.0: set aside, the sandbox sets it (bind_address)" in notes
    assert "enable-skip-grant: set aside, never given to a sandbox: it turns password " \
           "checks off" in notes, notes
    assert read.options["slow_query_log_f"] == "slow.log", read.options  # into the datadir
    box = LocalProvider().provision(build)
    try:
        box.start(read.options)
        assert box.pid is not None and _listening(box.pid) == [f"127.0.0.1:{box.port}"]
        with pytest.raises(pymysql.err.OperationalError) as e:
            pymysql.connect(host="127.0.0.1", port=box.port, user="root", password="")
        assert e.value.args[0] == 1045, e.value  # password checks on
        with box.endpoint.connect() as c, c.cursor() as cur:
            cur.execute("SELECT @@slow_query_log_file")
            assert cur.fetchone() == ("slow.log",)
    finally:
        box.destroy()
    assert list(host.iterdir()) == []
    for option, said in (({"bind_addr": "0.0.0.0"}, "'bind_addr' (bind_address, as "
                          "mariadb-10.11 reads it) is managed by the sandbox"),
                         ({"enable-skip-grant": None}, "a sandbox never starts with it"),
                         ({"skip_grant_tables": "ON"}, "a sandbox never starts with it")):
        with pytest.raises(ProviderError) as refused:
            box.config_options(option)
        assert said in str(refused.value), refused.value
    inline = tmp_path / "inline.yaml"
    inline.write_text("name: inline\ndataset: {tables: 1, table_size: 100}\n"
                      "workload: {test: oltp_read_only, duration_s: 1}\n"
                      "mysqld: {skip-grant: 'ON'}\n")
    p = harness("validate", str(inline))
    assert p.returncode == 8 and "mysqld.skip-grant (skip_grant_tables, as mariadb-10.11 " \
        "reads it): a sandbox never starts with it" in p.stderr, p.stdout + p.stderr


@pytest.mark.parametrize("server", ["mariadb-10.11", "mysql-5.7.29"])
def test_a_door_no_name_check_caught_is_shut_by_the_running_server(monkeypatch, server):
    """Should an option open a door under a name the checks before the start do not
    model (simulated: those checks off), the running server's own listeners and its
    answer to a login with no password stop the sandbox before anything uses it."""
    from harness.server import hostpaths
    monkeypatch.setattr(hostpaths, "sandbox_refusal", lambda *a: None)
    box = LocalProvider().provision(catalog.resolve(server))
    try:
        for option, said in ((("bind_address", "0.0.0.0"),
                              f"it listens on 0.0.0.0:{box.port}, where this sandbox "
                              f"listens on 127.0.0.1:{box.port} alone; stopped, not used"),
                             (("skip_grant_tables", None), "password checks are off")):
            with pytest.raises(ProviderError) as refused:
                box.start(dict([option]))
            assert said in str(refused.value), refused.value
            assert box.pid is None and not box.is_running
            with pytest.raises(OSError):  # nothing answers at its port any more
                socket.create_connection(("127.0.0.1", box.port), timeout=2).close()
        box.start({})  # the same sandbox, as it should be: up, and refusing the rest
        assert _listening(box.pid) == [f"127.0.0.1:{box.port}"]
    finally:
        box.destroy()


def _host_addresses() -> list[str]:
    out = subprocess.run(["ip", "-4", "-o", "addr", "show"], capture_output=True, text=True,
                         check=True)
    return [ln.split()[3].split("/")[0] for ln in out.stdout.splitlines()]


# A value that ends past the reader's 4 KB line buffer: MariaDB 10.11 and MySQL 5.7.29
# read its rest as an option of its own (skip-grant-tables: anyone in, no password).
LONG = "a" * 4075 + "      skip-grant-tables"


def test_a_value_past_the_readers_buffer_is_refused_before_anything_runs(tmp_path):
    f = tmp_path / "long.yaml"
    f.write_text("name: long\ndataset: {tables: 1, table_size: 100}\n"
                 "workload: {test: oltp_read_only, duration_s: 1}\n"
                 f"mysqld: {{init_connect: '{LONG}'}}\n")
    p = harness("validate", str(f))
    assert p.returncode == 8, p.stdout + p.stderr
    assert "option init_connect: its line would be 4113 bytes, more than the 2048" in p.stderr


@pytest.mark.parametrize("name", ["mariadb-10.11", "mysql-5.7.29"])
def test_a_my_cnf_the_server_reads_otherwise_is_never_started(name, monkeypatch):
    """Past the length limit (lifted here), the build's own reading of the rendered file
    is what is left: it finds the smuggled option, and mysqld is not started."""
    from harness.server import mycnf
    monkeypatch.setattr(mycnf, "MAX_LINE", 1 << 20)
    box = LocalProvider().provision(catalog.resolve(name))
    try:
        with pytest.raises(ProviderError, match="reads .*--skip-grant-tables") as e:
            box.start({"init_connect": LONG})
        assert "not started" in str(e.value)
        assert not box.is_running
        box.start({"init_connect": "SET @x = 1"})  # read back as written: it starts
        assert box.is_running
    finally:
        box.destroy()


SQL_MODE = """\
name: sqlmode
servers: [mysql-9.7, mariadb-10.11]
dataset: {tables: 1, table_size: 1000}
workload: {test: oltp_point_select, threads: 1, duration_s: 3}
variants:
  old: {mysqld: {sql_mode: "STRICT_TRANS_TABLES,NO_AUTO_CREATE_USER"}}
  new: {mysqld: {sql_mode: "STRICT_TRANS_TABLES"}}
"""


def test_a_value_mysqld_refuses_fails_validate_and_the_plan_before_anything_runs(
        tmp_path, results):
    """5.7's sql_mode NO_AUTO_CREATE_USER is gone from 8.0 on: 9.7's mysqld refuses to
    start with it (MariaDB still has the mode). validate names the option, the build and
    the server's words; compare refuses the same before a single run is stored, so a
    run set never goes on with one side missing and then judges."""
    f = tmp_path / "sqlmode.yaml"
    f.write_text(SQL_MODE)
    p = harness("validate", str(f))
    assert p.returncode == 8, p.stdout + p.stderr
    (line,) = [ln for ln in p.stderr.splitlines() if "would not start" in ln]
    assert line.strip().startswith("variants.old.mysqld.sql_mode: mysql-9.7 (mysql 9.7"), line
    assert "NO_AUTO_CREATE_USER" in line and "mariadb" not in line, line
    (tmp_path / "a.cnf").write_text("[mysqld]\nsql_mode = STRICT_TRANS_TABLES\n")
    (tmp_path / "b.cnf").write_text("[mysqld]\nsql_mode = STRICT_TRANS_TABLES,"
                                    "NO_AUTO_CREATE_USER\n")
    p = harness("compare", "--baseline", str(tmp_path / "a.cnf"), "--candidate",
                str(tmp_path / "b.cnf"), "--server", "mysql-9.7", "--repetitions", "4")
    assert p.returncode == 8, p.stdout + p.stderr
    assert "variants.candidate.my_cnf: sql_mode: mysql-9.7" in p.stderr, p.stderr
    assert "would not start with it" in p.stderr
    assert json.loads(harness("runs", "--json").stdout)["runs"] == [], "a run was stored"
