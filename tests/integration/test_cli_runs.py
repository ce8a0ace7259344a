"""`harness run` end to end through the real CLI, on real servers and real sysbench."""
from __future__ import annotations

import csv
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest

from harness.collectors.buffer_pool_index import INDEX_METRIC
from harness.store import open_store

from ..conftest import CAPPED, ROOT, SEEDS, harness, mysql_store, seeds
from ..schemas import conform, export_columns

pytestmark = pytest.mark.integration

TINY = """\
name: {name}
servers: {servers}
mysqld:
  innodb_buffer_pool_size: 64M
variants:
{variants}
dataset: {{kind: sysbench, database: sbtest, tables: 2, table_size: 2000}}
workload:
  kind: sysbench
  test: oltp_read_only
  threads: 1
  warmup_s: {warmup}
  duration_s: {duration}{options}
wakeup_probe: {probe}
"""


def scenario(tmp_path, name="tiny", servers="[mariadb-10.11]", warmup=1, duration=3,
             variants="  default: {}", probe: bool = False) -> str:
    """A tiny scenario at a capped rate; the CPU wake-up probe (two sysbench runs, one
    beside a busy core) only where asked."""
    f = tmp_path / f"{name}.yaml"
    f.write_text(TINY.format(name=name, servers=servers, variants=variants, warmup=warmup,
                             duration=duration, options=CAPPED, probe=str(probe).lower()))
    return str(f)


def test_two_variants_by_two_servers(tmp_path, results):
    f = scenario(tmp_path, "matrix", servers="[mariadb-10.11, mysql-5.7.29]", warmup=2,
                 duration=6, probe=True, variants="  obt0: {mysqld: {innodb_old_blocks_time: 0}}\n"
                                       "  obt1000: {mysqld: {innodb_old_blocks_time: 1000}}")
    r = harness("run", f, check=True)
    assert "4/4 runs ok" in r.stdout
    assert "tps_median" in r.stdout and "latency_p95_ms" in r.stdout
    listed = json.loads(harness("runs", "--json", check=True).stdout)
    conform("runs", listed)
    runs = listed["runs"]
    assert len(runs) == 4 and list(listed)[0] == "format"
    assert {(x["server"], x["variant"]) for x in runs} == {
        (s, v) for s in ("mariadb-10.11", "mysql-5.7.29") for v in ("obt0", "obt1000")}
    for run in runs:
        assert run["status"] == "ok" and run["target"] == "local"
        for key in ("run_id", "scenario", "server", "flavor", "version", "variant", "target",
                    "status", "started_at"):
            assert run[key], key
        show = json.loads(harness("show", run["run_id"], "--json", check=True).stdout)
        conform("show", show)
        assert show["summary"]["measured"]["tps_median"] > 0
        assert show["summary"]["measured"]["latency_p95_ms"] > 0
        probe = show["details"]["wakeup_probe"]  # measured once per cell, kept per run
        assert probe["idle_tps"] > 0 and probe["one_core_busy_tps"] > 0
        assert show["details"]["cpu_keepalive"] is False
        assert show["flavor"] == ("mariadb" if run["server"] == "mariadb-10.11" else "mysql")
        assert show["version"].startswith("10.11." if show["flavor"] == "mariadb" else "5.7.29")
        variables = json.loads(open(os.path.join(show["artifacts"], "variables.json")).read())
        assert variables["innodb_old_blocks_time"] == run["variant"][3:]
        # warmup events, then >= 5 per-second tps samples after warmup in the export
        ev = {(e["kind"], e["name"]): e["t"] for e in show["events"]}
        warm_end = ev[("phase_end", "warmup")]
        assert warm_end - ev[("phase_start", "warmup")] == pytest.approx(2.0)
        out = harness("export", run["run_id"], "--format", "csv", check=True).stdout
        rows = list(csv.DictReader(io.StringIO(out)))
        assert out.splitlines()[0].split(",") == export_columns()  # as docs/schemas says
        tps = [r for r in rows if r["metric"] == "tps" and float(r["t"]) > warm_end + 0.01]
        assert len(tps) >= 5
        # wall-clock time: inside the run, as far apart as the run clock says
        wall = [datetime.fromisoformat(r["time"]) for r in tps]
        assert datetime.fromisoformat(run["started_at"]) < wall[0] < wall[-1] < \
            datetime.fromisoformat(run["ended_at"])
        assert (wall[-1] - wall[0]).total_seconds() == pytest.approx(
            float(tps[-1]["t"]) - float(tps[0]["t"]), abs=0.002)
        # the harness's own commit is a host fact, and show prints the probe readably
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"],
                              capture_output=True, text=True).stdout.strip()
        assert show["details"]["host"]["harness_commit"].split("+")[0] == head
        text = harness("show", run["run_id"], check=True).stdout
        assert f"wake-up probe: {probe['idle_tps']} tps idle" in text
        assert show["summary"]["samples"] == len(rows)
        for artifact in ("scenario.yaml", "my.cnf", "error.log", "sysbench.log", "host.json"):
            assert os.path.exists(os.path.join(show["artifacts"], artifact)), artifact
        # HARNESS_COLLECTORS_OFF=percona_toolkit (conftest): no fingerprint, and said so
        assert "percona_toolkit: off by HARNESS_COLLECTORS_OFF" in \
            show["summary"]["collectors"]["notes"]
        assert not list(Path(show["artifacts"]).glob("pt-*summary.txt"))


@pytest.mark.parametrize("server,flavor,version", [
    ("mysql-5.6.24", "mysql", "5.6.24"),
    ("mariadb-10.1.23", "mariadb", "10.1.23"),
    ("mariadb-10.2.11", "mariadb", "10.2.11"),
    *[pytest.param(s, s.split("-")[0], s.split("-")[1], marks=p.marks) for s, p in
      zip(SEEDS, seeds(), strict=True)],
])
def test_each_catalog_server_runs_sysbench(tmp_path, results, server, flavor, version):
    f = scenario(tmp_path)
    harness("run", f, "--server", server, check=True)
    (run,) = json.loads(harness("runs", "--json", check=True).stdout)["runs"]
    show = json.loads(harness("show", run["run_id"], "--json", check=True).stdout)
    assert (show["server"], show["flavor"], show["version"]) == (server, flavor, version)
    assert show["summary"]["measured"]["tps_median"] > 0 and show["summary"]["samples"] > 0


@pytest.mark.parametrize("server", seeds("percona-5.5.52", "mysql-5.5.55"))
def test_5_5_dumps_with_its_own_mysqldump_and_names_its_pool_pages(tmp_path, results, server):
    """The host's MariaDB 10.11 mysqldump asks a 5.5 server for columns it does not have
    and exits at once; the tarball's own runs (it needs no library path). 5.5 names a
    page's table as its file (sbtest/sbtest1): read as schema and table."""
    f = Path(scenario(tmp_path, servers=f"[{server}]", duration=4))
    f.write_text(f.read_text() + "side_loads:\n  - {name: dump, kind: mysqldump, database: "
                 "sbtest, output: dump.sql, start: warmup}\n")
    harness("run", str(f), check=True)
    (run,) = json.loads(harness("runs", "--json", check=True).stdout)["runs"]
    show = json.loads(harness("show", run["run_id"], "--json", check=True).stdout)
    (dump,) = show["summary"]["side_loads"]
    assert dump["status"] == "ok" and dump["rows"] == 4000, dump
    header = next(Path(show["artifacts"]).glob("dump-*")).read_text()[:300]
    assert f"Distrib {show['version']}" in header, header
    pages = open_store().series(run["run_id"], metric=INDEX_METRIC)
    assert {("sbtest", "sbtest1", "PRIMARY"), ("sbtest", "sbtest2", "k_2")} <= {
        (x.labels["schema"], x.labels["name"], x.labels["index"]) for x in pages}, pages


def test_options_unknown_to_a_version_are_rejected_before_start(tmp_path, results):
    f = scenario(tmp_path, servers="[mysql-5.7.29, mysql-5.6.24]",
                 variants="  chunked: {mysqld: {innodb_buffer_pool_chunk_size: 16M}}\n"
                          "  old: {mysqld: {innodb_additional_mem_pool_size: 8M}}")
    r = harness("run", f)
    assert r.returncode == 8, r.stderr
    assert r.stderr.startswith(f"error: {f}: 2 problem(s)")
    assert ("variants.chunked.mysqld.innodb_buffer_pool_chunk_size: unknown to mysql-5.6.24 "
            "(mysql 5.6.24)") in r.stderr
    assert ("variants.old.mysqld.innodb_additional_mem_pool_size: unknown to mysql-5.7.29 "
            "(mysql 5.7.29)") in r.stderr
    assert "Traceback" not in r.stderr
    assert not (results / "runs").exists()  # nothing was started
    # each option is fine on the version that has it
    ok = harness("validate", f)
    assert ok.returncode == 8  # validate checks installed builds too
    assert "innodb_buffer_pool_chunk_size: unknown to mysql-5.6.24" in ok.stderr


def test_buffer_pool_larger_than_the_host_is_bad_input(tmp_path, results):
    f = scenario(tmp_path, variants="  huge: {mysqld: {innodb_buffer_pool_size: 64T}}")
    r = harness("run", f)
    assert r.returncode == 8
    assert "variants.huge.mysqld.innodb_buffer_pool_size: 67108864 MB is larger than this " \
           "host's memory" in r.stderr
    assert not (results / "runs").exists()


@pytest.mark.parametrize("args,needle,code", [
    (["--server", "mysql-9.9"], "unknown server 'mysql-9.9'", 2),
    (["--variant", "nope"], "unknown variant(s) nope", 2),
    (["--basedir", "/nonexistent"], "--basedir /nonexistent: not a folder", 9),
])
def test_bad_command_line_input_is_usage_or_not_there(tmp_path, results, args, needle, code):
    """A name no catalog or scenario knows is usage (2); a folder not there, 9."""
    r = harness("run", scenario(tmp_path), *args)
    assert r.returncode == code
    assert needle in r.stderr and r.stderr.startswith("error: ")
    assert "Traceback" not in r.stderr


def test_failed_server_start_is_stored_and_next_cell_runs(tmp_path, results):
    # mysqld 10.11 refuses a system tablespace it cannot parse (a size it cannot parse,
    # 1Q, is refused by validate already): the run fails with the error log's words, and
    # the second variant still runs.
    f = scenario(tmp_path, variants="  broken: {mysqld: {innodb_data_file_path: nonsense}}\n"
                                    "  fine: {}")
    r = harness("run", f)
    assert r.returncode == 1
    runs = {x["variant"]: x for x in json.loads(harness("runs", "--json").stdout)["runs"]}
    assert runs["fine"]["status"] == "ok"
    assert runs["broken"]["status"] == "failed"
    show = json.loads(harness("show", runs["broken"]["run_id"], "--json").stdout)
    assert "exited during startup" in show["error"] and "error log" in show["error"]


def test_store_on_a_mysql_server(tmp_path, results):
    """The shared lab store: any SQLAlchemy URL, here a MariaDB sandbox of our own."""
    with mysql_store() as (url, _password):
        env = {"HARNESS_STORE": url}  # keeps the password off the command line
        harness("run", scenario(tmp_path), env=env, check=True)
        (run,) = json.loads(harness("runs", "--json", env=env, check=True).stdout)["runs"]
        assert run["status"] == "ok"
        store = open_store(url)
        assert store.engine.dialect.name == "mysql"
        (tps,) = store.series(run["run_id"], metric="tps")
        assert len(tps.t) >= 3 and (tps.v > 0).all()
        csv_out = harness("export", run["run_id"], env=env, check=True).stdout
        assert csv_out.count("\n") - 1 == store.sample_count(run["run_id"])
        assert store.check() == []
        assert harness("store", "check", env=env).returncode == 0
        # The run's files are in the shared store: another machine (here: this one with
        # the run's folder gone) reads them from there.
        shutil.rmtree(json.loads(harness("show", run["run_id"], "--json", env=env,
                                         check=True).stdout)["artifacts"])
        names = harness("artifacts", run["run_id"], env=env, check=True).stdout
        for name in ("my.cnf", "error.log", "variables.json", "sysbench.log", "host.json"):
            assert f"\n{name} " in names, name
        cnf = harness("artifacts", run["run_id"], "my.cnf", env=env, check=True).stdout
        assert "innodb_buffer_pool_size = 64M" in cnf
        harness("artifacts", run["run_id"], "-o", str(tmp_path / "got"), env=env, check=True)
        got = json.loads((tmp_path / "got" / "variables.json").read_text())
        assert got["innodb_buffer_pool_size"] == str(64 << 20)
        bad = harness("artifacts", run["run_id"], "nope.txt", env=env)
        assert bad.returncode == 9 and "has no file 'nope.txt'" in bad.stderr


def test_a_copied_results_folder_finds_its_own_run_folders(tmp_path, results):
    harness("run", scenario(tmp_path, "copied", warmup=0, duration=2), check=True)
    copy = tmp_path / "elsewhere"
    shutil.copytree(results, copy)
    shutil.rmtree(results)
    env = {"HARNESS_RESULTS": str(copy)}
    (run,) = json.loads(harness("runs", "--json", env=env, check=True).stdout)["runs"]
    show = json.loads(harness("show", run["run_id"], "--json", env=env, check=True).stdout)
    assert Path(show["artifacts"]) == copy / "runs" / run["run_id"]
    assert (Path(show["artifacts"]) / "sysbench.log").exists()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_stores_partial_results_and_cleans_up(tmp_path, results, sandbox_root, sig):
    f = scenario(tmp_path, duration=120)
    p = subprocess.Popen([sys.executable, "-m", "harness", "run", f], cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=dict(os.environ))
    store = None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # wait until samples are flowing
        time.sleep(1)
        if (results / "harness.db").exists():
            store = open_store(f"sqlite:///{results}/harness.db")
            runs = store.runs()
            if runs and runs[0].status == "running" and (
                    results / "runs" / runs[0].run_id / "sysbench.log").exists():
                log = (results / "runs" / runs[0].run_id / "sysbench.log").read_text()
                if log.count("tps:") >= 3:
                    break
    t0 = time.monotonic()
    p.send_signal(sig)
    out, err = p.communicate(timeout=60)
    assert time.monotonic() - t0 < 10
    assert p.returncode == 130, err
    assert store is not None
    (run,) = store.runs()
    assert run.status == "interrupted"
    assert "interrupted" in run.error
    assert store.sample_count(run.run_id) > 0  # samples taken before Ctrl-C are kept
    assert list(sandbox_root.iterdir()) == []


def test_keep_leaves_a_sandbox_to_inspect_until_it_is_removed(tmp_path, results):
    from harness.providers.local import mysqld_pid, remove_stale

    f = scenario(tmp_path, "keep", warmup=0, duration=2)
    assert harness("run", f, "--keep", "--target", "docker").returncode == 2
    out = harness("run", f, "--keep", check=True)
    listed = json.loads(harness("sandboxes", "list", "--json", check=True).stdout)
    conform("sandboxes", listed)
    (box,) = listed["sandboxes"]
    try:
        assert box["state"] == "running" and box["build"] == "mariadb-10.11"
        assert f"connect: {box['connect']}" in out.stderr + out.stdout
        # the harness has exited; its mysqld answers through the use script, with the
        # sandbox's password, and make clean-sandboxes leaves it alone
        r = subprocess.run([box["connect"], "-N", "-e",
                            "SELECT CURRENT_USER(), COUNT(*) FROM sbtest.sbtest1"],
                           capture_output=True, text=True, timeout=30)
        assert r.stdout.split() == ["harness@localhost", "2000"], r.stderr
        assert remove_stale() == []
        pid = box["pid"]
        assert harness("sandboxes", "stop", box["name"], check=True).stdout.strip() == \
            f"{box['name']}: stopped"
        (after,) = json.loads(harness("sandboxes", "list", "--json",
                                      check=True).stdout)["sandboxes"]
        assert after["state"] == "stopped" and mysqld_pid(Path(box["dir"])) is None
        assert not os.path.exists(f"/proc/{pid}/cmdline") or \
            box["dir"] not in open(f"/proc/{pid}/cmdline").read()
        bad = harness("sandboxes", "remove", "nope")
        assert bad.returncode == 9 and "no kept sandbox nope" in bad.stderr
    finally:
        harness("sandboxes", "remove", "--all", check=True)
    assert not Path(box["dir"]).exists()
    assert json.loads(harness("sandboxes", "list", "--json", check=True).stdout)[
        "sandboxes"] == []
