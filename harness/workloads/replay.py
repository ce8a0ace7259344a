"""A DBA's captured statements replayed: the slow log of their workload (written with
``long_query_time = 0``) or its general log, run again, on any dataset, and judged per
query digest.

Each captured session gets a connection of its own and runs its statements in the order
they were captured, following its ``USE`` and session ``SET`` statements; a captured
``Quit`` closes it. The sessions are spread over ``clients`` threads (a session always on
the same one): concurrency is at most ``clients`` and at most the sessions the log holds.
With ``speed: fast`` (the default) they run as fast as the server answers; with a number
each statement starts when it started in the capture, that many times faster (1: the
captured timing), and how late the replay started them is measured (``late_ms``), so a
replay that could not keep the pace says so (a session connects before its first
statement is due: connecting is not counted late). A log that times statements to the second
(MariaDB, MySQL 5.6) starts a second's statements at its beginning, in their order, and
counts one late only once its second is over. The log is streamed, through bounded
queues, so a capture of any size replays in flat memory. A replay as fast as possible
without checksums runs on sysbench's threads instead (``client: sysbench``, the default
then; replay_sysbench.py), which keep up with the captured workload where Python cannot.

``read_only: true`` replays only statements that cannot change data, as the guard
reads SQL (harness/inputs/sqlread.py: SELECT without INTO or a locking clause, SHOW, DESCRIBE,
EXPLAIN, USE, session SET, transaction brackets), in READ ONLY sessions (a function
called from a SELECT cannot write either); the others are counted and skipped. A
replay that is not read-only is treated as writing: the guard refuses it on a server
the harness did not create unless that server is marked disposable.

Per digest (pt-query-digest's fingerprint and ID): count, errors by code, rows,
latency percentiles and the share of the time, in the summary (``digests``) and as
series; statements per second is the headline figure.

``checksums: true`` also checksums each statement's result (its rows in any order, or
its error code) into one checksum per digest that does not depend on the order in which
sessions ran, with a sample of statements (the ``SAMPLE`` smallest by the hash of their
text, the same on every server) to name one whose result differs: ``harness compare``
reports the digests whose results differ between baseline and candidate (an upgrade
check), and those whose results vary between runs of one side.
"""
from __future__ import annotations

import queue
import statistics
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pymysql

from ..errors import HarnessError
from ..inputs.sqlread import first_write, local_load, read_only_session
from ..jsonvalue import JsonDict
from ..model import DatasetModel, Figure
from ..store import RunSummary
from .base import (
    SERVER_METRICS,
    ItemResults,
    RunContext,
    Tick,
    Workload,
    WorkloadPlugin,
    WorkloadResult,
)
from .fingerprint import fingerprint
from .querylog import CapturedLog, open_log
from .replay_figures import Digest, ReplayFigures
from .replay_shared import (
    MASK,
    DigestStats,
    ReplayWorkload,
    Tally,
    follow_admin,
    report_series,
    text_hash,
)
from .replay_sysbench import replay_with_sysbench
from .slowlog import Entry

if TYPE_CHECKING:
    from ..store import RunReader, StoredRun

SOURCE = "replay"
QUEUE = 2000  # entries waiting per client: the log is read no further ahead
LOST = (2006, 2013)  # the connection is gone: the session reconnects
UNKNOWN_DATABASE = 1049
TOP = 50  # digests kept in the summary, by total time
STATEMENT_TIMEOUT_S = 600
LEAD_S = 0.5  # a paced replay's first statement is due this long after it is read
BEHIND_MS = 100  # a p95 this late: the replay did not keep the captured pace


class Pace:
    """When each entry is due, on the monotonic clock: never (``fast``), or its start
    in the capture, counted from the first timed entry, divided by ``speed``."""

    def __init__(self, speed: float | str):
        self.speed = speed
        self.origin: tuple[float, float] | None = None  # (capture time, monotonic time)

    def due(self, e: Entry) -> tuple[float, float] | None:
        """When it may start, and when it is late (its start's precision later). The
        first timed entry is due LEAD_S after it is read: its session connects first."""
        if self.speed == "fast" or e.start is None:
            return None
        if self.origin is None:
            self.origin = (e.start, time.monotonic() + LEAD_S)
        at = self.origin[1] + (e.start - self.origin[0]) / float(self.speed)
        return at, at + e.start_precision / float(self.speed)


# --- the clients ------------------------------------------------------------------------------

class Client(threading.Thread):
    """One replay thread: its captured sessions, each on its own connection."""

    def __init__(self, k: int, ctx: RunContext, spec: ReplayWorkload, tally: Tally,
                 stop: threading.Event):
        super().__init__(name=f"replay-{k}", daemon=True)
        self.ctx, self.spec, self.tally, self.stop = ctx, spec, tally, stop
        self.inbox: queue.Queue[tuple[Entry, tuple[float, float] | None] | None] = \
            queue.Queue(QUEUE)
        self.conns: dict[int, Any] = {}

    def run(self) -> None:
        try:
            while (item := self.inbox.get()) is not None:
                if self.stop.is_set():
                    continue
                self._ready(item[0])
                if self._wait(item[1]):
                    self._one(item[0])
        except Exception as e:  # reported, and it fails the run
            with self.tally.lock:
                self.tally.failures.append(f"{self.name}: {e}")
            self.stop.set()
            while self.inbox.get() is not None:  # the feeder never waits on a dead client
                pass
        finally:
            for c in self.conns.values():
                c.close()

    def _ready(self, e: Entry) -> None:
        """A session's connection is opened before its first statement is due (the
        capture's connection existed before it too), so connecting is not lateness."""
        if not e.admin and e.session not in self.conns:
            self._connect(e)

    def _wait(self, due: tuple[float, float] | None) -> bool:
        """Until the entry is due; how late it is, measured. False: the run stopped."""
        if due is None:
            return True
        ahead = due[0] - time.monotonic()
        if ahead > 0 and self.stop.wait(ahead):
            return False
        self.tally.behind(max(time.monotonic() - due[1], 0.0) * 1000)
        return True

    def _one(self, e: Entry) -> None:
        if e.admin:
            self._admin(e)
            return
        conn = self.conns.get(e.session) or self._connect(e)
        fp = fingerprint(e.sql)
        rows, error, result = 0, None, None
        t = time.perf_counter()
        try:
            with conn.cursor() as cur:
                cur.execute(e.sql)
                got = cur.fetchall() or ()
            ms = (time.perf_counter() - t) * 1000
            rows = len(got)
            if self.spec.checksums:
                result = _result_checksum(got)
        except pymysql.err.MySQLError as err:
            ms = (time.perf_counter() - t) * 1000
            error = int(err.args[0]) if err.args and isinstance(err.args[0], int) else -1
            result = text_hash(b"error %d" % error) if self.spec.checksums else None
            if error in LOST:
                self.conns.pop(e.session).close()
        self.tally.add(fp, e.sql, ms, rows, error, result)

    def _admin(self, e: Entry) -> None:
        """A protocol command: Quit closes the session's connection, Init DB (a general
        log's) moves it; the others are counted."""
        follow_admin(e, e.session in self.conns, lambda: self.conns.pop(e.session).close(),
                     lambda db: self._use(self.conns[e.session], db), self.tally.skip)

    def _use(self, conn: Any, db: str) -> None:
        try:
            conn.select_db(db)
        except pymysql.err.MySQLError as err:
            self.tally.add("use ?", f"USE {db}", 0.0, 0, int(err.args[0]))

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
        if self.spec.read_only:  # READ ONLY, in a sql_mode the guard reads
            with c.cursor() as cur:
                read_only_session(cur)
        self.conns[e.session] = c
        with self.tally.lock:
            self.tally.sessions.add(e.session)
        return c


# --- the workload -----------------------------------------------------------------------------

class Replay(Workload[ReplayWorkload, DatasetModel]):
    name = "replay"

    spec: ReplayWorkload

    @property
    def label(self) -> str:
        return f"replay of {self.spec.log} by {self.spec.clients} clients"

    def run(self, ctx: RunContext) -> WorkloadResult:
        spec, tally = self.spec, Tally()
        log = open_log(spec.path_of(spec.log))
        ctx.threads_now(spec.clients)
        if spec.compiled():  # replay.lua leaves out the warmup itself
            intervals, window, start = replay_with_sysbench(
                ctx, spec, _wanted(log, spec.read_only, tally), tally, SOURCE)
            return self._result(ctx, log, tally, intervals, window, start)
        return self._run_threads(ctx, log, tally)

    def _run_threads(self, ctx: RunContext, log: CapturedLog, tally: Tally
                     ) -> WorkloadResult:
        """The Python clients: paced or checksummed replays."""
        spec, stop = self.spec, threading.Event()
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

    def _feed(self, log: CapturedLog, clients: list[Client], tally: Tally,
              stop: threading.Event) -> None:
        """Each entry to the client of its session, in log order; then the end."""
        pace = Pace(self.spec.speed)
        try:
            for e in _wanted(log, self.spec.read_only, tally):
                item = (e, pace.due(e))
                while not stop.is_set():
                    try:
                        clients[e.session % len(clients)].inbox.put(item, timeout=0.5)
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
              ) -> tuple[list[Tick], tuple[float, float]]:
        """Report every interval until the log is done (or the duration is up)."""
        spec, t0 = self.spec, time.monotonic()
        intervals: list[Tick] = []
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
            if done or stop.is_set() or self._time_up(now - t0):
                break
        return intervals, (measured_at if measured_at is not None else start, ctx.clock())

    def _time_up(self, elapsed: float) -> bool:
        """The warmup and the duration are over (a replay without a duration runs its
        log to the end)."""
        return bool(self.spec.duration_s) and \
            elapsed >= self.spec.warmup_s + (self.spec.duration_s or 0)

    def _report(self, ctx: RunContext, tally: Tally, dt: float) -> Tick:
        ms, errors, late = tally.take()
        t = ctx.clock()
        rate = len(ms) / dt
        p95 = _p95(ms)
        report_series(ctx, SOURCE, t, self.spec.clients, rate, errors / dt, p95)
        if late:
            ctx.sample(t, SOURCE, "late_ms", _p95(late) or 0.0, {"quantile": "0.95"})
        ctx.progress(f"replay  {rate:.0f} statements/s  p95 {p95} ms  errors {errors}")
        return Tick(t, rate, p95)

    def _result(self, ctx: RunContext, log: CapturedLog, tally: Tally,
                intervals: list[Tick], window: tuple[float, float],
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
        rates = [iv.tps for iv in intervals]
        pace = _pace_json(tally.late)
        summary: JsonDict = {
            "workload": f"replay {self.spec.log}", "threads": self.spec.clients,
            "duration_s": round(secs, 3), "warmup_s": self.spec.warmup_s,
            "statements": n, "statements_per_s": round(n / secs, 1),
            "statements_per_s_median": statistics.median(rates) if rates else None,
            "latency_p95_ms": _p95_of(stats), "errors": errors,
            "sessions": len(tally.sessions),
            "digest_count": sum(1 for _, s in stats if s.count),
            "skipped": dict(tally.skipped), "log_skipped": dict(log.skipped),
            "binary_statements": log.binary, "intervals": len(intervals),
            "speed": self.spec.speed, **pace,
            "digests": {d: _digest_json(s, total_ms) for d, s in stats[:TOP]},
            "workload_start_s": round(start, 3), "workload_end_s": round(t, 3)}
        summary["headline"] = (f"{n} statements in {secs:.1f} s ({n / secs:.0f}/s), "
                               f"{summary['digest_count']} digests, {errors} errors, "
                               f"{len(tally.sessions)} sessions" + _behind(tally.late))
        return WorkloadResult(summary=summary, intervals=intervals)


def _result_checksum(rows: Any) -> int:
    """A result's checksum: its rows in any order (a statement without ORDER BY may
    return them in another on another server), and how many."""
    total = len(rows)
    for row in rows:
        total += text_hash(repr(row).encode("utf-8", "surrogateescape"))
    return total & MASK


def _wanted(log: CapturedLog, read_only: bool, tally: Tally) -> Iterator[Entry]:
    """The entries to replay: all but LOCAL loads (the client would send a file of this
    machine), and under read_only only those that cannot write, one statement each (as
    the guard reads SQL: tokenised as the server reads it, not grepped)."""
    for e in log:
        if not e.admin and local_load(e.sql):
            tally.skip("LOAD ... LOCAL (would send a file of this machine)")
        elif read_only and not e.admin and first_write(e.sql, several=False):
            tally.skip("could change data (read_only)")
        else:
            yield e


def _pace_json(late: DigestStats) -> JsonDict:
    """How late a paced replay started its statements (nothing for ``fast``)."""
    if not late.count:
        return {}
    return {"late_p50_ms": late.quantile(0.5), "late_p95_ms": late.quantile(0.95),
            "late_statements": late.count}


def _behind(stats: DigestStats) -> str:
    """How far behind the log's pace a paced replay started its statements (p95)."""
    late = stats.quantile(0.95) if stats.count else None
    if late is None or late < BEHIND_MS:
        return ""
    return (f"; BEHIND the captured pace (p95 {late:.0f} ms late): more clients, or a "
            "lower speed")


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


def _digest_json(s: DigestStats, total_ms: float) -> JsonDict:
    """A digest as a run's summary keeps it."""
    checked = bool(s.sample)  # checksums: true
    return Digest(
        fingerprint=s.fingerprint, count=s.count, rows=s.rows,
        errors={str(k): v for k, v in sorted(s.errors.items())},
        total_s=round(s.total_ms / 1000, 4), share=round(s.total_ms / total_ms, 4),
        p50_ms=s.quantile(0.5), p95_ms=s.quantile(0.95), p99_ms=s.quantile(0.99),
        example=s.example, checksum=f"{s.checksum:016x}" if checked else None,
        checked=s.checked if checked else None,
        checksum_sample={f"{k:016x}": (f"{v:016x}", sql)
                         for k, (v, sql) in sorted(s.sample.items())} if checked else None,
    ).to_json()


# --- report -------------------------------------------------------------------------------

def print_report(store: RunReader, runs: list[StoredRun], table: Any) -> None:
    """Per run: its top digests by time."""
    rows = []
    for r in runs:
        for d, x in list(ReplayFigures.of(r.summary).digests.items())[:10]:
            rows.append({"server": r.server, "variant": r.variant,
                         "rep": r.repetition, "digest": d[:16], "count": x.count,
                         "share": x.share, "p95_ms": x.p95_ms,
                         "errors": sum(x.errors.values()),
                         "fingerprint": x.fingerprint[:60]})
    if rows:
        print("\nreplay: top digests by time (measured part):")
        table(rows, ["server", "variant", "rep", "digest", "count", "share", "p95_ms",
                     "errors", "fingerprint"])


def digest_items(s: RunSummary) -> dict[str, tuple[str, float, float]]:
    """Each kept digest of a run: its fingerprint, mean ms a statement, share of time."""
    return {d: (x.fingerprint, x.mean_ms, x.share)
            for d, x in ReplayFigures.of(s).digests.items() if x.count}


def digest_results(s: RunSummary) -> dict[str, ItemResults]:
    """Each kept digest's result checksum and sample (a replay with checksums: true)."""
    return {d: ItemResults(x.fingerprint, x.checksum, x.checked or 0,
                           dict(x.checksum_sample or {}))
            for d, x in ReplayFigures.of(s).digests.items() if x.checksum is not None}


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

class ReplayPlugin(WorkloadPlugin[ReplayWorkload, DatasetModel]):
    """A DBA's captured queries replayed on any dataset, judged per query digest."""

    kind = "replay"
    any_dataset = True
    workload = ReplayWorkload
    throughput = (SOURCE, "statements_per_s", "statements/s")
    latency = (SOURCE, "latency_ms")
    figures = (Figure("statements_per_s", "statements/s", True, headline=True,
                      regress="statements_per_s"),)
    metrics = SERVER_METRICS
    item_name = "digest"
    example = {"dataset": {"tables": 1, "table_size": 100},
               "workload": {"kind": "replay", "database": "sbtest", "log": "example-slow.log",
                            "clients": 2},
               "files": {"example-slow.log": EXAMPLE_LOG}}

    def runner(self, spec: ReplayWorkload, data: DatasetModel) -> Replay:
        return Replay(spec, data)

    def report(self, store: RunReader, runs: list[StoredRun], print_table: Any) -> None:
        print_report(store, runs, print_table)

    def items(self, summary: RunSummary) -> dict[str, tuple[str, float, float]]:
        return digest_items(summary)

    def results(self, summary: RunSummary) -> dict[str, ItemResults]:
        return digest_results(summary)


PLUGIN = ReplayPlugin()
