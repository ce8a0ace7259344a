"""The online steady-state rule behind ``warmup_s: auto`` (MSER-5 with its half rule),
on simulated warmups with known levels: when it stops, and how close to the final level
the series is by then."""
import numpy as np

from harness.stats import steady


def _run(rng: np.random.Generator, tau: float, n: int = 150) -> np.ndarray:
    """A warmup that rises to 1000 with time constant ``tau`` s (0: flat), with AR(1)
    noise of 2% a second at correlation 0.5."""
    e = np.zeros(n)
    for i in range(1, n):
        e[i] = 0.5 * e[i - 1] + rng.normal(0, 0.02)
    t = np.arange(1, n + 1)
    level = 1 - np.exp(-t / tau) if tau else np.ones(n)
    return 1000 * (level + e)


def _stops(x: np.ndarray) -> int | None:
    """The second after which the rule says steady, asked once a second as a warmup
    asks it."""
    for n in range(1, len(x) + 1):
        if steady.is_steady(x[:n]):
            return n
    return None


def test_a_flat_series_is_steady_as_soon_as_mser_can_say():
    rng = np.random.default_rng(7)
    stops = [_stops(_run(rng, 0)) for _ in range(60)]
    assert all(s is not None and steady.LEAST_S <= s <= 40 for s in stops)
    assert float(np.median(stops)) <= 25


def test_a_warmup_is_not_called_steady_before_it_nears_its_level():
    rng = np.random.default_rng(8)
    for tau in (3, 8, 15):
        stops = [_stops(_run(rng, tau)) for _ in range(60)]
        assert all(s is not None for s in stops), tau
        reached = [1 - np.exp(-s / tau) for s in stops]
        assert min(reached) >= 0.97, (tau, min(reached))
        assert float(np.median(stops)) >= 2 * tau  # it waited for the rise


def test_a_series_that_keeps_moving_never_settles():
    rng = np.random.default_rng(9)
    x = 1000 * (np.linspace(0.5, 1.0, 120) + rng.normal(0, 0.01, 120))
    assert _stops(x) is None


def test_too_short_to_say_is_not_steady():
    assert not steady.is_steady([1000.0] * (steady.LEAST_S - 1))
    assert steady.is_steady([1000.0] * steady.LEAST_S)
