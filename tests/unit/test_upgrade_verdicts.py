"""The upgrade verdict's two-level bootstrap on synthetic runs with known effects."""
import numpy as np

from harness.analysis.upgrade import FASTER, SAME, SLOWER, _verdict, ratio_ci, result_differences
from harness.store import RunSummary


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
        called += _verdict(float(est), ratio_ci(base, cand, n=500, seed=seed)) != SAME
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
    runs = [{"server": s, "summary": RunSummary.of_workload({"digests": d}, workload="ssb")}
            for s, d in (("mysql-5.7.29", {"Q1.1": "a", "Q2.1": "b"}),
                         ("mysql-9.7", {"Q1.1": "a", "Q2.1": "c"}))]
    assert result_differences(runs, "mysql-5.7.29") == [
        {"server": "mysql-9.7", "query": "Q2.1", "digest": "c", "baseline_digest": "b"}]
