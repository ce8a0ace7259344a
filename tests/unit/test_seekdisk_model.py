"""The seek model's arithmetic: what a request costs after the last one."""
from __future__ import annotations

import pytest

from harness.host.seekdisk import Actuator, Geometry, measured

MB = 1_000_000


@pytest.fixture
def disk():
    a = Actuator(Geometry(seek_ms=8.0, mbps=100.0))
    a.head = 10 * MB
    return a


def test_a_request_that_continues_the_last_costs_its_transfer(disk):
    assert disk.service_s(10 * MB, MB) == (pytest.approx(0.01), False)


def test_a_short_skip_ahead_costs_the_pass_over_it_not_a_seek(disk):
    # 400 KB ahead: 4 ms for the platter to pass over it, less than a seek.
    assert disk.service_s(10 * MB + 400_000, 16384) == (pytest.approx(0.004 + 0.00016384),
                                                         False)


@pytest.mark.parametrize("offset", [10 * MB + 2 * MB, 0, 10 * MB - 16384])
def test_a_jump_far_ahead_or_backwards_costs_a_seek(disk, offset):
    assert disk.service_s(offset, 16384) == (pytest.approx(0.008 + 0.00016384), True)


def test_requests_queue_behind_each_other_in_arrival_order(disk):
    disk.on = True
    first = disk.admit(0, 16384)
    second = disk.admit(50 * MB, 16384)
    assert second - first == pytest.approx(0.008 + 0.00016384, abs=1e-6)
    assert disk.counts["seeks"] == 2 and disk.counts["requests"] == 2


def test_with_the_model_off_nothing_waits_and_nothing_is_counted(disk):
    assert disk.admit(0, 16384) is None
    assert disk.counts["requests"] == 0 and disk.counts["passthrough"] == 1


def test_measured_is_per_second_and_per_request():
    before = {"requests": 10, "seeks": 5, "bytes": 0, "busy_s": 1.0, "late_us_sum": 100.0,
              "cpu_s": 0.5, "wall_s": 10.0}
    after = {"requests": 110, "seeks": 105, "bytes": 2e6, "busy_s": 2.0, "late_us_sum": 300.0,
             "cpu_s": 0.51, "wall_s": 12.0, "late_us_max": 50.0}
    m = measured(before, after)
    assert (m["requests"], m["seeks_per_s"], m["mb_per_s"], m["busy"]) == (100, 50.0, 1.0, 0.5)
    assert (m["late_us_mean"], m["cpu_us_per_request"]) == (2.0, 100.0)
