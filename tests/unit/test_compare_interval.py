"""The coverage of compare's interval (a percentile bootstrap of the runs' medians) at
the run counts it judges: how often it holds the true ratio, on simulated runs whose
ratio is known. Fixed seeds: the same trials every time."""
import numpy as np
import pytest

from harness.analysis.ab_verdict import BOOTSTRAP, MIN_RUNS, bootstrap_ratio_ci

TRIALS = 1000


def _coverage(runs: int, noise: float, true: float, seed: int) -> float:
    rng = np.random.default_rng(seed)
    held = 0
    for trial in range(TRIALS):
        a = 1000 * np.exp(rng.normal(0, noise, runs))
        b = 1000 * true * np.exp(rng.normal(0, noise, runs))
        ci = bootstrap_ratio_ci(a, b, BOOTSTRAP, trial)
        assert ci is not None
        held += ci[0] <= true <= ci[1]
    return held / TRIALS


@pytest.mark.parametrize("runs", [MIN_RUNS, 5])
@pytest.mark.parametrize(("noise", "true"), [(0.03, 0.97), (0.08, 1.0)])
def test_the_interval_holds_the_true_ratio_95_percent_at_every_run_count_judged(
        runs, noise, true):
    # 1,000 trials: a true 95% is measured at 93.6-96.4% (two sd); the 2.5-97.5%
    # percentiles alone held 93% at 4 runs, the reason 4 runs take 1-99%.
    assert _coverage(runs, noise, true, seed=runs) >= 0.94
