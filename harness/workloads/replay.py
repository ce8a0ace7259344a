"""A DBA's captured statements replayed: the slow log of their workload (written with
``long_query_time = 0``) run again, on any dataset, and judged per query digest.

Each captured session gets a connection of its own and runs its statements in the order
they were captured, following its ``USE`` and session ``SET`` statements; a captured
``Quit`` closes it. The sessions are spread over ``clients`` threads (a session always on
the same one), which run as fast as the server answers: concurrency is at most
``clients`` and at most the sessions the log holds. The log is streamed, through bounded
queues, so a capture of any size replays in flat memory.

``read_only: true`` replays only statements that cannot change data, as the guard
reads SQL (harness/sqlread.py: SELECT without INTO or a locking clause, SHOW, DESCRIBE,
EXPLAIN, USE, session SET, transaction brackets), in READ ONLY sessions (a function
called from a SELECT cannot write either); the others are counted and skipped. A
replay that is not read-only is treated as writing: the guard refuses it on a server
the harness did not create unless that server is marked disposable.

Per digest (pt-query-digest's fingerprint and ID): count, errors by code, rows,
latency percentiles and the share of the time, in the summary (``digests``) and as
series; statements per second is the headline figure.
"""
from __future__ import annotations

import math
import queue
import statistics
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pymysql
from pydantic import Field

from ..errors import HarnessError
from ..model import Figure, WorkloadModel
from ..sqlread import first_write
from ..store import RunSummary
from .base import SERVER_RATIO, RunContext, Workload, WorkloadPlugin, WorkloadResult
from .fingerprint import digest, fingerprint
from .slowlog import Entry, SlowLog

SOURCE = "replay"
QUEUE = 2000  # entries waiting per client: the log is read no further ahead
LOST = (2006, 2013)  # the connection is gone: the session reconnects
UNKNOWN_DATABASE = 1049
TOP = 50  # digests kept in the summary, by total time
STATEMENT_TIMEOUT_S = 600


class ReplayWorkload(WorkloadModel):
    """The statements of ``log`` (a slow log, relative to the scenario file; plain or
    gzip) replayed on ``database``'s server by ``clients`` threads, once through the log
    or for ``duration_s`` at most; the first ``warmup_s`` seconds are not measured."""

    kind: Literal["replay"]
    log: str
    clients: int = Field(4, ge=1, le=1024)
    read_only: bool = False
    duration_s: int | None = Field(None, ge=1)
    report_interval_s: float = Field(1, gt=0, le=3600)

    def writes(self, base: Path) -> list[str]:
        return [] if self.read_only else [
            f"workload: replays {self.log}, whose statements may write; read_only: true "
            "replays only the ones that cannot"]

    def files(self) -> dict[str, str]:
        return {"log": self.log}


# --- the tally ------------------------------------------------------------------------------

BUCKET = math.log(1.02)  # latency histogram: 2% wide buckets


@dataclass
class DigestStats:
    fingerprint: str
    example: str
    count: int = 0
    rows: int = 0
    total_ms: float = 0.0
    errors: Counter[int] = field(default_factory=Counter)
    buckets: Counter[int] = field(default_factory=Counter)

    def add(self, ms: float, rows: int, error: int | None) -> None:
        self.count += 1
        self.rows += rows
        self.total_ms += ms
        if error is not None:
            self.errors[error] += 1
        self.buckets[int(math.log(max(ms, 1e-4) / 1e-4) / BUCKET)] += 1

    def quantile(self, q: float) -> float:
        """The latency under which a fraction ``q`` of its statements finished (the
        upper edge of its 2% bucket)."""
        need, seen = q * self.count, 0
        for b in sorted(self.buckets):
            seen += self.buckets[b]
            if seen >= need:
                return round(1e-4 * math.exp((b + 1) * BUCKET), 3)
        return 0.0


class Tally:
    """What the clients did, under one lock: per digest (measured part only), and since
    the last report."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.digests: dict[str, DigestStats] = {}
        self.recent: list[float] = []
        self.recent_errors = 0
        self.skipped: Counter[str] = Counter()
        self.failures: list[str] = []
        self.measuring = False
        self.sessions: set[int] = set()

    def add(self, fp: str, sql: str, ms: float, rows: int, error: int | None) -> None:
        with self.lock:
            self.recent.append(ms)
            self.recent_errors += error is not None
            if self.measuring:
                d = digest(fp)
                stats = self.digests.get(d)
                if stats is None:
                    stats = self.digests[d] = DigestStats(fp, sql[:400])
                stats.add(ms, rows, error)

    def skip(self, why: str) -> None:
        with self.lock:
            self.skipped[why] += 1

    def take(self) -> tuple[list[float], int]:
        with self.lock:
            out = self.recent, self.recent_errors
            self.recent, self.recent_errors = [], 0
            return out


# --- the clients ------------------------------------------------------------------------------

class Client(threading.Thread):
    """One replay thread: its captured sessions, each on its own connection."""

    def __init__(self, k: int, ctx: RunContext, spec: ReplayWorkload, tally: Tally,
                 stop: threading.Event):
        super().__init__(name=f"replay-{k}", daemon=True)
        self.ctx, self.spec, self.tally, self.stop = ctx, spec, tally, stop
        self.inbox: queue.Queue[Entry | None] = queue.Queue(QUEUE)
        self.conns: dict[int, Any] = {}

    def run(self) -> None:
        try:
            while (e := self.inbox.get()) is not None:
                if not self.stop.is_set():
                    self._one(e)
        except Exception as e:  # reported, and it fails the run
            with self.tally.lock:
                self.tally.failures.append(f"{self.name}: {e}")
            self.stop.set()
            while self.inbox.get() is not None:  # the feeder never waits on a dead client
                pass
        finally:
            for c in self.conns.values():
                c.close()

    def _one(self, e: Entry) -> None:
        if e.admin:
            if e.sql == "administrator command: Quit" and e.session in self.conns:
                self.conns.pop(e.session).close()
            elif e.sql != "administrator command: Quit":
                self.tally.skip("administrator commands (" + e.sql.split(": ", 1)[1] + ")")
            return
        conn = self.conns.get(e.session) or self._connect(e)
        fp = fingerprint(e.sql)
        rows, error = 0, None
        t = time.perf_counter()
        try:
            with conn.cursor() as cur:
                cur.execute(e.sql)
                rows = len(cur.fetchall() or ())
        except pymysql.err.MySQLError as err:
            error = int(err.args[0]) if err.args and isinstance(err.args[0], int) else -1
            if error in LOST:
                self.conns.pop(e.session).close()
        self.tally.add(fp, e.sql, (time.perf_counter() - t) * 1000, rows, error)

    def _connect(self, e: Entry) -> Any:
        db = e.db or self.spec.database
        try:
            c = self.ctx.endpoint.connect(database=db, read_timeout=STATEMENT_TIMEOUT_S)
        except pymysql.err.OperationalError as err:
            if err.args[0] != UNKNOWN_DATABASE:
                raise
            self.tally.skip(f"sessions in database {db}, which is not on the server (they "
                            "ran without a default database)")
            c = self.ctx.endpoint.connect(read_timeout=STATEMENT_TIMEOUT_S)
        if self.spec.read_only:  # a function called from a SELECT cannot write either
            with c.cursor() as cur:
                cur.execute("SET SESSION TRANSACTION READ ONLY")
        self.conns[e.session] = c
        with self.tally.lock:
            self.tally.sessions.add(e.session)
        return c


# --- the workload -----------------------------------------------------------------------------

class Replay(Workload):
    name = "replay"

    spec: ReplayWorkload

    @property
    def label(self) -> str:
        return f"replay of {self.spec.log} by {self.spec.clients} clients"

    def run(self, ctx: RunContext) -> WorkloadResult:
        spec, tally, stop = self.spec, Tally(), threading.Event()
        log = SlowLog(spec.path_of(spec.log))
        clients = [Client(k, ctx, spec, tally, stop) for k in range(spec.clients)]
        ctx.on_stop.append(stop.set)
        start = ctx.clock()
        if spec.warmup_s:
            ctx.event(start, "phase_start", "warmup", {"seconds": spec.warmup_s})
        else:
            self._measure_from(ctx, tally, start)
        feeder = threading.Thread(target=self._feed, args=(log, clients, tally, stop),
                                  name="replay-feed", daemon=True)
        for th in [*clients, feeder]:
            th.start()
        try:
            intervals, window = self._loop(ctx, tally, stop, [feeder, *clients], start)
        finally:
            stop.set()
            for th in [feeder, *clients]:
                th.join(STATEMENT_TIMEOUT_S)
            ctx.on_stop.remove(stop.set)
        if tally.failures:
            raise HarnessError("replay: " + "; ".join(tally.failures[:3]))
        return self._result(ctx, log, tally, intervals, window, start)

    def _feed(self, log: SlowLog, clients: list[Client], tally: Tally,
              stop: threading.Event) -> None:
        """Each entry to the client of its session, in log order; then the end."""
        try:
            for e in _wanted(log, self.spec.read_only, tally):
                while not stop.is_set():
                    try:
                        clients[e.session % len(clients)].inbox.put(e, timeout=0.5)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    break
        except Exception as e:  # the log is unreadable: the run fails with it
            with tally.lock:
                tally.failures.append(str(e))
            stop.set()
        finally:
            for c in clients:
                c.inbox.put(None)

    def _measure_from(self, ctx: RunContext, tally: Tally, t: float) -> None:
        with tally.lock:
            tally.measuring = True
        ctx.measured_from(t)

    def _loop(self, ctx: RunContext, tally: Tally, stop: threading.Event,
              threads: list[threading.Thread], start: float
              ) -> tuple[list[dict[str, Any]], tuple[float, float]]:
        """Report every interval until the log is done (or the duration is up)."""
        spec, t0 = self.spec, time.monotonic()
        intervals: list[dict[str, Any]] = []
        measured_at = start if not spec.warmup_s else None
        last = t0
        while True:
            done = not stop.wait(spec.report_interval_s) and \
                not any(th.is_alive() for th in threads)
            now = time.monotonic()
            iv = self._report(ctx, tally, max(now - last, 1e-6))
            last = now
            if measured_at is None and now - t0 >= spec.warmup_s:
                measured_at = ctx.clock()
                self._measure_from(ctx, tally, measured_at)
                ctx.event(measured_at, "phase_end", "warmup", None)
            elif measured_at is not None:
                intervals.append(iv)
            if done or stop.is_set() or (spec.duration_s and
                                         now - t0 >= spec.warmup_s + spec.duration_s):
                break
        return intervals, (measured_at if measured_at is not None else start, ctx.clock())

    def _report(self, ctx: RunContext, tally: Tally, dt: float) -> dict[str, Any]:
        ms, errors = tally.take()
        t = ctx.clock()
        rate = len(ms) / dt
        p95 = _p95(ms)
        ctx.sample(t, SOURCE, "statements_per_s", rate, None)
        ctx.sample(t, SOURCE, "errors_per_s", errors / dt, None)
        ctx.sample(t, SOURCE, "threads", float(self.spec.clients), None)
        if p95 is not None:
            ctx.sample(t, SOURCE, "latency_ms", p95, {"quantile": "0.95"})
        ctx.progress(f"replay  {rate:.0f} statements/s  p95 {p95} ms  errors {errors}")
        return {"t": t, "tps": rate, "latency_ms": p95}

    def _result(self, ctx: RunContext, log: SlowLog, tally: Tally,
                intervals: list[dict[str, Any]], window: tuple[float, float],
                start: float) -> WorkloadResult:
        secs = max(window[1] - window[0], 1e-6)
        stats = sorted(tally.digests.items(), key=lambda kv: -kv[1].total_ms)
        total_ms = sum(s.total_ms for _, s in stats) or 1.0
        n = sum(s.count for _, s in stats)
        errors = sum(sum(s.errors.values()) for _, s in stats)
        t = ctx.clock()
        for d, s in stats:
            for metric, v in (("digest_count", s.count), ("digest_p95_ms", s.quantile(0.95)),
                              ("digest_total_ms", s.total_ms)):
                ctx.sample(t, SOURCE, metric, float(v), {"digest": d})
        rates = [iv["tps"] for iv in intervals]
        summary = {
            "workload": f"replay {self.spec.log}", "threads": self.spec.clients,
            "duration_s": round(secs, 3), "warmup_s": self.spec.warmup_s,
            "statements": n, "statements_per_s": round(n / secs, 1),
            "statements_per_s_median": statistics.median(rates) if rates else None,
            "latency_p95_ms": _p95_of(stats), "errors": errors,
            "sessions": len(tally.sessions), "digest_count": len(stats),
            "skipped": dict(tally.skipped), "log_skipped": dict(log.skipped),
            "binary_statements": log.binary, "intervals": len(intervals),
            "digests": {d: _digest_json(s, total_ms) for d, s in stats[:TOP]},
            "workload_start_s": round(start, 3), "workload_end_s": round(t, 3)}
        summary["headline"] = (f"{n} statements in {secs:.1f} s ({n / secs:.0f}/s), "
                               f"{len(stats)} digests, {errors} errors, "
                               f"{len(tally.sessions)} sessions")
        return WorkloadResult(summary=summary, intervals=intervals)


def _wanted(log: SlowLog, read_only: bool, tally: Tally) -> Iterator[Entry]:
    """The entries to replay: all, or under read_only those that cannot write (as the
    guard reads SQL: tokenised, not grepped)."""
    for e in log:
        if read_only and not e.admin and first_write(e.sql):
            tally.skip("could change data (read_only)")
            continue
        yield e


def _p95(ms: list[float]) -> float | None:
    if not ms:
        return None
    return round(sorted(ms)[min(len(ms) - 1, int(0.95 * len(ms)))], 3)


def _p95_of(stats: list[tuple[str, DigestStats]]) -> float | None:
    """The p95 over every measured statement, from the digests' histograms."""
    merged = DigestStats("", "")
    for _, s in stats:
        merged.count += s.count
        merged.buckets.update(s.buckets)
    return merged.quantile(0.95) if merged.count else None


def _digest_json(s: DigestStats, total_ms: float) -> dict[str, Any]:
    return {"fingerprint": s.fingerprint, "count": s.count, "rows": s.rows,
            "errors": {str(k): v for k, v in sorted(s.errors.items())},
            "total_s": round(s.total_ms / 1000, 4), "share": round(s.total_ms / total_ms, 4),
            "p50_ms": s.quantile(0.5), "p95_ms": s.quantile(0.95),
            "p99_ms": s.quantile(0.99), "example": s.example}


# --- report -------------------------------------------------------------------------------

def print_report(store: Any, runs: list[dict[str, Any]], table: Any) -> None:
    """Per run: its top digests by time."""
    rows = []
    for r in runs:
        for d, x in list((r["summary"].measured.get("digests") or {}).items())[:10]:
            rows.append({"server": r["server"], "variant": r["variant"],
                         "rep": r["repetition"], "digest": d[:16], "count": x["count"],
                         "share": x["share"], "p95_ms": x["p95_ms"],
                         "errors": sum(x["errors"].values()),
                         "fingerprint": x["fingerprint"][:60]})
    if rows:
        print("\nreplay: top digests by time (measured part):")
        table(rows, ["server", "variant", "rep", "digest", "count", "share", "p95_ms",
                     "errors", "fingerprint"])


def digest_items(s: RunSummary) -> dict[str, tuple[str, float, float]]:
    """Each kept digest of a run: its fingerprint, mean ms a statement, share of time."""
    return {d: (x["fingerprint"], x["total_s"] * 1000 / x["count"], x["share"])
            for d, x in (s.measured.get("digests") or {}).items() if x["count"]}


EXAMPLE_LOG = """\
# Time: 2026-11-25T06:00:00.000000Z
# User@Host: app[app] @ localhost []  Id:     7
# Query_time: 0.000100  Lock_time: 0.000000 Rows_sent: 1  Rows_examined: 1
use sbtest;
SET timestamp=1795586400;
SELECT c FROM sbtest1 WHERE id=1;
# Time: 2026-11-25T06:00:00.000200Z
# User@Host: app[app] @ localhost []  Id:     8
# Query_time: 0.000100  Lock_time: 0.000000 Rows_sent: 1  Rows_examined: 1
SET timestamp=1795586400;
SELECT COUNT(*) FROM sbtest1;
"""

PLUGIN = WorkloadPlugin(
    kind="replay", dataset=None, any_dataset=True, workload=ReplayWorkload,
    runner=lambda spec, data: Replay(spec, data),
    throughput=(SOURCE, "statements_per_s", "statements/s"), latency=(SOURCE, "latency_ms"),
    figures=(Figure("statements_per_s", "statements/s", True, headline=True,
                    regress="statements_per_s"),),
    metrics=(SERVER_RATIO,), report=print_report, items=digest_items, item_name="digest",
    example={"dataset": {"tables": 1, "table_size": 100},
             "workload": {"kind": "replay", "database": "sbtest", "log": "example-slow.log",
                          "clients": 2},
             "files": {"example-slow.log": EXAMPLE_LOG}})
