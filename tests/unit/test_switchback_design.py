"""The switchback's scenario: an option one side leaves out gets the server's default
there (the server starts with that side's options; its windows set the option back to
the value read at the start), and values read from the server go back as literals the
server takes."""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.runner import switchback
from harness.scenario import load_scenario
from harness.server.mysql import shown_literal

SCENARIO = """\
name: sb
servers: [mariadb-10.11]
dataset: {tables: 1, table_size: 1000}
workload: {test: oltp_point_select, threads: 1, warmup_s: 1, duration_s: 3}
mysqld: {log_output: TABLE}
variants:
  plain: {description: general_log left to the default}
  logged: {mysqld: {general_log: 1, innodb_io_capacity: 400}}
  quiet: {mysqld: {general_log: 0}}
"""


@pytest.fixture
def sc(tmp_path: Path):
    f = tmp_path / "sb.yaml"
    f.write_text(SCENARIO)
    return load_scenario(f)


def _windows(sc, pair):
    amended = switchback.scenario(sc, pair, window_s=2, windows=8)
    return amended, {ch.name[-1]: (dict(ch.set_global), sorted(ch.reset))
                     for ch in amended.model.config_changes}


def test_an_option_the_baseline_leaves_out_is_reset_in_its_windows(sc):
    assert switchback.differing(sc, ["plain", "logged"]) == {
        "general_log": (None, 1), "innodb_io_capacity": (None, 400)}
    amended, sides = _windows(sc, ["plain", "logged"])
    assert sides == {"A": ({}, ["general_log", "innodb_io_capacity"]),
                     "B": ({"general_log": 1, "innodb_io_capacity": 400}, [])}
    (variant,) = amended.model.variants.values()
    assert variant.mysqld == {} and "started with plain's options" in variant.description


def test_an_option_the_candidate_leaves_out_starts_the_server_with_its_options(sc):
    amended, sides = _windows(sc, ["logged", "plain"])
    assert sides == {"A": ({"general_log": 1, "innodb_io_capacity": 400}, []),
                     "B": ({}, ["general_log", "innodb_io_capacity"])}
    (variant,) = amended.model.variants.values()
    assert variant.mysqld == {} and "started with plain's options" in variant.description


def test_options_left_out_by_each_side_in_turn_are_refused(sc):
    # quiet sets general_log only, logged also innodb_io_capacity: fine either way ...
    assert switchback.why_not(sc, ["quiet", "logged"]) is None
    _, sides = _windows(sc, ["quiet", "logged"])
    assert sides["A"] == ({"general_log": 0}, ["innodb_io_capacity"])
    # ... but a side that lacks one option while the other lacks another is not
    sc = sc.amended(lambda d: d["variants"].update(io={"mysqld": {"innodb_io_capacity": 800}}))
    why = switchback.why_not(sc, ["io", "quiet"])
    assert why is not None and "innodb_io_capacity set by the baseline only" in why
    assert "general_log by the candidate only" in why


@pytest.mark.parametrize("shown, literal", [
    ("400", "400"), ("-1", "-1"), ("10.000000", "10.000000"), ("OFF", "'OFF'"),
    ("", "''"), ("O_DIRECT", "'O_DIRECT'"), ("it's", "'it''s'"), ("a\\b", "'a\\\\b'")])
def test_a_value_as_the_server_showed_it_goes_back_as_a_literal(shown, literal):
    assert shown_literal(shown) == literal
