"""What moved per transaction between the two sides of a comparison: for each quantity
the server's counters give (mysqld's CPU time, pages read from disk, rows read, redo
written, context switches, each wait instrument's time when ``wait_events`` ran), its
amount per transaction over each run's measured part, the two sides' medians and their
ratio with the bootstrap interval compare's metrics use; ranked with those whose
interval excludes 1 first, each group by how far its ratio is from 1. Throughput says
how much; this says where (Mark Callaghan's "CPU per query", reads per query ...)."""
from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .ab_verdict import BOOTSTRAP, bootstrap_ratio_ci

TOP = 8  # quantities kept, after the ranking


@dataclass(frozen=True)
class Quantity:
    name: str
    source: str
    metric: str
    labels: tuple[tuple[str, str], ...] = ()


QUANTITIES = (
    Quantity("mysqld CPU seconds", "mysqld_process", "harness_mysqld_cpu_seconds_total"),
    Quantity("buffer pool reads from disk", "global_status",
             "mysql_global_status_innodb_buffer_pool_reads"),
    Quantity("InnoDB data reads", "global_status", "mysql_global_status_innodb_data_reads"),
    Quantity("InnoDB data writes", "global_status", "mysql_global_status_innodb_data_writes"),
    Quantity("rows read", "global_status", "mysql_global_status_innodb_row_ops_total",
             (("operation", "read"),)),
    Quantity("redo bytes written", "global_status",
             "mysql_global_status_innodb_os_log_written"),
    Quantity("context switches (host)", "node_stat", "node_context_switches_total"),
)
WAITS = ("wait_events", "mysql_perf_schema_events_waits_seconds_total", "event_name")


def per_transaction(found: list[Any], tps: float | None, start: float) -> float | None:
    """Series ``found`` (their sum) grown over a run's measured part (from ``start``)
    per transaction (the run's median tps); None without either."""
    if not found or not tps:
        return None
    rate = 0.0
    for s in found:
        pts = [(t, v) for t, v in s.points() if t >= start]
        if len(pts) < 2 or pts[-1][0] <= pts[0][0]:
            return None
        rate += (pts[-1][1] - pts[0][1]) / (pts[-1][0] - pts[0][0])
    return rate / tps


def _waits(series: Callable[[str, str, str], list[Any]], runs: list[dict[str, Any]]
           ) -> list[Quantity]:
    """One quantity per wait instrument any run stored (wait_events on)."""
    source, metric, label = WAITS
    names = {s.labels[label] for r in runs for s in series(r["run_id"], source, metric)}
    return [Quantity(f"wait {n} (seconds)", source, metric, ((label, n),))
            for n in sorted(names)]


def what_moved(store: Any, base: list[dict[str, Any]], cand: list[dict[str, Any]],
               start_of: Callable[[Any, dict], float], seed: int = 0
               ) -> list[dict[str, Any]]:
    """The quantities per transaction that moved most between ``base`` and ``cand``
    (``start_of``: when a run's measured part starts), ranked; empty for a workload
    without tps."""
    fetched: dict[tuple[str, str, str], list[Any]] = {}
    starts: dict[str, float] = {}

    def series(run_id: str, source: str, metric: str) -> list[Any]:
        """Every label set of a stored metric at once (a wait instrument each), once."""
        key = (run_id, source, metric)
        if key not in fetched:
            fetched[key] = store.series(run_id, source=source, metric=metric)
        return fetched[key]

    def value(r: dict[str, Any], q: Quantity) -> float | None:
        tps = r["summary"].figure("tps_median")
        if not tps:
            return None
        found = [s for s in series(r["run_id"], q.source, q.metric)
                 if all(s.labels.get(k) == v for k, v in q.labels)]
        if found and r["run_id"] not in starts:
            starts[r["run_id"]] = start_of(store, r)
        return per_transaction(found, tps, starts.get(r["run_id"], 0.0))

    out: list[tuple[bool, float, dict[str, Any]]] = []
    for q in (*QUANTITIES, *_waits(series, [*base, *cand])):
        a = [x for r in base if (x := value(r, q)) is not None]
        b = [x for r in cand if (x := value(r, q)) is not None]
        if len(a) < 2 or len(b) < 2:
            continue
        ma, mb = statistics.median(a), statistics.median(b)
        if ma <= 0 and mb <= 0:
            continue
        out.append(_moved(q.name, a, b, ma, mb, seed))
    out.sort(key=lambda m: (not m[0], -m[1]))
    return [m for _, _, m in out[:TOP]]


def _moved(name: str, a: list[float], b: list[float], ma: float, mb: float, seed: int
           ) -> tuple[bool, float, dict[str, Any]]:
    """(apart, size, the entry): with both medians above 0 the ratio and its interval;
    one side at 0 (no reads from disk once the pool holds the data) has no ratio, and is
    apart when every run of one side is above every run of the other."""
    if ma > 0 and mb > 0:
        ci = bootstrap_ratio_ci(a, b, BOOTSTRAP, seed)
        apart = bool(ci and (ci[0] > 1 or ci[1] < 1))
        ratio: float | None = mb / ma
        size = abs(math.log(mb / ma))
    else:
        ci, ratio, size = None, None, math.inf
        apart = min(b) > max(a) or min(a) > max(b)
    return apart, size, {"quantity": name, "baseline": ma, "candidate": mb, "ratio": ratio,
                         "ci95": list(ci) if ci else None, "apart": apart}
