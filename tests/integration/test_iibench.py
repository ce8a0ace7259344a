"""The insert benchmark and sysbench concurrency ramps on real servers: rows/s per
interval and the change buffer's metrics are stored; a ramp stores each interval's
thread count."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.store import open_store

from ..conftest import harness

pytestmark = pytest.mark.integration


def _run(tmp_path: Path, body: str, runs: int = 1) -> Any:
    f = tmp_path / "s.yaml"
    f.write_text(body)
    out = harness("run", str(f), "--json", check=True, timeout=900)
    found = json.loads(out.stdout)["runs"]
    assert len(found) == runs and all(r["status"] == "ok" for r in found), found
    return found[0] if runs == 1 else found


def test_insert_benchmark_stores_rates_and_change_buffer_metrics(tmp_path, results):
    # Secondary indexes of 150,000 rows (~3 x 4 MB) do not fit a 5 MB pool: inserts
    # into them are buffered.
    run = _run(tmp_path, """\
name: iibench_small
servers: [mysql-5.7.29]
mysqld: {innodb_buffer_pool_size: 5M, innodb_change_buffering: all}
prepare_mysqld: {innodb_buffer_pool_size: 64M}
dataset: {kind: iibench, initial_rows: 150000}
workload: {kind: iibench, threads: 2, rows_per_commit: 500, max_rows: 60000,
           query_threads: 1, report_interval_s: 0.5}
collectors: {innodb_status: {interval_s: 0.5}, buffer_pool_index: {enabled: false}}
expectations:
  - {name: all rows in, metric: series, series: iibench/rows_total, stat: last, min: 60000}
  - {name: impossible, metric: series, series: iibench/rows_per_s, stat: max, max: 1}
  - {name: no such series, metric: series, series: iibench/nothing, min: 1}
""")
    s = run["summary"]
    m = s["measured"]
    # The preload ran with prepare_mysqld's pool; the measured part with the cell's.
    variables = json.loads((Path(json.loads(harness("show", run["run_id"], "--json",
                                                    check=True).stdout)["artifacts"])
                            / "variables.json").read_text())
    assert int(variables["innodb_buffer_pool_size"]) == 5 << 20
    verdicts = {x["name"]: x for x in s["expectations"]}
    assert verdicts["all rows in"]["reproduced"] and verdicts["all rows in"]["value"] == 60000
    assert not verdicts["impossible"]["reproduced"] and verdicts["impossible"]["value"] > 1
    assert verdicts["no such series"]["value"] is None
    assert "no stored series iibench/nothing" in verdicts["no such series"]["why_not"]
    assert m["rows"] == 60000 and m["batches"] == 120
    assert s["prepare"][0]["rows"] == 150000
    store = open_store()
    (total,) = store.series(run["run_id"], source="iibench", metric="rows_total")
    assert total.v[-1] == 60000 and np.all(np.diff(total.v) >= 0)
    (rate,) = store.series(run["run_id"], source="iibench", metric="rows_per_s")
    assert len(rate.v) == m["intervals"] and rate.v.max() > 0
    # rows/s x interval length adds up to the rows inserted
    dt = np.diff(np.concatenate([[s["workload_start_s"]], rate.t]))
    assert abs(float(np.sum(rate.v * dt)) - 60000) < 60000 * 0.05
    assert m["queries"] > 0
    assert store.series(run["run_id"], source="iibench", metric="queries_per_s")
    (ibuf,) = store.series(run["run_id"], source="innodb_status",
                           metric="mysql_engine_innodb_ibuf_size_pages")
    assert ibuf.v.max() > 1, "the change buffer never held anything"
    (merged,) = store.series(run["run_id"], source="innodb_status",
                             metric="mysql_engine_innodb_ibuf_merged_insert_total")
    assert merged.v[-1] > merged.v[0], "no buffered insert was merged"
    # INNODB_METRICS has its own view of the change buffer
    assert store.series(run["run_id"], source="innodb_metrics",
                        metric="mysql_info_schema_innodb_metrics_change_buffer_ibuf_size_total")


def test_insert_rate_limit_holds(tmp_path, results):
    runs = _run(tmp_path, """\
name: iibench_rate
servers: [mariadb-10.11]
variants:
  durable: {mysqld: {innodb_flush_log_at_trx_commit: 1}}
  relaxed: {mysqld: {innodb_flush_log_at_trx_commit: 2}}
dataset: {kind: iibench}
workload: {kind: iibench, threads: 2, rows_per_commit: 100, rate_rows_per_s: 2000,
           duration_s: 5}
collectors: {buffer_pool_index: {enabled: false}}
expectations:
  - name: the cap, not the flushing, sets the rate
    variant: relaxed
    baseline_variant: durable
    metric: series
    series: iibench/rows_per_s
    stat: mean
    min: 0.8
    max: 1.25
""", runs=2)
    for run in runs:
        rows = run["summary"]["measured"]["rows"]
        # the cap holds to the row (2000 rows/s: beside seven workers a 4000 cap's runs
        # reached 13,900 of their 20,000, the server's pace, not the cap's)
        assert 2000 * 5 * 0.8 <= rows <= 2000 * 5, rows
    relaxed = next(r for r in runs if r["variant"] == "relaxed")
    stored = json.loads(harness("show", relaxed["run_id"], "--json", check=True).stdout)
    (x,) = stored["summary"]["expectations"]  # judged when the run set ended
    # The verdict follows the interval against [0.8, 1.25]: 2 runs of 5 s a side give a
    # wide one on a busy machine ([0.73, 1.63] beside five other workers once), so which
    # of reproduced or inconclusive it is is not the point; never NOT reproduced.
    lo, hi = x["ci95"]
    assert x["baseline_variant"] == "durable" and 0.8 <= x["value"] <= 1.25, x
    assert x["outcome"] == ("reproduced" if 0.8 <= lo and hi <= 1.25 else "inconclusive"), x
    assert x["value"] == pytest.approx(x["variant_value"] / x["baseline_value"], rel=1e-3)
    assert 1500 < x["variant_value"] < 2200 and 1500 < x["baseline_value"] < 2200
    # A changed threshold judged on the stored series, without running again.
    f = tmp_path / "s.yaml"
    f.write_text(f.read_text().replace("max: 1.25", "max: 0.5"))
    out = harness("report", stored["run_set"], "--judge", str(f), "--no-plots",
                  check=True).stdout
    stored_part, judged = out.split("judged again")
    assert "the cap, not the flushing" in stored_part  # the stored verdict, as it was
    (line,) = [ln for ln in judged.splitlines() if "the cap, not the flushing" in ln]
    assert "relaxed rep 1" in line and "NOT reproduced" in line
    assert f"{x['value']:.3f}" in line


def test_sysbench_ramp_stores_the_thread_count_of_each_interval(tmp_path, results):
    run = _run(tmp_path, """\
name: ramp
servers: [mariadb-10.11]
dataset: {tables: 1, table_size: 5000}
workload: {test: oltp_read_only, threads: 3, duration_s: 3,
           ramp: {threads: [1, 2], step_s: 3}}
wakeup_probe: false
collectors: {buffer_pool_index: {enabled: false}}
side_loads:
  - {name: probe, kind: sql, query: SELECT 1, start: warmup}
expectations:
  - name: the main window is the hold, not the ramp
    metric: series
    series: sysbench/threads
    stat: median
    min: 3
""")
    store = open_store()
    (th,) = store.series(run["run_id"], source="sysbench", metric="threads")
    assert list(dict.fromkeys(th.v.astype(int).tolist())) == [1, 2, 3]
    assert [r["threads"] for r in run["summary"]["measured"]["ramp"]] == [1, 2]
    assert all(r["tps_median"] > 0 for r in run["summary"]["measured"]["ramp"])
    steps = [e for e in store.events(run["run_id"]) if e.kind == "ramp_step"]
    assert [e.name for e in steps] == ["threads=1", "threads=2"]
    # the summary is the hold's: 3 one-second intervals at 3 threads, or 2 when
    # sysbench ends before its last report (it does, one run in four here)
    assert run["summary"]["measured"]["intervals"] in (2, 3) and run["summary"]["threads"] == 3
    # "after: warmup" and the main window begin where the workload said: after the ramp.
    # The median, not the min: sysbench's last report may count threads already gone
    # (seen in CI: 2 of 3), while a window that took in the ramp has a median of 2 or less.
    (x,) = run["summary"]["expectations"]
    assert x["reproduced"] and x["value"] == 3, x
    (probe,) = run["summary"]["side_loads"]
    hold_start = run["summary"]["main_window"][0]
    assert probe["start_s"] >= hold_start >= steps[-1].t + 3 - 0.5
