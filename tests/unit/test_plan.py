"""How many runs a cell a finding needs (analysis/plan.py): the number it gives decides
a simulated finding in 19 of 20 repeats, fewer do not; and what it plans from."""
from __future__ import annotations

import random
import statistics

import pytest

from harness.analysis.plan import OUT_OF_PROPORTION, plan, runs_to_decide
from harness.store import Finding

from ..conftest import a_run


def _decided(mu: float, sigma: float, bound: float, n: int, trials: int, seed: int) -> float:
    """The share of simulated repeats of n runs whose 95% interval clears the bound."""
    rng = random.Random(seed)
    hits = 0
    for _ in range(trials):
        mean = statistics.fmean(rng.gauss(mu, sigma) for _ in range(n))
        half = 1.96 * sigma / n ** 0.5
        hits += not (mean - half <= bound <= mean + half)
    return hits / trials


@pytest.mark.parametrize("mu,sigma", [(0.6, 0.07), (0.74, 0.05), (1.3, 0.2)])
def test_the_runs_it_asks_for_decide_19_of_20_and_fewer_do_not(mu, sigma):
    bound = 0.8 if mu < 1 else 1.2
    n = runs_to_decide(sigma, abs(mu - bound))
    assert n is not None
    assert _decided(mu, sigma, bound, n, 4000, 1) >= 0.94
    if n > 2:
        assert _decided(mu, sigma, bound, n // 2, 4000, 2) < 0.9


def test_on_the_bound_no_number_of_runs_decides():
    assert runs_to_decide(0.1, 0.0) is None


def _x(value, ci=None, **own):
    return Finding(name="f", outcome="inconclusive", server="s", variant="v", value=value,
                   ci95=ci, max=0.8, own=own)


def test_it_plans_from_the_spread_across_run_sets_never_below_a_run_own_interval():
    run = a_run(server="s", variant="v")
    (p,) = plan([("a", run, _x(0.60)), ("b", run, _x(0.64)), ("c", run, _x(0.74))])
    assert p.spread == pytest.approx(statistics.stdev([0.60, 0.64, 0.74]))
    assert p.spread_from == "runs" and p.bound == 0.8
    assert p.runs_needed == runs_to_decide(p.spread, 0.8 - statistics.fmean([0.6, .64, .74]))
    # two close values, each with a wide within-run interval: the interval is the spread
    (p,) = plan([("a", run, _x(0.60, [0.40, 0.80])), ("b", run, _x(0.61, [0.41, 0.81]))])
    assert p.spread_from == "within-run interval" and "at least" in p.advice
    # a pooled verdict and the copies of one cross-variant verdict count once a run set
    (p,) = plan([("a", run, _x(0.5, baseline_variant="w")),
                 ("a", run, _x(0.5, baseline_variant="w")),
                 ("a", run, _x(0.5, pooled=True)), ("b", run, _x(0.7, baseline_variant="w"))])
    assert p.values == [0.5, 0.7]
    # one value without an interval cannot be planned; far from its bound, one run will do
    (p,) = plan([("a", run, _x(0.5))])
    assert p.runs_needed is None and "run the experiment again" in p.advice
    (p,) = plan([("a", run, _x(0.2, [0.18, 0.22]))])
    assert p.runs_needed == 1 and p.advice.startswith("one run a cell decides it")
    (p,) = plan([("a", run, _x(0.82)), ("b", run, _x(0.76))])
    assert p.runs_needed > OUT_OF_PROPORTION and "inconclusive by design" in p.advice
