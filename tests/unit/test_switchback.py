"""Switchback on synthetic runs: drift cancels in paired windows, the settle time is
read from the data, and A against A calls nothing."""
from __future__ import annotations

import numpy as np
import pytest

from harness.analysis.compare import Metric
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
