"""The upgrade verdict on synthetic runs with known effects: the two-level bootstrap
(one run a side) and Welch's interval on the runs' logs (two or more), whose coverage
is measured here at the run counts people use."""
import numpy as np
import pytest

from harness.analysis.upgrade import (
    FASTER,
    RUNS,
    SAME,
    SECONDS,
    SLOWER,
    UNTOLD,
    DifferentResult,
    UpgradeVerdict,
    _verdict,
    ratio_ci,
    result_differences,
    server_ratio,
)
from harness.stats.interval import interval_text, stored_ci
from harness.store import RunSummary

from ..conftest import a_run


def _runs(level: float, n_runs: int, seed: int, run_sd: float = 0.02, sec_sd: float = 0.05
          ) -> list[np.ndarray]:
    """``n_runs`` runs of 20 seconds around ``level``: each run has its own offset
    (instance-to-instance) and per-second noise."""
    rng = np.random.default_rng(seed)
    return [level * (1 + rng.normal(0, run_sd)) * (1 + rng.normal(0, sec_sd, 20))
            for _ in range(n_runs)]


def test_a_20_percent_drop_is_called_slower():
    base, cand = _runs(1000, 3, 1), _runs(800, 3, 2)
    ci = ratio_ci(base, cand)
    assert ci is not None and ci[1] < 0.9 and ci[0] > 0.7
    assert _verdict(0.8, ci) == SLOWER


def test_identical_servers_are_never_called_different():
    called = 0
    for seed in range(20):
        base, cand = _runs(1000, 3, seed), _runs(1000, 3, 100 + seed)
        est = np.median([np.median(r) for r in cand]) / np.median([np.median(r) for r in base])
        called += _verdict(float(est), ratio_ci(base, cand, n=500, seed=seed)) in (SLOWER,
                                                                                  FASTER)
    assert called <= 1


def test_instance_noise_widens_the_interval():
    """Runs that disagree with each other (a 10% spread between instances) leave a wider
    interval than the seconds alone would."""
    quiet = ratio_ci(_runs(1000, 3, 1, run_sd=0.0), _runs(1000, 3, 2, run_sd=0.0))
    noisy = ratio_ci(_runs(1000, 3, 1, run_sd=0.1), _runs(1000, 3, 2, run_sd=0.1))
    assert quiet and noisy and (noisy[1] - noisy[0]) > 2 * (quiet[1] - quiet[0])


def test_a_faster_server_and_a_small_change():
    assert _verdict(1.2, (1.1, 1.3)) == FASTER
    assert _verdict(1.03, (1.01, 1.05)) == SAME  # under the 5% noise threshold


def test_a_different_result_is_named():
    # SSB's result fingerprints (its plugin's ``fingerprints``: summary digests)
    runs = [a_run(server=s, summary=RunSummary.of_workload({"digests": d}, workload="ssb"))
            for s, d in (("mysql-5.7.29", {"Q1.1": "a", "Q2.1": "b"}),
                         ("mysql-9.7", {"Q1.1": "a", "Q2.1": "c"}))]
    assert result_differences(runs, "mysql-5.7.29") == [
        DifferentResult(server="mysql-9.7", query="Q2.1", digest="c", baseline_digest="b")]


def _instances(level: float, n_runs: int, rng: np.random.Generator, between: float,
               within: float = 0.05, seconds: int = 60, rho: float = 0.5) -> list[np.ndarray]:
    """Runs whose instances differ (log-normal, sd ``between``) and whose seconds keep
    ``rho`` of the last second's deviation (sd ``within``)."""
    runs = []
    for _ in range(n_runs):
        e, x = np.empty(seconds), 0.0
        for i in range(seconds):
            x = rho * x + rng.normal(0, within) * np.sqrt(1 - rho * rho)
            e[i] = x
        runs.append(level * np.exp(rng.normal(0, between)) * np.exp(e))
    return runs


@pytest.mark.parametrize("runs", [2, 3, 4, 6])
@pytest.mark.parametrize("between", [0.02, 0.05, 0.08])
def test_the_interval_covers_the_true_ratio_95_percent_of_the_time(runs, between):
    """The upgrade interval at the run counts people use (3 a side by default): a true
    ratio of 1.1, 400 simulated trials; it must cover at least 93% (95% less two
    standard errors of 400 trials), and the estimate sits at its centre (log scale)."""
    rng = np.random.default_rng(runs * 100 + int(between * 100))
    covered = 0
    for _ in range(400):
        ratio, ci, rests_on = server_ratio(_instances(1000, runs, rng, between),
                                           _instances(1100, runs, rng, between))
        assert ci is not None and rests_on == RUNS
        covered += ci[0] <= 1.1 <= ci[1]
        assert np.log(ratio / ci[0]) == pytest.approx(np.log(ci[1] / ratio))
    assert covered >= 372, covered


def test_one_run_a_side_says_its_interval_sees_the_seconds_only():
    rng = np.random.default_rng(3)
    ratio, ci, rests_on = server_ratio(_instances(1000, 1, rng, 0.05),
                                       _instances(1000, 1, rng, 0.05))
    assert ci is not None and rests_on == SECONDS and ci[0] < ratio < ci[1]


def test_an_interval_from_two_runs_that_disagree_keeps_a_lower_bound_above_zero():
    """Two runs a side, one side's far apart (a busy host's one-thread runs): Welch's
    t on ~1 degree of freedom gives an interval of orders of magnitude either way. It is
    stored and printed as that, never as a ratio of 0 (a suite's run stored [0.0, 32084])."""
    base = [np.full(20, 1000.0), np.full(20, 1001.0)]
    mine = [np.full(20, 300.0), np.full(20, 1500.0)]
    ratio, ci, rests_on = server_ratio(base, mine)
    assert rests_on == RUNS and ci is not None and ci[0] < 1e-3 and ci[1] > 1e3
    lo, hi = stored_ci(ci)
    assert 0 < lo == pytest.approx(ci[0], rel=1e-3) and hi == pytest.approx(ci[1], abs=1e-4)
    text = interval_text([lo, hi])
    assert not text.startswith("[0.000") and float(text[1:-1].split(", ")[0]) > 0
    assert _verdict(round(ratio, 4), [lo, hi]) != SLOWER  # says nothing, so nothing
    said = UpgradeVerdict("w", "s", 1, 2, 1.0, verdict=_verdict(round(ratio, 4), [lo, hi]),
                          ci95=[lo, hi]).text()
    assert said.startswith(UNTOLD) and "says nothing of the size" in said
    # an interval wider than the band says how small a change it could have seen;
    # one inside it is printed as its verdict alone
    assert _verdict(1.1, [0.62, 1.9]) == UNTOLD
    assert UpgradeVerdict("w", "s", 1, 2, 1.0, verdict=UNTOLD, ci95=[0.62, 1.9]).text() == \
        "could not tell (changes under 90.0% were not visible in this run)"
    assert _verdict(1.01, [0.94, 1.04]) == UNTOLD and _verdict(1.01, [0.96, 1.04]) == SAME
    assert UpgradeVerdict("w", "s", 1, 2, 1.0, verdict=SAME, ci95=[0.98, 1.02]).text() == SAME
    assert UpgradeVerdict("w", "s", 1, 2, 1.0, verdict=None, ci95=None).text() == "(baseline)"
    assert interval_text([0.9512, 1.0433]) == "[0.951, 1.043]"  # the usual stays as it was
    assert interval_text([1950.25, 2104.5]) == "[1950.250, 2104.500]"  # so does a tps
