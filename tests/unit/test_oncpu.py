"""Where the CPU per transaction went by function (analysis/oncpu.py): each leaf
frame's share of a build's samples times its CPU per transaction, so two builds whose
stacks differ from the root still compare function by function. Real profiles of two
builds are compared in tests/integration/test_cpu_profile.py."""
from __future__ import annotations

import pytest

from harness.analysis.oncpu import UNKNOWN, by_function, leaf_shares

# 5.7-like and 9.7-like: different thread names and entry points, a shared leaf
OLD = ("mysqld;start_thread;handle_connection;do_command;row_search_mvcc 30\n"
       "mysqld;start_thread;handle_connection;do_command;btr_search_guess_on_hash 20\n"
       "mysqld;start_thread;[unknown] 10\n"
       "mysqld;start_thread;handle_connection;do_command;my_net_read 40\n")
NEW = ("connection;[unknown];do_command;row_search_mvcc 30\n"
       "connection;[unknown];do_command;page_cur_search_with_match 25\n"
       "connection;[unknown];do_command;[unknown] 25\n"
       "connection;[unknown];do_command;my_net_read 20\n")


def test_leaf_shares_are_the_leaves_share_of_the_samples():
    assert leaf_shares(OLD) == {"row_search_mvcc": 0.3, "btr_search_guess_on_hash": 0.2,
                                UNKNOWN: 0.1, "my_net_read": 0.4}
    assert leaf_shares("") == {} and leaf_shares("garbage\n") == {}


def test_functions_compare_by_name_and_add_up_to_the_whole_change():
    named, unknown = by_function(OLD, 50.0, NEW, 80.0)
    costs = {c.function: (c.baseline_us, c.candidate_us) for c in named}
    assert costs["row_search_mvcc"] == pytest.approx((15.0, 24.0))
    assert costs["btr_search_guess_on_hash"] == pytest.approx((10.0, 0.0))  # gone
    assert costs["page_cur_search_with_match"] == pytest.approx((0.0, 20.0))  # new
    assert (unknown.baseline_us, unknown.candidate_us) == pytest.approx((5.0, 20.0))
    assert UNKNOWN not in costs
    # every microsecond of the change is some function's, or the unnamed frames'
    assert sum(c.change_us for c in named) + unknown.change_us == pytest.approx(30.0)
    # largest change first; top cuts the list
    assert [c.function for c in named][:2] == ["page_cur_search_with_match",
                                               "btr_search_guess_on_hash"]
    assert len(by_function(OLD, 50.0, NEW, 80.0, top=2)[0]) == 2


def _profiled_run(store, folder, run_id: str, server: str, us_in: float, us_out: float,
                  stretch: tuple[float, float] | None) -> None:
    """A run of 30 s at 1,000 tps whose mysqld spends ``us_in`` CPU microseconds a
    transaction from 10 s to 20 s and ``us_out`` around it, profiled over ``stretch``
    (None: all along, no events)."""
    from harness.collectors.base import PROFILING
    from harness.store import RunRecord, RunSummary

    store.create_run(RunRecord(run_id=run_id, run_set="s", scenario="sc", server=server,
                               flavor="mysql", version="1", variant="v", target="local",
                               host="h", started_at="2026-01-01T00:00:00+00:00"))
    w = store.writer(run_id)
    cpu = 0.0
    for t in range(31):
        w.add(float(t), "sysbench", "tps", 1000.0)
        w.add(float(t), "mysqld_process", "harness_mysqld_cpu_seconds_total", cpu)
        cpu += (us_in if 10 <= t < 20 else us_out) * 1000 / 1e6
    w.close()
    if stretch:
        for name, t in zip(("start", "stop"), stretch, strict=True):
            store.add_event(run_id, t, PROFILING, name, {"artifact": "cpu.folded"})
    art = folder / run_id
    art.mkdir()
    (art / "cpu.folded").write_text("mysqld;do_command;f 60\nmysqld;do_command;g 40\n")
    store.save_artifacts(run_id, art)
    store.update_run(run_id, status="ok", summary=RunSummary.of_workload(
        {"workload": "sysbench oltp_point_select", "tps_median": 1000.0},
        main_window=[0.0, 30.0]))


def test_the_cpu_by_function_reads_the_cpu_over_the_seconds_profiled(tmp_path):
    """A profile of one ramp step (threads: [1]) is weighed by mysqld's CPU per
    transaction over that step, not over the whole run."""
    from harness.analysis.upgrade import cpu_by_function
    from harness.store import open_store

    store = open_store(f"sqlite:///{tmp_path}/h.db")
    _profiled_run(store, tmp_path, "a", "base", 100.0, 300.0, (10.0, 20.0))
    _profiled_run(store, tmp_path, "b", "cand", 150.0, 300.0, (10.0, 20.0))
    (c,) = cpu_by_function(store, store.runs(run_set="s"), "base", "cpu.folded")
    assert round(c.baseline_us) == 100 and round(c.candidate_us) == 150
    # without the stretch's events: the measured part, the whole run
    store2 = open_store(f"sqlite:///{tmp_path}/h2.db")
    (tmp_path / "all").mkdir()
    _profiled_run(store2, tmp_path / "all", "a", "base", 100.0, 300.0, None)
    _profiled_run(store2, tmp_path / "all", "b", "cand", 150.0, 300.0, None)
    (c,) = cpu_by_function(store2, store2.runs(run_set="s"), "base", "cpu.folded")
    assert 200 < c.baseline_us < 250 and 215 < c.candidate_us < 265
