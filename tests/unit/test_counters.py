"""A counter's growth over a stretch: the one reading what moved, switchback's windows
and compare's metrics share."""
from __future__ import annotations

import math

import pytest

from harness.analysis.counters import rate_between


def test_growth_a_second_between_the_first_and_last_point_inside():
    pts = [(0.0, 0.0), (1.0, 10.0), (2.0, 30.0), (3.0, 60.0), (4.0, 100.0)]
    assert rate_between(pts, 1.0, 3.0) == pytest.approx(25.0)  # (60 - 10) / 2
    assert rate_between(pts, 0.5) == pytest.approx(30.0)  # to the last point: 90 / 3
    assert rate_between(pts, -math.inf) == pytest.approx(25.0)


def test_too_few_points_or_no_time_between_them_is_no_rate():
    assert rate_between([(1.0, 5.0)], 0.0) is None
    assert rate_between([(1.0, 5.0), (2.0, 9.0)], 1.5, 3.0) is None
    assert rate_between([(2.0, 5.0), (2.0, 9.0)], 0.0) is None
    assert rate_between([], 0.0) is None
