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
