"""Is the server answering? A watcher thread's own connection asks it every second
while a run measures: a server that answers nothing (SIGSTOP, a deadlock, a filesystem
that hangs) is not gone, so the process check sees nothing; a hang is a stall event when
it ends, stops the workload once it lasts too long, and a run whose measured part was
mostly hung is failed, never stored as ok."""
from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pymysql

from ..providers.base import Server
from ..workloads.base import RunContext

# A server that answers nothing (SIGSTOP, a deadlock, a filesystem that hangs) is not
# gone, so the process check sees nothing: a query on a connection of the watcher's own
# tells. Its read timeout is the probe's; a hang is a stall event when it ends, and
# stops the workload once it lasts HANG_STOP_S (the run then fails with its name).
PROBE_TIMEOUT_S = 2
HANG_STOP_S = 30.0


@dataclass
class Stall:
    """A stretch in which the server answered nothing: from ``t`` (run clock) for
    ``seconds`` (until it answered again, or the run stopped it)."""

    t: float
    seconds: float


class Liveness:
    """Does the server answer a query within PROBE_TIMEOUT_S? On a connection of its own
    (opened again after a failure), so a hung server is told from a busy one."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.conn: Any = None

    def answers(self) -> bool:
        try:
            if self.conn is None:
                self.conn = self.server.endpoint.connect(
                    timeout=PROBE_TIMEOUT_S, read_timeout=PROBE_TIMEOUT_S,
                    write_timeout=PROBE_TIMEOUT_S)
            with self.conn.cursor() as cur:
                cur.execute("SELECT 1")
                cur.fetchall()
            return True
        except (pymysql.err.MySQLError, OSError):
            self.close()
            return False

    def close(self) -> None:
        if self.conn is not None:
            try:
                self.conn.close()
            except Exception:  # noqa: BLE001 - a dead connection's close may fail too
                pass
            self.conn = None


@contextmanager
def watch_server(server: Server, ctx: RunContext, stalls: list[Stall],
                 interval_s: float = 2.0, misses: int = 2) -> Iterator[None]:
    """While the main workload runs: when the server stops answering (mysqld gone, its
    container stopped, its lab host off the network) ``misses`` checks in a row, say so
    and stop the workload's programs, so the run fails now with the cause rather than
    after a dead connection's timeouts. When it is there but answers no query (hung),
    each hang is kept in ``stalls`` and an event, and one of HANG_STOP_S stops the
    workload the same way. Not for an external server: the only check there is a new
    connection, which a busy production server may be slow to grant."""
    if not server.owned:
        yield
        return
    stop = threading.Event()
    probe = Liveness(server)
    hang = _Hang(ctx, server, stalls)

    def watch() -> None:
        missed = 0
        while not stop.wait(interval_s):
            try:
                there = server.is_running
            except Exception:  # noqa: BLE001 - a check that cannot tell (docker API
                there = True  # hiccup) must not stop a healthy run
            missed = 0 if there else missed + 1
            if missed == misses:
                ctx.event(ctx.clock(), "server_lost", server.name,
                          {"checks": misses, "interval_s": interval_s})
                ctx.stop_workload(f"{server.name} stopped answering")
                return
            if there and hang.seen(probe.answers(), stop.is_set()):
                return

    t = threading.Thread(target=watch, daemon=True, name="server-watch")
    t.start()
    try:
        yield
    finally:
        stop.set()
        t.join(interval_s + PROBE_TIMEOUT_S * 3 + 5)
        hang.ended(ctx.clock())
        probe.close()


class _Hang:
    """The watcher's account of one server's hangs."""

    def __init__(self, ctx: RunContext, server: Server, stalls: list[Stall]) -> None:
        self.ctx, self.server, self.stalls = ctx, server, stalls
        self.since: float | None = None

    def seen(self, answered: bool, stopping: bool) -> bool:
        """One probe's answer; True when the hang has lasted HANG_STOP_S and the
        workload was stopped for it."""
        now = self.ctx.clock()
        if answered or stopping:
            self.ended(now)
            return False
        if self.since is None:
            self.since = now - PROBE_TIMEOUT_S  # it was not answering for the probe's wait
        if now - self.since >= HANG_STOP_S:
            self.ended(now)
            self.ctx.stop_workload(f"mysqld of {self.server.name} answered nothing for "
                                   f"{HANG_STOP_S:.0f} s (hung, not gone)")
            return True
        return False

    def ended(self, now: float) -> None:
        if self.since is None:
            return
        stall = Stall(round(self.since, 3), round(now - self.since, 1))
        self.since = None
        self.stalls.append(stall)
        self.ctx.event(stall.t, "server_stall", self.server.name,
                       {"seconds": stall.seconds})


# A stall longer than this share of the measured part is in the run's headline, and
# makes the run a stalled one in an A/B comparison (analysis/compare.py).
NOTED_SHARE = 0.10


def _hung_s(stalls: Sequence[Stall], window: Sequence[float]) -> float:
    start, end = window[0], window[1]
    return sum(max(0.0, min(end, s.t + s.seconds) - max(start, s.t)) for s in stalls)


def stalled_note(stalls: Sequence[Stall], window: Sequence[float] | None) -> str | None:
    """What a run's headline says of a server that answered nothing for more than
    :data:`NOTED_SHARE` of the measured part (None: it did not): its figures are those
    of a stalled server, not of the server."""
    if not stalls or not window or window[1] <= window[0]:
        return None
    hung = _hung_s(stalls, window)
    if hung <= NOTED_SHARE * (window[1] - window[0]):
        return None
    return (f"mysqld answered nothing for {hung:.0f} s of the {window[1] - window[0]:.0f} "
            "s measured")


def stalled_failure(stalls: Sequence[Stall], window: Sequence[float] | None) -> str | None:
    """Why a run whose measured part was mostly a hung server is not ok (None: it is):
    more than half of ``window`` (start, end) answered nothing."""
    if not stalls or not window:
        return None
    start, end = window[0], window[1]
    hung = _hung_s(stalls, window)
    if end <= start or hung <= (end - start) / 2:
        return None
    return (f"mysqld answered nothing for {hung:.0f} s of the {end - start:.0f} s measured "
            "(hung: its results are not a measurement)")
