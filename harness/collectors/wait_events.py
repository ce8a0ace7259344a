"""Where the server's time goes: performance_schema's wait summaries
(``events_waits_summary_global_by_event_name``: count and time per instrument, mutexes,
rwlocks, conditions, file and socket I/O, table and lock waits), named as
mysqld_exporter names them: ``mysql_perf_schema_events_waits_total`` and
``mysql_perf_schema_events_waits_seconds_total`` by ``event_name``. Where
performance_schema is off, InnoDB's own mutex counters instead (``SHOW ENGINE INNODB
MUTEX``: ``mysql_innodb_mutex_waits_total`` by ``name``), where the build has them:
MySQL 5.7.8 and later count a mutex's waits there only while InnoDB's latch monitor is on
(``innodb_monitor_enable = latch``), so a server the harness starts gets it too (it
counts only the acquisitions that had to wait); its rwlocks are always counted.

Off by default: its instruments cost the server CPU. Turned on with ``instruments:
all``, a server the harness starts gets performance_schema and every wait instrument
(:data:`INSTRUMENTS`) from start-up, through options (:meth:`WaitEvents.start_options`,
stored with the run's options), never by writing to ``setup_instruments`` at run time;
the scenario's own ``performance_schema_instrument`` wins (fewer series, not a cheaper
run: on 5.7.29 and MariaDB 10.11 InnoDB's latches alone cost what every wait instrument
costs, docs/collectors.md), and the run's notes say how many it left out. With
``instruments: build_default`` it leaves the build's own performance_schema and
instruments as shipped and, on MySQL 5.7.8 and later, counts InnoDB's latches beside
them through the latch monitor. Unnamed, it is ``build_default`` where that still sees
InnoDB's latches (MySQL and Percona Server 5.7.8 and later, whose every wait instrument
costs 2-3% of throughput, the build's own and the latch monitor within 1%:
docs/collectors.md) and ``all`` elsewhere (MariaDB and older MySQL, where the build's
own would see no latch at all: MariaDB ships performance_schema off; on MariaDB 10.11
that costs ~1.3% of tps with both cores busy, all of it InnoDB's latches, whose waits
nothing cheaper counts there from 10.2 on). On a server the
harness does not own it reads what is enabled there and says what it could not see. Only
instruments whose count moved since the last sample are stored (a server has hundreds,
most idle), and not ``idle`` (a connection waiting for its client). The report ranks the
rest by time waited but for condition waits, on which background threads sleep between
rounds."""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import pymysql

from .base import Line, Panel, Point, PolledCollector, Unsupported, changed_only

COUNT = "mysql_perf_schema_events_waits_total"
SECONDS = "mysql_perf_schema_events_waits_seconds_total"
MUTEX = "mysql_innodb_mutex_waits_total"
_PICO = 1e-12
# Enabled and timed from start-up on a server the harness starts (a pattern as
# performance_schema_instrument and LIKE both take it)
INSTRUMENTS = "wait/%"
# The summary's rows that moved: all of them, or those of the instruments enabled at
# start, by name (WaitEvents._summary_query says which)
SUMMARY_SQL = ("SELECT EVENT_NAME, COUNT_STAR, SUM_TIMER_WAIT FROM "
               "performance_schema.events_waits_summary_global_by_event_name "
               "WHERE COUNT_STAR > 0 AND EVENT_NAME <> 'idle'")
SUMMARY_BY_NAME_SQL = ("SELECT EVENT_NAME, COUNT_STAR, SUM_TIMER_WAIT FROM "
                       "performance_schema.events_waits_summary_global_by_event_name "
                       "WHERE EVENT_NAME IN %s AND COUNT_STAR > 0")
NOT_SEEN = "wait instruments are not enabled and timed on this server"  # a note's words
KEYED = (8, 0)  # MySQL's performance_schema tables have keys from here
# 5.5 and XtraDB print "os_waits=N"; 5.6 and later "waits=N"
_MUTEX_WAITS = re.compile(r"\b(?:os_)?waits=(\d+)")
LATCH_MONITOR = (5, 7, 8)  # MySQL's mutexes in SHOW ENGINE INNODB MUTEX need it from here
# how 5.7 and later name an rwlock there: by the file and line that created it
_RWLOCKS = ("rwlock: ", "sum rwlock: ")


class WaitEvents(PolledCollector):
    name = "wait_events"
    panels = (
        Panel("top waits (mutexes, rwlocks, I/O, locks): seconds waited per s", (
            Line("wait_events", SECONDS, rate=True, top=("event_name", 6),
                 skip=("wait/synch/cond/",)),)),
        Panel("top InnoDB mutex waits per s, counted by InnoDB", (
            Line("wait_events", MUTEX, rate=True, top=("name", 6)),)))
    default_interval_s = 1.0
    on_by_default = False
    server_access = "reads"  # instruments are enabled by start-up options, not SQL

    instrument_choice = True
    choice: str | None = None  # the scenario's ``instruments:`` (all, build_default)
    instruments = "all"  # what this run does: the choice, or the build's default

    @classmethod
    def start_options(cls, flavor: str, version: tuple[int, ...],
                      spec: Any = None) -> dict[str, str]:
        """With ``instruments: all`` (:func:`chosen`), performance_schema on, every
        wait instrument enabled and timed (5.5 enables them all with performance_schema
        and has no option to name them); with ``build_default``, the build's own
        performance_schema and instruments. On MySQL 5.7.8 and later InnoDB's latch
        monitor, for its mutexes in SHOW ENGINE INNODB MUTEX (read where
        performance_schema is off, and beside it with ``build_default``, whose
        instruments leave InnoDB's latches out)."""
        opts = {}
        if chosen(getattr(spec, "instruments", None), flavor, version) == "all":
            opts["performance_schema"] = "ON"
            if flavor == "mariadb" or version >= (5, 6):
                opts["performance_schema_instrument"] = f"{INSTRUMENTS}=ON"
        if latch_monitor(flavor, version):
            opts["innodb_monitor_enable"] = "latch"
        return opts

    def configure(self, spec: Any) -> None:
        self.choice = getattr(spec, "instruments", None)

    def setup(self) -> None:
        self.last: dict[str, float] = {}
        self.names: set[str] = set()  # SHOW ENGINE INNODB MUTEX's, as read
        self.instruments = chosen(self.choice, self.ctx.flavor, self.ctx.version)
        self.ctx.notes.append(f"wait_events: {self.instruments}: "
                              + measured_cost(self.instruments, self.ctx.flavor,
                                              self.ctx.version))
        on = self.query("SELECT @@GLOBAL.performance_schema")
        self.sources: tuple[str, ...] = ()
        self.summary: tuple[str, Any] | None = None  # how it is read: SQL, arguments
        if on and str(on[0][0]).upper() in ("1", "ON"):
            self.sources = ("performance_schema",)
            rows = self.query("SELECT NAME, ENABLED, TIMED FROM performance_schema"
                              f".setup_instruments WHERE NAME LIKE '{INSTRUMENTS}'")
            self.summary = self._summary_query(rows)
            self._say_what_is_not_seen(rows)
            if not (self.instruments == "build_default"
                    and latch_monitor(self.ctx.flavor, self.ctx.version)):
                return
        try:
            self._mutex_rows()
        except pymysql.err.MySQLError as e:
            if self.sources:
                self.ctx.notes.append(f"wait_events: SHOW ENGINE INNODB MUTEX: {e.args[-1]}"
                                      "; InnoDB's latches not counted")
                return
            raise Unsupported(f"performance_schema is off (a server the harness starts gets "
                              f"it from this collector's options), and SHOW ENGINE INNODB "
                              f"MUTEX: {e.args[-1]}") from None
        self.sources += ("mutex",)
        if self.sources == ("mutex",):
            self.ctx.notes.append(
                "wait_events: performance_schema is off on this server: InnoDB's mutex "
                "waits (SHOW ENGINE INNODB MUTEX) only, no time per wait")

    def teardown(self) -> None:
        if "mutex" not in self.sources:
            return
        if not self.last:
            why = _no_waits_why(self.ctx.flavor, self.ctx.version)
            self.ctx.notes.append("wait_events: SHOW ENGINE INNODB MUTEX showed no waits "
                                  f"during the run ({why})")
        elif (latch_monitor(self.ctx.flavor, self.ctx.version)
              and all(n.startswith(_RWLOCKS) for n in self.names)):
            self.ctx.notes.append(
                "wait_events: SHOW ENGINE INNODB MUTEX showed rwlocks only: no mutex "
                "had to wait, or InnoDB's latch monitor was off (MySQL 5.7.8 and later "
                "count mutex waits there only with innodb_monitor_enable = 'latch', which "
                "the harness sets on a server it starts unless the scenario sets "
                "innodb_monitor_enable itself)")

    def _say_what_is_not_seen(self, rows: list[tuple]) -> None:
        """``rows``: the wait instruments' (NAME, ENABLED, TIMED)."""
        off = sum(not (_yes(enabled) and _yes(timed)) for _, enabled, timed in rows)
        if off:
            self.ctx.notes.append(f"wait_events: {off} {NOT_SEEN}; their waits are not "
                                  f"seen ({self._why_not_seen()})")

    def _why_not_seen(self) -> str:
        """Why some wait instruments are off on this server."""
        if not self.ctx.owned:
            return "the harness enables them only on a server it starts"
        if self.choice == "build_default":
            return "instruments: build_default keeps the build's own"
        if self.instruments == "build_default":
            return ("instruments: build_default, this build's default, adds none to the "
                    "build's own; instruments: all times every wait, at a cost")
        return "the scenario's performance_schema_instrument"

    def _summary_query(self, rows: list[tuple]) -> tuple[str, Any] | None:
        """How the summary is read (``rows``: the wait instruments' NAME, ENABLED,
        TIMED; None: none is enabled): whole, or by the names of the instruments enabled
        at start (one enabled later, by hand on a server the harness does not own, is
        then not read). MySQL 8.0 and later look
        rows up by the table's key and aggregate only those named: with 9.7's default
        instruments (54 of 373 enabled) 0.4 ms of mysqld's CPU a read against 2 ms for
        the whole table, but with every one enabled 3.5 ms against 2
        (docs/collectors.md); so by name where fewer than half are enabled, else whole
        (earlier builds scan it either way)."""
        names = tuple(str(n) for n, enabled, _ in rows if _yes(enabled))
        if not names:
            return None
        keyed = self.ctx.flavor in ("mysql", "percona") and self.ctx.version >= KEYED
        if keyed and 2 * len(names) < len(rows):
            return SUMMARY_BY_NAME_SQL, (names,)
        return SUMMARY_SQL, None

    def _mutex_rows(self) -> list[tuple[str, int]]:
        """(name, waits) of SHOW ENGINE INNODB MUTEX, summed per name."""
        out: dict[str, int] = {}
        for row in self.query("SHOW ENGINE INNODB MUTEX"):
            m = _MUTEX_WAITS.search(str(row[-1]))
            if m:
                name = str(row[1])
                out[name] = out.get(name, 0) + int(m.group(1))
        return list(out.items())

    def collect(self) -> Iterable[Point]:
        read: list[tuple[str, dict[str, str], float]] = []
        if "performance_schema" in self.sources:
            read += self._summary()
        if "mutex" in self.sources:
            mutexes = self._mutex_rows()
            self.names.update(n for n, _ in mutexes)
            read += ((MUTEX, {"name": n}, float(w)) for n, w in mutexes)
        return changed_only(self.last, read)

    def _summary(self) -> Iterable[tuple[str, dict[str, str], float]]:
        """Count and seconds waited per instrument, from performance_schema."""
        rows = self.query(*self.summary) if self.summary else []
        return (p for name, count, wait in rows
                for p in ((COUNT, {"event_name": name}, float(count)),
                          (SECONDS, {"event_name": name}, float(wait or 0) * _PICO)))


def _yes(flag: Any) -> bool:
    """setup_instruments' ENABLED or TIMED as read."""
    return str(flag).upper() == "YES"


# What each choice was measured to cost, with both cores busy (docs/collectors.md,
# "What it costs"): the run's notes say it, so a reader knows what was paid to see it.
_MEASURED = "measured, docs/collectors.md"


def measured_cost(instruments: str, flavor: str, version: tuple[int, ...]) -> str:
    """What the collector's instruments were measured to cost on a build like this one,
    in a note's words."""
    if instruments == "build_default":
        return ("the build's own instruments and InnoDB's latch monitor: within 0.6% of "
                f"throughput on mysql-5.7.29 and mysql-9.7 ({_MEASURED})"
                if latch_monitor(flavor, version) else
                f"the build's own instruments: not measured on this build ({_MEASURED})")
    if flavor == "mariadb":
        return ("costs about 1.3% of throughput and 1.5-1.7% of mysqld's CPU a "
                f"transaction on mariadb-10.11, all of it InnoDB's latches ({_MEASURED})")
    if flavor in ("mysql", "percona") and version >= (8, 0):
        return ("every wait instrument costs about 3% of throughput and 3.6% of mysqld's "
                f"CPU a transaction on mysql-9.7 ({_MEASURED})")
    return ("every wait instrument costs about 2-2.5% of throughput on mysql-5.7.29 "
            f"({_MEASURED}); older builds not measured")


def chosen(choice: str | None, flavor: str, version: tuple[int, ...]) -> str:
    """The instruments a run uses: the scenario's ``choice``, else ``build_default``
    where the build's own performance_schema is on and InnoDB's latches are counted
    beside it (MySQL and Percona Server 5.7.8 and later), ``all`` elsewhere."""
    if choice:
        return choice
    return "build_default" if latch_monitor(flavor, version) else "all"


def latch_monitor(flavor: str, version: tuple[int, ...]) -> bool:
    """Whether the build counts InnoDB's mutex waits only with the latch monitor on."""
    return flavor in ("mysql", "percona") and version >= LATCH_MONITOR


def _no_waits_why(flavor: str, version: tuple[int, ...]) -> str:
    """Why SHOW ENGINE INNODB MUTEX may have shown nothing at all, on this build."""
    if flavor == "mariadb" and version >= (10, 2):
        return "MariaDB 10.2 and later show none"
    return "no InnoDB latch had to wait" + (
        ", or InnoDB's latch monitor was off" if latch_monitor(flavor, version) else "")


PLUGIN = WaitEvents
