"""Today's servers (MySQL 9.7 and MariaDB 11.8 from Debian sid roots) beside the old ones:
a 5.7 production my.cnf checked and translated for them, a run with a side load and a
snapshot restore on each, and the upgrade experiment's fingerprints and verdicts."""
from __future__ import annotations

import json
import math
import re
import statistics
from pathlib import Path

import numpy as np
import pytest

from harness import workloads
from harness.analysis.compare import measured_from
from harness.store import open_store

from ..conftest import ROOT, harness

pytestmark = pytest.mark.integration

CNF57 = ROOT / "tests/data/mycnf/mysql-5.7-production.cnf"


def _check(*args: str) -> tuple[int, dict[str, dict[str, dict]]]:
    r = harness("cnf", "check", *args, "--json")
    assert r.returncode in (0, 8), r.stderr
    out = json.loads(r.stdout)
    return r.returncode, {server: {v["option"]: v for v in verdicts}
                          for server, verdicts in out["servers"].items()}


def test_cnf_check_of_a_57_my_cnf_on_97_and_118():
    rc, by = _check(str(CNF57), "--server", "mysql-5.7.29", "--server", "mysql-9.7",
                    "--server", "mariadb-11.8", "--from", "mysql-5.7.29")
    assert rc == 8  # runs on 5.7 as written, not on the others
    assert {v["status"] for v in by["mysql-5.7.29"].values()} == {"accepted"}
    on97 = by["mysql-9.7"]
    redo = on97["innodb_log_file_size"]
    assert (redo["status"], redo["new_name"], redo["new_value"]) == (
        "renamed", "innodb_redo_log_capacity", "128M")  # 2 x 64M, in the file's unit
    assert on97["expire_logs_days"]["new_value"] == 7 * 86400
    assert on97["log_warnings"]["new_name"] == "log_error_verbosity"
    for gone in ("query_cache_size", "query_cache_type", "innodb_file_format",
                 "innodb_large_prefix", "innodb_log_files_in_group"):
        assert on97[gone]["status"] == "removed", gone
    # 9.7's own --help says its default io_capacity is not 5.7's
    io = on97["innodb_io_capacity"]
    assert io["status"] == "default differs" and io["default"] != io["reference_default"]
    assert on97["innodb_buffer_pool_size"]["status"] == "accepted"
    # MariaDB 11.8 keeps the query cache and innodb_log_file_size, not the old formats ...
    on118 = by["mariadb-11.8"]
    assert on118["query_cache_size"]["status"] in ("accepted", "default differs")
    assert on118["innodb_log_file_size"]["status"] in ("accepted", "default differs")
    # ... which it starts with, saying the option does nothing now
    dead = on118["innodb_file_format"]
    assert dead["status"] == "ignored" and "does nothing" in dead["note"], dead


@pytest.mark.parametrize("written", [CNF57, ROOT / "scenarios/upgrade.cnf"])
def test_a_57_my_cnf_written_for_97_is_one_97_starts_with(written, tmp_path):
    out = tmp_path / "for-9.7.cnf"
    r = harness("cnf", "check", str(written), "--from", "mysql-5.7.29", "--to", "mysql-9.7",
                "-o", str(out))
    assert r.returncode == 8, r.stderr  # renamed and removed lines on 9.7
    text = out.read_text()
    taken = [ln for ln in text.splitlines() if ln and not ln.startswith(("#", "["))]
    assert "innodb_redo_log_capacity" in "".join(taken)
    assert not any(ln.startswith(("query_cache", "innodb_log_files_in_group",
                                  "expire_logs_days")) for ln in taken), taken
    assert re.search(r"^# query_cache_size = 0: removed on mysql-9\.7 \(8\.0: the query "
                     r"cache is gone", text, re.M), text
    assert re.search(r"^# not set here: \w+ is .* on mysql-9\.7, was .* on mysql-5\.7\.29$",
                     text, re.M)
    # 9.7's own mysqld reads the file it was given and starts with it (its refusals are
    # named, with the line's option; none is expected)
    from harness.server import catalog
    from harness.server.mycnf import judged
    said = judged(catalog.resolve("mysql-9.7"), taken)
    assert said.returncode == 0, said.stderr[-2000:]
    # and checked again on 9.7, every line is taken as written
    r = harness("cnf", "check", str(out), "--server", "mysql-9.7", "--json")
    statuses = {v["status"] for v in json.loads(r.stdout)["servers"]["mysql-9.7"]}
    assert r.returncode == 0 and statuses <= {"accepted", "default differs"}, (r.stdout,
                                                                                r.stderr)


def test_cnf_check_the_other_way_and_a_typo(tmp_path):
    f = tmp_path / "my97.cnf"
    f.write_text("[mysqld]\ninnodb_redo_log_capacity = 1G\nbinlog_expire_logs_seconds = 90000\n"
                 "innodb_bufer_pool_size = 1G\n")
    rc, by = _check(str(f), "--server", "mysql-5.7.29")
    assert rc == 8  # a name no build knows is a finding, never dropped
    on57 = by["mysql-5.7.29"]
    assert on57["innodb_redo_log_capacity"]["new_name"] == "innodb_log_file_size"
    assert on57["innodb_redo_log_capacity"]["new_value"] == "512M"  # 1G / 2, as written
    assert on57["binlog_expire_logs_seconds"]["new_value"] == 2  # whole days, rounded up
    assert on57["innodb_bufer_pool_size"]["status"] == "unknown"
    bad = harness("cnf", "check", str(tmp_path / "missing.cnf"), "--server", "mysql-9.7")
    assert bad.returncode == 9 and "missing.cnf" in bad.stderr and "Traceback" not in bad.stderr


SCENARIO = f"""\
name: current
servers: [mysql-9.7, mariadb-11.8]
translate: true
mysqld: {{innodb_buffer_pool_size: 64M}}
variants:
  prod57: {{my_cnf: {CNF57}}}
dataset: {{kind: sysbench, database: sbtest, tables: 2, table_size: 3000}}
workload: {{kind: sysbench, test: oltp_read_only, threads: 1, warmup_s: 1, duration_s: 5,
           options: {{rate: 50}}}}
side_loads:
  - name: dump
    kind: mysqldump
    database: sbtest
    output: dump.sql
    start: warmup
repetitions: 2
wakeup_probe: false
"""


def test_side_load_snapshot_and_translated_cnf_on_current_servers(tmp_path, results):
    f = tmp_path / "current.yaml"
    f.write_text(SCENARIO)
    harness("run", str(f), check=True)
    runs = json.loads(harness("runs", "--json", check=True).stdout)["runs"]
    assert sorted((r["server"], r["status"]) for r in runs) == [
        ("mariadb-11.8", "ok")] * 2 + [("mysql-9.7", "ok")] * 2
    for r in runs:
        show = json.loads(harness("show", r["run_id"], "--json", check=True).stdout)
        art = Path(show["artifacts"])
        server_vars = json.loads((art / "variables.json").read_text())
        changed = {t["option"]: t for t in show["details"]["cnf_translation"]}
        # 9.7 refuses it; 11.8 starts with it and says it does nothing: dropped either way
        assert changed["innodb_file_format"]["status"] == (
            "removed" if r["server"] == "mysql-9.7" else "ignored"), changed
        (dump,) = show["summary"]["side_loads"]
        assert dump["status"] == "ok" and dump["rows"] == 6000, dump
        header = next(art.glob("dump-*")).read_text()[:300]
        if r["server"] == "mysql-9.7":
            assert changed["innodb_log_file_size"]["new_name"] == "innodb_redo_log_capacity"
            assert server_vars["innodb_redo_log_capacity"] == str(128 << 20)
            assert server_vars["log_error_verbosity"] == "3"
            assert "Distrib 9.7" in header  # the server's own mysqldump, not the host's
        else:
            assert "innodb_log_file_size" not in changed
            assert server_vars["innodb_log_file_size"] == str(64 << 20)
            assert "MariaDB dump" in header
        assert server_vars["transaction_isolation"] == "READ-COMMITTED"
        assert server_vars["log_bin"] == "ON"
        how = show["details"]["server_state"]["how"]
        assert how == ("new sandbox, prepared, snapshot saved" if r["repetition"] == 1
                       else "snapshot restored, restarted"), how


UPGRADE = """\
name: upgrade_small
servers: [mysql-5.7.29, mysql-9.7]
baseline_server: mysql-5.7.29
translate: true
variants:
  upgrade_cnf: {my_cnf: %s}
dataset: {kind: sysbench, database: sbtest, tables: 2, table_size: 5000}
workload:
  kind: sysbench
  test: oltp_point_select
  threads: 2
  ramp: {threads: [2, 1], step_s: 4}
  warmup_s: 1
  duration_s: 4
repetitions: 2
cpu_keepalive: true
wakeup_probe: false
collectors: {buffer_pool_index: {enabled: false}}
expectations:
  - name: 9.7 at one thread against 5.7.29, within a factor of 4 either way
    metric: server_ratio
    server: mysql-9.7
    baseline_server: mysql-5.7.29
    threads: 1
    min: 0.25
    max: 4.0
  - name: 9.7's CPU per point select against 5.7.29's, within a factor of 4 either way
    metric: server_cpu_ratio
    server: mysql-9.7
    baseline_server: mysql-5.7.29
    threads: 1
    min: 0.25
    max: 4.0
"""


def test_upgrade_verdict_per_thread_count(tmp_path, results):
    f = tmp_path / "upgrade.yaml"
    f.write_text(UPGRADE % (ROOT / "scenarios/upgrade.cnf"))
    out = harness("run", str(f), check=True).stdout
    table = out[out.index("throughput per thread count against mysql-5.7.29"):]
    rows = [ln.split() for ln in table.splitlines()[2:6]]
    assert all(r[2] == "2" for r in rows), table  # two runs a server
    # threads 1 and 2, each server; the baseline has no ratio, 9.7 has one with its CI
    assert sorted((r[0], r[1]) for r in rows) == [("1", "mysql-5.7.29"), ("1", "mysql-9.7"),
                                                   ("2", "mysql-5.7.29"), ("2", "mysql-9.7")]
    listed = json.loads(harness("runs", "--json", check=True).stdout)["runs"]
    runs = {r["server"]: r for r in listed}
    show = json.loads(harness("show", runs["mysql-9.7"]["run_id"], "--json",
                              check=True).stdout)
    (x,) = [e for e in show["summary"]["expectations"] if e["metric"] == "server_ratio"]
    # The verdict follows the interval against [0.25, 4]: the runs of the two servers ran
    # at different moments of a busy suite, so which verdict it is is not the point here.
    lo, hi = x["ci95"]
    assert x["threads"] == 1 and lo <= x["value"] <= hi and lo > 0
    assert x["outcome"] == ("reproduced" if 0.25 <= lo and hi <= 4.0 else
                            "not reproduced" if hi < 0.25 or lo > 4.0 else "inconclusive"), x
    # the ratio: of the geometric means of each run's median one-thread second, each
    # step's first second left out, from the stored per-second series read here on
    # their own (the ramp summary's medians keep every second: with 4 s steps on a busy
    # machine they differ)
    store = open_store()

    def one_thread(run_id: str) -> float:
        (tps,), (k,) = workloads.throughput(store, run_id), workloads.threads(store, run_id)
        v, n = np.asarray(tps.v), np.asarray(k.v)
        first = np.r_[True, n[1:] != n[:-1]]
        return float(np.median(v[(n == 1) & ~first]))

    def geomean(server: str) -> float:
        return math.exp(statistics.fmean(math.log(one_thread(r["run_id"]))
                                         for r in listed if r["server"] == server))
    assert x["value"] == pytest.approx(geomean("mysql-9.7") / geomean("mysql-5.7.29"),
                                       rel=1e-3)
    # What moved per transaction, 9.7 against 5.7.29 over both runs a side: mysqld's
    # CPU per transaction, read here from the stored series (user + system time over
    # the measured part, over the transactions of the same seconds: the ramp's steps
    # and the hold together)
    def cpu_per_transaction(run_id: str) -> float:
        run = store.get_run(run_id)
        start, end = measured_from(store, run), run.summary.main_window[1]
        rate = 0.0
        for cpu in store.series(run_id, source="mysqld_process",
                                metric="harness_mysqld_cpu_seconds_total"):
            pts = [(t, v) for t, v in cpu.points() if start <= t <= end]
            rate += (pts[-1][1] - pts[0][1]) / (pts[-1][0] - pts[0][0])
        (tps,) = workloads.throughput(store, run_id)
        return rate / statistics.fmean(v for t, v in tps.points() if start <= t <= end)
    moved = out[out.index("mysql-9.7 against mysql-5.7.29, every step"):]
    said = re.search(r"mysqld CPU microseconds: (\S+) -> (\S+), x(\S+)", moved)
    assert said, moved
    cpu = {s: [cpu_per_transaction(r["run_id"]) for r in listed if r["server"] == s]
           for s in ("mysql-5.7.29", "mysql-9.7")}
    for server, printed in (("mysql-5.7.29", said[1]), ("mysql-9.7", said[2])):
        geometric = math.exp(statistics.fmean(map(math.log, cpu[server])))
        assert float(printed) == pytest.approx(1e6 * geometric, rel=2e-3), server
    # and judged at one thread: mysqld's CPU over the one-thread step (its first second
    # left out; the counters read at its edges) over its transactions, the ratio of
    # the runs' geometric means, with Welch's interval
    def cpu_at_one_thread(run_id: str) -> float:
        (tps,), (k,) = workloads.throughput(store, run_id), workloads.threads(store, run_id)
        t, v, n = np.asarray(tps.t), np.asarray(tps.v), np.asarray(k.v)
        first = np.r_[True, n[1:] != n[:-1]]
        (seconds,) = [np.flatnonzero((n == 1) & ~first)]  # one step at one thread
        begin, end = t[seconds[0]] - 1, t[seconds[-1]]
        used = sum(np.interp(end, s.t, s.v) - np.interp(begin, s.t, s.v)
                   for s in store.series(run_id, source="mysqld_process",
                                         metric="harness_mysqld_cpu_seconds_total"))
        return float(used / v[seconds].sum())
    one = {s: [cpu_at_one_thread(r["run_id"]) for r in listed if r["server"] == s]
           for s in ("mysql-5.7.29", "mysql-9.7")}
    (c,) = [e for e in show["summary"]["expectations"] if e["metric"] == "server_cpu_ratio"]
    assert c["threads"] == 1 and c["value"] == pytest.approx(math.exp(
        statistics.fmean(map(math.log, one["mysql-9.7"]))
        - statistics.fmean(map(math.log, one["mysql-5.7.29"]))), rel=1e-3)
    assert c["runs"] == 2 and c["ci95"][0] <= c["value"] <= c["ci95"][1], c
    assert "mysqld CPU per transaction at 1 thread(s), mysql-9.7 / mysql-5.7.29 = " in out
    # the report: the section, what moved and the figure
    rep = harness("report", show["run_set"], "-o", str(tmp_path / "rep"), check=True)
    page = (tmp_path / "rep" / "report.html").read_text()
    assert "Against mysql-5.7.29, per thread count" in page, rep.stdout
    assert "What moved per transaction: sysbench oltp_point_select, mysql-9.7" in page
    assert (tmp_path / "rep" / "per_threads.png").stat().st_size > 10_000


ONE_COMMAND = """\
name: upgrade-one-command
wakeup_probe: false
dataset: {tables: 1, table_size: 2000}
workload: {test: oltp_read_only, threads: 1, warmup_s: 1, duration_s: 3,
           options: {rate: 50}}
"""


def test_an_upgrade_in_one_command(tmp_path, results):
    """compare --baseline-server 5.7.29 --candidate-server 8.0.31 --cnf, the upgrade DBAs
    make: a DBA's 5.7 my.cnf on both builds (translated for Oracle's 8.0.31, said),
    their runs interleaved, each on a new sandbox, judged as one comparison of the two
    builds."""
    f = tmp_path / "upgrade.yaml"
    f.write_text(ONE_COMMAND)
    p = harness("compare", str(f), "--cnf", str(CNF57))
    assert p.returncode == 2 and "--cnf is the my.cnf of an upgrade" in p.stderr, p.stderr
    p = harness("compare", str(f), "--baseline-server", "mysql-9.7", "--candidate-server",
                "mysql-9.7")
    assert p.returncode == 2 and "are the same build (mysql-9.7)" in p.stderr, p.stderr
    p = harness("compare", str(f), "--baseline-server", "mysql-5.7.29", "--candidate-server",
                "mysql-8.0.31", "--cnf", str(CNF57), "--repetitions", "2", "--json",
                timeout=900)
    assert p.returncode == 4, p.stderr[-3000:]  # 2 runs a side: too few for a verdict
    out = json.loads(p.stdout)
    (c,) = out["comparisons"]
    assert (c["baseline"], c["candidate"], c["server"]) == (
        "mysql-5.7.29", "mysql-8.0.31", f"one my.cnf ({CNF57})"), c
    assert (len(c["runs_baseline"]), len(c["runs_candidate"])) == (2, 2)
    assert any(n.startswith("design: interleaved runs of mysql-5.7.29 and mysql-8.0.31")
               for n in out["notes"]), out["notes"]
    # the file as each build reads it: as written on 5.7, translated for 8.0.31 (which
    # still takes innodb_log_file_size, deprecated)
    assert re.search(r"translate: query_cache_size dropped", p.stderr), p.stderr[-3000:]
    assert re.search(r"translate: log_warnings -> log_error_verbosity = 3", p.stderr)
    assert not re.search(r"translate: innodb_log_file_size", p.stderr)
    runs = sorted(open_store().runs(run_set=out["run_set"]), key=lambda r: r.started_at)
    assert [r.server for r in runs] == ["mysql-5.7.29", "mysql-8.0.31", "mysql-8.0.31",
                                        "mysql-5.7.29"], "balanced order: A B, B A"
    assert {r.status for r in runs} == {"ok"}
