"""harness compare by switchback on a real server: A and B alternate by SET GLOBAL in
windows of one run, each quad ABBA or BAAB at random; a large effect is called from
eight quads (on a quiet machine: alone), identical sides are not told apart (the
randomisation test holds its rate under any noise), and a static option sends auto back
to interleaved runs."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.store import open_store

from ..conftest import QUIET_COLLECTORS, harness

pytestmark = pytest.mark.integration

SCENARIO = """\
name: sb
servers: [mariadb-10.11]
dataset: {tables: 1, table_size: 10000}
workload: {test: oltp_point_select, threads: 1, warmup_s: 2, duration_s: 3}
# The general log into a table (CSV): every point select also writes a row.
mysqld: {log_output: TABLE}
variants:
  plain: {description: general_log left to the server's default}
  quiet: {mysqld: {general_log: 0}}
  logged: {mysqld: {general_log: 1}}
  quiet_too: {mysqld: {general_log: 0}}
  small_stack: {mysqld: {general_log: 0, thread_stack: 262144}}
  large_stack: {mysqld: {general_log: 0, thread_stack: 524288}}
wakeup_probe: false
cpu_keepalive: true
""" + QUIET_COLLECTORS.replace("  mysqld_process: {enabled: false}\n", "")  # what moved


@pytest.fixture
def scenario(tmp_path: Path, results: Path) -> Path:
    f = tmp_path / "sb.yaml"
    f.write_text(SCENARIO)
    return f


def _compare(f: Path, *args: str, windows: int = 24):
    p = harness("compare", str(f), "--windows", str(windows), "--window-s", "3", "--json",
                *args, timeout=900)
    return p, json.loads(p.stdout) if p.stdout.strip().startswith("{") else None


@pytest.mark.alone  # a verdict's power: on a quiet machine
def test_the_general_log_is_found_costly_from_eight_quads(scenario):
    # Six quads call it only when every one agrees (p = 2/64): one noisy window in
    # six quads failed it on a quiet machine (p 4/64 at x0.886). Eight leave room for one.
    # The baseline leaves general_log to the server's default: its windows set back the
    # value the server started with.
    p, out = _compare(scenario, "--variants", "plain", "logged", windows=32)
    assert p.returncode == 3, p.stdout + p.stderr
    (c,) = out["comparisons"]
    assert c["design"].startswith("switchback: 32 windows of 3 s"), c["design"]
    tps = next(m for m in c["metrics"] if m["metric"] == "tps")
    assert tps["verdict"] == "worse" and tps["ci95"][1] < 0.97, tps
    assert 2 / 256 <= tps["p_value"] < 0.05  # from the least p eight quads can give
    assert len(tps["baseline"]) == len(tps["candidate"]) == 16  # pairs
    # What moved per transaction, window by window: the cause first, the general log's
    # rows written by mysqld into its CSV table (the point selects write nothing else),
    # every logged window above every plain one
    top = c["moved"][0]
    assert top["quantity"] == "mysqld bytes written" and top["apart"], c["moved"]
    assert top["candidate"] > 10 * max(top["baseline"], 1.0), top
    (run,) = open_store().runs(run_set=out["run_set"])  # one run on one server
    assert run.variant == "switchback" and run.status == "ok"
    sets = [e.detail["set_global"].get("general_log", e.detail.get("reset"))
            for e in open_store().events(run.run_id) if e.kind == "config"]
    quads = [sets[i:i + 4] for i in range(0, 32, 4)]
    off = {"general_log": "OFF"}  # the default, read from the server
    assert len(sets) == 32 and all(q in ([off, 1, 1, off], [1, off, off, 1])
                                   for q in quads), sets


def test_identical_sides_are_not_told_apart(scenario):
    # The randomisation test is exact: identical sides get p < alpha in at most alpha of
    # runs, for each metric judged (tps and p95: twice alpha for the run). 12 quads can
    # give p = 2/4096 < 0.001, so this can fail, in at most 0.2% of runs when the test
    # is right (at 8 quads and 0.01 it failed once, 2026-11-29: p95 at p = 2/256).
    p, out = _compare(scenario, "--variants", "quiet", "quiet_too", "--alpha", "0.001",
                      windows=48)
    (c,) = out["comparisons"]
    assert c["design"].startswith("switchback"), c
    # mysqld's CPU a transaction judged beside tps and p95, window by window
    assert [m["metric"] for m in c["metrics"]] == ["tps", "p95_ms", "cpu_us_per_tx"], c
    # Not told apart; "the same" only where the interval lies inside the noise band,
    # else "could not tell" with the run's reach (exit 4), never better or worse.
    for m in c["metrics"]:
        assert m["verdict"] in ("no significant difference", "could not tell"), m
        assert m["reach"] is not None and (m["reach"] <= 0.03) == (
            m["verdict"] == "no significant difference"), m
    assert p.returncode == (0 if c["verdict"] == "no significant difference" else 4)


def test_a_static_option_falls_back_to_interleaved_runs(scenario):
    p, out = _compare(scenario, "--variants", "small_stack", "large_stack",
                      "--repetitions", "1")
    assert "switchback refused" in p.stderr and "thread_stack" in p.stderr, p.stderr
    assert "design: interleaved runs" in p.stderr
    (c,) = out["comparisons"]
    assert c["design"] == "interleaved runs" and p.returncode == 4  # 1 run a side
    runs = open_store().runs(run_set=out["run_set"])
    assert [r.variant for r in runs] == ["small_stack", "large_stack"]
    # The switchback run it gave up failed with the server's refusal as its cause,
    # before sysbench's exit (the symptom).
    (sb,) = [r for r in open_store().runs() if r.variant == "switchback"]
    cause, _, symptom = sb.error.partition("then:")
    assert sb.status == "failed" and re.match(r"config change switchback-0-[AB]: "
                                                 "SET GLOBAL:", cause), sb.error
    assert "thread_stack" in cause and "sysbench" in symptom, sb.error
    p = harness("compare", str(scenario), "--variants", "quiet", "logged", "--design",
                "switchback", "--budget", "5m")
    assert p.returncode == 2 and "--budget stops interleaved runs" in p.stderr
    p = harness("compare", str(scenario), "--variants", "quiet", "logged", "--design",
                "switchback", "--windows", "24", "--alpha", "0.01")
    assert p.returncode == 2 and "6 quads cannot give p < 0.01" in p.stderr, p.stderr
    assert "at least 32" in p.stderr
