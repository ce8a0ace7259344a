"""External servers and the ownership guard: a mysqld the harness did not create is only
read from, unless the scenario marks it disposable and the command line repeats it.

The "foreign" server here is started by the test itself, the way a DBA's own instance
would be: its own datadir, a password user, no harness marker anywhere."""
from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pymysql
import pytest

from harness.providers.local import free_port
from harness.server import catalog
from harness.server.grants import account_writes

from ..conftest import harness, holding, sandbox

pytestmark = pytest.mark.integration

PASSWORD = "Ext3rnal-pw-9d41c7"  # planted: must appear nowhere the harness writes


@dataclass
class Foreign:
    port: int
    socket: str
    pid: int

    def conn(self, database: str | None = None) -> pymysql.connections.Connection:
        return pymysql.connect(unix_socket=self.socket, user="root", database=database,
                               autocommit=True)

    def scalar(self, sql: str) -> object:
        with self.conn() as c, c.cursor() as cur:
            cur.execute(sql)
            row = cur.fetchone()
            return row[0] if row else None


@pytest.fixture(scope="module")
def foreign(tmp_path_factory) -> Iterator[Foreign]:
    b = catalog.resolve("mariadb-10.11")
    d = Path(tmp_path_factory.mktemp("foreign"))
    datadir, sock, port = d / "data", str(d / "m.sock"), free_port()
    assert b.install_db is not None
    subprocess.run([str(b.install_db), "--no-defaults", f"--datadir={datadir}", "--user=root",
                    "--auth-root-authentication-method=normal", "--skip-test-db"],
                   check=True, capture_output=True, timeout=120)
    p = subprocess.Popen([str(b.mysqld), "--no-defaults", f"--datadir={datadir}",
                          f"--socket={sock}", f"--port={port}", "--bind-address=127.0.0.1",
                          "--user=root", "--innodb-buffer-pool-size=64M",
                          f"--log-error={d / 'error.log'}"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    f = Foreign(port, sock, p.pid)
    for _ in range(120):
        try:
            f.scalar("SELECT 1")
            break
        except pymysql.err.MySQLError:
            time.sleep(0.5)
    with f.conn() as c, c.cursor() as cur:
        cur.execute("CREATE USER 'bench'@'127.0.0.1' IDENTIFIED BY %s", (PASSWORD,))
        cur.execute("GRANT ALL ON *.* TO 'bench'@'127.0.0.1'")
        cur.execute("CREATE DATABASE app")
        # An account that only reads, and one whose writes come through a role.
        for user in ("reader", "roled"):
            cur.execute(f"CREATE USER '{user}'@'127.0.0.1' IDENTIFIED BY %s", (PASSWORD,))
            cur.execute(f"GRANT SELECT ON app.* TO '{user}'@'127.0.0.1'")
            cur.execute(f"GRANT PROCESS, REPLICATION CLIENT ON *.* TO '{user}'@'127.0.0.1'")
        cur.execute("CREATE ROLE app_writer")
        cur.execute("GRANT INSERT, UPDATE ON app.* TO app_writer")
        cur.execute("GRANT app_writer TO 'roled'@'127.0.0.1'")
        cur.execute("SET DEFAULT ROLE app_writer FOR 'roled'@'127.0.0.1'")
    # The DBA's own data, loaded without the harness.
    subprocess.run(["sysbench", "oltp_read_only", f"--mysql-socket={sock}", "--mysql-user=root",
                    "--mysql-db=app", "--tables=1", "--table-size=5000", "prepare"],
                   check=True, capture_output=True, timeout=120)
    try:
        yield f
    finally:
        p.terminate()
        p.wait(60)


def scenario(tmp_path: Path, port: int, extra: str = "", server: str = "",
             test: str = "oltp_read_only", database: str = "app", user: str = "bench") -> Path:
    f = tmp_path / "ext.yaml"
    f.write_text(f"""\
name: ext
servers:
  - {{host: 127.0.0.1, port: {port}, user: {user}, password_env: EXT_PW, label: staging{server}}}
dataset: {{database: {database}, tables: 1, table_size: 5000}}
workload: {{test: {test}, database: {database}, threads: 1, warmup_s: 1, duration_s: 4}}
wakeup_probe: false
""" + extra)
    return f


def checksum(f: Foreign, table: str) -> int:
    with f.conn() as c, c.cursor() as cur:
        cur.execute(f"CHECKSUM TABLE {table}")
        return int(cur.fetchone()[1])


ENV = {"EXT_PW": PASSWORD}


ENABLED = "SELECT COUNT(*) FROM information_schema.INNODB_METRICS WHERE ENABLED = 1"


def test_read_only_benchmark_leaves_the_server_as_it_was(foreign, tmp_path, results):
    before = (checksum(foreign, "app.sbtest1"), foreign.scalar("SELECT @@innodb_old_blocks_time"),
              foreign.scalar(ENABLED))
    extra = """\
side_loads:
  - {kind: sql, name: report, start: 1, query: "SELECT COUNT(*) FROM app.sbtest1; SHOW STATUS"}
"""
    p = harness("run", str(scenario(tmp_path, foreign.port, extra)), "--json", env=ENV)
    assert p.returncode == 0, p.stderr
    run = json.loads(p.stdout)["runs"][0]
    assert run["status"] == "ok" and run["summary"]["measured"]["tps_median"] > 0
    show = json.loads(harness("show", run["run_id"], "--json", check=True).stdout)
    assert show["target"] == "external" and show["server"] == "staging"
    assert show["host"] == f"127.0.0.1:{foreign.port}"
    assert show["details"]["server_state"]["external"] == "staging"
    assert show["details"]["server_state"]["account"].startswith(
        "may write (ALL PRIVILEGES ON *.*): read-only work runs in READ ONLY sessions")
    assert show["version"].startswith("10.11")
    # Same process (never restarted), same data, same settings.
    assert Path(f"/proc/{foreign.pid}").exists()
    assert int(foreign.scalar("SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS "
                              "WHERE VARIABLE_NAME = 'UPTIME'") or 0) > 5
    # The collectors left the counters as they were, and said what they did not read.
    assert (checksum(foreign, "app.sbtest1"), foreign.scalar("SELECT @@innodb_old_blocks_time"),
            foreign.scalar(ENABLED)) == before
    notes = " ".join(show["summary"]["collectors"]["notes"])
    assert "innodb_metrics:" in notes and "counters are disabled on this server" in notes
    (report,) = show["summary"]["side_loads"]
    assert report["status"] == "ok" and report["passes_ok"] == 1
    # The password reached sysbench and the collectors through 0600 files only.
    assert not holding(results, PASSWORD)


def test_a_read_only_account_is_checked_before_anything_runs(foreign, tmp_path, results):
    f = scenario(tmp_path, foreign.port, server=", read_only_account: true", user="reader")
    p = harness("run", str(f), "--json", env=ENV)
    assert p.returncode == 0, p.stderr
    (run,) = json.loads(p.stdout)["runs"]
    assert run["status"] == "ok" and run["summary"]["measured"]["tps_median"] > 0
    show = json.loads(harness("show", run["run_id"], "--json", check=True).stdout)
    assert show["details"]["server_state"]["account"] == "reads only (checked with SHOW GRANTS)"
    # The server agrees: that account cannot write.
    with pymysql.connect(host="127.0.0.1", port=foreign.port, user="reader",
                         password=PASSWORD) as c, c.cursor() as cur:
        with pytest.raises(pymysql.err.OperationalError, match="denied"):
            cur.execute("CREATE TABLE app.planted (a INT)")
        with pytest.raises(pymysql.err.OperationalError, match="denied"):
            cur.execute("DELETE FROM app.sbtest1")
    # Accounts that can write, under the same promise: refused, each grant named, before
    # anything runs (a role's privileges are not taken on trust either).
    for user, said in (("bench", "  ALL PRIVILEGES ON *.*"),
                       ("roled", "  role `app_writer` (its privileges are not read")):
        f = scenario(tmp_path, foreign.port, server=", read_only_account: true", user=user)
        p = harness("run", str(f), env=ENV)
        assert p.returncode == 2, p.stdout + p.stderr
        assert f"servers[0].read_only_account (staging): refusing - {user}@127.0.0.1:" \
            f"{foreign.port} may write:" in p.stderr and said in p.stderr, p.stderr
    assert len(json.loads(harness("runs", "--json", check=True).stdout)["runs"]) == 1


@pytest.mark.parametrize("name", ["mysql-5.6.24", "mysql-5.7.29", "mysql-9.7", "mariadb-11.8"])
def test_show_grants_is_read_as_each_server_writes_it(name):
    """Column lists, quoted names holding ' ON ', dynamic privileges, roles and partial
    revokes, as each server prints them; the server's own refusal as the check."""
    roles = name == "mysql-9.7" or name.startswith("mariadb")
    with sandbox(name, **({"partial_revokes": "ON"} if name == "mysql-9.7" else {})) as box:
        ep = box.endpoint
        root = pymysql.connect(user=ep.user, password=ep.password, unix_socket=ep.socket,
                               autocommit=True)
        with root, root.cursor() as cur:
            cur.execute("CREATE DATABASE `a ON b`")
            cur.execute("CREATE TABLE `a ON b`.t (`x ON y` INT, z INT)")
            users = {"ro": ["GRANT SELECT ON `a ON b`.* TO {u}",
                            "GRANT PROCESS, REPLICATION CLIENT ON *.* TO {u}",
                            "GRANT SELECT (`x ON y`) ON `a ON b`.t TO {u}"],
                     "col": ["GRANT SELECT (`x ON y`), UPDATE (z) ON `a ON b`.t TO {u}"],
                     "opt": ["GRANT SELECT ON `a ON b`.* TO {u} WITH GRANT OPTION"]}
            if name == "mysql-9.7":
                users["dyn"] = ["GRANT BACKUP_ADMIN, SHOW_ROUTINE ON *.* TO {u}"]
                users["rev"] = ["GRANT INSERT ON *.* TO {u}", "REVOKE INSERT ON mysql.* FROM {u}"]
            if roles:
                cur.execute("CREATE ROLE w")
                cur.execute("GRANT DELETE ON `a ON b`.* TO w")
                users["role"] = ["GRANT SELECT ON `a ON b`.* TO {u}", "GRANT w TO {u}"]
            for u, grants_ in users.items():
                cur.execute(f"CREATE USER '{u}'@'localhost' IDENTIFIED BY 'Pw-{u}-1x'")
                for g in grants_:
                    cur.execute(g.format(u=f"'{u}'@'localhost'"))
        found = {}
        for u in users:
            with pymysql.connect(user=u, password=f"Pw-{u}-1x", unix_socket=ep.socket) as c:
                found[u] = account_writes(c)
                if not found[u]:  # judged read-only: the server must refuse every write
                    with c.cursor() as cur, pytest.raises(pymysql.err.OperationalError):
                        cur.execute("UPDATE `a ON b`.t SET z = 1")
    assert found["ro"] == [], found
    assert found["col"] == ["UPDATE ON `a ON b`.`t`"], found
    assert found["opt"] == ["GRANT OPTION ON `a ON b`.*"], found
    if name == "mysql-9.7":
        assert found["dyn"] == ["BACKUP_ADMIN ON *.*"] and found["rev"] == ["INSERT ON *.*"]
    if roles:
        assert len(found["role"]) == 1 and found["role"][0].startswith("role `w`"), found


def test_every_destructive_step_is_refused_and_named(foreign, tmp_path, results):
    extra = """\
variants:
  obt0: {mysqld: {innodb_old_blocks_time: 0}}
  tuned: {my_cnf: tuned.cnf}
config_changes:
  - {start: 2, set_global: {innodb_old_blocks_time: 5}}
side_loads:
  - {kind: sql, name: cleanup, start: 1, query: "SELECT 1; DROP DATABASE fresh"}
  - {kind: mysqldump, name: dump, start: 1, database: fresh, options: [--flush-logs]}
"""
    # MariaDB reads [mariadb] too: the guard names what the server would read
    (tmp_path / "tuned.cnf").write_text("[mysqld]\ninnodb_io_capacity = 300\n"
                                        "[mariadb]\ntable_open_cache = 300\n")
    f = scenario(tmp_path, foreign.port, extra, test="oltp_read_write", database="fresh")
    p = harness("run", str(f), env=ENV)
    assert p.returncode == 2, p.stdout + p.stderr
    err = p.stderr
    assert "servers[0] (staging, bench@127.0.0.1" in err and "did not create" in err
    for step in ("dataset fresh: prepare", "workload.test: oltp_read_write writes",
                 "variants.obt0: SET GLOBAL innodb_old_blocks_time",
                 "variants.tuned: SET GLOBAL innodb_io_capacity, table_open_cache",
                 "config_changes[0]: SET GLOBAL innodb_old_blocks_time",
                 "side_loads[0] (cleanup).query: 'DROP DATABASE fresh'",
                 "side_loads[1] (dump).options: --flush-logs",
                 "--i-know-this-is-disposable"):
        assert step in err, err
    assert "Traceback" not in err
    # Refused before anything ran: nothing created, nothing changed, nothing stored.
    assert foreign.scalar("SELECT COUNT(*) FROM information_schema.SCHEMATA "
                          "WHERE SCHEMA_NAME = 'fresh'") == 0
    assert foreign.scalar("SELECT @@innodb_old_blocks_time") == 1000
    assert not (results / "runs").exists() or not any((results / "runs").iterdir())
    # disposable: true in the scenario alone is not enough; the flag alone neither.
    f = scenario(tmp_path, foreign.port, extra, server=", disposable: true",
                 test="oltp_read_write", database="fresh")
    p = harness("run", str(f), env=ENV)
    assert p.returncode == 2 and "the command line did not repeat it" in p.stderr, p.stderr
    f = scenario(tmp_path, foreign.port, extra, test="oltp_read_write", database="fresh")
    p = harness("run", str(f), "--i-know-this-is-disposable", env=ENV)
    assert p.returncode == 2 and "dataset fresh: prepare" in p.stderr, p.stderr
    # Never, even when disposable: cgroup limits on a mysqld the harness did not start.
    f = scenario(tmp_path, foreign.port, "host_profile: {read_iops: 100}\n",
                 server=", disposable: true")
    p = harness("run", str(f), "--i-know-this-is-disposable", env=ENV)
    assert p.returncode == 2 and "host_profile: cgroup limits" in p.stderr, p.stderr
    # A password in the scenario itself is refused without echoing it.
    f.write_text(f.read_text().replace("password_env: EXT_PW", f"password: {PASSWORD}"))
    p = harness("validate", str(f))
    assert p.returncode == 8 and "password_env" in p.stderr and PASSWORD not in p.stderr


def test_disposable_server_is_prepared_and_its_variables_set_back(foreign, tmp_path, results):
    extra = """\
variants:
  obt0: {mysqld: {innodb_old_blocks_time: 0}}
  obt500: {mysqld: {innodb_old_blocks_time: 500}}
"""
    f = scenario(tmp_path, foreign.port, extra, server=", disposable: true",
                 test="oltp_read_write", database="scratch")
    p = harness("run", str(f), "--json", "--i-know-this-is-disposable", env=ENV)
    assert p.returncode == 0, p.stderr
    runs = json.loads(p.stdout)["runs"]
    assert [r["status"] for r in runs] == ["ok", "ok"]
    seen = []
    for r in runs:
        show = json.loads(harness("show", r["run_id"], "--json", check=True).stdout)
        v = json.loads((Path(show["artifacts"]) / "variables.json").read_text())
        seen.append(v["innodb_old_blocks_time"])
        assert "SET GLOBAL innodb_old_blocks_time" in show["details"]["server_state"]["how"]
    assert seen == ["0", "500"]  # each variant ran with its value
    assert runs[0]["summary"]["prepare"][0]["rows"] == 5000
    with foreign.conn("scratch") as c, c.cursor() as cur:
        cur.execute("SELECT MAX(id) FROM sbtest1")
        assert cur.fetchone()[0] >= 5000
    # Let go: the variable is back, the server still the same process.
    assert foreign.scalar("SELECT @@innodb_old_blocks_time") == 1000
    assert Path(f"/proc/{foreign.pid}").exists()
    assert os.environ.get("EXT_PW") is None  # the test never leaked it into its own env
