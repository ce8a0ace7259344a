"""What the replay's two clients (replay.py's Python threads, replay_sysbench.py's
sysbench threads) read and write the same way: a captured administrator command, and
the series of one report interval."""
from __future__ import annotations

from collections.abc import Callable

from .base import RunContext
from .slowlog import Entry


def follow_admin(e: Entry, connected: bool, close: Callable[[], None],
                 use: Callable[[str], None], skip: Callable[[str], None]) -> None:
    """A captured protocol command: Quit closes the session, Init DB (a general log's)
    moves it to its database, both only once it is ``connected``; the others are counted
    as skipped."""
    command = e.sql.split(": ", 1)[1]
    if command == "Quit":
        if connected:
            close()
    elif command == "Init DB":
        if connected and e.db:
            use(e.db)
    else:
        skip(f"administrator commands ({command})")


def report_series(ctx: RunContext, source: str, t: float, clients: int, rate: float,
                  errors_per_s: float, p95: float | None) -> None:
    """One report interval's samples: statements and errors per second, the client
    threads, and the statements' p95 latency when any ran."""
    for metric, v in (("statements_per_s", rate), ("errors_per_s", errors_per_s),
                      ("threads", float(clients))):
        ctx.sample(t, source, metric, v, None)
    if p95 is not None:
        ctx.sample(t, source, "latency_ms", p95, {"quantile": "0.95"})
