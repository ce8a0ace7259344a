"""The collector interface and the sampler that drives polled collectors.

A collector is a context manager: entering starts sampling, leaving stops it. Polled
collectors (a query, a /proc file) run in their own thread at their own interval on the
run clock: tick k is due at ``start + k * interval`` seconds after the run started, the
same clock sysbench's per-second intervals are stored on. A sample that overruns its
interval skips the ticks it missed instead of overlapping itself. Each sample's duration,
success and lateness are stored as ``harness_collector_*`` series, so the cost of
observing is itself observed. A failing collector is recorded (an event with the error,
``harness_collector_success`` 0) and reconnects at its next tick; it never stops the run.
"""
from __future__ import annotations

import abc
import threading
from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pymysql

from ..jsonvalue import JsonDict
from ..proc import RemoteShell
from ..server.mysql import Endpoint

# (metric, value, labels)
Point = tuple[str, float, dict[str, str] | None]


class Unsupported(Exception):
    """This source does not exist on this server version or host; recorded as a note."""


@dataclass
class CollectorContext:
    endpoint: Endpoint
    flavor: str
    version: tuple[int, ...]
    clock: Callable[[], float]
    sample: Callable[[float, str, str, float, dict[str, str] | None], None]
    event: Callable[[float, str, str, JsonDict | None], None]
    artifacts: Path
    mysqld_pid: int | None = None
    container: str | None = None  # the container's name when mysqld runs in one
    # Where mysqld runs when that is not this machine (a lab host, an external server):
    # the OS collectors would sample the wrong machine, so they are skipped with a note.
    remote_host: str | None = None
    # How to run a program on that machine (a lab host over SSH), if there is a way:
    # then the OS collectors sample it there instead of being skipped.
    remote: RemoteShell | None = None
    query_timeout_s: float = 5.0
    lock_wait_timeout_s: int = 2
    notes: list[str] = field(default_factory=list)
    # False on a server the harness did not create: collectors there only read.
    owned: bool = True
    # Collectors the scenario allows to do heavy reads on such a server anyway.
    heavy_ok: frozenset[str] = frozenset()
    # The first run of this cell in the run set (run id, artifacts), when this is a later
    # repetition: a one-off capture of the same host, build and my.cnf may copy its.
    earlier: tuple[str, Path] | None = None

    @property
    def is_mariadb(self) -> bool:
        return self.flavor == "mariadb"


@dataclass(frozen=True)
class Line:
    """One stored series drawn in a report panel."""

    source: str
    metric: str
    label: str = ""  # legend suffix when a panel has several lines per run
    rate: bool = False  # per-second rate of a counter
    scale: float = 1.0
    labels: tuple[tuple[str, str], ...] = ()  # only the series with these labels
    # (label, n): one line per value of that label, the n that grew most in a run,
    # values starting with one of ``skip`` left out of the ranking
    top: tuple[str, int] | None = None
    skip: tuple[str, ...] = ()


@dataclass(frozen=True)
class Panel:
    """A figure of the HTML report over time, from what a collector stores."""

    title: str
    lines: tuple[Line, ...]


@dataclass(frozen=True)
class FlameGraph:
    """How the report draws an artifact of folded stacks."""

    heading: str
    about: str  # what the samples are, a sentence
    # Whether compare draws the candidate's against the baseline's (shares of time on
    # the CPU compare; a moment's stacks do not).
    differential: bool = False


MB = 1048576.0


def changed_only(last: dict[str, float],
                 points: Iterable[tuple[str, dict[str, str], float]]) -> list[Point]:
    """The points whose value changed since the last sample (``last``, updated; all of
    them at the first): a server has hundreds of instruments or tables, most idle, and
    an idle one's series stays empty."""
    out: list[Point] = []
    for metric, labels, value in points:
        key = metric + "\0" + "\0".join(labels.values())
        if last.get(key) != value:
            last[key] = value
            out.append((metric, value, labels))
    return out


# The kind of event a profiler records at the start and the stop of each stretch it
# records, when it records only some of the run (``threads:``); its detail names the
# artifact. Analysis reads the stretches' CPU per transaction over the same seconds.
PROFILING = "profiling"


class Collector(abc.ABC):
    """Base of every collector. ``name`` is its key in scenarios and in the store."""

    name: str = ""
    default_interval_s: float = 1.0
    # What it does to the server: "reads" (nothing else), or "adapts" (changes server
    # state, or reads heavily, only on a server the harness owns; elsewhere it reads
    # what is there and says what it left out). Anything else - saying nothing - is
    # treated as writing, and refused on a server the harness does not own.
    server_access: str = "undeclared"
    # Runs unless the scenario turns it off (else only when the scenario turns it on).
    on_by_default: bool = True
    # Its figures in the HTML report (one left out when every line in it is flat).
    panels: ClassVar[tuple[Panel, ...]] = ()
    # Artifacts of folded stacks it writes, which the HTML report draws as flame graphs.
    flame_graphs: ClassVar[dict[str, FlameGraph]] = {}
    # Kinds of event it records that the report marks on the throughput plot, with the
    # label each mark gets (an event worth finding at a glance, e.g. a stall).
    marks: ClassVar[dict[str, str]] = {}
    # A profiler's samples a second when the scenario names none (None: it takes no hz).
    hz_default: ClassVar[int | None] = None
    # Whether the scenario chooses its wait instruments (``instruments: all |
    # build_default``): a collector that reads performance_schema's waits.
    instrument_choice: ClassVar[bool] = False

    def __init__(self, ctx: CollectorContext, interval_s: float | None = None):
        self.ctx = ctx
        self.interval_s = interval_s or self.default_interval_s
        self.hz = self.hz_default or 0
        # A profiler records only while the workload runs these client thread counts
        # (the scenario's ``threads:``; empty: all along).
        self.only_threads: frozenset[int] = frozenset()

    def at_threads(self, threads: int) -> None:  # noqa: B027 - optional hook
        """The workload now runs ``threads`` client threads (a ramp's step, its hold):
        a profiler that records only some thread counts starts or stops here."""

    @classmethod
    def start_options(cls, flavor: str, version: tuple[int, ...],
                      spec: Any = None) -> dict[str, str]:
        """The mysqld options it needs from start-up on a server the harness starts
        (stored with the run's options like the scenario's own); ``spec`` is the
        scenario's settings for it (None when unnamed)."""
        return {}

    def configure(self, spec: Any) -> None:  # noqa: B027 - optional hook
        """Take the scenario's settings for it (None when unnamed) before it starts,
        beyond its interval and a profiler's hz."""

    @abc.abstractmethod
    def __enter__(self) -> Collector: ...

    @abc.abstractmethod
    def __exit__(self, *exc: object) -> None: ...

    def after_stop(self) -> list[str]:
        """Once every collector has stopped (the tail sampled): a one-off capture into
        the artifacts; its notes."""
        return []

    def emit(self, t: float, points: Iterable[Point]) -> int:
        n = 0
        for metric, value, labels in points:
            self.ctx.sample(t, self.name, metric, value, labels)
            n += 1
        return n


class PolledCollector(Collector):
    """A collector sampled by a thread at ``interval_s`` on the run clock."""

    def __init__(self, ctx: CollectorContext, interval_s: float | None = None):
        super().__init__(ctx, interval_s)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.conn: pymysql.connections.Connection | None = None
        self.connection_id: int | None = None
        self.samples = 0
        self.failures = 0
        # 8 bytes a sample (a list of floats takes 32): a 2-hour soak at 1 s sampling
        # grew the harness by 5.7 MB of these and of sysbench intervals (tracemalloc).
        self.durations = array("d")
        self.lateness = array("d")
        self._last_error_event = -1e9
        self.supported = True

    # --- hooks for subclasses ---------------------------------------------------------

    def setup(self) -> None:
        """Once, before the first sample (may raise :class:`Unsupported`)."""

    @abc.abstractmethod
    def collect(self) -> Iterable[Point]:
        """One sampling pass."""

    def teardown(self) -> None:
        """Once, after the last sample."""

    # --- connection -------------------------------------------------------------------

    def connect(self) -> pymysql.connections.Connection:
        """This collector's own connection, with a query timeout and lock_wait_timeout."""
        if self.conn is not None:
            return self.conn
        conn = self.ctx.endpoint.connect(timeout=self.ctx.query_timeout_s,
                                         read_timeout=self.ctx.query_timeout_s,
                                         write_timeout=self.ctx.query_timeout_s)
        with conn.cursor() as cur:
            cur.execute(f"SET SESSION lock_wait_timeout = {int(self.ctx.lock_wait_timeout_s)}")
            cur.execute("SELECT CONNECTION_ID()")
            row = cur.fetchone()
            self.connection_id = int(row[0]) if row else None
            # A server-side statement limit too, where the version has one.
            ms = int(self.ctx.query_timeout_s * 1000)
            for stmt in (f"SET SESSION max_execution_time = {ms}",  # MySQL 5.7.8+
                         f"SET SESSION max_statement_time = {ms / 1000}"):  # MariaDB 10.1+
                try:
                    cur.execute(stmt)
                except pymysql.err.MySQLError:
                    pass
        self.conn = conn
        return conn

    def query(self, sql: str, args: Any = None) -> list[tuple]:
        conn = self.connect()
        with conn.cursor() as cur:
            cur.execute(sql, args)
            return list(cur.fetchall())

    def _drop_connection(self) -> None:
        if self.conn is not None:
            try:
                self.conn.close()
            except Exception:  # the connection is already broken; closing is best effort
                pass
        self.conn = None

    # --- the sampler ------------------------------------------------------------------

    def __enter__(self) -> PolledCollector:
        try:
            self.setup()
        except Unsupported as e:
            self.supported = False
            note = f"{self.name}: not collected: {e}"
            self.ctx.notes.append(note)
            self.ctx.event(self.ctx.clock(), "collector_skipped", self.name, {"reason": str(e)})
            return self
        except Exception as e:  # a setup failure is recorded like a sample failure
            self._record_failure(self.ctx.clock(), e)
        self._thread = threading.Thread(target=self._loop, name=f"collector-{self.name}",
                                        daemon=True)
        self._thread.start()
        return self

    def _loop(self) -> None:
        clock = self.ctx.clock
        start = clock()
        k = 0
        while not self._stop.is_set():
            due = start + k * self.interval_s
            wait = due - clock()
            if wait > 0 and self._stop.wait(wait):
                break
            self._sample_once(due)
            # next tick strictly in the future: an overrun skips, never overlaps
            k = max(k + 1, int((clock() - start) / self.interval_s) + 1)

    def _sample_once(self, due: float) -> None:
        t = self.ctx.clock()
        self.lateness.append(t - due)
        try:
            points = list(self.collect())
            took = self.ctx.clock() - t
            self.emit(t, points)
            self.samples += 1
            ok = 1.0
        except Exception as e:  # any failure of one sample is recorded, never raised
            took = self.ctx.clock() - t
            ok = 0.0
            self._record_failure(t, e)
        self.durations.append(took)
        labels = {"collector": self.name}
        self.ctx.sample(t, "harness", "harness_collector_duration_seconds", took, labels)
        self.ctx.sample(t, "harness", "harness_collector_success", ok, labels)
        self.ctx.sample(t, "harness", "harness_collector_lateness_seconds", t - due, labels)

    def _record_failure(self, t: float, e: BaseException) -> None:
        self.failures += 1
        self._drop_connection()
        if t - self._last_error_event >= 30.0:  # one event per 30 s, not one per tick
            self._last_error_event = t
            self.ctx.event(t, "collector_error", self.name,
                           {"error": f"{type(e).__name__}: {e}", "failures": self.failures})

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(self.ctx.query_timeout_s + 5)
            if exc[0] is None and not self._thread.is_alive():
                # One closing sample: the state at the end of the run is always recorded,
                # whatever the interval (a 10 s walk of the pool would otherwise miss it).
                self._sample_once(self.ctx.clock())
        try:
            if self.supported:
                self.teardown()
        except Exception:  # teardown is best effort; the samples are already stored
            pass
        self._drop_connection()


