"""Switchback on synthetic runs: drift cancels in paired windows, the settle time is
read from the data, each quad's orientation is drawn at random, and the randomisation
test on quads calls A against A different no more often than alpha, however the
seconds swing."""
from __future__ import annotations

import math
import random

import numpy as np
import pytest

from harness.analysis.ab_verdict import Limits, Metric
from harness.analysis.switchback import (
    flip_interval,
    flip_p,
    judge,
    pairs,
    schedule,
    settle_seconds,
    window_values,
    windows_of,
)
from harness.store import Event

TPS = Metric("tps", True)
W = 10  # seconds a window


def _run(effect: float, seed: int, windows: int = 32, drift: float = 0.5,
         settle: int = 0, sd: float = 0.03, sides: list[str] | None = None):
    """Per-second tps of a switchback run measured from t = 5 s: B is ``effect`` off A,
    the host loses ``drift`` of its speed steadily over the run, and each switch takes
    ``settle`` seconds to show fully."""
    rng = np.random.default_rng(seed)
    sides = sides or schedule(windows, random.Random(seed))
    events = [Event(5.0 + i * W, "config", f"switchback-{i}-{s}") for i, s in enumerate(sides)]
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
    v = 1000.0 * level * (1 - drift * (t - 5.0) / (windows * W)) * (
        1 + rng.normal(0, sd, len(t)))
    return events, t, v, 5.0 + windows * W


def _verdict(effect: float, seed: int, limits: Limits | None = None, **kw):
    events, t, v, end = _run(effect, seed, **kw)
    wins = windows_of(events, end)
    settle = settle_seconds(t, v, wins)
    return judge(TPS, pairs(window_values(t, v, wins, settle)), limits), settle


def test_each_quad_is_abba_or_baab_by_a_coin():
    orders = ["".join(schedule(8, random.Random(seed))) for seed in range(40)]
    assert set(orders) == {a + b for a in ("ABBA", "BAAB") for b in ("ABBA", "BAAB")}
    assert len(schedule(30, random.Random(0))) == 28  # whole quads only


def test_the_test_counts_every_sign_pattern():
    # +-1 +-2 +-3: |sum| >= 6 in 2 of 8 patterns
    assert flip_p(np.array([1.0, 2.0, 3.0])) == pytest.approx(0.25)
    assert flip_p(np.array([1.0] * 6)) == pytest.approx(2 / 64)  # its least p
    assert flip_p(np.array([1.0, -1.0] * 3)) == 1.0
    lo, hi = flip_interval(np.array([0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08]))
    assert 0.01 < lo < 0.045 < hi < 0.08, (lo, hi)


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


def test_the_interval_covers_the_change():
    """200 seeded runs with B 4% slower: the 95% interval holds x0.96 in at least 90%."""
    covered = sum(lo <= 0.96 <= hi for lo, hi in
                  (_verdict(-0.04, seed)[0].ci95 for seed in range(200)))
    assert covered >= 180, covered


def test_the_settle_time_is_measured():
    _, quick = _verdict(0.3, 3, settle=0, sd=0.01)
    _, slow = _verdict(0.3, 3, settle=4, sd=0.01)
    assert quick <= 1 and 3 <= slow <= 5, (quick, slow)


def test_too_few_quads_give_no_verdict_and_say_why():
    v, _ = _verdict(0.2, 4, windows=20)
    assert v.verdict is None, v.why
    assert v.why.startswith("5 quads to judge by, and 6 are the fewest"), v.why
    v, _ = _verdict(0.3, 4, windows=24, limits=Limits(alpha=0.01), sd=0.01)
    assert v.verdict == "could not tell" and "changes under 30.9% were not visible" in v.why, \
        v.why
    assert "6 quads cannot give p < 0.01" in v.why and v.p_value == pytest.approx(2 / 64)


def test_a_quad_missing_a_window_is_left_out_whole():
    """Quads stay the unit the coin oriented: a window with no seconds, or a stall (0
    tps), drops its quad, never pairs one quad's pair with the next quad's."""
    events, t, v, end = _run(-0.1, 5, windows=32, sd=0.01)
    wins = windows_of(events, end)
    values = window_values(t, v, wins, 1)
    assert len(pairs(values)) == 16
    gone = [x for x in values if x[0].index != 5]  # quad 1 loses a window
    assert len(pairs(gone)) == 14
    stalled = [(w, 0.0 if w.index == 9 else x) for w, x in values]  # quad 2 stalls
    v_all, v_stalled = judge(TPS, pairs(values)), judge(TPS, pairs(stalled))
    assert len(v_stalled.baseline) == 16 and v_stalled.verdict == "worse"
    assert v_stalled.p_value == pytest.approx(2 / 2 ** 7)  # 7 quads left, all agree
    assert v_all.p_value == pytest.approx(2 / 2 ** 8)


def _swinging(rng: np.random.Generator, quads: int) -> np.ndarray:
    """A/A seconds that swing with the quads' own period (the two middle windows of
    each quad 3% up) over correlated noise (AR(1), 0.9): the worst case for a fixed
    order, and a slow-memory one for a model of the noise."""
    n = 4 * quads * W
    shocks = rng.normal(0, 0.02 * math.sqrt(1 - 0.81), n)
    e = np.zeros(n)
    for i in range(1, n):
        e[i] = 0.9 * e[i - 1] + shocks[i]
    t = np.arange(n)
    return 1000 * np.exp(e + 0.03 * np.cos(2 * np.pi * (t - 2 * W) / (4 * W)))


def _judged(v: np.ndarray, sides: list[str]) -> str | None:
    med = [float(np.median(v[i * W + 1:(i + 1) * W])) for i in range(len(sides))]
    paired = [(med[i], med[i + 1]) if sides[i] == "A" else (med[i + 1], med[i])
              for i in range(0, len(sides), 2)]
    return judge(TPS, paired, Limits(noise=0)).verdict


def test_random_orientations_hold_alpha_where_a_fixed_order_is_fooled():
    """One A/A stream whose level rises in the middle of every quad: in fixed ABBA
    order B is always the higher side, and it is called better; with each quad's
    orientation drawn (1,000 draws on the same seconds) at most 6.6% are called
    either way (alpha 5% and three of the draws' standard errors)."""
    v = _swinging(np.random.default_rng(7), 8)
    assert _judged(v, list("ABBA" * 8)) == "better"
    coin = random.Random(11)
    called = sum(_judged(v, schedule(32, coin)) in ("better", "worse") for _ in range(1000))
    assert called <= 66, called
