"""The balloon's size from what it must leave, and what a killed harness's journal holds."""
from __future__ import annotations

import pytest

from harness.host.balloon import STEP, BalloonError, kill_orphan, size_for


def test_the_balloon_leaves_what_it_is_asked_to_in_whole_steps():
    got = size_for(1 << 30, 10 << 30)
    assert got % STEP == 0 and (9 << 30) - STEP < got <= 9 << 30


def test_a_balloon_with_nothing_to_take_is_refused():
    with pytest.raises(BalloonError, match="1024 MB asked to be left, and the host has only "
                       "1000 MB available"):
        size_for(1 << 30, 1000 << 20)


def test_a_journaled_pid_that_is_no_balloon_is_left_alone():
    import os

    assert kill_orphan(os.getpid()) is False  # this test process: not a balloon
    assert kill_orphan(2 ** 22 + 12345) is False  # no such process
