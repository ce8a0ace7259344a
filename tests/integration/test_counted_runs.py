"""Counted runs on real servers under real callgrind: a scenario's cell counted and
stored as a run that regress follows; a night that counts each cell beside its tps;
TPC-C counted by transaction type, a known change found in the types it moves."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from harness.counted import pmu

from ..conftest import harness
from ..schemas import conform

pytestmark = pytest.mark.integration

DUMP = "side_loads: [{name: dump, kind: mysqldump, database: sbtest, start: 1}]\n"
POINT_SELECTS = """name: counted_point_selects
servers: [mariadb-10.11]
mysqld: {{innodb_buffer_pool_size: 128M}}
dataset: {{tables: 1, table_size: 10000}}
workload: {{test: oltp_point_select, threads: 1, warmup_s: 1, duration_s: 4}}
{extra}
"""


def _scenario(tmp_path: Path, name: str, extra: str = "") -> Path:
    f = tmp_path / f"{name}.yaml"
    f.write_text(POINT_SELECTS.replace("counted_point_selects", name).format(extra=extra))
    return f


def test_a_counted_run_is_stored_and_followed_by_regress(tmp_path, results):
    sc = _scenario(tmp_path, "counted_point_selects")
    p = harness("run", str(sc), "--measure", "instructions", "--events", "1000",
                "--windows", "2", "--json", timeout=900)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    made = json.loads(p.stdout)
    conform("run-set", made)
    (run,) = made["runs"]
    assert run["status"] == "ok" and run["server"] == "mariadb-10.11" and \
        made["measure"] == "instructions"
    m = run["summary"]["measured"]
    # a point select is tens of thousands of instructions (42,733 on 10.11 with
    # 10,000-event windows; more with 1,000, each window's login and end in it)
    assert 20_000 < m["instructions_per_transaction"] < 200_000, m
    assert 0 <= m["instructions_cv"] < 0.005 and m["counted_windows"] == 2
    assert "counted by callgrind" in run["summary"]["headline"]
    db = sqlite3.connect(results / "harness.db")
    (status, variant) = db.execute("SELECT status, variant FROM runs WHERE run_id = ?",
                                   (run["run_id"],)).fetchone()
    assert (status, variant) == ("ok", "default")
    # the store's listing shows its figure; regress follows it as a history of its own
    head, row = harness("runs", check=True).stdout.splitlines()[-2:]
    col = head.split().index("instructions")
    assert float(row.split()[col]) == pytest.approx(m["instructions_per_transaction"],
                                                    rel=1e-6)
    got = json.loads(harness("regress", "--json", check=True).stdout)
    conform("regress", got)
    (seen,) = [s for s in got["sensitivity"] if s["metric"] == "instructions"]
    assert seen["runs"] == 1 and seen["history"]["scenario"] == "counted_point_selects"


def test_a_counted_run_refuses_what_it_cannot_count_by_name(tmp_path, results):
    sc = _scenario(tmp_path, "counted_refusals")
    p = harness("run", str(sc), "--measure", "instructions", "--target", "docker")
    assert p.returncode == 2 and "not with --target docker" in p.stderr, p.stderr
    p = harness("run", str(sc), "--events", "10")
    assert p.returncode == 2 and "give --measure instructions" in p.stderr, p.stderr
    if not pmu.counts(pmu.hardware_counter()):  # a VM without a PMU: perf refused, so said
        p = harness("run", str(sc), "--measure", "instructions", "--counter", "perf")
        assert p.returncode == 2 and "the hardware counter does not count here" in p.stderr
    dump = tmp_path / "with_side_load.yaml"
    dump.write_text(sc.read_text() + DUMP)
    p = harness("run", str(dump), "--measure", "instructions")
    assert p.returncode == 2 and "it has side loads" in p.stderr, p.stderr


def test_the_hardware_counter_s_path_counts_each_window_of_a_native_mysqld(tmp_path,
                                                                          results):
    # No PMU here: the same perf stat -p path with a software event (task-clock, in
    # msec), which attaches, stops and reads as instructions:u does on lab hardware
    sc = _scenario(tmp_path, "counted_by_perf")
    p = harness("run", str(sc), "--measure", "instructions", "--counter", "perf",
                "--events", "2000", "--windows", "3", "--json",
                env={"HARNESS_PERF_EVENT": "task-clock"}, timeout=600)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    (run,) = json.loads(p.stdout)["runs"]
    m = run["summary"]["measured"]
    assert m["counter"] == "perf" and m["counted_windows"] == 3
    # mysqld's CPU nanoseconds a point select (all its threads), natively: 1 us to 1 ms
    assert 1_000 < m["instructions_per_transaction"] < 1_000_000, m
    assert m["instructions_cv"] > 0  # counted to the nanosecond, not rounded away
    assert "counted by perf, all of mysqld's threads" in run["summary"]["headline"]
    assert "valgrind" not in p.stderr  # natively: nothing started under callgrind


@pytest.mark.nightly
def test_a_night_counts_each_cell_beside_its_tps(tmp_path, results):
    counted = _scenario(tmp_path, "night_point_selects")
    timed_only = tmp_path / "night_dump.yaml"
    timed_only.write_text(counted.read_text().replace("night_point_selects", "night_dump")
                          + DUMP)
    p = harness("nightly", str(counted), str(timed_only), "--count-instructions",
                timeout=1500)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    assert f"{timed_only} is run timed only, not counted" in p.stderr
    db = sqlite3.connect(results / "harness.db")
    rows = db.execute("SELECT scenario, variant, status, json_extract(summary, "
                      "'$.measured.instructions_per_transaction'), json_extract(summary, "
                      "'$.measured.tps_median') FROM runs ORDER BY started_at").fetchall()
    by = [(s, v, st, i is not None, t is not None) for s, v, st, i, t in rows]
    # the cell's timed run, then its counted run: same scenario, server and variant
    assert by == [("night_point_selects", "default", "ok", False, True),
                  ("night_point_selects", "default", "ok", True, False),
                  ("night_dump", "default", "ok", False, True)], rows
    assert "instructions" in p.stdout + p.stderr  # regress read both histories


@pytest.mark.nightly
def test_tpcc_is_counted_by_transaction_type(tmp_path, results):
    # performance_schema costs every statement of every type; static, so by restarts
    on = tmp_path / "ps_on.cnf"
    on.write_text("[mysqld]\nperformance_schema=ON\n")
    off = tmp_path / "ps_off.cnf"
    off.write_text("[mysqld]\nperformance_schema=OFF\n")
    p = harness("compare", "--baseline", str(on), "--candidate", str(off), "--workload",
                "tpcc", "--measure", "instructions", "--events", "50", "--json",
                timeout=1500)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    out = json.loads(p.stdout)
    assert out["verdict"] == "better" and out["ratio"] < 0.98, out["ratio"]
    assert out["test"] == "tpcc" and out["design"].startswith("restarts")
    types = {c["class"]: c for c in out["classes"]}
    assert set(types) == {"new_order", "payment", "order_status", "delivery",
                          "stock_level"}
    assert abs(sum(out["weights"].values()) - 1) < 1e-9
    # New-Order and Payment, most of the mix, each counted better on its own
    for t in ("new_order", "payment"):
        assert types[t]["verdict"] == "better" and types[t]["interval"][1] < 1, types[t]
    # each window: one connection a type, New-Orders as asked, the others by the mix
    judged = [w for w in out["windows"] if w["judged"]]
    assert {w["cls"] for w in judged} == set(types)
    assert {w["transactions"] for w in judged if w["cls"] == "new_order"} == {50}
    assert {w["transactions"] for w in judged if w["cls"] == "delivery"} == {5}
    page = (results / "reports" / out["run_set"] / "compare.html").read_text()
    assert "By transaction type" in page
