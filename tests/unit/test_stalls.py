"""Stalls are a result, and the verdict path's words never contradict its numbers.

A side that makes no progress where the other does is worse even when no interval can
be computed (the log of 0 tps); an empty window's latency is missing, never 0; and every
reason the verdict path gives is read against the numbers it was fed, on the edge cases:
no data, one pair or run, all zero, all equal."""
from __future__ import annotations

import re

import numpy as np
import pytest

from harness.analysis import stalls
from harness.analysis.ab_verdict import Comparison, Limits, Metric, final_verdict
from harness.analysis.ab_verdict import judge as judge_runs
from harness.analysis.switchback import Window, pairs, window_values
from harness.analysis.switchback import judge as judge_windows

TPS, P95 = Metric("tps", True), Metric("p95_ms", False)


def _windows(values_a: list[float], values_b: list[float]) -> list[tuple[float, float]]:
    return list(zip(values_a, values_b, strict=True))


def _no_contradiction(why: str, verdict: str | None) -> None:
    """The reason's own numbers agree with what it concludes."""
    if m := re.search(r"(\d+) quads to judge by, and (\d+) are the fewest", why):
        assert int(m[1]) < int(m[2]), why
    if m := re.search(r"too few runs \((\d+) baseline, (\d+) candidate\): no verdict; "
                      r"(\d+) a side", why):
        assert min(int(m[1]), int(m[2])) < int(m[3]), why
    if verdict is None:
        assert "no verdict" in why, why
    if verdict == "could not tell":
        assert "were not visible in this run" in why or "cannot be told" in why, why
    if verdict == "no significant difference":
        assert "inside the" in why or "every run of both sides is" in why, why


@pytest.mark.parametrize("paired", [
    [], [(100.0, 100.0)], [(0.0, 0.0)] * 28, [(100.0, 100.0)] * 28,
    [(100.0, 0.0)] * 28, [(100.0, 101.0)] * 7])
@pytest.mark.parametrize("metric", [TPS, P95])
def test_switchback_reasons_agree_with_their_numbers(paired, metric):
    v = judge_windows(metric, paired)
    _no_contradiction(v.why, v.verdict)
    if len(paired) == 28 and paired[0] == (100.0, 100.0):
        assert v.verdict == "no significant difference" and v.reach == 0


@pytest.mark.parametrize("a,b", [
    ([], []), ([100.0], [100.0]), ([0.0] * 5, [0.0] * 5), ([100.0] * 5, [100.0] * 5),
    ([100.0] * 5, [0.0] * 5), ([100.0, 101, 99, 100, 102], [100.0, 99, 101, 100, 98])])
@pytest.mark.parametrize("metric", [TPS, P95])
def test_run_reasons_agree_with_their_numbers(a, b, metric):
    v = judge_runs(metric, a, b)
    _no_contradiction(v.why, v.verdict)


def test_a_candidate_that_stalls_where_the_baseline_does_not_is_worse():
    # The buffer pool cut 8x, switched every window: the candidate made no progress in
    # 22 of 28 windows, against a baseline median of 546 tps.
    rng = np.random.default_rng(1)
    base = list(546 * (1 + rng.normal(0, 0.03, 28)))
    cand = [0.0] * 22 + list(300 * (1 + rng.normal(0, 0.03, 6)))
    paired = _windows(base, cand)
    s = stalls.of_pairs([(a <= 0, b <= 0) for a, b in paired], alpha=0.05)
    assert (s.baseline, s.candidate, s.candidate_of) == (0, 22, 28)
    assert s.verdict == "worse" and s.p_value == pytest.approx(2 * 0.5 ** 22)
    assert "the candidate made no progress in 22 of its 28 windows" in s.text()
    tps = judge_windows(TPS, paired)
    assert tps.verdict is None  # too few quads left to judge a ratio by ...
    c = Comparison("a.cnf", "b.cnf", "s", ["r"], ["r"], [tps], design="switchback",
                   stalls=s)
    assert (c.overall, c.exit_code) == ("worse", 3)  # ... and still worse: it stalled
    assert "stalls: the candidate made no progress" in c.text()
    assert final_verdict([c]).line().startswith("verdict: the candidate is WORSE")
    # the other way round, the candidate is better
    flipped = stalls.of_pairs([(b <= 0, a <= 0) for a, b in paired], alpha=0.05)
    assert flipped.verdict == "better"


def test_a_stall_or_two_is_shown_and_decides_nothing():
    s = stalls.of_pairs([(False, True)] + [(False, False)] * 27, alpha=0.05)
    assert s.verdict is None and s.p_value == 1.0 and s.candidate == 1
    assert "too few to tell the sides apart by" in s.text()
    both = stalls.of_pairs([(True, True)] * 3 + [(False, False)] * 25, alpha=0.05)
    assert both.verdict is None and both.any


def test_stalled_runs_are_judged_by_fishers_test():
    s = stalls.of_runs([False] * 5, [True] * 5, alpha=0.05)
    assert s.unit == "runs" and s.verdict == "worse" and s.p_value < 0.01
    assert stalls.of_runs([False] * 5, [True] + [False] * 4, 0.05).verdict is None
    assert stalls.of_runs([False] * 5, [False] * 5, 0.05).p_value is None
    assert stalls.stalled([0, 0, 5]) and not stalls.stalled([0, 5, 5])
    assert not stalls.stalled([])  # not measured is not stalled


def test_an_empty_second_has_no_latency():
    # sysbench prints a p95 of 0.00 for a second that finished nothing: left out, the
    # window whose seconds all were empty has no value (never 0 ms: the fastest)
    wins = [Window(0, "A", 0.0, 4.0, False), Window(1, "B", 4.0, 8.0, True)]
    t = np.arange(1.0, 9.0)
    tps = np.array([100, 100, 100, 100, 0, 0, 0, 0.0])
    p95 = np.array([5, 5, 5, 5, 0, 0, 0, 0.0])
    busy = tps > 0
    assert [x for _, x in window_values(t, p95, wins, 1, keep=busy)] == [5.0]
    assert [x for _, x in window_values(t, p95, wins, 1)] == [5.0, 0.0]  # unmasked: 0
    assert pairs(window_values(t, p95, wins, 1, keep=busy)) == []


def test_no_difference_needs_the_interval_inside_the_band():
    lim = Limits(noise=0.03)
    rng = np.random.default_rng(5)
    a = list(1000 * (1 + rng.normal(0, 0.002, 56)))
    wide = judge_windows(TPS, _windows(a, list(1000 * (1 + rng.normal(0, 0.25, 56)))), lim)
    assert wide.verdict == "could not tell" and wide.reach > 0.03, wide
    assert f"changes under {wide.reach:.1%} were not visible in this run" in wide.why
    c = Comparison("a", "b", "s", [], [], [wide])
    assert (c.overall, c.exit_code) == ("could not tell", 4)
    assert "reach: the smallest change each interval could tell from none: tps" in c.text()
    assert "COULD NOT TELL" in final_verdict([c]).line()
    narrow = judge_windows(TPS, _windows(a, list(1000 * (1 + rng.normal(0, 0.002, 56)))),
                           lim)
    assert narrow.verdict == "no significant difference" and narrow.reach < 0.03, narrow
    assert final_verdict([Comparison("a", "b", "s", [], [], [narrow])]).exit_code == 0


def test_a_costly_collector_says_what_it_was_measured_to_cost():
    from harness.collectors.wait_events import chosen, measured_cost

    said = {(f, v): measured_cost(chosen(None, f, v), f, v)
            for f, v in (("mariadb", (10, 11, 9)), ("mysql", (5, 7, 29)), ("mysql", (9, 7)),
                         ("mysql", (5, 6, 24)))}
    assert said["mariadb", (10, 11, 9)].startswith("costs about 1.3% of throughput")
    assert "within 0.6%" in said["mysql", (5, 7, 29)] and "within 0.6%" in said["mysql", (9, 7)]
    assert "2-2.5%" in said["mysql", (5, 6, 24)] and "older builds not measured" in \
        said["mysql", (5, 6, 24)]
    assert "about 3% of throughput" in measured_cost("all", "mysql", (9, 7))
    assert all("docs/collectors.md" in x for x in said.values())


def test_the_design_follows_how_the_option_settles(tmp_path):
    """A cache or log size is never switched every few seconds under auto (interleaved
    runs from the same data, the note says which option and why); --design switchback
    switches it anyway and says what that measures; a switchback whose windows stalled
    twice or more runs again as interleaved runs, saying so."""
    from harness.paths import AB_DIR
    from harness.runner.designs import _settles_at_once, _stalled_after_switches
    from harness.runner.request import CompareRequest

    for name in ("a.cnf", "b.cnf"):
        (tmp_path / name).write_text("[mysqld]\n")

    def request(design: str) -> CompareRequest:
        return CompareRequest(scenario=str(AB_DIR / "oltp_read_write.yaml"),
                              baseline=str(tmp_path / "a.cnf"),
                              candidate=str(tmp_path / "b.cnf"), design=design, quiet=True)

    auto = request("auto")
    assert _settles_at_once(auto, ["innodb_flush_log_at_trx_commit", "innodb_io_capacity"])
    assert not auto.notes
    assert not _settles_at_once(auto, ["innodb_flush_log_at_trx_commit",
                                       "innodb_buffer_pool_size", "innodb_redo_log_capacity"])
    (note,) = [n for n in auto.notes if n.startswith("design:")]
    assert note.startswith("design: interleaved runs, each from the same data with a restart "
                           "and a warmup, because innodb_buffer_pool_size is slow to settle:"), note
    assert "innodb_redo_log_capacity is slow to settle" in note
    assert "innodb_flush_log_at_trx_commit" not in note
    forced = request("switchback")
    assert _settles_at_once(forced, ["innodb_adaptive_hash_index"])
    assert forced.notes[-1].startswith("design: switchback as --design switchback asks, "
                                       "although innodb_adaptive_hash_index is slow")

    def judged(pairs: list[tuple[bool, bool]]) -> Comparison:
        return Comparison("a", "b", "s", ["r"], ["r"], [], design="switchback",
                          stalls=stalls.of_pairs(pairs, 0.05))

    quiet = [(False, False)] * 20
    assert not _stalled_after_switches(auto, [judged([(False, True)] + quiet)])
    assert _stalled_after_switches(auto, [judged([(False, True), (True, False)] + quiet)])
    assert "the switchback's windows stalled after its switches" in auto.notes[-1]
    assert not _stalled_after_switches(forced, [judged([(False, True)] * 5 + quiet)])


class _Reader:
    """Runs' throughput series, as a store reads them back: 40 s at ~1,000 tps each."""

    def series(self, run_id, source=None, metric=None):
        from harness.store.db import Series
        if (source, metric) != ("sysbench", "tps"):
            return []
        t = np.arange(1.0, 41.0)
        return [Series("sysbench", "tps", {}, t, np.full(40, 1000.0))]

    def events(self, run_id):
        return []


def test_a_run_with_a_stall_in_its_headline_is_a_stalled_run_of_its_side():
    # Its median throughput is not 0 (the server answered most of the time), yet it
    # answered nothing for 20 of its 45 s: the candidate's four such runs make it worse.
    from harness.analysis.compare import stalls_of
    from harness.store import RunSummary

    from ..conftest import a_run
    note = "mysqld answered nothing for 20 s of the 45 s measured"
    base = [a_run(run_id=f"b{i}") for i in range(4)]
    cand = [a_run(run_id=f"c{i}", summary=RunSummary(stall=note)) for i in range(4)]
    found = stalls_of(_Reader(), base, cand, 0.05)
    assert (found.baseline, found.candidate, found.candidate_of) == (0, 4, 4)
    assert found.verdict == "worse", found
    assert stalls_of(_Reader(), base, base, 0.05).candidate == 0
