"""What a comparison ran, as its page and its terminal output say it: the workload with its
threads, durations and data, what each side's verdict rests on, and the host's load and
steal during the measured parts (and the other processes that were busy when a run
began), and whether the harness's own clients were near the one core they share, so
that a verdict read later says what it was a verdict on.

Reads stored runs and series only.
"""
from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field
from typing import Any

from ..analysis.counters import rate_between
from ..collectors.client_process import SELF_METRIC
from ..jsonvalue import JsonDict
from ..store import RunReader, StoredRun

# Python threads run one at a time: a process whose threads ran this much of a core is
# near what they can do (docs/measurements/replay.md: 0.78 where the replay's pace was
# the client's)
NEAR_ONE_CORE = 0.7


@dataclass(frozen=True)
class Conditions:
    """The workload, what each side rests on, and the host while it measured."""

    workload: str
    measured: str
    cpu_busy: float | None = None  # share of the host's CPU time not idle (its own load)
    steal: float | None = None  # share of it taken by the hypervisor
    busy_processes: list[str] = field(default_factory=list)  # programs busy at starts
    # the most of a core the harness's own process ran in a run's measured part
    harness_cpu: float | None = None

    def lines(self) -> list[str]:
        """The conditions as the terminal and the page say them."""
        out = [f"workload: {self.workload}", f"measured: {self.measured}"]
        if self.cpu_busy is not None and self.steal is not None:
            out.append(f"host during the measured parts: CPU {self.cpu_busy:.0%} busy (the "
                       f"runs' own load included), steal {self.steal:.1%}")
        if self.busy_processes:
            out.append("warning: other programs were busy when runs began, results may be "
                       "noisy: " + ", ".join(self.busy_processes))
        if self.harness_cpu is not None and self.harness_cpu >= NEAR_ONE_CORE:
            out.append(f"warning: the harness's own process ran {self.harness_cpu:.2f} of a "
                       "core in a measured part; its Python threads (a replay's or SSB's "
                       "clients among them) share one, so the client, not the server, may "
                       "have set the pace, and a change on the server can read smaller than "
                       "it is (a replay that neither paces nor checksums runs sysbench's "
                       "client instead)")
        return out

    def to_json(self) -> JsonDict:
        return asdict(self)


def conditions(store: RunReader, comparisons: list[Any]) -> Conditions | None:
    """The conditions of the comparisons' runs (None: no run)."""
    ids = [i for c in comparisons for i in dict.fromkeys(c.runs_baseline + c.runs_candidate)]
    runs = [r for i in ids if (r := store.get_run(i)) is not None]
    if not runs:
        return None
    # "mysqld (pid 28619, 71.7% cpu)" as each run's start saw it: each program once
    busy = sorted({str(p).split(" (")[0] for r in runs
                   for p in _host(r).get("busy_processes") or []})
    own = [x for r in runs if (x := _own_cpu(store, r)) is not None]
    return Conditions(_workload(store, runs), _measured(comparisons[0]),
                      *_host_load(store, runs), busy, max(own, default=None))


def _host_load(store: RunReader, runs: list[StoredRun]) -> tuple[float | None, float | None]:
    """The runs' mean (busy, steal) shares of the host's CPU (None: not sampled)."""
    loads = [x for r in runs if (x := _cpu_shares(store, r)) is not None]
    if not loads:
        return None, None
    return statistics.fmean(x[0] for x in loads), statistics.fmean(x[1] for x in loads)


def _host(run: StoredRun) -> dict[str, Any]:
    return run.details.host or {}


def _workload(store: RunReader, runs: list[StoredRun]) -> str:
    """"sysbench oltp_read_write, 4 threads, 10 s warmup + 30 s measured; 4 tables,
    400,000 rows" (what is not known, left out)."""
    s = runs[0].summary
    said = [s.workload or runs[0].scenario]
    if s.threads:
        said.append(f"{s.threads} threads")
    if s.duration_s:
        said.append(f"{s.warmup_s or 0:g} s warmup + {s.duration_s:g} s measured")
    prepared = next((p for r in runs for p in r.summary.prepare), None)
    data = f"; {prepared.table_count or '?'} tables, {prepared.rows:,} rows" \
        if prepared else ""
    return ", ".join(said) + data


def _measured(c: Any) -> str:
    """What a side's verdict rests on: its runs, or a switchback's window pairs."""
    if c.design.startswith("switchback"):
        pairs = max((len(m.baseline) for m in c.metrics), default=0)
        return f"{pairs} window pairs of one run a server ({c.design})"
    n, m = len(c.runs_baseline), len(c.runs_candidate)
    return f"{n} baseline and {m} candidate run" + ("" if n == m == 1 else "s") + \
        f" ({c.design})"


def _cpu_shares(store: RunReader, run: StoredRun) -> tuple[float, float] | None:
    """(busy, steal) shares of the host's CPU time over the run's measured part."""
    window = run.summary.main_window
    if not window:
        return None
    by_mode: dict[str, float] = {}
    for s in store.series(run.run_id, source="node_stat", metric="node_cpu_seconds_total"):
        rate = rate_between(s.points(), window[0], window[1])
        if rate is not None:
            mode = s.labels.get("mode", "")
            by_mode[mode] = by_mode.get(mode, 0.0) + rate
    total = sum(by_mode.values())
    if total <= 0:
        return None
    idle = by_mode.get("idle", 0.0) + by_mode.get("iowait", 0.0)
    return 1 - idle / total, by_mode.get("steal", 0.0) / total


def _own_cpu(store: RunReader, run: StoredRun) -> float | None:
    """The cores the harness's own process ran over the run's measured part."""
    window = run.summary.main_window
    if not window:
        return None
    rates = [x for s in store.series(run.run_id, source="client_process", metric=SELF_METRIC)
             if (x := rate_between(s.points(), window[0], window[1])) is not None]
    return round(max(rates), 3) if rates else None
