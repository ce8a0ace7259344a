"""Variance components, the smallest detectable change and trial rates
(harness/analysis/power.py) on synthetic runs of known make-up (seeded)."""
import math

import numpy as np
import pytest

from harness.analysis import power
from harness.stats.steady import settled_after


def runs(n, between_sd, within_sd, seconds=30, level=1000.0, seed=0):
    """``n`` runs: each at its own level (log-normal, ``between_sd``), its seconds
    independent around it (``within_sd``); the run's value is its seconds' median."""
    rng = np.random.default_rng(seed)
    secs = [level * np.exp(rng.normal(0, between_sd) + rng.normal(0, within_sd, seconds))
            for _ in range(n)]
    return [float(np.median(s)) for s in secs], secs


def test_components_find_the_run_to_run_share():
    values, secs = runs(40, between_sd=0.03, within_sd=0.05)
    c = power.components(values, secs, 30)
    # the median of 30 seconds at sd 5% varies by about 1.25 * 5% / sqrt(30) = 1.1%
    assert 0.007 < math.sqrt(c.within) < 0.016
    assert 0.02 < math.sqrt(c.between) < 0.04
    assert c.dominant == "between runs"
    assert c.best_run_s(overhead_s=10) < 15
    assert "more runs help" in c.advice(overhead_s=10)


def test_components_without_a_run_to_run_share_say_longer_runs_help():
    values, secs = runs(40, between_sd=0.0, within_sd=0.1)
    c = power.components(values, secs, 30)
    assert c.dominant == "within runs"
    assert "longer runs help" in c.advice(overhead_s=10)
    assert c.at(120) < c.at(30)  # four times the seconds leave a quarter of that share


def test_components_need_three_runs():
    values, secs = runs(2, 0.03, 0.05)
    assert power.components(values, secs, 30) is None


def test_detectable_change_is_seen_with_the_stated_power():
    """A change of exactly the stated size, 10 runs a side at 3%: a two-sided z-test at
    alpha 0.05 finds it in about 90% of 4,000 seeded trials."""
    sd, n = 0.03, 10
    mde = power.detectable(sd ** 2, n)
    assert 0.04 < mde < 0.05
    rng = np.random.default_rng(5)
    a = rng.normal(0, sd, (4000, n)).mean(axis=1)
    b = rng.normal(math.log1p(mde), sd, (4000, n)).mean(axis=1)
    found = np.mean(np.abs(b - a) / (sd * math.sqrt(2 / n)) > 1.959964)
    assert 0.87 < found < 0.93
    assert power.detectable(sd ** 2, 1) is None
    assert power.runs_a_side(900, 45) == 10


def test_simulated_aa_trials_stay_under_alpha_and_a_known_drop_is_found():
    aa = power.simulated_trials(0.02 ** 2, rounds=12, trials=600, effect=0.03, seed=1)
    assert aa.called / aa.trials <= 0.05
    drop = power.simulated_trials(0.02 ** 2, rounds=12, trials=300, effect=0.03,
                                  shift=-0.06, seed=2)
    assert drop.found / drop.trials >= 0.9
    assert drop.called - drop.found <= 1  # "better" for a drop: almost never


def test_latency_trials_count_a_rise_as_found():
    rise = power.simulated_trials(0.02 ** 2, rounds=12, trials=200, effect=0.05,
                                  shift=0.08, higher_is_better=False, seed=3)
    assert rise.found / rise.trials >= 0.9


def test_split_trials_on_one_pool():
    """A/A halves of one pool are rarely told apart; the same halves with a 6% drop
    put into the candidate's runs are."""
    values, _ = runs(24, between_sd=0.015, within_sd=0.02, seed=4)
    aa = power.split_trials(values, rounds=10, trials=200, effect=0.03, seed=1)
    assert aa.rounds == 10
    assert aa.called / aa.trials <= 0.1
    drop = power.split_trials(values, rounds=10, trials=200, effect=0.03, shift=-0.06,
                              seed=2)
    assert drop.found / drop.trials >= 0.9
    assert power.split_trials(values, rounds=50, trials=5, effect=0.03).rounds == 12


def test_sequential_verdict_matches_the_rule_of_harness_compare():
    from harness.analysis.sequential import look

    rng = np.random.default_rng(9)
    a, b = list(np.exp(rng.normal(0, 0.02, 8))), list(np.exp(rng.normal(-0.1, 0.02, 8)))
    first = look(a[:3], b[:3], 1, 0.03)
    assert power.sequential_verdict(a, b, 0.03) == first.verdict == "worse"
    assert power.sequential_verdict(a[:2], b[:2], 0.03) == "undecided"


def test_two_sides_merge_into_one_statement():
    a = power.Components(5, 30, 0.0004, 0.0001, 0.0003)
    b = power.Components(5, 30, 0.0016, 0.0001, 0.0015)
    m = power.merged(a, b)
    assert (m.runs, m.total, m.within) == (10, pytest.approx(0.001), pytest.approx(0.0001))
    assert m.between == pytest.approx(0.0009)
    said = m.noise(overhead_s=8, metric="tps_median")
    assert said.text.startswith("tps_median varies 3.2% run to run (10 runs of 30 s; "
                                "within a run 1.0%)")


def test_switchback_trials_on_one_stream():
    """A 800 s stream of correlated seconds (AR(1), 0.6) at 4% per second: windows
    re-cut from it rarely tell A from A; with B's seconds 3% lower they do."""
    rng = np.random.default_rng(11)
    e = np.zeros(800)
    for i in range(1, 800):
        e[i] = 0.6 * e[i - 1] + rng.normal(0, 0.04 * math.sqrt(1 - 0.36))
    t = np.arange(1.0, 801.0)
    v = 1000 * np.exp(e)
    aa = power.switchback_trials(t, v, 10, trials=100, seed=1)
    assert aa.rounds >= 20 and aa.called / aa.trials <= 0.1
    drop = power.switchback_trials(t, v, 10, trials=100, shift=-0.03, seed=2)
    assert drop.found / drop.trials >= 0.9
    rise = power.switchback_trials(t, v, 10, trials=50, shift=0.05, higher_is_better=False,
                                   seed=3)
    assert rise.found / rise.trials >= 0.9
    few = power.switchback_trials(t, v, 6, trials=20, shift=-0.03, seed=4, windows=32)
    assert few.rounds == 16  # 32 windows of 6 s: 16 pairs, wherever the cut starts


def test_shorter_windows_cancel_slow_noise():
    """Seconds whose noise is slow (AR(1), 0.95 a second: 0.6 at 10 s apart, as one
    thread's seconds here) at 6% a second: in the same 336 s, 56 windows of 6 s find a
    3% drop more often than 32 of 10 s (why compare's default is 6 s), at an A/A rate
    within the test's level."""
    rng = np.random.default_rng(12)
    e = np.zeros(900)
    for i in range(1, 900):
        e[i] = 0.95 * e[i - 1] + rng.normal(0, 0.06 * math.sqrt(1 - 0.95 ** 2))
    t, v = np.arange(1.0, 901.0), 1000 * np.exp(e)
    short = power.switchback_trials(t, v, 6, trials=100, shift=-0.03, seed=5, windows=56)
    long = power.switchback_trials(t, v, 10, trials=100, shift=-0.03, seed=5, windows=32)
    assert short.found >= long.found + 20, (short.found, long.found)
    aa = power.switchback_trials(t, v, 6, trials=100, seed=6, windows=56)
    assert aa.called <= 10


def test_b_windows_are_the_seconds_inside_them():
    t = np.arange(1.0, 9.0)  # seconds (0,1] ... (7,8]
    # windows of 2 s from 0: A (0,2], B (2,4], B (4,6], A (6,8]
    assert list(power._in_b(t, 0.0, 2.0, ["A", "B", "B", "A"])) == [
        False, False, True, True, True, True, False, False]


def test_settling_is_found_only_where_the_start_stands_apart():
    rng = np.random.default_rng(0)
    steady = [settled_after(1000 * np.exp(rng.normal(0, 0.03, 30))) for _ in range(9)]
    assert float(np.median(steady)) == 0
    warming = []
    for _ in range(9):
        x = 1000 * np.exp(rng.normal(0, 0.03, 30))
        x[:10] *= np.linspace(0.6, 0.97, 10)
        warming.append(settled_after(x))
    assert float(np.median(warming)) == 10
    assert settled_after([1.0] * 15) == 0  # too short to say
    said = power.Components(8, 30, 0.001, 0.0002, 0.0008).noise(8, "tps_median", 10)
    assert said.settling_s == 10 and "still settling 10 s into" in said.text
    assert said.to_json()["settling_s"] == 10 and said.to_json()["sd_total_pct"] == 3.16


def test_a_run_to_run_share_is_seen_from_eight_runs_when_it_is_large():
    """8 runs varying 18.6% where their seconds explain 8.2% (a real comparison in
    the suite): the runs' own levels are the larger share, and the advice is more runs."""
    c = power.Components(8, 6, 0.186 ** 2, 0.082 ** 2, 0.186 ** 2 - 0.082 ** 2)
    assert c.between_seen and c.dominant == "between runs"
    assert c.advice(overhead_s=8).endswith("more runs help")
    same = power.Components(8, 6, 0.09 ** 2, 0.082 ** 2, 0.09 ** 2 - 0.082 ** 2)
    assert not same.between_seen and "longer runs help" in same.advice(overhead_s=8)


def test_log_ratio_interval_covers_the_true_ratio():
    rng = np.random.default_rng(22)
    hits = 0
    for _ in range(400):
        a = np.exp(rng.normal(0, 0.02, 12))
        b = 0.97 * np.exp(rng.normal(0, 0.03, 12))
        ratio, lo, hi = power.log_ratio_ci(a, b)
        assert lo < ratio < hi
        hits += lo <= 0.97 <= hi
    assert 0.92 <= hits / 400 <= 0.98


def test_on_drifting_runs_the_paired_interval_covers_and_is_narrower():
    # Rounds of a run each side, back to back, on a host whose run levels drift (AR(1)
    # at 0.9, 5% run to run): the pairs' interval covers the true ratio about 95% of
    # the time and is far narrower than Welch's, which sees the drift as noise.
    rng = np.random.default_rng(23)
    hits, narrower = 0, 0
    for _ in range(400):
        a, b = power.drifting_runs(rng, 12, 0.05, 0.9, "ABBA", shift=-0.03)
        ratio, lo, hi = power.log_ratio_ci(a, b, paired=True)
        hits += lo <= 0.97 <= hi
        _, wlo, whi = power.log_ratio_ci(a, b)
        narrower += (hi / lo) < (whi / wlo)
    assert 0.92 <= hits / 400 <= 0.98, hits
    assert narrower >= 0.9 * 400, narrower


def test_the_levels_come_back_in_time_order_and_their_drift_shows():
    from harness.bench.power import _levels

    # A ramp of 1% a run, sides in balanced order (A B, B A, ...), B 3% lower.
    x = [math.exp(0.01 * i) for i in range(12)]
    a = [x[0], x[3], x[4], x[7], x[8], x[11]]
    b = [0.97 * v for v in (x[1], x[2], x[5], x[6], x[9], x[10])]
    levels = _levels(a, b)
    steps = [q - p for p, q in zip(levels[:-1], levels[1:], strict=True)]
    assert all(abs(s - 0.01) < 0.004 for s in steps), steps  # the ramp, B's 3% gone
    assert power.lag1(levels) > 0.7
    assert power.lag1([1.0, -1.0] * 6) < -0.9 and power.lag1([2.0] * 4) == 0.0


@pytest.mark.parametrize("n,sd", [(4, 0.02), (5, 0.05), (8, 0.03)])
def test_the_stated_power_is_what_the_verdict_finds(n, sd):
    """The power statement of harness compare: a change of detectable(t=True)'s size, judged by
    the verdict itself (noise gate aside) in 200 seeded trials, is called about
    VERDICT_POWER of the time, and never the wrong way."""
    from harness.analysis.ab_verdict import BUILTIN, Limits, judge

    mde = power.detectable(sd ** 2, n, t=True)
    assert mde is not None and mde > power.detectable(sd ** 2, n)
    rng = np.random.default_rng(n)
    verdicts = [judge(BUILTIN[0], list(1000 * np.exp(rng.normal(0, sd, n))),
                      list(1000 * np.exp(rng.normal(math.log1p(mde), sd, n))),
                      Limits(max_cv=1.0, bootstrap=1000)).verdict for _ in range(200)]
    assert abs(verdicts.count("better") / 200 - power.VERDICT_POWER) < 0.1, verdicts
    assert "worse" not in verdicts
    noise = power.components([1000, 1040, 980, 1010], [], 30).noise(60, "tps_median",
                                                                   per_side=4)
    assert noise.detectable == round(power.detectable(noise.components.total, 4, t=True), 4)
    assert f"with 4 runs a side, a change of {noise.detectable:.1%} in tps_median is " \
        "called about 75% of the time" in noise.text
