"""Collectors on real servers during real sysbench runs."""
from __future__ import annotations

import json
import re
import socket
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from prometheus_client.parser import text_string_to_metric_families

from harness.collectors import CollectorContext
from harness.collectors.global_status import GlobalStatus
from harness.providers.local import LocalProvider
from harness.server import catalog
from harness.server.mysql import connection
from harness.store import open_store

from ..conftest import ROOT, harness, seeds

pytestmark = pytest.mark.integration

SCENARIO = """\
name: collectors
servers: [{server}]
mysqld: {{innodb_buffer_pool_size: 32M}}
dataset: {{tables: 2, table_size: 30000}}
workload: {{test: oltp_read_write, threads: 2, warmup_s: 1, duration_s: {duration}}}
collectors:
  buffer_pool_index: {{interval_s: 2}}
wakeup_probe: false
cpu_keepalive: true
"""

EXPECTED = {  # collector -> a series it must store
    "global_status": "mysql_up",
    "innodb_metrics": "mysql_info_schema_innodb_metrics_recovery_log_lsn_checkpoint_age",
    "innodb_status": "mysql_engine_innodb_checkpoint_age",
    "buffer_pool_stats": "mysql_info_schema_innodb_buffer_pool_stats_database_pages",
    "buffer_pool_index": "mysql_info_schema_innodb_buffer_page_index_pages",
    "vmstat": "cs",
    "node_vmstat": "node_vmstat_pgfault",
    "node_stat": "node_cpu_seconds_total",
    "meminfo": "node_memory_Dirty_bytes",
    "diskstats": "node_disk_written_bytes_total",
    "mysqld_process": "harness_mysqld_rss_bytes",
    "client_process": "harness_client_cpu_seconds_total",
}


def _nearest(t: np.ndarray, at: float) -> int:
    return int(np.argmin(np.abs(t - at)))


@pytest.mark.alone  # sampling rates on a quiet machine (and cpu_keepalive's spinners)
@pytest.mark.parametrize("server", [
    "mariadb-10.11", "mysql-9.7",
    # make test keeps the default server and the newest MySQL; the rest run nightly
    *(pytest.param(s, marks=pytest.mark.nightly)
      for s in ("mysql-5.7.29", "mysql-5.6.24", "mariadb-11.8"))])
def test_default_collectors_during_a_run(tmp_path, results, server):
    f = tmp_path / "c.yaml"
    f.write_text(SCENARIO.format(server=server, duration=10))
    harness("run", str(f), check=True, env={"HARNESS_COLLECTORS_OFF": ""})  # every default
    (run,) = json.loads(harness("runs", "--json", check=True).stdout)["runs"]
    show = json.loads(harness("show", run["run_id"], "--json", check=True).stdout)
    stats = show["summary"]["collectors"]
    assert not any("HARNESS_COLLECTORS_OFF" in n for n in stats["notes"]), stats["notes"]
    assert show["details"]["cpu_keepalive"] in ("pm_qos", "spinner")
    store = open_store(f"sqlite:///{results}/harness.db")
    rid = run["run_id"]

    def series_of(metric: str) -> list:
        # 5.7 types log_lsn_checkpoint_age as a status_counter: mysqld_exporter's rule
        # (followed here) then names it ..._total; 8.0.30's redo log moved it from the
        # recovery subsystem to log, as a value.
        names = [metric, metric + "_total", metric.replace("_recovery_", "_log_")]
        return next((s for s in (store.series(rid, metric=n) for n in names) if s), [])

    for collector, metric in EXPECTED.items():
        series = series_of(metric)
        assert series, f"{collector}: no {metric}"
        t = series[0].t
        interval = 2.0 if collector == "buffer_pool_index" else 1.0
        assert len(t) >= 12 / interval * 0.7, (collector, len(t))
        gaps = np.diff(t)
        assert statistics.median(gaps) == pytest.approx(interval, rel=0.1), collector
        if collector in stats:
            assert stats[collector]["failures"] == 0, stats[collector]

    # checkpoint age: the status parser and INNODB_METRICS agree on the same ticks. The two
    # queries run a few ms apart, so a checkpoint can fall between them now and then.
    (st,) = store.series(rid, metric="mysql_engine_innodb_checkpoint_age")
    (im,) = series_of(EXPECTED["innodb_metrics"])
    diffs = []
    for i, at in enumerate(st.t):
        j = _nearest(im.t, at)
        if abs(im.t[j] - at) < 0.1 and st.v[i] > 0:
            diffs.append(abs(im.v[j] - st.v[i]) / st.v[i])
    assert len(diffs) >= 8, diffs
    # (13 of 15 agreed in one run alone on this machine: two checkpoints fell between)
    assert sum(d < 0.05 for d in diffs) >= 0.8 * len(diffs), diffs

    # per-index pages add up to the pool's data pages, in the closing samples taken after
    # the load stopped (under load, the walk and the pool move while it runs)
    idx = store.series(rid, metric=EXPECTED["buffer_pool_index"])
    (pool,) = store.series(rid, metric=EXPECTED["buffer_pool_stats"])
    last = max(s.t[-1] for s in idx)
    total = sum(s.v[-1] for s in idx if s.t[-1] == last)
    assert total == pytest.approx(pool.v[-1], rel=0.05), (total, pool.v[-1])
    sb = [s for s in idx if s.labels["schema"] == "sbtest" and s.labels["index"] == "PRIMARY"]
    assert {s.labels["name"] for s in sb} == {"sbtest1", "sbtest2"}

    # the client's CPU: sysbench's own, growing while it runs; never the server's
    clients = {x.labels["program"]: x for x in series_of(EXPECTED["client_process"])}
    assert not {"mysqld", "mariadbd"} & set(clients), set(clients)
    assert clients["sysbench"].v[-1] - clients["sysbench"].v[0] > 0.1, clients["sysbench"].v

    # collector cost is recorded, and sampling is on time
    dur = store.series(rid, metric="harness_collector_duration_seconds")
    assert {s.labels["collector"] for s in dur} >= set(EXPECTED) - {"vmstat"}
    assert stats["global_status"]["lateness_ms_p99"] < 200
    artifacts = show["artifacts"]
    for name in ("variables-start.json", "vmstat.log", "pt-summary.txt",
                 "pt-mysql-summary.txt"):
        assert (tmp_path / artifacts / name).exists(), name
    assert "Percona Toolkit MySQL Summary Report" in (
        tmp_path / artifacts / "pt-mysql-summary.txt").read_text()


def test_killed_collector_connection_is_recorded_and_sampling_goes_on():
    box = LocalProvider().provision(catalog.resolve("mariadb-10.11"))
    samples: list[tuple[float, str]] = []
    events: list[tuple[str, str, dict]] = []
    t0 = time.monotonic()
    try:
        box.start()
        ctx = CollectorContext(endpoint=box.endpoint, flavor="mariadb", version=(10, 11),
                               clock=lambda: time.monotonic() - t0,
                               sample=lambda t, s, m, v, lab: samples.append((t, m)),
                               event=lambda t, k, n, d: events.append((k, n, d or {})),
                               artifacts=box.dir)
        with GlobalStatus(ctx, interval_s=0.2) as c:
            time.sleep(1.0)
            victim = c.connection_id
            with connection(box.endpoint) as conn, conn.cursor() as cur:
                cur.execute(f"KILL {victim}")
            killed_at = ctx.clock()
            time.sleep(1.5)
        assert c.failures >= 1
        assert c.connection_id != victim  # it reconnected
        assert any(k == "collector_error" and n == "global_status" for k, n, _ in events)
        ups = [t for t, m in samples if m == "mysql_up"]
        assert any(t > killed_at + 0.3 for t in ups)  # sampling went on after the kill
        oks = [t for t, m in samples if m == "harness_collector_success"]
        assert len(oks) >= 10
    finally:
        box.destroy()


USERSTAT = """\
name: userstat
servers: [{seed}, mariadb-10.11, mysql-5.5.55]
mysqld: {{innodb_buffer_pool_size: 32M}}
dataset: {{tables: 2, table_size: 10000}}
workload: {{test: oltp_point_select, threads: 2, warmup_s: 1, duration_s: 4}}
collectors: {{userstat: {{enabled: true}}, buffer_pool_index: {{enabled: false}}}}
wakeup_probe: false
"""


@pytest.mark.parametrize("seed", seeds("percona-5.5.52"))  # with mysql-5.5.55, a seed too
def test_userstat_counts_each_point_select_on_its_index(tmp_path, results, seed):
    """Percona Server 5.5 and MariaDB count the rows each index gave: a point select is
    one row of PRIMARY, so what the collector stored over the run equals the reads
    sysbench itself counted (its warmup and its measured part). Oracle MySQL has no
    user statistics: a note says so."""
    f = tmp_path / "u.yaml"
    f.write_text(USERSTAT.format(seed=seed))
    harness("run", str(f), check=True)
    store = open_store(f"sqlite:///{results}/harness.db")
    for run in json.loads(harness("runs", "--json", check=True).stdout)["runs"]:
        show = json.loads(harness("show", run["run_id"], "--json", check=True).stdout)
        notes = show["summary"]["collectors"]["notes"]
        if run["server"] == "mysql-5.5.55":
            assert "userstat: not collected: Oracle MySQL keeps no user statistics " \
                "(Percona Server and MariaDB do, with userstat)" in notes, notes
            continue
        assert not [n for n in notes if n.startswith("userstat")], notes
        log = (Path(show["artifacts"]) / "sysbench.log").read_text()
        reads = sum(int(n) for n in re.findall(r"^\s+read:\s+(\d+)$", log, re.M))
        (ticks,) = [x for x in store.series(run["run_id"], source="harness",
                                            metric="harness_collector_duration_seconds")
                    if x.labels["collector"] == "userstat"]
        first = ticks.points()[0][0]  # a table no one read yet is not listed at all
        counted = 0.0
        for x in store.series(run["run_id"], source="userstat",
                              metric="mysql_info_schema_index_statistics_rows_read_total"):
            if x.labels["schema"] == "sbtest":
                assert x.labels["index"] == "PRIMARY", x.labels
                pts = x.points()
                counted += pts[-1][1] - (pts[0][1] if pts[0][0] == first else 0.0)
        # (thousands of reads a second on a quiet machine; 8,466 in all beside a loaded suite)
        assert reads > 1_000 and counted == reads, (run["server"], counted, reads)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("server", ["mariadb-10.11", "mysql-9.7"])
def test_metrics_endpoint_during_a_real_run(tmp_path, results, server):
    f = tmp_path / "m.yaml"
    f.write_text(SCENARIO.format(server=server, duration=20))
    port = _free_port()
    p = subprocess.Popen([sys.executable, "-m", "harness", "run", str(f), "--metrics-port",
                          str(port)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    fams = {}
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            time.sleep(1)
            try:
                text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics",
                                              timeout=5).read().decode()
            except OSError:
                continue
            fams = {fam.name: fam for fam in text_string_to_metric_families(text)}
            if "harness_sysbench_tps" in fams and "node_cpu_seconds" in fams and \
                    "mysql_info_schema_innodb_buffer_page_index_pages" in fams:
                break
    finally:
        out, err = p.communicate(timeout=180)
    assert p.returncode == 0, err
    assert fams, "never scraped /metrics"
    up = fams["mysql_up"].samples[0]
    assert up.value == 1 and up.labels["server"] == server
    assert up.labels["variant"] == "default" and up.labels["workload"]
    assert fams["mysql_global_status_commands"].type == "counter"
    assert any(s.labels["command"] == "select" for s in fams["mysql_global_status_commands"]
               .samples)
    counters = [n for n, fam in fams.items()
                if n.startswith("mysql_info_schema_innodb_metrics_") and fam.type == "counter"]
    assert counters and all(s.name.endswith("_total") for n in counters
                            for s in fams[n].samples)
    assert "mysql_engine_innodb_checkpoint_age" in fams
    assert "mysql_engine_innodb_history_list_length" in fams
    idx = fams["mysql_info_schema_innodb_buffer_page_index_pages"].samples
    assert {"schema", "name", "index"} <= set(idx[0].labels)
    assert fams["harness_sysbench_tps"].samples[0].value > 0
    # the endpoint goes away with the run
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2)


def _prometheus(tmp_path, target_port: int) -> tuple[subprocess.Popen, str]:
    """Debian's Prometheus, scraping the harness's endpoint every second, as PMM does
    (honor_labels: the instance label is the server's, not the endpoint's)."""
    cfg = tmp_path / "prometheus.yml"
    cfg.write_text(f"""\
global: {{scrape_interval: 1s, evaluation_interval: 1s}}
scrape_configs:
  - job_name: harness
    honor_labels: true
    static_configs: [{{targets: ["127.0.0.1:{target_port}"]}}]
""")
    port = _free_port()
    p = subprocess.Popen(["prometheus", f"--config.file={cfg}",
                          f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                          f"--web.listen-address=127.0.0.1:{port}"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return p, f"http://127.0.0.1:{port}"


def _query(api: str, expr: str, at: float) -> list[dict]:
    q = urllib.parse.urlencode({"query": expr, "time": f"{at:.3f}"})
    with urllib.request.urlopen(f"{api}/api/v1/query?{q}", timeout=10) as r:
        body = json.loads(r.read())
    assert body["status"] == "success", (expr, body)
    return body["data"]["result"]


def _answered(api: str, now: float) -> float | None:
    """``now`` if the scrape Prometheus holds for it answered: on a loaded machine one
    /metrics may outlast the 1 s scrape, and Prometheus marks every series stale."""
    fresh = _query(api, "mysql_up", now) and _query(api, "harness_sysbench_tps", now)
    return now if fresh else None


def test_the_shipped_dashboard_answers_from_what_prometheus_scraped(tmp_path, results):
    dash = json.loads((ROOT / "dashboards/grafana/harness.json").read_text())
    exprs = [t["expr"].replace("$server", ".+").replace("$variant", ".+")
             for panel in dash["panels"] for t in panel["targets"]]
    f = tmp_path / "m.yaml"
    f.write_text(SCENARIO.format(server="mariadb-10.11", duration=40))
    port = _free_port()
    prom, api = _prometheus(tmp_path, port)
    run = subprocess.Popen([sys.executable, "-m", "harness", "run", str(f), "--metrics-port",
                            str(port)], cwd=ROOT, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    answered: list[float] = []
    try:
        deadline = time.monotonic() + 150
        seen = None
        while time.monotonic() < deadline and run.poll() is None and len(answered) < 5:
            time.sleep(1)
            try:
                if seen is None and _query(api, "harness_sysbench_tps", time.time()):
                    seen = time.monotonic()
                if seen is not None and time.monotonic() - seen > 15:  # two pool walks
                    answered += [t for t in [_answered(api, time.time())] if t]
            except OSError:
                continue
        out, err = run.communicate(timeout=180)
        assert run.returncode == 0, err
        # A scrape that timed out on a loaded machine writes its stale marker at the
        # scrape's start, once it has timed out: a moment that answered when asked may
        # not answer later. The latest moment that still answers, once the run is over.
        at = next((t for t in reversed(answered) if _answered(api, t)), None)
        assert at is not None, f"Prometheus never kept a scrape of the run ({answered})"
        answers = {e: _query(api, e, at) for e in exprs}
        (up,) = _query(api, "mysql_up", at)
    finally:
        prom.terminate()
        prom.wait(30)
    # Every panel answers, but one line: "Max checkpoint age" is printed by XtraDB and
    # Percona Server only (not MySQL's or MariaDB 10.11's InnoDB: tests/data/innodb-status-*)
    assert [e for e, found in answers.items() if not found] == [
        'mysql_engine_innodb_max_checkpoint_age{server=~".+",variant=~".+"}']
    labels = up["metric"]
    assert labels["service_name"] == "mariadb-10.11" and labels["node_name"]
    assert labels["instance"].startswith("127.0.0.1:") and labels["instance"] != \
        f"127.0.0.1:{port}"  # the server's address, kept by honor_labels
    swap = next(e for e in exprs if "pswpout" in e)
    assert float(answers[swap][0]["value"][1]) >= 0
