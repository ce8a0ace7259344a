"""What moved per transaction between the two sides of a comparison: for each quantity
the server's counters give (mysqld's CPU time, pages read from disk, rows read, redo
written, context switches, each wait instrument's time when ``wait_events`` ran and
each InnoDB latch's waits it counted, each client program's CPU: sysbench's, a side load's), its
amount per transaction over each run's measured part, the two sides' medians and their
ratio with the bootstrap interval compare's metrics use; ranked with those whose
interval excludes 1 first, each group by how far its ratio is from 1. Throughput says
how much; this says where (Mark Callaghan's "CPU per query", reads per query ...)."""
from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from .. import workloads
from ..jsonvalue import JsonDict
from ..stats.logratio import welch_log_ratio
from ..store import RunReader, StoredRun
from .ab_verdict import BOOTSTRAP, bootstrap_ratio_ci
from .counters import rate_between

TOP = 8  # quantities kept, after the ranking


@dataclass(frozen=True)
class Quantity:
    name: str
    source: str
    metric: str
    labels: tuple[tuple[str, str], ...] = ()
    scale: float = 1.0  # the series' unit to the one named (seconds to microseconds)


QUANTITIES = (
    Quantity("mysqld CPU microseconds", "mysqld_process", "harness_mysqld_cpu_seconds_total",
             scale=1e6),
    Quantity("buffer pool reads from disk", "global_status",
             "mysql_global_status_innodb_buffer_pool_reads"),
    Quantity("InnoDB data reads", "global_status", "mysql_global_status_innodb_data_reads"),
    Quantity("InnoDB data writes", "global_status", "mysql_global_status_innodb_data_writes"),
    Quantity("rows read", "global_status", "mysql_global_status_innodb_row_ops_total",
             (("operation", "read"),)),
    Quantity("redo bytes written", "global_status",
             "mysql_global_status_innodb_os_log_written"),
    Quantity("context switches (host)", "node_stat", "node_context_switches_total"),
    # what mysqld sent to storage and read from it (/proc/PID/io): its every file (a
    # general or slow log, the binary log, a CSV table) beside InnoDB's own counters
    Quantity("mysqld bytes written", "mysqld_process", "harness_mysqld_write_bytes_total"),
    Quantity("mysqld bytes read from storage", "mysqld_process",
             "harness_mysqld_read_bytes_total"),
)
WAITS = ("wait_events", "mysql_perf_schema_events_waits_seconds_total", "event_name")
LATCHES = ("wait_events", "mysql_innodb_mutex_waits_total", "name")
CLIENTS = ("client_process", "harness_client_cpu_seconds_total", "program")


def per_transaction(found: list[Any], tps: float | None, start: float,
                    end: float = math.inf) -> float | None:
    """Series ``found`` (their sum) grown over a run's measured part (``start`` to
    ``end``) per transaction (``tps``: the run's transactions a second over that part);
    None without either."""
    if not found or not tps:
        return None
    rate = 0.0
    for s in found:
        r = rate_between(s.points(), start, end)
        if r is None:
            return None
        rate += r
    return rate / tps


CPU = QUANTITIES[0]


@dataclass(frozen=True)
class Moved:
    """One quantity per transaction on the two sides: their medians (geometric means
    when every run is above 0), the ratio (None: one side at 0) and its 95% interval,
    and whether that interval leaves out no change (or, one side at 0, every run of
    one side is above every run of the other)."""

    quantity: str
    baseline: float
    candidate: float
    ratio: float | None
    ci95: tuple[float, float] | None
    apart: bool

    @property
    def ratio_text(self) -> str:
        """``x1.234``, or where one side is 0: ``from none``, ``to none``."""
        if self.ratio is not None:
            return f"x{self.ratio:.3f}"
        return "from none" if not self.baseline else "to none"

    def to_json(self) -> JsonDict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Moved:
        """A row as compare.json holds it."""
        ci = d.get("ci95")
        return cls(d["quantity"], d["baseline"], d["candidate"], d.get("ratio"),
                   (ci[0], ci[1]) if ci else None, bool(d["apart"]))


Found = tuple[bool, float, Moved]  # (apart, size: how far from no change, the row)


def _end(run: StoredRun) -> float:
    """When a run's measured part ends (a collector samples on after the workload)."""
    window = run.summary.main_window
    return window[1] if window else math.inf


def tps_over(store: RunReader, run: StoredRun, start: float, end: float = math.inf
             ) -> float | None:
    """A run's transactions a second over its measured part (``start`` to ``end``):
    the mean of its per-second throughput there, which over a ramp of thread counts
    weighs each step by its transactions (the median of those seconds would be one
    step's); its median tps where it stored no throughput series."""
    found = workloads.throughput(store, run.run_id)
    seconds = [v for t, v in found[0].points() if start <= t <= end] if found else []
    return statistics.fmean(seconds) if seconds else run.summary.figure("tps_median")


class StoredSeries:
    """A store's series, each (run, source, metric) read once with all its label sets
    (a wait instrument each, a client program each), for the many quantities asked."""

    def __init__(self, store: RunReader) -> None:
        self.store = store
        self.read: dict[tuple[str, str, str], list[Any]] = {}

    def __call__(self, run_id: str, source: str, metric: str) -> list[Any]:
        key = (run_id, source, metric)
        if key not in self.read:
            self.read[key] = self.store.series(run_id, source=source, metric=metric)
        return self.read[key]

    def of(self, run_id: str, q: Quantity) -> list[Any]:
        """The series of ``q`` (its label sets) in run ``run_id``."""
        return [s for s in self(run_id, q.source, q.metric)
                if all(s.labels.get(k) == v for k, v in q.labels)]


WindowOf = Callable[[Any, StoredRun], tuple[float, float]]  # (store, run) -> (start, end)


def measured_part(start_of: Callable[[Any, StoredRun], float]) -> WindowOf:
    """A run's measured part: from ``start_of`` (store, run) to its main window's end."""
    return lambda store, run: (start_of(store, run), _end(run))


class PerTransaction:
    """Quantities per transaction over a window of each run (``window_of``: (store, run)
    -> (start, end); :func:`measured_part` for the measured part), each series read once
    and each run's window and throughput found once (in the quantity's unit: mysqld's
    CPU microseconds for :data:`CPU`)."""

    def __init__(self, store: RunReader, window_of: WindowOf) -> None:
        self.stored = StoredSeries(store)
        self.window_of = window_of
        self._measured: dict[str, tuple[float, float, float | None]] = {}

    def __call__(self, run: StoredRun, q: Quantity) -> float | None:
        """``q`` per transaction in ``run``; None without it or without throughput."""
        found = self.stored.of(run.run_id, q)
        if not found:
            return None
        start, end, tps = self._window_and_tps(run)
        x = per_transaction(found, tps, start, end)
        return None if x is None else x * q.scale

    def _window_and_tps(self, run: StoredRun) -> tuple[float, float, float | None]:
        if run.run_id not in self._measured:
            store = self.stored.store
            start, end = self.window_of(store, run)
            self._measured[run.run_id] = start, end, tps_over(store, run, start, end)
        return self._measured[run.run_id]


def quantities(stored: StoredSeries, runs: list[StoredRun]) -> list[Quantity]:
    """Every quantity ``runs`` may have: the counters, each wait instrument and each
    client program any of them stored."""
    return [*QUANTITIES, *_labelled(stored, runs)]


def ranked(found: list[Found]) -> list[Moved]:
    """Entries (apart, size, entry) with those apart first, each group by size; the
    first TOP."""
    found.sort(key=lambda m: (not m[0], -m[1]))
    return [m for _, _, m in found[:TOP]]


def _labelled(series: StoredSeries, runs: list[StoredRun]) -> list[Quantity]:
    """One quantity per wait instrument and per InnoDB latch any run stored (wait_events
    on), and one per client program (the harness's own processes: sysbench, a side
    load's tools)."""
    out = []
    for (source, metric, label), named, scale in (
            (WAITS, "wait {} (microseconds)", 1e6),
            (LATCHES, "InnoDB latch {} waits", 1.0),
            (CLIENTS, "{} CPU microseconds (client)", 1e6)):
        names = {s.labels[label] for r in runs for s in series(r.run_id, source, metric)}
        out += [Quantity(named.format(n), source, metric, ((label, n),), scale)
                for n in sorted(names)]
    return out


def what_moved(store: RunReader, base: list[StoredRun], cand: list[StoredRun],
               start_of: Callable[[Any, StoredRun], float], seed: int = 0
               ) -> list[Moved]:
    """The quantities per transaction that moved most between ``base`` and ``cand``
    (``start_of``: when a run's measured part starts), ranked; empty for a workload
    without tps."""
    per = PerTransaction(store, measured_part(start_of))

    def value(r: StoredRun, q: Quantity) -> float | None:
        return per(r, q) if r.summary.figure("tps_median") else None

    out: list[Found] = []
    for q in quantities(per.stored, [*base, *cand]):
        a = [x for r in base if (x := value(r, q)) is not None]
        b = [x for r in cand if (x := value(r, q)) is not None]
        if len(a) < 2 or len(b) < 2:
            continue
        ma, mb = statistics.median(a), statistics.median(b)
        if ma <= 0 and mb <= 0:
            continue
        out.append(_moved(q.name, a, b, ma, mb, seed))
    return ranked(out)


def _geometric(name: str, a: list[float], b: list[float]) -> Found:
    """Every run above 0: the geometric means, their ratio and Welch's interval."""
    la, lb = [math.log(x) for x in a], [math.log(x) for x in b]
    r, lo, hi, _ = welch_log_ratio(la, lb, 0.05)
    ga, gb = math.exp(statistics.fmean(la)), math.exp(statistics.fmean(lb))
    apart = lo > 1 or hi < 1
    return apart, abs(math.log(r)), Moved(name, ga, gb, r, (lo, hi), apart)


def from_zero_size(ma: float, mb: float) -> float:
    """How far a quantity at 0 on one side moved, on the scale of the others' log
    ratios: its change in units per transaction against one unit (0 -> 5 reads a
    transaction ranks as x5 would; 0 -> 0.001 as no change), so a tiny count from
    nothing does not rank above a cost that tripled."""
    return math.log(max(ma, mb, 1.0))


def _moved(name: str, a: list[float], b: list[float], ma: float, mb: float, seed: int
           ) -> Found:
    """(apart, size, the entry). Every run above 0: the sides' geometric means, their
    ratio and Welch's interval on the logs (the runs the unit, as the upgrade verdict:
    a bootstrap of 3 medians a side takes few values and leaves the estimate at an edge
    of its interval). A run at 0 but both medians above: the medians and their
    bootstrap interval. One side at 0 (no reads from disk once the pool holds the
    data): no ratio, apart when every run of one side is above every run of the
    other."""
    if min(a) > 0 and min(b) > 0:
        return _geometric(name, a, b)
    if ma > 0 and mb > 0:
        ci = bootstrap_ratio_ci(a, b, BOOTSTRAP, seed)
        apart = bool(ci and (ci[0] > 1 or ci[1] < 1))
        ratio: float | None = mb / ma
        size = abs(math.log(mb / ma))
    else:
        ci, ratio, size = None, None, from_zero_size(ma, mb)
        apart = min(b) > max(a) or min(a) > max(b)
    return apart, size, Moved(name, ma, mb, ratio, ci, apart)
