"""What watching costs, window by window on one server: the observers' goals, perf at 99 Hz
within 2% of tps and the wait-event collector within 1% on top of the build's default
performance_schema.

``make bench-observers`` compares whole runs, each on a server started afresh; runs
started one by one differ by more than those costs (six rounds on MariaDB 10.11 left
intervals of +-12%). Here one sysbench stream runs on one server and the observer is
switched on and off in windows of a few seconds, in quads of random orientation (ABBA
or BAAB), as the switchback design switches a my.cnf option: adjacent windows share
the server's state and the host's hour, and the randomisation test's interval holds
whatever the seconds' memory. The observer is the collector itself:

- ``cpu_profile``: perf record started once as the collector starts it (whole CPUs,
  99 Hz, call graphs), paused and resumed through its control FIFO; while paused its
  events are off and it costs nothing. Measured on a server with the build's default
  options.
- ``wait_events``: the collector's sampling thread started and stopped, on a server
  started with the collector's own start-up options (its instruments timed): its
  sampling alone.
- ``wait_instruments``: the collector as the harness runs it against the build's
  default performance_schema: the collector's instruments (``wait_events.INSTRUMENTS``,
  every wait instrument) enabled and timed through ``setup_instruments`` and the
  sampling started, against the rows the server started with and no sampling.
  Switched at run time, the instruments reach the mutexes and rwlocks created while
  they were off (5.7.29 and MariaDB 10.11 count waits on log_sys_mutex and
  buf_pool_mutex so, 2026-11-28), so the A windows are the build's default. The
  server starts with performance_schema on; what performance_schema itself costs is
  the next observer's.
- ``innodb_latches``: the same with InnoDB's latches alone (:data:`INNODB_LATCHES`)
  switched on beside the build's default instruments, and the sampling: whether a
  narrower set is cheaper.
- ``innodb_mutex``: the collector where performance_schema is off, on MySQL 5.7.8
  and later: InnoDB's latch monitor enabled and SHOW ENGINE INNODB MUTEX read every
  second, against neither, on a server started with performance_schema off. Counts,
  not time, so not what the report ranks by; measured as the cheap way to see InnoDB's
  latches (their performance_schema instruments cost 5.7.29 ~2%).
- ``performance_schema``: what the build's default performance_schema costs, on
  against off: a start-up setting, so two sandboxes of the build run side by side,
  one started with ``performance_schema = OFF`` (A) and one with it ``ON`` and the
  build's default instruments (B), and each window is a sysbench run of its own on
  the side's sandbox while the other idles.
- ``two_sandboxes``: the same with both sandboxes started alike (A/A): what two
  processes of one build differ by, the floor under ``performance_schema``'s ratio.

The stream has one sysbench thread unless ``--observer-threads`` says more (each row
says its own): at one, a core idles between client and server and each window's tps
swings with how fast it wakes (windows vary ~10% on MariaDB 10.11 here); at two, both
cores stay busy and windows vary 3-6%, and an observer's CPU shows in tps as it is.

Per window: tps (the median of its seconds after the first, as the switchback judges
it) and mysqld's CPU microseconds per transaction over the same seconds (its CPU time
read from /proc at the window's second second and at its end).
"""
from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard, TypeVar

import numpy as np

from .. import proc, procfs
from ..analysis.ab_verdict import Limits, Metric, MetricVerdict
from ..analysis.switchback import Window, judge, pairs, schedule, seconds_in, window_values
from ..collectors.base import CollectorContext
from ..collectors.cpu_profile import CpuProfile
from ..collectors.wait_events import INSTRUMENTS, NOT_SEEN, WaitEvents, latch_monitor
from ..errors import HarnessError
from ..host.noise import keep_awake
from ..jsonvalue import Json, JsonDict
from ..scenario import CollectorSpec
from ..server import catalog, mysql
from ..workloads.sysbench import (
    SysbenchDataset,
    SysbenchWorkload,
    build_args,
    parse_output,
    prepare_dataset,
    write_config,
)
from .sandbox import bench_server, log

DATA = SysbenchDataset(tables=4, table_size=50000)  # the quickstart's
TEST = "oltp_read_only"
WARMUP_S = 20  # before the first window: the pool warm, the connections made
SETTLE_S = 1  # each window's first second is left out (the switch happens in it)
# The goals: the tps ratio's interval above them, CPU a transaction's below 1/goal.
GOALS = {"cpu_profile": 0.98, "wait_events": 0.99, "wait_instruments": 0.99,
         "innodb_latches": 0.99, "innodb_mutex": 0.99, "waits_build_default": 0.99}
# Measured on two sandboxes, one sysbench run a window: each side's start-up options
# (no goal: performance_schema's cost is stated, not bounded).
APART = {"performance_schema": ({"performance_schema": "OFF"}, {"performance_schema": "ON"}),
         "two_sandboxes": ({}, {})}
BASE_OPTIONS = {"innodb_buffer_pool_size": "256M"}
INNODB_LATCHES = "wait/synch/%/innodb/%"  # the innodb_latches observer's instruments
T = TypeVar("T")


class _Perf:
    """cpu_profile's perf, paused (``set(False)``) and resumed through its FIFO."""

    start_options = CpuProfile.start_options

    def __init__(self, cctx: CollectorContext):
        self.c = CpuProfile(cctx)

    def __enter__(self) -> _Perf:
        self.c.__enter__()
        if self.c.p is None or not self.c.pause():
            raise HarnessError("bench observer windows: perf did not start: "
                            + "; ".join(self.c.ctx.notes))
        return self

    def set(self, on: bool) -> None:
        if not (self.c.resume() if on else self.c.pause()):
            raise HarnessError("bench observer windows: perf stopped answering its FIFO")

    def __exit__(self, *exc: object) -> None:
        self.c.__exit__(*exc)

    def window_notes(self) -> list[str]:
        return []  # perf runs the whole stream: its notes are the run's, in cctx.notes


class _Waits:
    """The wait_events collector's sampling thread, started and stopped, on a server
    started with every wait instrument (``instruments: all``)."""

    @staticmethod
    def start_options(flavor: str, version: tuple[int, ...]) -> dict[str, str]:
        return WaitEvents.start_options(flavor, version, CollectorSpec(instruments="all"))

    def __init__(self, cctx: CollectorContext, instruments: str = "all"):
        self.cctx = cctx
        self.spec = CollectorSpec(instruments=instruments)
        self.c: WaitEvents | None = None
        self.samples = 0
        self.stretches = 0  # started and stopped
        self.before = 0  # the notes said before this stretch's
        self.said: Counter[str] = Counter()  # each note of a stretch, in how many

    def __enter__(self) -> _Waits:
        return self

    def set(self, on: bool) -> None:
        if on and self.c is None:
            self.before = len(self.cctx.notes)
            self.c = WaitEvents(self.cctx)
            self.c.configure(self.spec)
            self.c.__enter__()
        elif not on and self.c is not None:
            self.c.__exit__(None, None, None)
            self.samples += self.c.samples
            self.stretches += 1
            self.said.update(dict.fromkeys(self.cctx.notes[self.before:], 1))
            del self.cctx.notes[self.before:]
            self.c = None

    def window_notes(self) -> list[str]:
        """The collector's notes, each with how many of its stretches said it (a note
        one stretch gave is not the whole row's). A stretch is one start to stop: the B
        windows in a row (ABBA's two) are one."""
        return [f"{note} (in {k} of the collector's {self.stretches} starts)"
                for note, k in self.said.items()]

    def __exit__(self, *exc: object) -> None:
        self.set(False)


class _SqlToggle:
    """An observer switched by SQL on one connection of its own, with the wait_events
    collector's sampling on in the B windows: :meth:`switch` says what the SQL is,
    :meth:`opened` reads what it needs at start."""

    instruments = "all"  # the collector's ``instruments:``

    def __init__(self, cctx: CollectorContext):
        self.cctx = cctx
        self.waits = _Waits(cctx, self.instruments)
        self.stack = ExitStack()
        self.conn: Any = None

    def __enter__(self) -> _SqlToggle:
        self.conn = self.stack.enter_context(mysql.connection(self.cctx.endpoint))
        try:
            self.opened()
        except BaseException:
            self.stack.close()
            raise
        return self

    @staticmethod
    def start_options(flavor: str, version: tuple[int, ...]) -> dict[str, str]:
        """The options the observer's server starts with."""
        raise NotImplementedError

    def opened(self) -> None:
        """What the toggle reads once its connection is open (nothing here)."""

    def switch(self, cur: Any, on: bool) -> None:
        raise NotImplementedError

    def set(self, on: bool) -> None:
        with self.conn.cursor() as cur:
            self.switch(cur, on)
        self.waits.set(on)

    def window_notes(self) -> list[str]:
        return self.waits.window_notes()

    def __exit__(self, *exc: object) -> None:
        with self.stack:
            self.set(False)


class _WaitInstruments(_SqlToggle):
    """The wait_events collector as the harness runs it (its instruments enabled and
    timed, and its sampling) against the build's default instruments without it. The
    server starts with performance_schema on and the build's default instruments; the B
    windows switch the collector's instruments on through ``setup_instruments`` and
    start the sampling, the A windows put back the rows read at start and stop it."""

    defaults: dict[tuple[str, str], list[str]]  # read when the connection opens
    name = "wait_instruments"
    pattern = INSTRUMENTS  # what the B windows switch on

    @staticmethod
    def start_options(flavor: str, version: tuple[int, ...]) -> dict[str, str]:
        return {"performance_schema": "ON"}

    def opened(self) -> None:
        rows = mysql.query(self.conn, "SELECT NAME, ENABLED, TIMED FROM performance_schema"
                           ".setup_instruments WHERE NAME LIKE %s", (self.pattern,))
        self.defaults = instrument_groups(rows)
        off = sum(map(len, self.defaults.values()))
        if not off:
            raise HarnessError(f"bench observer windows: every instrument {self.pattern} "
                               "is enabled and timed by default on this build: nothing to "
                               "switch")
        self.cctx.notes.append(f"{self.name}: {off} of the {len(rows)} instruments "
                               f"{self.pattern} are off or untimed by default, switched on "
                               "in the B windows")

    def switch(self, cur: Any, on: bool) -> None:
        if on:
            cur.execute("UPDATE performance_schema.setup_instruments SET ENABLED = "
                        "'YES', TIMED = 'YES' WHERE NAME LIKE %s", (self.pattern,))
            return
        for (enabled, timed), names in self.defaults.items():
            cur.execute("UPDATE performance_schema.setup_instruments SET ENABLED"
                        " = %s, TIMED = %s WHERE NAME IN %s", (enabled, timed, names))


class _WaitInnodbLatches(_WaitInstruments):
    """The same with InnoDB's latches alone (mutexes, rwlocks, sx-locks) switched on
    beside the build's default instruments: what a narrower set costs (on MariaDB
    10.11, a ninth of the waits every instrument adds)."""

    name = "innodb_latches"
    pattern = INNODB_LATCHES

    def window_notes(self) -> list[str]:
        """The collector's notes but its count of instruments off, which would blame a
        scenario: here the B windows leave them off by design (opened() says how many
        they switch on)."""
        return [n for n in super().window_notes() if NOT_SEEN not in n] + [
            f"{self.name}: the other wait instruments stay as the build has them; the "
            "collector, asked for all, does not see their waits"]


class _InnodbMutex(_SqlToggle):
    """The wait_events collector where performance_schema is off, as it runs on MySQL
    5.7.8 and later: InnoDB's latch monitor on (``innodb_monitor_enable = latch``) and
    SHOW ENGINE INNODB MUTEX read every second, against neither. The server starts with
    performance_schema off; the B windows enable the monitor and start the sampling,
    the A windows disable it and stop it."""

    @staticmethod
    def start_options(flavor: str, version: tuple[int, ...]) -> dict[str, str]:
        _latch_monitor_needed(flavor, version, "innodb_mutex")
        return {"performance_schema": "OFF"}

    def switch(self, cur: Any, on: bool) -> None:
        cur.execute("SET GLOBAL innodb_monitor_%s = 'latch'"
                    % ("enable" if on else "disable"))


class _BuildDefault(_InnodbMutex):
    """The wait_events collector with ``instruments: build_default`` as it runs on MySQL
    5.7.8 and later: the build's own performance_schema and instruments, their summary
    read every second, and beside it InnoDB's latch monitor and SHOW ENGINE INNODB
    MUTEX, against none of it. The server starts with the build's default
    performance_schema; the B windows enable the monitor and start the sampling, the A
    windows disable it and stop it."""

    instruments = "build_default"

    @staticmethod
    def start_options(flavor: str, version: tuple[int, ...]) -> dict[str, str]:
        _latch_monitor_needed(flavor, version, "waits_build_default")
        return {}


def _latch_monitor_needed(flavor: str, version: tuple[int, ...], name: str) -> None:
    if not latch_monitor(flavor, version):
        raise HarnessError(f"bench observer windows: {name} needs MySQL 5.7.8 or later "
                           "(InnoDB's latch monitor)")


def instrument_groups(rows: Iterable[tuple]) -> dict[tuple[str, str], list[str]]:
    """setup_instruments' rows not enabled and timed, as the names under each (ENABLED,
    TIMED): the statements that put them back after every one was switched on."""
    out: dict[tuple[str, str], list[str]] = {}
    for name, enabled, timed in rows:
        if (str(enabled), str(timed)) != ("YES", "YES"):
            out.setdefault((str(enabled), str(timed)), []).append(str(name))
    return out


_TOGGLES: dict[str, type[_Perf] | type[_Waits] | type[_SqlToggle]] = {
    "cpu_profile": _Perf, "wait_events": _Waits, "wait_instruments": _WaitInstruments,
    "innodb_latches": _WaitInnodbLatches, "innodb_mutex": _InnodbMutex,
    "waits_build_default": _BuildDefault}
OBSERVERS = (*_TOGGLES, *APART)
# Those measured unless named: every one that runs on every build (innodb_mutex and
# waits_build_default need MySQL 5.7.8 or later; innodb_latches, a narrower set the
# collector does not use, is measured when named)
DEFAULT_OBSERVERS = ("cpu_profile", "wait_events", "wait_instruments", *APART)


def bench_observer_windows(windows: int, window_s: int, servers: Sequence[str],
                           threads: int = 1,
                           observers: Sequence[str] = DEFAULT_OBSERVERS) -> JsonDict:
    """Per server, each observer switched on and off in ``windows`` windows of
    ``window_s`` seconds of one sysbench stream: its tps ratio and its CPU a transaction's,
    each with the randomisation test's interval, and whether the goal is shown. Each
    row states its own windows and start, so rows measured apart can share a section
    (:func:`merged`)."""
    unknown = sorted(set(observers) - set(OBSERVERS))
    if unknown:
        raise HarnessError(f"bench observer windows: no observer {', '.join(unknown)} "
                           f"(there are {', '.join(OBSERVERS)})")
    for server in servers:  # an observer a build cannot run is refused before any window
        build = catalog.resolve(server, log=log)
        for name in observers:
            if name in _TOGGLES:
                _TOGGLES[name].start_options(build.flavor, build.version_tuple)
    out: JsonDict = {"test": TEST, "warmup_s": WARMUP_S, "goals": GOALS}
    for server in servers:
        out[server] = {name: _observed(server, name, windows, window_s, threads)
                       for name in OBSERVERS if name in observers}
    return out


def _observed(server: str, name: str, windows: int, window_s: int,
              threads: int) -> JsonDict:
    """One observer's windows on a server of its own (two, for a start-up setting)."""
    if name in APART:
        return _observed_apart(server, name, windows, window_s, threads)
    build = catalog.resolve(server, log=log)
    toggle = _TOGGLES[name]
    options = {**BASE_OPTIONS, **toggle.start_options(build.flavor, build.version_tuple)}
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    with bench_server(options, f"bench-obs-{name}-", server) as (box, ctx):
        prepare_dataset(ctx, DATA)
        cctx = CollectorContext(endpoint=box.endpoint, flavor=build.flavor,
                                version=build.version_tuple, clock=ctx.clock,
                                sample=lambda *a: None, event=lambda *a: None,
                                artifacts=ctx.artifacts, mysqld_pid=box.pid)
        observer = toggle(cctx)
        with keep_awake() as method:
            got = _windows(box, ctx, observer, windows, window_s, threads,
                           f"{server}: {name}")
        row: JsonDict = {**got.to_json(), "started_at": started, "windows": windows,
                         "window_s": window_s, "threads": threads, "cpu_keepalive": method,
                         "options": options,
                         "notes": [*dict.fromkeys(cctx.notes), *observer.window_notes()],
                         **got.goals_shown(name)}
    log(f"observer windows, {server}: {name}: {got.line()}")
    return row


def _observed_apart(server: str, name: str, windows: int, window_s: int,
                    threads: int) -> JsonDict:
    """A start-up setting's windows: two sandboxes of ``server``, A's and B's options,
    each window one sysbench run on its side's sandbox."""
    options = tuple({**BASE_OPTIONS, **side} for side in APART[name])
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    with ExitStack() as stack:
        boxes = [stack.enter_context(bench_server(o, f"bench-obs-{name}-{side}-", server))
                 for side, o in zip("AB", options, strict=True)]
        targets = {side: _target(box, ctx, threads) for side, (box, ctx)
                   in zip("AB", boxes, strict=True)}
        with keep_awake() as method:
            got = _apart_windows(targets, windows, window_s, f"{server}: {name}")
    row: JsonDict = {**got.to_json(), "started_at": started, "windows": windows,
                     "window_s": window_s, "threads": threads, "cpu_keepalive": method,
                     "options": {"A": options[0], "B": options[1]},
                     "notes": [f"one sysbench run of {window_s} s a window on the side's "
                               "sandbox, the other idle"], **got.goals_shown(name)}
    log(f"observer windows, {server}: {name}: {got.line()}")
    return row


@dataclass(frozen=True)
class _Target:
    """One side's sandbox: its mysqld's pid, sysbench's config file and threads."""
    pid: int
    cfg: Path
    threads: int

    def argv(self, seconds: int) -> list[str]:
        spec = SysbenchWorkload(test=TEST, threads=self.threads, duration_s=seconds)
        return build_args(spec, DATA, self.cfg)


def _side(box: Any, ctx: Any, threads: int) -> _Target:
    """A sandbox's mysqld and sysbench's config file for it."""
    if box.pid is None:
        raise HarnessError("bench observer windows: mysqld's pid is not known")
    cfg = write_config(ctx.artifacts / ".observers.cnf", box.endpoint, DATA.database)
    return _Target(box.pid, cfg, threads)


def _target(box: Any, ctx: Any, threads: int) -> _Target:
    """A side's sandbox loaded and warmed (WARMUP_S of the window's test)."""
    prepare_dataset(ctx, DATA)
    target = _side(box, ctx, threads)
    _sysbench(target.argv(WARMUP_S), target.cfg.with_suffix(".warmup"), WARMUP_S,
              lambda t0: None)
    return target


def _apart_windows(targets: dict[str, _Target], windows: int, window_s: int,
                   label: str) -> Observed:
    """Each window one sysbench run on its side's sandbox; the windows laid end to end
    on one clock, so they are judged as one stream's are."""
    sides = schedule(windows, random.SystemRandom())
    wins = [Window(i, s, i * window_s, (i + 1) * window_s, True)
            for i, s in enumerate(sides)]
    ts: list[np.ndarray] = []
    vs: list[np.ndarray] = []
    cpu: list[tuple[float, float]] = []
    for w in wins:
        t, v, used = _one_window(targets[w.side], window_s)
        ts.append(t + w.start)
        vs.append(v)
        cpu.append(used)
        _progress(label, w, len(wins))
    return _judged_windows(wins, np.concatenate(ts), np.concatenate(vs), cpu, sides)


def _one_window(target: _Target, window_s: int
                ) -> tuple[np.ndarray, np.ndarray, tuple[float, float]]:
    """One sysbench run of ``window_s`` seconds: its seconds (t, tps) and mysqld's CPU
    seconds at its settled start and its end."""
    def cpu(t0: float) -> tuple[float, float]:
        _until(t0 + SETTLE_S)
        start = procfs.read(target.pid).cpu_s
        _until(t0 + window_s - 0.05)
        return start, procfs.read(target.pid).cpu_s
    text, used = _sysbench(target.argv(window_s), target.cfg.with_suffix(".out"),
                           window_s, cpu)
    intervals = parse_output(text).intervals
    return (np.asarray([iv.t for iv in intervals], dtype=float),
            np.asarray([iv.tps for iv in intervals], dtype=float), used)


def _sysbench(argv: list[str], out_file: Path, seconds: int,
              during: Callable[[float], T]) -> tuple[str, T]:
    """Run sysbench (``seconds`` long) to its end, ``during(t0)`` called while it runs
    (``t0``: its start on time.monotonic's clock), and stopped on any exception: its
    output, and what ``during`` returned."""
    with open(out_file, "w") as out:
        p = proc.popen(argv, stdout=out)
        t0 = time.monotonic()
        try:
            got = during(t0)
            p.wait(timeout=max(1.0, t0 + seconds + 120 - time.monotonic()))
        except BaseException:
            proc.stop_process(p, grace_s=5)
            raise
    text = out_file.read_text()
    if p.returncode != 0:
        raise HarnessError(f"bench observer windows: sysbench exited {p.returncode}: "
                           f"{text[-500:]}")
    return text, got


def merged(earlier: Mapping[str, Json] | None, now: JsonDict) -> JsonDict:
    """``now``'s rows over ``earlier``'s: a run of one observer or one server keeps the
    rows it did not measure (each says when it was measured and over how many windows)."""
    if not earlier:
        return now
    out: JsonDict = {**earlier, **{k: v for k, v in now.items() if not _is_server(v, k)}}
    sizes: JsonDict = {k: out.pop(k) for k in ("windows", "window_s", "threads") if k in out}
    for server, rows in earlier.items():  # rows from before each row said its sizes
        if _is_server(rows, server):
            out[server] = _sized(rows, sizes)
    for server, rows in now.items():
        if _is_server(rows, server):
            kept = out.get(server)
            out[server] = {**(kept if isinstance(kept, Mapping) else {}), **rows}
    return out


def _sized(rows: Mapping[str, Json], sizes: JsonDict) -> JsonDict:
    """A server's rows, each with the section's sizes under its own."""
    return {name: {**sizes, **row} if isinstance(row, Mapping) else row
            for name, row in rows.items()}


def _is_server(value: Json, key: str) -> TypeGuard[Mapping[str, Json]]:
    """A server's rows (the section's other keys are its sizes and goals)."""
    return isinstance(value, Mapping) and key != "goals"


def _windows(box: Any, ctx: Any, toggle: Any, windows: int, window_s: int,
             threads: int, label: str) -> Observed:
    """One stream, the observer on in the B windows: the judged ratios."""
    sides = schedule(windows, random.SystemRandom())
    wins = [Window(i, s, WARMUP_S + i * window_s, WARMUP_S + (i + 1) * window_s,
                   i == 0 or s != sides[i - 1]) for i, s in enumerate(sides)]
    total = WARMUP_S + len(sides) * window_s
    text, cpu = _stream(_side(box, ctx, threads), total, wins, toggle, label)
    intervals = parse_output(text).intervals
    t = np.asarray([iv.t for iv in intervals])
    v = np.asarray([iv.tps for iv in intervals])
    return _judged_windows(wins, t, v, cpu, sides)


@dataclass(frozen=True)
class Observed:
    """An observer's windows judged: its tps and mysqld's CPU a transaction, B (on)
    against A (off), and each window's values."""

    sides: str
    tps: MetricVerdict
    cpu_per_txn: MetricVerdict
    window_tps: list[float | None]
    window_cpu_us_per_txn: list[float | None]

    def to_json(self) -> JsonDict:
        return {"sides": self.sides, "tps": _judged(self.tps),
                "cpu_per_txn": _judged(self.cpu_per_txn), "window_tps": self.window_tps,
                "window_cpu_us_per_txn": self.window_cpu_us_per_txn}

    def goals_shown(self, name: str) -> dict[str, bool | None]:
        """Whether the intervals show the goal: tps's lower edge at or above it, CPU a
        transaction's upper edge at or below its inverse (None: no interval)."""
        goal = GOALS.get(name)
        if goal is None:
            return {}
        tps, cpu = _ci(self.tps), _ci(self.cpu_per_txn)
        return {"tps_goal_shown": None if tps is None else tps[0] >= goal,
                "cpu_goal_shown": None if cpu is None else cpu[1] <= 1 / goal}

    def line(self) -> str:
        def said(v: MetricVerdict) -> str:
            ci = _ci(v)
            if ci is None or v.ratio is None:
                return f"no interval ({v.why})"
            return f"x{round(v.ratio, 4):.4f} [{ci[0]:.4f}, {ci[1]:.4f}]"
        return (f"tps {said(self.tps)}, mysqld CPU a transaction "
                f"{said(self.cpu_per_txn)}")


def _judged_windows(wins: list[Window], t: np.ndarray, v: np.ndarray,
                    cpu: list[tuple[float, float]], sides: list[str]) -> Observed:
    """The windows' tps and mysqld CPU a transaction, judged as the switchback judges."""
    medians = window_values(t, v, wins, SETTLE_S)
    tps = judge(Metric("tps", True), pairs(medians), Limits(noise=0.0))
    per_txn = [(w, _cpu_per_txn(cpu[w.index], t, v, w)) for w in wins]
    cpu_v = judge(Metric("cpu_us_per_txn", False),
                  pairs([(w, x) for w, x in per_txn if x is not None]), Limits(noise=0.0))
    by_window = {w.index: x for w, x in medians}
    return Observed("".join(sides), tps, cpu_v,
                    _rounded((by_window.get(w.index) for w in wins), 1),
                    _rounded((x for _, x in per_txn), 2))


def _rounded(xs: Iterable[float | None], digits: int) -> list[float | None]:
    return [None if x is None else round(x, digits) for x in xs]


def _stream(target: _Target, total: int, wins: list[Window], toggle: Any,
            label: str) -> tuple[str, list[tuple[float, float]]]:
    """Run sysbench for ``total`` seconds, switching the observer at each window's
    start; its output, and mysqld's CPU seconds at each window's settled start and end."""
    def switched(t0: float) -> list[tuple[float, float]]:
        cpu: list[tuple[float, float]] = []
        for w in wins:
            _until(t0 + w.start)
            toggle.set(w.side == "B")
            _until(t0 + w.start + SETTLE_S)
            start = procfs.read(target.pid).cpu_s
            _until(t0 + w.end - 0.05)
            cpu.append((start, procfs.read(target.pid).cpu_s))
            _progress(label, w, len(wins))
        toggle.set(False)
        return cpu
    with toggle:
        return _sysbench(target.argv(total), target.cfg.with_suffix(".out"), total,
                         switched)


def _progress(label: str, w: Window, n: int) -> None:
    """A line on stderr at every tenth of the windows: a long bench says where it is."""
    if (w.index + 1) % max(1, n // 10) == 0:
        log(f"observer windows, {label}: {w.index + 1} of {n} windows")


def _until(deadline: float) -> None:
    time.sleep(max(0.0, deadline - time.monotonic()))


def _cpu_per_txn(cpu: tuple[float, float], t: np.ndarray, v: np.ndarray,
                 w: Window) -> float | None:
    """mysqld's CPU microseconds per transaction over a window's settled seconds (the
    seconds its median is taken over)."""
    txns = float(v[seconds_in(t, w, SETTLE_S)].sum())
    return (cpu[1] - cpu[0]) * 1e6 / txns if txns > 0 else None


def _ci(v: MetricVerdict) -> tuple[float, float] | None:
    """A verdict's interval as the section stores it (4 decimals)."""
    return None if v.ci95 is None else (round(v.ci95[0], 4), round(v.ci95[1], 4))


def _judged(v: MetricVerdict) -> JsonDict:
    ci = _ci(v)
    return {"ratio": None if v.ratio is None else round(v.ratio, 4),
            "ci95": None if ci is None else list(ci),
            "p_value": v.p_value, "verdict": v.verdict, "quads": len(v.baseline) // 2,
            "why": v.why}

