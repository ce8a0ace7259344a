"""The change DBAs make most, compared as a DBA would: two my.cnf files that differ in the
buffer pool's size (cut 8x) and the redo log's (dynamic on MariaDB 10.11). Both are slow
to settle, so compare's automatic design runs interleaved runs, each from the same data
with a restart and a warmup, and says so; the pool that does not hold the data is worse.
Switched every few seconds anyway (--design switchback), the windows measure the resize,
and a window that made no progress is counted as a stall, never as a fast one."""
from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from harness import proc
from harness.store import open_store

from ..conftest import QUIET_COLLECTORS, harness

pytestmark = pytest.mark.integration

# Two tables of 50,000 rows (about 24 MB) read and written by 4 threads: they fit a 64M
# pool, not an 8M one.
SCENARIO = """\
name: pool-cut
servers: [mariadb-10.11]
dataset: {tables: 2, table_size: 50000}
workload: {test: oltp_read_write, threads: 4, warmup_s: 3, duration_s: 8}
wakeup_probe: false
cpu_keepalive: true
""" + QUIET_COLLECTORS.replace("  mysqld_process: {enabled: false}\n", "")  # CPU a transaction

BASELINE = "[mysqld]\ninnodb_buffer_pool_size = 64M\ninnodb_log_file_size = 96M\n"
CANDIDATE = "[mysqld]\ninnodb_buffer_pool_size = 8M\ninnodb_log_file_size = 48M\n"


@pytest.fixture
def files(tmp_path: Path, results: Path) -> tuple[Path, Path, Path]:
    (tmp_path / "pool.yaml").write_text(SCENARIO)
    (tmp_path / "current.cnf").write_text(BASELINE)
    (tmp_path / "new.cnf").write_text(CANDIDATE)
    return tmp_path / "pool.yaml", tmp_path / "current.cnf", tmp_path / "new.cnf"


def test_a_pool_cut_8x_is_compared_by_restarts_and_found_worse(files):
    scenario, current, new = files
    p = harness("compare", str(scenario), "--baseline", str(current), "--candidate",
                str(new), "--repetitions", "4", timeout=900)
    assert p.returncode == 3, p.stdout + p.stderr[-3000:]
    # The design and why, on the terminal (stdout, before the table) and in the JSON.
    (design,) = [ln for ln in p.stdout.splitlines() if ln.startswith("design: ")]
    assert design.startswith("design: interleaved runs, each from the same data with a "
                             "restart and a warmup, because innodb_buffer_pool_size is "
                             "slow to settle: the buffer pool resizes"), design
    assert "innodb_log_file_size is slow to settle: the redo log is resized" in design
    saved = next(ln for ln in p.stdout.splitlines() if ln.startswith("saved: "))
    out = json.loads(Path(saved.split()[1].rstrip(",")).read_text())
    assert design in out["notes"] and out["verdict"] == "worse"
    (c,) = out["comparisons"]
    assert c["design"] == "interleaved runs"
    tps = next(m for m in c["metrics"] if m["metric"] == "tps")
    assert tps["verdict"] == "worse" and tps["ci95"][1] < 0.97, tps
    assert len(tps["baseline"]) == len(tps["candidate"]) == 4
    runs = open_store().runs(run_set=out["run_set"])
    assert sorted(r.variant for r in runs) == ["baseline"] * 4 + ["candidate"] * 4
    assert not [r for r in open_store().runs() if r.variant == "switchback"]  # never switched
    # each run restarted with its side's pool (the server's own value, in bytes)
    pools: dict[str, set[float]] = {}
    for r in runs:
        (s,) = open_store().series(r.run_id, source="global_status",
                                   metric="mysql_global_variables_innodb_buffer_pool_size")
        pools.setdefault(r.variant, set()).update(s.v.tolist())
    assert pools == {"baseline": {64 << 20}, "candidate": {8 << 20}}, pools
    # What was run, on the terminal and the page, whose title names the two files
    cond = out["conditions"]
    assert cond["workload"] == ("sysbench oltp_read_write, 4 threads, 3 s warmup + 8 s "
                                "measured; 2 tables, 100,000 rows"), cond
    assert cond["measured"] == "4 baseline and 4 candidate runs (interleaved runs)", cond
    assert 0 < cond["cpu_busy"] <= 1 and 0 <= cond["steal"] < 1, cond
    assert f"workload: {cond['workload']}" in p.stdout.splitlines()
    page = Path(saved.split()[2].rstrip(",")).read_text()
    assert f"<title>compare: {new} against {current} on mariadb-10.11</title>" in page
    assert "<h2>What was run</h2>" in page and "4 baseline and 4 candidate runs" in page
    # mysqld's CPU a transaction judged beside tps: the small pool costs CPU in reads
    cpu = next(m for m in c["metrics"] if m["metric"] == "cpu_us_per_tx")
    assert cpu["verdict"] == "worse", cpu


STALL = """\
name: stall
servers: [mariadb-10.11]
dataset: {tables: 1, table_size: 10000}
workload: {test: oltp_point_select, threads: 2, warmup_s: 3, duration_s: 8}
variants:
  steady: {mysqld: {innodb_io_capacity: 200}}
  held: {mysqld: {innodb_io_capacity: 300}}
wakeup_probe: false
cpu_keepalive: true
""" + QUIET_COLLECTORS


def _hold_the_candidate(results: Path, root: Path, done: threading.Event) -> list[str]:
    """Stop the sandbox's mysqld (SIGSTOP) for 6 of the 8 measured seconds of each run
    of variant ``held``, from its first measured second (its sysbench log has had the 3
    warmup seconds and one more); the run ids it held."""
    held: list[str] = []
    while not done.wait(0.2):
        for r in open_store().runs():
            log = results / "runs" / r.run_id / "sysbench.log"
            if r.variant != "held" or r.status != "running" or r.run_id in held or \
                    not log.exists() or log.read_text().count("tps:") < 4:
                continue
            pids = [pid for pid, argv in proc.processes()
                    if str(root) in " ".join(argv) and "mariadbd" in " ".join(argv)]
            for pid in pids:
                os.kill(pid, signal.SIGSTOP)
            time.sleep(6)
            for pid in pids:
                os.kill(pid, signal.SIGCONT)
            held.append(r.run_id)
    return held


def test_a_candidate_that_stalls_is_worse_with_its_stalls_counted(tmp_path, results,
                                                                   sandbox_root):
    f = tmp_path / "stall.yaml"
    f.write_text(STALL)
    done = threading.Event()
    held: list[str] = []
    watcher = threading.Thread(
        target=lambda: held.extend(_hold_the_candidate(results, sandbox_root, done)))
    watcher.start()
    try:
        p = harness("compare", str(f), "--variants", "steady", "held", "--design",
                    "interleaved", "--repetitions", "4", "--json", timeout=900)
    finally:
        done.set()
        watcher.join()
    assert p.returncode == 3 and len(held) == 4, (held, p.stderr[-3000:])
    out = json.loads(p.stdout)
    (c,) = out["comparisons"]
    assert c["stalls"] == {"unit": "runs", "baseline": 0, "baseline_of": 4, "candidate": 4,
                           "candidate_of": 4, "p_value": pytest.approx(2 / 70),
                           "verdict": "worse"}, c["stalls"]
    assert out["verdict"] == "worse"
    text = harness("compare", "--run-sets", out["run_set"], "--variants", "steady", "held")
    assert "stalls: the candidate made no progress in 4 of its 4 runs, the baseline in 0 " \
           "of 4: the candidate stalls where the other does not (p = 0.0286)" in text.stdout, \
        text.stdout
