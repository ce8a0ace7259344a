"""Timelines on a real server: side loads start and end when the scenario says, their
failures are recorded while the main workload finishes, and variants that differ only
in dynamic variables reuse the running server."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.store import Event, open_store

from ..conftest import harness

pytestmark = pytest.mark.integration

BASE = """\
name: {name}
servers: [mariadb-10.11]
mysqld: {{innodb_buffer_pool_size: 64M}}
dataset:
  - {{database: small, tables: 1, table_size: 5000}}
  - {{database: big, tables: 2, table_size: 20000}}
workload: {{test: oltp_read_only, database: small, threads: 1, warmup_s: 2, duration_s: 12,
           options: {{rate: 50}}}}
wakeup_probe: false
collectors: {{buffer_pool_index: {{interval_s: 1}}}}
"""


def _run(tmp_path: Path, name: str, extra: str, *args: str, duration_s: int = 12):
    f = tmp_path / f"{name}.yaml"
    f.write_text(BASE.format(name=name).replace("duration_s: 12", f"duration_s: {duration_s}")
                 + extra)
    p = harness("run", str(f), "--json", *args)
    assert p.stdout, p.stderr
    return p, json.loads(p.stdout)


def _events(run_id: str) -> list[Event]:
    return open_store().events(run_id)


def test_timeline_order_and_overlap(tmp_path, results):
    p, out = _run(tmp_path, "timeline", """\
side_loads:
  - {name: early, kind: command, argv: [sleep, "2"], start: 1}
  - {name: chained, kind: command, argv: [sleep, "1"], start: {after: early, delay_s: 1}}
  - {name: dump, kind: mysqldump, database: big, start: {after: warmup, delay_s: 2}}
  - name: poll
    kind: sql
    query: SELECT COUNT(*) FROM small.sbtest1
    start: warmup
    until: main_end
    pause_s: 0.2
config_changes:
  - {start: 5, set_global: {innodb_old_blocks_time: 0}}
""")
    assert p.returncode == 0, p.stderr
    run = out["runs"][0]
    ev = _events(run["run_id"])
    at = {(e.kind, e.name): e.t for e in ev}
    origin = at[("phase_start", "warmup")]  # the main workload starts at 0
    main_end = run["summary"]["workload_end_s"]

    def near(t: float, want: float) -> None:
        assert abs(t - want) <= 1.0, (t, want, ev)

    near(at[("phase_start", "early")], origin + 1)
    near(at[("phase_end", "early")], origin + 3)
    near(at[("phase_start", "chained")], at[("phase_end", "early")] + 1)
    near(at[("phase_end", "chained")], at[("phase_start", "chained")] + 1)
    near(at[("phase_end", "warmup")], origin + 2)
    near(at[("phase_start", "dump")], origin + 4)
    near(at[("config", "set_global")], origin + 5)
    near(at[("phase_start", "poll")], origin + 2)
    near(at[("phase_end", "poll")], main_end)  # until: main_end
    # Overlap: the dump ran inside the main workload, and the summary splits the main
    # workload's intervals into inside and outside the dump window.
    assert origin < at[("phase_start", "dump")] < at[("phase_end", "dump")] < main_end
    loads = {x["name"]: x for x in run["summary"]["side_loads"]}
    assert loads["dump"]["status"] == "ok"
    assert loads["dump"]["rows"] == 2 * 20000  # counted in the dump stream
    assert loads["dump"]["bytes"] > 2 * 20000 * 100
    assert loads["poll"]["passes_ok"] >= 5 and loads["poll"]["status"] in ("ok", "stopped")
    phases = {x["phase"]: x for x in run["summary"]["phases"]}
    assert set(phases) == {"early", "chained", "dump", "poll"}
    assert phases["poll"]["main_intervals_inside"] >= 9
    assert run["summary"]["config_changes"][0]["error"] is None
    show = json.loads(harness("show", run["run_id"], "--json", check=True).stdout)
    assert show["details"]["server_state"]["how"].startswith("new sandbox")
    dump = next(ph for ph in show["summary"]["phases"] if ph["phase"] == "dump")
    assert dump["diagnostics"]["pages_read_per_s"] is not None
    # The report: a table with the main workload alone and during the dump, and a plot.
    rep = harness("report", out["run_set"], check=True).stdout
    assert "main tps during dump" in rep and "main tps alone" in rep
    plot = next(line.split(": ", 1)[1] for line in rep.splitlines()
                if line.startswith("plot: "))
    assert Path(plot).stat().st_size > 10_000


def test_side_load_failure_recorded_while_main_finishes(tmp_path, results):
    p, out = _run(tmp_path, "sidefail", """\
side_loads:
  - {name: broken, kind: command, argv: [sh, -c, "echo no such backup bucket >&2; exit 3"],
     start: 3}
  - {name: baddump, kind: mysqldump, database: big, tables: [nosuchtable], start: 4}
""")
    assert p.returncode == 1
    run = out["runs"][0]
    assert run["status"] == "failed"
    # The main workload ran its full length and its results are stored (sysbench's
    # per-second report can slip by one on a busy machine).
    assert run["summary"]["measured"]["intervals"] >= 11
    assert run["summary"]["measured"]["tps_median"] > 0
    loads = {x["name"]: x for x in run["summary"]["side_loads"]}
    assert loads["broken"]["status"] == "failed"
    assert loads["broken"]["passes"][0]["rc"] == 3
    assert "no such backup bucket" in loads["broken"]["error"]
    assert loads["baddump"]["status"] == "failed"
    assert "nosuchtable" in loads["baddump"]["error"]
    assert "side load broken" in run["error"] and "exit" in run["error"]
    assert "side load broken (command) pass 1 failed" in p.stderr


def test_dynamic_variant_reuses_running_server(tmp_path, results):
    p, out = _run(tmp_path, "dynamic", """\
between_runs: warmup
variants:
  obt0: {mysqld: {innodb_old_blocks_time: 0}}
  obt1000: {mysqld: {innodb_old_blocks_time: 1000, innodb_old_blocks_pct: 20}}
  sort_buffer: {mysqld: {innodb_old_blocks_time: 1000, innodb_old_blocks_pct: 20,
                         innodb_sort_buffer_size: 2M}}
""", duration_s=4)  # what is asserted is the server's state, not the workload's
    assert p.returncode == 0, p.stderr
    runs = {r["variant"]: r["run_id"] for r in out["runs"]}
    store = open_store()
    state = {v: store.get_run(i).details.server_state for v, i in runs.items()}
    assert state["obt1000"]["how"].startswith("kept running, SET GLOBAL")
    assert state["obt1000"]["mysqld_pid"] == state["obt0"]["mysqld_pid"]
    assert state["obt1000"]["sandbox"] == state["obt0"]["sandbox"]
    # innodb_sort_buffer_size is read-only at runtime: that variant restarts the server.
    assert state["sort_buffer"]["how"] == "restarted (a changed option is not dynamic)"
    assert state["sort_buffer"]["mysqld_pid"] != state["obt1000"]["mysqld_pid"]
    assert state["sort_buffer"]["sandbox"] == state["obt0"]["sandbox"]
    got = {}
    for v, i in runs.items():
        art = Path(store.get_run(i).artifacts)
        got[v] = json.loads((art / "variables.json").read_text())
    assert got["obt0"]["innodb_old_blocks_time"] == "0"
    assert got["obt1000"]["innodb_old_blocks_time"] == "1000"
    assert got["obt1000"]["innodb_old_blocks_pct"] == "20"
    assert got["sort_buffer"]["innodb_sort_buffer_size"] == str(2 << 20)
    config = [e for e in store.events(runs["obt1000"]) if e.kind == "config"]
    assert config and config[0].detail["set_global"] == {"innodb_old_blocks_time": 1000,
                                                            "innodb_old_blocks_pct": 20}


def test_auto_warmup_ends_when_the_throughput_settles(tmp_path, results):
    """``warmup_s: auto``: sysbench warms up until MSER-5 calls its seconds steady, the
    measured part and an ``after: warmup`` side load start there, and the stored
    warmup seconds are the ones the rule read."""
    from harness.stats.steady import LEAST_S, is_steady

    f = tmp_path / "auto.yaml"
    f.write_text(BASE.format(name="auto").replace(
        "warmup_s: 2, duration_s: 12,\n           options: {rate: 50}",
        "warmup_s: auto, warmup_max_s: 60, duration_s: 4")  # uncapped: it warms up
        + "side_loads:\n  - {name: after, kind: command, argv: [sleep, '1'], "
          "start: warmup}\n")
    p = harness("run", str(f), "--json")
    assert p.returncode == 0, p.stderr
    run = json.loads(p.stdout)["runs"][0]
    s = run["summary"]
    warm = s["measured"]["warmup"]
    assert warm["auto"] and warm["settled"], warm
    assert LEAST_S <= warm["seconds"] < 60
    assert "warmup settled after" in p.stderr
    store = open_store()
    at = {(e.kind, e.name): e.t for e in store.events(run["run_id"])}
    start, end = at[("phase_start", "warmup")], at[("phase_end", "warmup")]
    assert s["workload_start_s"] == pytest.approx(start, abs=0.01)
    assert s["main_window"][0] == pytest.approx(end, abs=0.5)
    assert s["workload_start_s"] + s["warmup_s"] == pytest.approx(s["main_window"][0],
                                                                  abs=0.5)
    assert abs(at[("phase_start", "after")] - end) <= 1.0
    # The warmup's seconds are stored; the rule, asked as the run asked it, said steady
    # at the second the summary names and not before.
    (tps,) = [x for x in store.series(run["run_id"], "sysbench", "tps") if not x.labels]
    warmup = [float(v) for t, v in tps.points() if start < t <= end]
    n = warm["seconds"]
    assert len(warmup) in (n, n + 1)
    assert is_steady(warmup[:n]) and not is_steady(warmup[:n - 1])
    assert s["measured"]["intervals"] >= 3
