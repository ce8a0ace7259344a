"""Switchback on synthetic runs: drift cancels in paired windows, the settle time is
read from the data, and A against A calls nothing."""
from __future__ import annotations

import numpy as np
import pytest

from harness.analysis.compare import Limits, Metric
from harness.analysis.switchback import (
    judge,
    pairs,
    schedule,
    settle_seconds,
    window_values,
    windows_of,
)

TPS = Metric("tps", True)
W = 10  # seconds a window


def _run(effect: float, seed: int, windows: int = 16, drift: float = 0.004,
         settle: int = 0, sd: float = 0.03):
    """Per-second tps of a switchback run measured from t = 5 s: B is ``effect`` off A,
    the host drifts ``drift`` per second (a 16-window run loses half its speed), and
    each switch takes ``settle`` seconds to show fully."""
    rng = np.random.default_rng(seed)
    sides = schedule(windows)
    events = [{"kind": "config", "name": f"switchback-{i}-{s}", "t": 5.0 + i * W}
              for i, s in enumerate(sides)]
    t = np.arange(6.0, 5.0 + windows * W + 1)
    level = np.empty_like(t)
    before = 1.0
    for k, x in enumerate(t):
        i = min(int((x - 5.0 - 1e-9) // W), windows - 1)
        target = 1.0 + effect if sides[i] == "B" else 1.0
        since = x - (5.0 + i * W)
        if i and sides[i] != sides[i - 1] and since <= settle:
            before = 1.0 + effect if sides[i - 1] == "B" else 1.0
            target = before + (target - before) * since / (settle + 1)
        level[k] = target
    v = 1000.0 * level * (1 - drift * (t - 5.0) / 2) * (1 + rng.normal(0, sd, len(t)))
    return events, t, v, 5.0 + windows * W


def _verdict(effect: float, seed: int, **kw):
    events, t, v, end = _run(effect, seed, **kw)
    wins = windows_of(events, end)
    settle = settle_seconds(t, v, wins)
    return judge(TPS, pairs(window_values(t, v, wins, settle))), settle


def test_the_order_is_abba():
    assert "".join(schedule(8)) == "ABBAABBA"


def test_a_five_percent_change_is_found_through_a_strong_drift():
    v, _ = _verdict(0.05, 1)
    assert v.verdict == "better" and v.ci95[0] > 1.0
    assert v.ratio == pytest.approx(1.05, abs=0.02)
    v, _ = _verdict(-0.05, 2)
    assert v.verdict == "worse"


def test_a_against_a_calls_nothing_in_most_trials():
    """Under the drift, 200 seeded A/A runs: at most 7% called either way (alpha 5%)."""
    called = sum(_verdict(0.0, seed)[0].verdict != "no significant difference"
                 for seed in range(200))
    assert called <= 14, called


def test_the_settle_time_is_measured():
    _, quick = _verdict(0.3, 3, settle=0, sd=0.01)
    _, slow = _verdict(0.3, 3, settle=4, sd=0.01)
    assert quick <= 1 and 3 <= slow <= 5, (quick, slow)


def test_too_few_pairs_gives_no_verdict():
    v, _ = _verdict(0.2, 4, windows=4)
    assert v.verdict is None and "too few window pairs" in v.why


def _ar1_pairs(rng: np.random.Generator, rho: float, pairs: int, width: int = 10,
               sd: float = 0.04) -> list[tuple[float, float]]:
    """(A, B) window medians of A/A seconds correlated as AR(1) with ``rho``, ABBA."""
    n = 2 * pairs * width
    shocks = rng.normal(0, sd * np.sqrt(1 - rho * rho), n)
    e = np.zeros(n)
    for i in range(1, n):
        e[i] = rho * e[i - 1] + shocks[i]
    v = 1000 * np.exp(e)
    sides = schedule(2 * pairs)
    med = [float(np.median(v[i * width + 1:(i + 1) * width])) for i in range(2 * pairs)]
    return [(med[i], med[i + 1]) if sides[i] == "A" else (med[i + 1], med[i])
            for i in range(0, 2 * pairs, 2)]


def test_correlated_seconds_do_not_raise_the_false_alarms_past_alpha():
    """Seconds correlated like this machine's (AR(1), 0.9): 1,500 seeded A/A runs of 16
    pairs of 10 s windows, judged on ABBA quads at alpha 5% with no noise threshold,
    call at most 6% different (5% and a simulation's own error); a t test on single
    pairs called 7.7-9% of the same runs."""
    rng = np.random.default_rng(19)
    called = sum(judge(TPS, _ar1_pairs(rng, 0.9, 16), Limits(noise=0)).verdict
                 not in ("no significant difference", None) for _ in range(1500))
    assert called <= 90, called
