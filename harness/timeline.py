"""The run's timeline: when each item (the main workload, side loads, config changes)
starts, and the marks they wait on.

Every item runs in its own thread and waits with :meth:`Timeline.wait_start` for its
``start``: seconds after the timeline began (``at``), or the end of another item plus a
delay. Marks and events are on the run clock, which began earlier (with the run).
An item that ends calls :meth:`Timeline.mark_end`; the main workload also marks when its
warmup will end (a time that may lie in the future, so ``after: warmup`` works the same
whether the warmup is over or not). :meth:`Timeline.abort` wakes every waiter (Ctrl-C, a
dead server): ``wait_start`` then returns False and the item never starts.
"""
from __future__ import annotations

import threading
from collections.abc import Callable

from .model import Start


class Timeline:
    def __init__(self, clock: Callable[[], float]):
        self.clock = clock
        self.origin = clock()  # `at: 0` is now; marks and events are on the run clock
        self._ends: dict[str, float] = {}
        self._cond = threading.Condition()
        self._aborted = False

    def begin(self) -> None:
        """`at: 0` is now: called as the items start, once the collectors (which may
        take seconds to start) are up, so that `at: 1` is a second after the main
        workload's own `at: 0`, not a second after the timeline was made."""
        with self._cond:
            self.origin = self.clock()
            self._cond.notify_all()

    def mark_end(self, name: str, t: float | None = None) -> None:
        """``name`` ends (or will end) at ``t`` on the run clock (now when left out)."""
        with self._cond:
            self._ends[name] = self.clock() if t is None else t
            self._cond.notify_all()

    def ended(self, name: str) -> float | None:
        with self._cond:
            t = self._ends.get(name)
            return t if t is not None and t <= self.clock() else None

    def abort(self) -> None:
        with self._cond:
            self._aborted = True
            self._cond.notify_all()

    @property
    def aborted(self) -> bool:
        return self._aborted

    def start_time(self, start: Start) -> float | None:
        """When ``start`` is due on the run clock, or None while still unknown."""
        if start.at is not None:
            return self.origin + start.at
        assert start.after is not None
        t = self._ends.get(start.after)
        return None if t is None else t + start.delay_s

    def wait_start(self, start: Start, stop: threading.Event | None = None) -> bool:
        """Block until ``start`` is due. False if the run was aborted (or ``stop`` set)
        first."""
        with self._cond:
            while True:
                if self._aborted or (stop is not None and stop.is_set()):
                    return False
                due = self.start_time(start)
                now = self.clock()
                if due is not None and now >= due:
                    return True
                # Wake at the due time, or at the latest in 0.5 s to look at `stop`.
                self._cond.wait(0.5 if due is None else min(0.5, max(0.0, due - now)))

    def sleep(self, seconds: float, stop: threading.Event | None = None) -> bool:
        """Sleep unless aborted; False when woken by an abort or ``stop``."""
        end = self.clock() + seconds
        with self._cond:
            while not self._aborted and not (stop is not None and stop.is_set()):
                left = end - self.clock()
                if left <= 0:
                    return True
                self._cond.wait(min(left, 0.5))
        return False
