"""The DBA's one command: two my.cnf files to a verdict on each shipped workload, on the
embedded default server, no scenario written. The candidate changes a dynamic option
and adds two the baseline leaves to the default (one by a prefix, one in the [mariadb]
group), each taking effect at once (no cache or log size: those are compared by
restarts, tests/integration/test_compare_settle.py), so the switchback runs, the
baseline's windows setting the added options back to the server's own defaults."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.analysis.ab_verdict import Final
from harness.server import catalog
from harness.server.mycnf import option_defaults
from harness.store import open_store

from ..conftest import harness

pytestmark = pytest.mark.integration

BASELINE = "[mysqld]\ninnodb_flush_log_at_trx_commit = 1\n"
# As a DBA's file has them: a prefix MariaDB takes (innodb_flush_neighbor), an option in
# the [mariadb] group (which a reader of [mysqld] alone would miss).
CANDIDATE = ("[mysqld]\ninnodb_flush_log_at_trx_commit = 2\ninnodb_flush_neighbor = 0\n"
             "[mariadb]\ninnodb_io_capacity = 400\n")


# The default workload in make test; the others in make test-ab (in make test's parallel
# phase the three took 3.3 minutes more of its 13.5: each loads both CPUs flat out).
@pytest.mark.parametrize("workload", [
    "oltp_read_write", pytest.param("oltp_read_only", marks=pytest.mark.every_workload),
    pytest.param("tpcc", marks=pytest.mark.every_workload)])
def test_two_my_cnf_files_to_one_verdict(workload, tmp_path, results):
    (tmp_path / "current.cnf").write_text(BASELINE)
    (tmp_path / "new.cnf").write_text(CANDIDATE)
    p = harness("compare", "--baseline", str(tmp_path / "current.cnf"), "--candidate",
                str(tmp_path / "new.cnf"), "--workload", workload, "--windows", "24",
                "--window-s", "2", timeout=900)
    assert p.returncode in (0, 3, 4), p.stdout + p.stderr
    lines = p.stdout.strip().splitlines()
    # The question first: what new.cnf changes, as the server reads both files.
    assert lines[0].endswith("as mariadb-10.11 reads them: 3 option(s) differ"), lines[:4]
    assert lines[1:4] == ["  innodb_flush_log_at_trx_commit: 1 -> 2",
                          "  innodb_flush_neighbors: (not set: the server's default) -> 0",
                          "  innodb_io_capacity: (not set: the server's default) -> 400"]
    # ... and the one verdict last, the same in the saved JSON and the exit code.
    saved = next(ln for ln in lines if ln.startswith("saved: "))
    out = json.loads(Path(saved.split()[1].rstrip(",")).read_text())
    final = Final(out["verdict"], out["exit_code"], out["decided_by"])
    assert out["exit_code"] == p.returncode and lines[-2] == final.line(), (out, lines[-3:])
    (c,) = out["comparisons"]
    assert c["design"].startswith("switchback: 24 windows of 2 s"), c["design"]
    # windows are judged on the workload's per-second throughput (TPC-C's too)
    assert [m["metric"] for m in c["metrics"]][:2] == ["tps", "p95_ms"], c["metrics"]
    # The baseline's windows set innodb_io_capacity back to what the server had when
    # the run began: its default (as its mysqld --verbose --help prints it).
    (run,) = open_store().runs(run_set=out["run_set"])
    events = [e for e in open_store().events(run.run_id) if e.kind == "config"]
    a = [e.detail for e in events if e.name.endswith("-A")]
    b = [e.detail for e in events if e.name.endswith("-B")]
    assert len(a) == len(b) == 12 and all(e["ok"] for e in a + b), events
    default = option_defaults(catalog.resolve("mariadb-10.11"))["innodb_io_capacity"]
    assert {d["reset"]["innodb_io_capacity"] for d in a} == {default}, a
    assert {(d["set_global"]["innodb_io_capacity"], d["set_global"]["innodb_flush_neighbors"])
            for d in b} == {("400", "0")}, b  # as the files wrote them
    assert {d["set_global"]["innodb_flush_log_at_trx_commit"] for d in a} == {"1"}, a


def test_two_files_the_server_reads_the_same_are_said_at_once(tmp_path, results):
    # a comment, another order, a dash for an underscore and a prefix of the same
    # option: mysqld reads the same options, so nothing is run and the answer is given
    (tmp_path / "current.cnf").write_text(BASELINE + "innodb_io_capacity = 400\n")
    (tmp_path / "new.cnf").write_text("# tuned 2026-12-07\n[mysqld]\n"
                                      "innodb-io-capacity = 400\n" + BASELINE[9:])
    files = ["--baseline", str(tmp_path / "current.cnf"), "--candidate",
             str(tmp_path / "new.cnf")]
    p = harness("compare", *files, "--workload", "oltp_read_write", timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr[-2000:]
    assert "0 option(s) differ" in p.stdout
    assert "verdict: NOTHING TO COMPARE: mariadb-10.11 reads" in p.stdout
    assert "--aa runs them" in p.stdout
    assert not (results / "harness.db").exists() or not open_store().runs()  # none run
    for measure in ("time", "instructions"):
        p = harness("compare", *files, "--measure", measure, "--json", timeout=300)
        out = json.loads(p.stdout)
        assert p.returncode == 0 and out["verdict"] == "nothing to compare", out
        assert out["format"]["name"] == "mysql-harness compare" and out["comparisons"] == []
