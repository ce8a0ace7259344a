"""The Star Schema Benchmark on real servers: the same generated data loads on every
catalog server and the 13 queries return the same results there; flights are timed and
stored; findings that compare variants are judged and kept with the runs."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.server import catalog
from harness.store import open_store

from ..conftest import harness

pytestmark = pytest.mark.integration

SERVERS = [n for n in ("mariadb-10.11", "mysql-5.7.29", "mysql-5.6.24", "mariadb-10.1.23",
                       "mariadb-10.2.11") if catalog.is_installed(catalog.get_entry(n))]


def _scenario(tmp_path: Path, body: str) -> str:
    f = tmp_path / "ssb.yaml"
    f.write_text(body)
    return str(f)


def test_queries_return_the_same_results_on_every_server(tmp_path, results):
    assert len(SERVERS) >= 2, "make setup installs the catalog servers"
    f = _scenario(tmp_path, f"""\
name: ssb_agree
servers: [{", ".join(SERVERS)}]
dataset: {{kind: ssb, scale: 0.03, seed: 3}}
workload: {{kind: ssb, warm_runs: 1}}
collectors: {{buffer_pool_index: {{enabled: false}}}}
""")
    out = harness("run", f, "--json", check=True, timeout=900)
    runs = json.loads(out.stdout)["runs"]
    assert sorted(r["server"] for r in runs) == sorted(SERVERS)
    assert all(r["status"] == "ok" for r in runs), [r["error"] for r in runs]
    digests = {r["server"]: r["summary"]["measured"]["digests"] for r in runs}
    first = digests[SERVERS[0]]
    assert len(first) == 13
    for server, d in digests.items():
        assert d == first, f"{server} disagrees with {SERVERS[0]}: " + ", ".join(
            q for q in d if d[q] != first[q])
    s = runs[0]["summary"]
    m = s["measured"]
    assert [f["flight"] for f in m["flights"]] == ["cold", "run1"]
    rows = m["flights"][1]["queries"]
    # the drill-downs return rows at this scale (Q3.3/Q3.4 need more suppliers)
    assert all(rows[q]["rows"] > 0 for q in ("Q1.1", "Q2.1", "Q3.1", "Q3.2", "Q4.1", "Q4.3"))
    assert s["prepare"][0]["tables"]["customer"] == 900
    # each query and flight is stored as a series, labelled with its flight
    store = open_store()
    qs = store.series(runs[0]["run_id"], source="ssb", metric="query_seconds")
    assert len(qs) == 26 and {x.labels["flight"] for x in qs} == {"cold", "run1"}
    cold = m["cold"]
    assert cold["pool_pages_at_start"] < cold["pool_pages_total"] / 2
    assert cold["page_cache_dropped"] or cold["page_cache_why_not"]


def test_findings_compare_variants_and_are_stored(tmp_path, results):
    f = _scenario(tmp_path, """\
name: ssb_findings
servers: [mariadb-10.11]
variants:
  small: {mysqld: {innodb_buffer_pool_size: 6M}}
  large: {mysqld: {innodb_buffer_pool_size: 128M}}
dataset: {kind: ssb, scale: 0.03, seed: 3}
workload: {kind: ssb, warm_runs: 2, queries: [Q1.1, Q2.1, Q4.1]}
collectors: {buffer_pool_index: {enabled: false}}
expectations:
  - {name: the large pool reads nothing on warm flights and is faster,
     metric: flight_ratio, variant: large, baseline_variant: small, max: 0.9}
  - {name: an impossible bound, metric: warm_cold_ratio, variant: small, max: 0.0001}
""")
    out = harness("run", f, check=True, timeout=900)
    assert "server         variant  runs  buffer  cold" in out.stdout, out.stdout
    runs = {r["variant"]: r for r in json.loads(harness("runs", "--json").stdout)["runs"]}
    large = json.loads(harness("show", "--json", runs["large"]["run_id"]).stdout)
    small = json.loads(harness("show", "--json", runs["small"]["run_id"]).stdout)
    (ratio,) = large["expectations"]
    assert ratio["metric"] == "flight_ratio" and ratio["reproduced"] is True
    assert 0 < ratio["value"] < 0.9
    (bound,) = small["expectations"]
    assert bound["metric"] == "warm_cold_ratio" and bound["reproduced"] is False
    assert "NOT reproduced" in out.stdout
    warm = [x for x in large["summary"]["measured"]["flights"] if x["flight"] != "cold"]
    assert all(x["pages_read"] == 0 and x["hit_ratio"] == 1.0 for x in warm)
    assert all(x["pages_read"] > 0 for x in small["summary"]["measured"]["flights"])
    # the report: the same table from the store, and an HTML page with the flights
    rep = harness("report", large["run_set"], "-o", str(tmp_path / "rep"), check=True)
    assert "SSB flights of run set" in rep.stdout and "NOT reproduced" in rep.stdout
    page = (tmp_path / "rep" / "report.html").read_text()
    assert "SSB: seconds of each flight" in page and "SSB warm flight s" in page


def test_bad_ssb_scenarios_name_the_field(tmp_path):
    f = _scenario(tmp_path, """\
name: ssb_bad
dataset: {kind: ssb, scale: 0.01}
workload: {kind: ssb, queries: [Q1.1, Q9.9], warm_runs: 1}
expectations:
  - {name: x, metric: flight_ratio, variant: default, max: 1}
""")
    r = harness("validate", f)
    assert r.returncode == 8
    assert "line 3: workload.queries.1: Input should be 'Q1.1'" in r.stderr
    assert "flight_ratio needs 'baseline_variant'" in r.stderr
    f2 = _scenario(tmp_path, """\
name: ssb_bad2
dataset: {kind: ssb, database: ssb}
workload: {test: oltp_read_only, database: ssb}
""")
    r = harness("validate", f2)
    assert r.returncode == 8 and "holds a ssb dataset; a sysbench workload" in r.stderr


def test_ssb_flights_as_a_side_load_next_to_oltp(tmp_path, results):
    f = _scenario(tmp_path, """\
name: ssb_side
servers: [mariadb-10.11]
dataset:
  - {database: sbtest, tables: 1, table_size: 5000}
  - {kind: ssb, database: ssb, scale: 0.03, seed: 3}
workload: {test: oltp_read_only, threads: 1, duration_s: 10, options: {rate: 50}}
side_loads:
  - {name: report, kind: ssb, queries: [Q1.1, Q3.1, Q4.1], start: 2, repeat: 2}
wakeup_probe: false
collectors: {buffer_pool_index: {enabled: false}}
""")
    out = json.loads(harness("run", f, "--json", check=True, timeout=900).stdout)
    (run,) = out["runs"]
    (side,) = run["summary"]["side_loads"]
    assert side["status"] == "ok" and side["passes_ok"] == 2
    for p in side["passes"]:
        assert sorted(p["extra"]["query_seconds"]) == ["Q1.1", "Q3.1", "Q4.1"]
        assert all(s > 0 for s in p["extra"]["query_seconds"].values())
    phase = next(p for p in run["summary"]["phases"] if p["phase"] == "report")
    assert phase["main_intervals_inside"] > 0
    qs = open_store().series(run["run_id"], source="sideload", metric="query_seconds")
    assert sorted({x.labels["query"] for x in qs}) == ["Q1.1", "Q3.1", "Q4.1"]
