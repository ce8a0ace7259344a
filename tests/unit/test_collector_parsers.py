"""Collector parsers and metric naming, on captured real outputs."""
import os
import re
from pathlib import Path

import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from harness import procfs
from harness.collectors.buffer_pool_index import index_points, split_table
from harness.collectors.diskstats import parse_diskstats
from harness.collectors.global_status import status_points
from harness.collectors.innodb_metrics import metric_points
from harness.collectors.innodb_status import parse_innodb_status
from harness.collectors.meminfo import parse_meminfo
from harness.collectors.vmstat import parse_vmstat_header, parse_vmstat_line
from harness.runner.live import LiveMetrics

DATA = Path(__file__).parent.parent / "data"
SERVERS = ["mariadb-10.11", "mysql-5.7.29", "mysql-5.6.24", "mariadb-10.1.23", "mariadb-10.2.11",
           "mysql-9.7", "mariadb-11.8"]
# MariaDB removed the change buffer in 11.0 and stopped printing its section in 10.11.
NO_IBUF = ("mariadb-10.11", "mariadb-11.8")


@pytest.mark.parametrize("server", SERVERS)
def test_innodb_status_of_every_catalog_server(server):
    text = (DATA / f"innodb-status-{server}.txt").read_text()
    d = parse_innodb_status(text)
    for key in ("log_sequence_number", "last_checkpoint_at", "checkpoint_age",
                "history_list_length", "pending_reads", "pending_writes_lru",
                "pending_writes_flush_list", "modified_db_pages", "database_pages",
                "free_buffers", "buffer_pool_pages", "pages_read_total",
                "pages_made_young_total"):
        assert key in d, key
    assert d["checkpoint_age"] == d["log_sequence_number"] - d["last_checkpoint_at"] > 0
    assert d["database_pages"] + d["free_buffers"] <= d["buffer_pool_pages"]
    if server not in NO_IBUF:
        assert {"ibuf_size_pages", "ibuf_merges_total", "ibuf_merged_insert_total",
                "ibuf_discarded_delete_total"} <= set(d)
    else:
        assert "ibuf_size_pages" not in d  # absent, never a made-up 0


def test_xtradb_prints_its_own_checkpoint_age_and_it_matches():
    text = (DATA / "innodb-status-mariadb-10.1.23.txt").read_text()
    d = parse_innodb_status(text)
    printed = int(re.search(r"^Checkpoint age\s+(\d+)$", text, re.M).group(1))
    assert d["checkpoint_age"] == printed
    assert d["max_checkpoint_age"] == 80826164


def test_innodb_metrics_names_follow_mysqld_exporter():
    rows = [("log_lsn_checkpoint_age", "recovery", "value", 1234),
            ("dml_inserts", "dml", "status_counter", 10),
            ("buffer_page_read_index_leaf", "buffer_page_io", "counter", 5),
            ("buffer_pool_pages_data", "buffer", "value", 100),
            ("buffer_pool_pages_dirty", "buffer", "value", 7),
            ("buffer_pool_pages_total", "buffer", "value", 200),
            ("trx_rw_commits", "transaction", "counter", -3)]
    pts = {(m, tuple(sorted((lab or {}).items()))): v for m, v, lab in metric_points(rows)}
    p = "mysql_info_schema_innodb_metrics_"
    assert pts[(p + "recovery_log_lsn_checkpoint_age", ())] == 1234
    assert pts[(p + "dml_dml_inserts_total", ())] == 10
    assert pts[(p + "buffer_page_read_total", (("type", "index_leaf"),))] == 5
    assert pts[(p + "buffer_pool_pages", (("state", "data"),))] == 100
    assert pts[(p + "buffer_pool_dirty_pages", ())] == 7
    assert (p + "transaction_trx_rw_commits", ()) in pts  # negative counter -> gauge
    assert not any("pages_total" in m for m, _ in pts)


def test_global_status_names_follow_mysqld_exporter():
    rows = [("Com_select", "12"), ("Handler_read_key", "3"), ("Innodb_buffer_pool_pages_data",
            "100"), ("Innodb_buffer_pool_pages_flushed", "9"), ("Innodb_rows_read", "5"),
            ("Threads_running", "2"), ("Rpl_status", "AUTH_MASTER"), ("Ssl_cipher", ""),
            ("Innodb_buffer_pool_dump_status", "Dumping of buffer pool not started")]
    pts = {(m, tuple(sorted((lab or {}).items()))): v for m, v, lab in status_points(rows)}
    p = "mysql_global_status_"
    assert pts == {(p + "commands_total", (("command", "select"),)): 12.0,
                   (p + "handlers_total", (("handler", "read_key"),)): 3.0,
                   (p + "buffer_pool_pages", (("state", "data"),)): 100.0,
                   (p + "buffer_pool_page_changes_total", (("operation", "flushed"),)): 9.0,
                   (p + "innodb_row_ops_total", (("operation", "read"),)): 5.0,
                   (p + "threads_running", ()): 2.0}


def test_buffer_page_table_names():
    assert split_table("`sbtest`.`sbtest1`") == ("sbtest", "sbtest1")
    assert split_table("`db`.`t` /* Partition `p0` */") == ("db", "t")
    # 5.5 (MySQL and Percona Server, checked on 5.5.55 and 5.5.52): the file name
    assert split_table("sbtest/sbtest1") == ("sbtest", "sbtest1")
    assert split_table("my@002ddb/t@0024x#P#p0") == ("my-db", "t$x")
    assert split_table("`we``ird`.`t`") == ("we`ird", "t")
    assert split_table(None) == ("", "")
    (pt,) = index_points([("`sbtest`.`sbtest1`", "PRIMARY", 42)])
    assert pt == ("mysql_info_schema_innodb_buffer_page_index_pages", 42.0,
                  {"schema": "sbtest", "name": "sbtest1", "index": "PRIMARY"})


def test_vmstat_stream():
    lines = (DATA / "vmstat-procps-4.0.2-stream.txt").read_text().splitlines()
    header = parse_vmstat_header(lines[1])
    assert header is not None and header[:4] == ["r", "b", "swpd", "free"]
    assert parse_vmstat_header(lines[0]) is None
    pts = {m: v for m, v, _ in parse_vmstat_line(header, lines[3])}
    assert pts["cs"] == 61931 and pts["bo"] == 17460  # vmstat's own columns
    assert pts["free_bytes"] == 23897852 * 1024
    assert parse_vmstat_line(header, lines[1]) is None


def test_proc_vmstat_and_stat_as_node_exporter_names_them():
    from harness.collectors.proc_stat import CPU_MODES, parse_node_stat
    from harness.collectors.proc_vmstat import parse_proc_vmstat

    text = (DATA / "proc-vmstat.txt").read_text()
    vm = {m: v for m, v, _ in parse_proc_vmstat(text)}
    raw = dict(line.split() for line in text.splitlines())
    assert set(vm) == {"node_vmstat_pgfault", "node_vmstat_pgmajfault", "node_vmstat_pgpgin",
                       "node_vmstat_pgpgout", "node_vmstat_pswpin", "node_vmstat_pswpout",
                       "node_vmstat_oom_kill"}
    assert vm["node_vmstat_pswpout"] == float(raw["pswpout"])
    stat_text = (DATA / "proc-stat.txt").read_text()
    pts = parse_node_stat(stat_text)
    cpu = {(lab["cpu"], lab["mode"]): v for m, v, lab in pts if m == "node_cpu_seconds_total"}
    cpus = [ln.split() for ln in stat_text.splitlines() if re.match(r"cpu\d", ln)]
    assert set(cpu) == {(c[0][3:], mode) for c in cpus for mode in CPU_MODES}
    ticks = os.sysconf("SC_CLK_TCK")
    assert cpu[("0", "iowait")] == int(cpus[0][5]) / ticks  # the 5th column
    other = {m: v for m, v, lab in pts if lab is None}
    assert other["node_context_switches_total"] == float(next(
        ln.split()[1] for ln in stat_text.splitlines() if ln.startswith("ctxt ")))
    assert {"node_intr_total", "node_forks_total", "node_procs_running",
            "node_procs_blocked"} <= set(other)


def test_meminfo_and_diskstats():
    mem = {m: v for m, v, _ in parse_meminfo((DATA / "proc-meminfo.txt").read_text())}
    assert mem["node_memory_MemTotal_bytes"] > 0 and "node_memory_Dirty_bytes" in mem
    assert "node_memory_Active_anon_bytes" in mem and "node_memory_HugePages_Total" in mem
    disks = parse_diskstats((DATA / "proc-diskstats.txt").read_text())
    devices = {lab["device"] for _, _, lab in disks if lab}
    assert devices and not any(d.startswith("loop") for d in devices)
    names = {m for m, _, _ in disks}
    assert {"node_disk_reads_completed_total", "node_disk_written_bytes_total",
            "node_disk_io_time_seconds_total"} <= names


def test_proc_stat_with_spaces_and_parentheses_in_the_name():
    # proc(5): field 2 is the name in parentheses; a program may call itself anything
    stat = ("123 (my (s) qld) S 1 120 121 0 -1 4194560 500 0 0 0 250 50 0 0 20 0 37 0 100 "
            "1000 200 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0")
    st = procfs.parse(stat)
    assert (st.program, st.ppid, st.session, st.threads, st.start_ticks) == (
        "my (s) qld", 1, 121, 37, 100)
    assert st.utime_s == 5 * st.stime_s == 250 / procfs.TICKS
    me = procfs.read(os.getpid())  # and the live reading agrees with the kernel's calls
    assert me.ppid == os.getppid() and me.session == os.getsid(0)


def test_live_metrics_exposition_is_valid_prometheus_text():
    live = LiveMetrics()
    live.start_run("mysql-5.7.29", "obt0", "sysbench oltp_read_only")
    live.update(1.0, "sysbench", "tps", 123.4, None)
    live.update(1.0, "sysbench", "latency_ms", 2.5, {"quantile": "0.95"})
    live.update(1.0, "global_status", "mysql_global_status_commands_total", 7,
                {"command": "select"})
    live.update(1.0, "global_status", "mysql_global_status_threads_running", 2, None)
    live.update(1.0, "innodb_status", "mysql_engine_innodb_checkpoint_age", 1e6, None)
    fams = {f.name: f for f in text_string_to_metric_families(
        generate_latest(live.registry).decode())}
    assert fams["mysql_global_status_commands"].type == "counter"
    (s,) = fams["mysql_global_status_commands"].samples
    assert s.name == "mysql_global_status_commands_total" and s.labels["command"] == "select"
    assert s.labels["server"] == "mysql-5.7.29" and s.labels["variant"] == "obt0"
    assert fams["mysql_global_status_threads_running"].type == "unknown"
    assert fams["harness_sysbench_tps"].samples[0].value == 123.4
    assert fams["harness_sysbench_latency_ms"].samples[0].labels["quantile"] == "0.95"
    assert fams["mysql_engine_innodb_checkpoint_age"].type == "gauge"


def test_grafana_dashboard_uses_only_series_the_harness_serves():
    import json

    dash = json.loads((DATA.parent.parent / "dashboards/grafana/harness.json").read_text())
    served = re.compile(r"^(harness_sysbench_(tps|latency_ms)|harness_collector_\w+|"
                        r"harness_mysqld_\w+|mysql_engine_innodb_\w+|mysql_global_status_\w+|"
                        r"mysql_info_schema_innodb_\w+|node_vmstat_\w+|node_cpu_seconds_total|"
                        r"node_memory_\w+|mysql_up)$")
    names = set()
    for panel in dash["panels"]:
        for target in panel["targets"]:
            for name in re.findall(r"([A-Za-z_][A-Za-z0-9_]*)\{", target["expr"]):
                names.add(name)
    assert names and all(served.match(n) for n in names), names
    # the names the live endpoint really uses for these
    live = LiveMetrics()
    live.update(0, "sysbench", "tps", 1.0, None)
    assert "harness_sysbench_tps" in generate_latest(live.registry).decode()


def test_os_collectors_skip_a_remote_host_they_cannot_reach(tmp_path):
    """mysqld on another machine with no way to run programs there (a remote external
    server): this machine's OS is not sampled in its place."""
    from harness.collectors.base import CollectorContext
    from harness.collectors.diskstats import Diskstats
    from harness.collectors.meminfo import Meminfo
    from harness.collectors.vmstat import Vmstat
    from harness.server.mysql import Endpoint

    events = []
    ctx = CollectorContext(endpoint=Endpoint("db9", 3306, "u", "p"), flavor="mysql",
                           version=(5, 7, 29), clock=lambda: 0.0,
                           sample=lambda *a: None, event=lambda *a: events.append(a),
                           artifacts=tmp_path, remote_host="db9")
    for cls in (Meminfo, Diskstats, Vmstat):
        with cls(ctx) as c:
            assert getattr(c, "_thread", None) is None and getattr(c, "stream", None) is None
    assert [n.split(":")[0] for n in ctx.notes] == ["meminfo", "diskstats", "vmstat"]
    assert all("mysqld runs on db9" in n for n in ctx.notes)
    assert [e[1] for e in events] == ["collector_skipped"] * 3
