"""A real stall, and where its threads waited: sysbench read-write on MariaDB 10.11
while a side load holds FLUSH TABLES WITH READ LOCK for four seconds. The statement rate
falls to nothing with the writers waiting; the stall_stacks collector takes every
thread's stack once with pt-pmp (gdb), and the stacks show the writers in the server's
own lock wait; the report draws them."""
from __future__ import annotations

import json
import re

import pytest

from harness.collectors.stall_stacks import FOLDED

from ..conftest import harness

pytestmark = pytest.mark.integration

SCENARIO = """\
name: stalled
servers: [mariadb-10.11]
mysqld: {innodb_buffer_pool_size: 32M}
dataset: {tables: 1, table_size: 10000}
workload: {test: oltp_read_write, threads: 2, warmup_s: 2, duration_s: 16,
           options: {rate: 100}}
side_loads:
  - name: global_read_lock
    kind: sql
    query: ["FLUSH TABLES WITH READ LOCK", "SELECT SLEEP(4)", "UNLOCK TABLES"]
    start: {after: warmup, delay_s: 7}
collectors:
  stall_stacks: {enabled: true}
wakeup_probe: false
"""


def test_a_stall_is_caught_with_every_threads_stack(tmp_path, results):
    f = tmp_path / "s.yaml"
    f.write_text(SCENARIO)
    harness("run", str(f), check=True)
    (run,) = json.loads(harness("runs", "--json", check=True).stdout)["runs"]
    show = json.loads(harness("show", run["run_id"], "--json", check=True).stdout)
    stalls = [e for e in show["events"] if e["kind"] == "stall"]
    assert len(stalls) == 1, show["events"]
    (stall,) = stalls
    lock = next(e for e in show["events"] if e["kind"] == "phase_start"
                and e["name"] == "global_read_lock")
    assert lock["t"] <= stall["t"] <= lock["t"] + 4  # while the lock was held
    detail = stall["detail"]
    assert detail["statements_per_second"] < 0.1 * detail["baseline"] and detail["running"] >= 2
    assert 0 < detail["pause_s"] < 30  # the capture's time, stated
    notes = " ".join(show["summary"]["collectors"]["notes"])
    assert "stall_stacks: 1 stall(s) taken" in notes, notes
    art = tmp_path / show["artifacts"]
    assert (art / "stall-1.pmp.txt").is_file()
    stacks = {}
    for line in (art / FOLDED).read_text().splitlines():
        stack, n = line.rsplit(" ", 1)
        stacks[stack] = int(n)
    assert sum(stacks.values()) == detail["threads"] >= 4  # every thread of mysqld
    # The two writers wait in the server's metadata lock for the global read lock.
    waiting = sum(n for s, n in stacks.items() if re.search(r"MDL_\w+::(timed_)?wait", s))
    assert waiting >= 2, sorted(stacks)[:20]

    folder = tmp_path / "report"
    harness("report", run["run_set"], "-o", str(folder), check=True)
    text = (folder / "report.html").read_text()
    assert "<h2>Where threads waited in stalls: " in text
    assert re.search(r"<title>MDL_\w+::(timed_)?wait \(\d+ samples", text)
