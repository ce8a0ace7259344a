"""The sequential A/B test on simulated streams (fixed seeds): however many times it
looks, it calls a difference between identical sides at most alpha of the time, finds
a real one, and says "no change larger than X%" only when that is true."""
from __future__ import annotations

import numpy as np
import pytest

from harness.analysis.sequential import Budget, look, look_alpha, parse_duration
from harness.store import RunSummary

EFFECT = 0.03


def first_decision(rng: np.random.Generator, ratio: float, noise: float,
                   rounds: int) -> tuple[str | None, int]:
    """Rounds of one run per side (log-normal run-to-run noise) until a look decides."""
    a: list[float] = []
    b: list[float] = []
    k = 0
    for _ in range(rounds):
        a.append(1000 * float(np.exp(rng.normal(0, noise))))
        b.append(1000 * ratio * float(np.exp(rng.normal(0, noise))))
        seen = look(a, b, k + 1, EFFECT)
        if seen is None:
            continue
        k += 1
        if seen.verdict:
            return seen.verdict, k
    return None, k


def decisions(ratio: float, noise: float, rounds: int, n: int, seed: int) -> list[str | None]:
    rng = np.random.default_rng(seed)
    return [first_decision(rng, ratio, noise, rounds)[0] for _ in range(n)]


def test_looking_after_every_round_keeps_the_false_alarm_rate_under_alpha():
    # Identical sides at 5% run-to-run noise, up to 40 looks each: a fixed-level test
    # repeated 40 times would cry wolf far more often than 5%.
    calls = decisions(1.0, 0.05, 42, 1000, seed=1)
    wrong = sum(c in ("better", "worse") for c in calls)
    assert wrong <= 50, wrong


def test_a_real_6_percent_drop_is_found():
    calls = decisions(0.94, 0.03, 30, 400, seed=2)
    assert calls.count("worse") >= 0.9 * len(calls), calls.count("worse")
    assert "better" not in calls


def test_no_change_larger_than_x_is_never_said_of_a_larger_change():
    # A true +5% change against a 3% bound: "no change larger than 3%" would be wrong.
    calls = decisions(1.05, 0.03, 40, 600, seed=3)
    assert calls.count("no change larger than 3%") <= 0.05 * len(calls)
    assert calls.count("worse") == 0


def test_identical_quiet_sides_are_called_equivalent():
    calls = decisions(1.0, 0.01, 20, 300, seed=4)
    assert calls.count("no change larger than 3%") >= 0.9 * len(calls)
    # Noisier: it takes more rounds. (Paired rounds on runs with no drift: 188 of 300;
    # Welch's interval on the same runs, 240: a pair's difference has half the degrees
    # of freedom. On a drifting host pairing wins: the next test.)
    calls = decisions(1.0, 0.02, 30, 300, seed=5)
    assert calls.count("no change larger than 3%") >= 0.6 * len(calls)


def test_the_looks_share_alpha_and_the_budget_stops_a_round_that_would_overrun():
    assert sum(look_alpha(0.05, k) for k in range(1, 100_000)) < 0.05
    assert Budget(900).allows(0, 0) and Budget(900).allows(600, 2)  # 300 s a round
    assert not Budget(900).allows(700, 2)
    assert look([1000.0, 1001.0], [1000.0, 999.0], 1, EFFECT) is None  # too few runs
    assert parse_duration("15m") == 900 and parse_duration("90") == 90
    with pytest.raises(ValueError, match="a duration like"):
        parse_duration("soon")


def test_the_rule_looks_after_each_round_and_stops_on_a_failed_run():
    from types import SimpleNamespace as Run

    from harness.analysis.sequential import SequentialRule

    said: list[str] = []
    rule = SequentialRule("a", "b", EFFECT, Budget(3600), log=said.append,
                          clock=lambda: 0.0)

    def runs(pairs: int, ratio: float = 0.5) -> list[Run]:
        out = []
        for i in range(pairs):
            out += [Run(run_id=f"a{i}", variant="a", status="ok",
                        summary=RunSummary.of_workload({"tps_median": 1000.0 + i})),
                    Run(run_id=f"b{i}", variant="b", status="ok",
                        summary=RunSummary.of_workload({"tps_median": 1000.0 * ratio + i}))]
        return out
    assert rule(runs(2)) is None and not rule.looks  # 2 rounds: no look yet
    assert rule(runs(3)[:-1]) is None  # mid-round
    assert rule(runs(3)) == "decided after 3 rounds: worse" and rule.verdict == "worse"
    assert said and said[0].startswith("  sequential: look 1 (3 rounds paired)")
    failed = SequentialRule("a", "b", EFFECT, Budget(3600), log=said.append)
    broken = runs(1) + [Run(run_id="a9", variant="a", status="failed")]
    assert failed(broken) == "run a9 (a) failed" and failed.verdict == "undecided"


def test_the_rule_can_watch_p95_where_tps_does_not_move():
    from types import SimpleNamespace as Run

    from harness.analysis.sequential import SequentialRule

    def runs(pairs: int) -> list[Run]:
        out = []
        for i in range(pairs):
            for side, p95 in (("a", 10.0), ("b", 20.0)):
                out.append(Run(run_id=f"{side}{i}", variant=side, status="ok",
                               summary=RunSummary.of_workload({
                                   "workload": "sysbench oltp_read_only",
                                   "tps_median": 1000.0 + i, "latency_p95_ms": p95 + i})))
        return out
    said: list[str] = []
    on_tps = SequentialRule("a", "b", EFFECT, Budget(3600), log=said.append, clock=lambda: 0.0)
    # the headline, tps, is the same on both sides
    assert on_tps(runs(3)) == "decided after 3 rounds: no change larger than 3%"
    on_p95 = SequentialRule("a", "b", EFFECT, Budget(3600), log=said.append,
                            clock=lambda: 0.0, watch="p95_ms")
    assert on_p95(runs(3)) == "decided after 3 rounds: worse"  # p95 doubled: lower is better
    assert on_p95.text().startswith("sequential verdict on p95_ms: worse")
    assert on_p95.to_json()["watch"] == "p95_ms"
    missing = SequentialRule("a", "b", EFFECT, Budget(3600), log=said.append, watch="qph")
    assert missing(runs(3)) == "the workload has no figure 'qph' to watch"


def test_on_a_drifting_host_paired_balanced_rounds_see_more_and_stay_under_alpha():
    # Run levels as an AR(1) of correlation 0.76 (the noisiest hour measured here),
    # 3% from run to run, 11 rounds (15 minutes of quickstart runs).
    from harness.analysis.power import drift_trials

    def rates(shift: float, order: str, paired: bool, seed: int):
        return drift_trials(0.03, 0.76, 11, 1000, EFFECT, shift, order, paired, seed=seed)
    paired = rates(-0.03, "ABBA", True, seed=6)
    welch = rates(-0.03, "ABBA", False, seed=6)
    assert paired.found >= 1.6 * welch.found, (paired.found, welch.found)
    for order in ("ABBA", "AB"):  # identical sides: under alpha in either order
        assert rates(0.0, order, True, seed=7).called <= 50
    # Blocks of runs (AAABBB) let the drift into the difference: Welch's interval,
    # which takes the runs as independent, then calls identical sides different
    # well over alpha.
    assert rates(0.0, "AAABBB", False, seed=8).called > 60
