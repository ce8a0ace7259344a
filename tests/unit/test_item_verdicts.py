"""Compare item by item (a replay's digests): speed verdicts at alpha / k, and results
that differ between the sides, from checksums that do not depend on the order in which
the replay's sessions ran."""
from __future__ import annotations

import random

import pytest

from harness.analysis.ab_verdict import Limits
from harness.analysis.items import item_verdicts, result_differences, runs_needed
from harness.store import RunSummary
from harness.workloads.fingerprint import digest, fingerprint
from harness.workloads.replay import _digest_json, _result_checksum
from harness.workloads.replay_shared import SAMPLE, DigestStats

from ..conftest import a_run

POINT = [f"SELECT c FROM t WHERE id={i}" for i in range(40)]
RANGE = [f"SELECT c FROM t WHERE id BETWEEN {i} AND {i + 9}" for i in range(40)]


def _run(ms: dict[str, float], rows: dict[str, list[tuple]], seed: int,
         statements: list[str] = POINT + RANGE) -> dict:
    """A replay run's stored form: each statement run once, in an order of its own,
    taking ``ms[fingerprint]`` and returning ``rows[sql]``."""
    stats: dict[str, DigestStats] = {}
    statements = list(statements)
    random.Random(seed).shuffle(statements)
    for sql in statements:
        fp = fingerprint(sql)
        s = stats.setdefault(digest(fp), DigestStats(fp, sql))
        s.add(ms[fp], len(rows.get(sql, [])), None)
        s.add_result(sql, _result_checksum(rows.get(sql, [])))
    total = sum(s.total_ms for s in stats.values())
    measured = {"workload": "replay x.log",
                "digests": {d: _digest_json(s, total) for d, s in stats.items()}}
    return a_run(run_id=f"r{seed}", status="ok", summary=RunSummary.of_workload(measured))


FPS = [fingerprint(POINT[0]), fingerprint(RANGE[0])]
DATA = {sql: [(f"row of {sql}",)] for sql in POINT + RANGE}


def test_a_digests_checksum_and_sample_do_not_depend_on_the_order():
    a, b = (_run(dict.fromkeys(FPS, 1.0), DATA, seed).summary.measured["digests"]
            for seed in (1, 2))
    assert {d: (x["checksum"], x["checksum_sample"]) for d, x in a.items()} == \
        {d: (x["checksum"], x["checksum_sample"]) for d, x in b.items()}
    assert all(len(x["checksum_sample"]) == SAMPLE for x in a.values())


def test_results_that_differ_are_named_with_a_statement_that_shows_it():
    base = [_run(dict.fromkeys(FPS, 1.0), DATA, seed) for seed in (1, 2, 3)]
    changed = dict(DATA) | {sql: [("another row",)] for sql in RANGE}
    cand = [_run(dict.fromkeys(FPS, 1.0), changed, seed) for seed in (4, 5, 6)]
    differ, note = result_differences(base, cand)
    assert [x.label for x in differ] == [FPS[1]]
    assert differ[0].example in RANGE
    assert note == "results of 2 digests compared: 1 differ"
    assert result_differences(base, base[::-1]) == (
        [], "results of 2 digests compared: 0 differ")


def test_results_that_vary_within_a_side_are_counted_not_compared():
    base = [_run(dict.fromkeys(FPS, 1.0), DATA, 1),
            _run(dict.fromkeys(FPS, 1.0), DATA | {POINT[3]: [("now",)]}, 2)]
    cand = [_run(dict.fromkeys(FPS, 1.0), DATA | {POINT[3]: [("later",)]}, 3)] * 2
    differ, note = result_differences(base, cand)
    assert differ == [] and "1 vary between runs of one side" in note


def test_runs_that_checked_other_statements_are_not_compared():
    base = [_run(dict.fromkeys(FPS, 1.0), DATA, 1)]
    cut = _run(dict.fromkeys(FPS, 1.0), DATA, 2, POINT + RANGE[:-1])  # cut short
    differ, note = result_differences(base, [cut])
    assert differ == [] and note == (
        "results of 1 digests compared: 0 differ; 1 ran a different number of statements "
        "in some run (a replay cut short by duration_s?), not compared")


@pytest.mark.parametrize("runs", [4, 8])
def test_a_slowed_digest_is_judged_only_with_runs_enough_for_its_alpha(runs):
    rnd = random.Random(7)
    base = [_run({FPS[0]: rnd.gauss(1.0, 0.02), FPS[1]: rnd.gauss(5.0, 0.1)}, DATA, s)
            for s in range(runs)]
    cand = [_run({FPS[0]: rnd.gauss(1.0, 0.02), FPS[1]: rnd.gauss(7.5, 0.1)}, DATA, s)
            for s in range(runs)]
    items, note = item_verdicts(base, cand, Limits(min_runs=3))
    assert [x.label for x in items] == FPS[::-1], "most slowed first"
    assert items[0].ratio == pytest.approx(1.5, abs=0.05)
    assert "2 digests in every side's runs, each judged at alpha 0.025 (/2" in note
    if runs < runs_needed(0.025):
        assert items[0].judged.verdict is None and f"it takes {runs_needed(0.025)} runs" in note
    else:
        assert items[0].judged.verdict == "worse" and items[1].judged.verdict != "worse"


def test_two_sides_apart_are_decided_though_one_side_has_a_tie():
    """exp-own-workload's join digest: x14 slower, 6 runs a side, two baseline runs
    equal to the last digit; judged at alpha / 15 it was 'no significant difference'
    (p 0.005 by the normal approximation) until the exact test was kept for ties
    within a side."""
    from harness.analysis.ab_verdict import Metric, judge

    base = [43.1286, 40.4857, 40.9071, 41.5786, 43.1286, 39.6214]
    cand = [608.59, 580.52, 564.48, 599.96, 633.24, 559.14]
    v = judge(Metric("join", higher_is_better=False), base, cand, Limits(alpha=0.05 / 15))
    assert v.p_value == pytest.approx(2 / 924) and v.verdict == "worse"
