"""The results store's and the run folder's faults at the moments the first drills
left out, on real runs: a full disk for 3 s then the harness killed, an I/O error of
the store as the run ends, the store locked by another process then. Nothing measured
is lost, the run is not failed for a store that blinked, and its window is the
workload's. (The drills themselves: harness/bench/faults.py, ``make bench-faults``.)"""
from __future__ import annotations

import os

import pytest

from harness.bench import faults
from harness.bench.faults import Place
from harness.store import open_store

pytestmark = pytest.mark.integration


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small filesystem needs root")
def test_a_full_disk_for_3_s_then_kill_9_keeps_the_measured_seconds(tmp_path, results):
    """The run folder's (and the store's) disk full for 3 s mid-run, then the harness
    killed: the spool kept what the disk refused in memory, said so, wrote it once there
    was room, and the replay stores at least 95% of the seconds sysbench reported."""
    where = Place(tmp_path / "drill", own_sandboxes=False)
    where.folder.mkdir()
    d = faults.disk_full_for_3_s_then_killed(where)
    assert d.survived, d.facts
    behind, again = d.facts["said"]
    assert "cannot be written: disk full" in behind and "waits in memory" in behind, behind
    assert again.startswith("the run's spool is written again"), again
    assert d.facts["replay_exit"] == 0 and d.facts["status"] == "interrupted", d.facts


def test_an_io_error_of_the_store_at_the_run_end_leaves_the_run_ok(tmp_path, results):
    """The SQLite store's files immutable for 10 s as the run ends ("disk I/O error"):
    said for what it is, waited for, and the run is ok with its tps and every second."""
    where = Place(tmp_path / "drill", own_sandboxes=False)
    where.folder.mkdir()
    d = faults.store_io_error_at_the_end(where, held_s=10)
    assert d.survived, d.facts
    assert "could not be written (SQLite: disk I/O error" in d.facts["message"], d.facts
    assert "disk full" not in d.facts["message"]
    store = open_store(f"sqlite:///{where.results}/harness.db")
    (run,) = store.runs()
    assert run.status == "ok" and run.summary.figure("tps_median") > 0
    store.engine.dispose()


def test_the_measured_window_ends_with_the_workload_not_the_store(tmp_path, results):
    """The store locked by another process for 20 s from 2 s before sysbench's end: the
    run waits for it and is ok, and its window is sysbench's 22 s, not 22 + the wait."""
    where = Place(tmp_path / "drill", own_sandboxes=False)
    where.folder.mkdir()
    d = faults.store_locked_at_the_end(where, held_s=20)
    assert d.survived, d.facts
    assert 21 <= d.facts["window_s"] <= 24, d.facts
