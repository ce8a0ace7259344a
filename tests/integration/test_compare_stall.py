"""A candidate that stalls is worse, with its stalls counted: the sandbox's mysqld held
(SIGSTOP) for most of each candidate run's measured seconds, on a real server. The runs
it stalled are failed (a hung server is never stored ok: runner/measure.py) and still
counted as stalled runs of their side. The rate is capped (a stall is 0 against any
rate; uncapped, the 8 runs took a core for two minutes from the rest of make test)."""
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


STALL = """\
name: stall
servers: [mariadb-10.11]
dataset: {tables: 1, table_size: 10000}
workload: {test: oltp_point_select, threads: 2, warmup_s: 3, duration_s: 8,
           options: {rate: 300}}
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
