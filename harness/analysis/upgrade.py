"""The upgrade verdict: every server of a run set judged against a baseline server.

The workload's throughput per thread count (each step of a ramp, and the hold): per server
the median over its runs of each run's median per-second tps at that count. The ratio to
the baseline server's, with 2 runs a side or more: the ratio of the geometric means of
the runs' medians, with Welch's t interval on their logs (the runs are the unit: the
instance-to-instance variation is in their spread, the second-to-second in each
median; the interval is centred on the estimate and held 95-97% at 3 runs a side in
simulated trials, where the two-level bootstrap of medians it replaced covered 90-91%
when the runs differ more than their seconds do, its estimate at an edge of the
interval: tests/unit/test_upgrade_verdicts.py, docs/ab-verdicts.md).
With one run a side there is no spread of runs to read: the ratio of the two medians
with a bootstrap of blocks of seconds (harness/stats/interval.py), which sees the seconds
only, and the row says so. Verdict: faster or slower when the interval excludes 1 and
the change is at least ``NOISE``; no significant difference when the whole interval
lies inside the noise band (1 +- ``NOISE``); else could not tell (the interval is wider
than the band: a change of its reach could hide in it).

Result fingerprints (a workload's ``fingerprints``: SSB's per query) per server; an item
whose result differs from the baseline server's is reported, as pt-upgrade does.

Reads stored runs and series only; report/upgrade.py prints the table and draws the figure.
"""
from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .. import workloads
from ..scenario import Expectation
from ..stats.interval import (
    UNINFORMATIVE,
    inside_band,
    ratio_ci,
    reach,
    reach_text,
    says_nothing,
    stored_ci,
)
from ..stats.logratio import welch_log_ratio
from ..stats.verdict import verdict, why_missing
from ..store import Finding, RunReader, StoredRun
from .compare import measured_from
from .moved import CPU, Moved, PerTransaction, measured_part, what_moved
from .oncpu import FunctionCost, by_function, folded_texts, profiled

NOISE = 0.05
# What a ratio's interval rests on: the spread of the runs (2 a side or more), or one
# run a side's seconds (the instance-to-instance variation unseen).
RUNS, SECONDS = "runs", "one run a side: its seconds only"
# A ramp step's seconds (its first left out) can be few: two are enough for an interval.
STEP_POINTS = 2
FASTER, SLOWER, SAME, UNTOLD = "faster", "slower", "no significant difference", \
    "could not tell"


Seconds = tuple[NDArray[Any], NDArray[Any], dict[int, NDArray[Any]]]


def _by_threads(store: RunReader, run: StoredRun) -> Seconds | None:
    """One run's per-second tps (times, values) and, per thread count, which of its
    seconds count: every step of a ramp but its first second, and the hold's measured
    part."""
    tps = workloads.throughput(store, run.run_id)
    threads = workloads.threads(store, run.run_id)
    summary = run.summary
    if not tps or not threads or not summary.main_window:
        return None
    t, v, k = tps[0].t, tps[0].v, threads[0].v
    if len(k) != len(v):
        return None
    hold = int(summary.threads or 0)
    first_of_step = np.r_[True, k[1:] != k[:-1]]
    masks: dict[int, NDArray[Any]] = {}
    for n in sorted({int(x) for x in k}):
        keep = (k == n) & ~first_of_step
        if n == hold:
            keep &= t >= summary.main_window[0]
        if keep.any():
            masks[n] = keep
    return t, v, masks


def thread_samples(store: RunReader, run: StoredRun) -> dict[int, NDArray[Any]]:
    """Per-second tps of one run by thread count (the seconds :func:`_by_threads`
    keeps)."""
    got = _by_threads(store, run)
    return {n: got[1][m] for n, m in got[2].items()} if got else {}


def cpu_by_threads(store: RunReader, run: StoredRun) -> dict[int, float]:
    """mysqld's CPU microseconds per transaction at each thread count: its CPU
    counters' growth over the seconds :func:`thread_samples` keeps (read at their edges
    by linear interpolation: the second reported at t covers (t - 1, t]) over those
    seconds' transactions."""
    got = _by_threads(store, run)
    cpu = store.series(run.run_id, source=CPU.source, metric=CPU.metric)
    if got is None or not cpu:
        return {}
    t, v, masks = got
    out = {}
    for n, keep in masks.items():
        used = sum(float(np.interp(end, s.t, s.v) - np.interp(start, s.t, s.v))
                   for s in cpu for start, end in _stretches(t, keep))
        transactions = float(v[keep].sum())
        if used > 0 and transactions > 0:
            out[n] = used / transactions * CPU.scale
    return out


def _stretches(t: NDArray[Any], keep: NDArray[Any]) -> list[tuple[float, float]]:
    """The spans of time the kept seconds cover, each run of consecutive ones as one
    (start, end)."""
    idx = np.flatnonzero(keep)
    breaks = np.flatnonzero(np.diff(idx) > 1)
    starts, ends = np.r_[idx[0], idx[breaks + 1]], np.r_[idx[breaks], idx[-1]]
    return [(float(t[a]) - 1.0, float(t[b])) for a, b in zip(starts, ends, strict=True)]


def _estimate(runs: Sequence[NDArray[Any]]) -> float:
    return float(statistics.median(float(np.median(r)) for r in runs))


def server_ratio(base: Sequence[NDArray[Any]], mine: Sequence[NDArray[Any]]
                 ) -> tuple[float, tuple[float, float] | None, str]:
    """``mine`` against ``base`` (each server's runs' per-second tps): the ratio, its 95%
    interval (None: too few seconds) and what the interval rests on."""
    if min(len(base), len(mine)) >= 2:
        la, lb = ([math.log(max(float(np.median(r)), 1e-9)) for r in side]
                  for side in (base, mine))
        ratio, lo, hi, _ = welch_log_ratio(la, lb, 0.05)
        return ratio, (lo, hi), RUNS
    ci = ratio_ci(base, mine, least=STEP_POINTS)
    return _estimate(mine) / _estimate(base), ci, SECONDS


def _workload(run: StoredRun) -> str:
    return str(run.summary.workload or "?")


def by_cell(store: RunReader, runs: list[StoredRun]
             ) -> dict[tuple[str, str, int], list[NDArray[Any]]]:
    """(workload, server, threads) -> each ok run's per-second tps, servers in the order
    the runs have them (the scenario's)."""
    cells: dict[tuple[str, str, int], list[NDArray[Any]]] = {}
    for r in runs:
        if r.status != "ok":
            continue
        for n, xs in thread_samples(store, r).items():
            cells.setdefault((_workload(r), r.server, n), []).append(xs)
    return cells


@dataclass(frozen=True)
class UpgradeVerdict:
    """One workload, thread count and server against the baseline server: its runs'
    tps, and (not the baseline, with the baseline's runs there) the ratio to the
    baseline's with its interval, what that interval rests on, and the verdict."""

    workload: str
    server: str
    threads: int
    runs: int
    tps: float
    ratio: float | None = None
    ci95: list[float] | None = None
    interval: str | None = None  # RUNS or SECONDS
    verdict: str | None = None  # None: the baseline, or no baseline runs there

    def text(self) -> str:
        """The verdict as the reports print it: one resting on an interval that says
        nothing (two runs a side that disagree) says so."""
        said = self.verdict or "(baseline)"
        if says_nothing(self.ci95):
            return f"{said} ({UNINFORMATIVE})"
        if said == UNTOLD and (r := reach(self.ci95)) is not None:
            return f"{said} ({reach_text(r)})"
        return said


def verdicts(store: RunReader, runs: list[StoredRun], baseline: str) -> list[UpgradeVerdict]:
    """One per workload, thread count and server, in the runs' order of servers."""
    cells = by_cell(store, runs)
    order = {s: i for i, s in enumerate(dict.fromkeys(r.server for r in runs))}
    rows = []
    for (workload, server, n), xs in sorted(cells.items(), key=lambda kv: (
            kv[0][0], kv[0][2], order[kv[0][1]])):
        row = UpgradeVerdict(workload, server, n, len(xs), round(_estimate(xs), 1))
        base = cells.get((workload, baseline, n))
        if server != baseline and base:
            ratio, ci, rests_on = server_ratio(base, xs)
            kept = stored_ci(ci)
            row = replace(row, ratio=round(ratio, 4), ci95=kept, interval=rests_on,
                          verdict=_verdict(round(ratio, 4), kept))
        rows.append(row)
    return rows


@dataclass(frozen=True)
class WhatMoved:
    """What moved per transaction on one workload's server against the baseline's."""

    workload: str
    server: str
    moved: list[Moved]


def moved(store: RunReader, runs: list[StoredRun], baseline: str) -> list[WhatMoved]:
    """Per workload and server, what moved per transaction against ``baseline``
    (analysis/moved.py) over the runs' measured parts: every step of the ramp and the
    hold together, each run's quantities over its transactions. Servers with fewer than
    two ok runs a side are left out (no spread to judge by)."""
    cells = _ok_cells(runs)
    out = []
    for (workload, server), mine in cells.items():
        base = cells.get((workload, baseline))
        found = what_moved(store, base, mine, measured_from) \
            if base and server != baseline else []
        if found:
            out.append(WhatMoved(workload, server, found))
    return out


@dataclass(frozen=True)
class CpuByFunction:
    """Where one server's mysqld CPU per transaction went against the baseline's."""

    workload: str
    server: str
    baseline_us: float  # mysqld's CPU microseconds per transaction, geometric mean of runs
    candidate_us: float
    runs: tuple[int, int]  # profiled runs, baseline and candidate
    functions: list[FunctionCost]  # the named ones that moved most
    unknown: FunctionCost  # the frames perf found no symbol for, together


def cpu_by_function(store: RunReader, runs: list[StoredRun], baseline: str, artifact: str
                    ) -> list[CpuByFunction]:
    """Per workload and server against ``baseline``: its mysqld CPU per transaction
    spent function by function (analysis/oncpu.py), from the folded stacks each ok run
    stored as ``artifact`` (all of a server's runs together) and the runs' CPU per
    transaction over the seconds profiled (a profile of some thread counts: from its
    first stretch's start to its last's stop; else the measured part); servers
    without a profile are left out."""
    measured = measured_part(measured_from)

    def window(st: RunReader, r: StoredRun) -> tuple[float, float]:
        return profiled(st, r, artifact) or measured(st, r)
    per = PerTransaction(store, window)
    cells: dict[tuple[str, str], tuple[str, float, int]] = {}
    for key, mine in _ok_cells(runs).items():
        texts = folded_texts(store, [r.run_id for r in mine], artifact)
        cpu = [x for r in mine if (x := per(r, CPU)) is not None and x > 0]
        if texts and cpu:
            cells[key] = "\n".join(texts), math.exp(statistics.fmean(map(math.log, cpu))), \
                len(texts)
    out = []
    for (workload, server), (folded, us, n) in cells.items():
        base = cells.get((workload, baseline))
        if base and server != baseline:
            out.append(CpuByFunction(workload, server, base[1], us, (base[2], n),
                                     *by_function(base[0], base[1], folded, us)))
    return out


def _ok_cells(runs: list[StoredRun]) -> dict[tuple[str, str], list[StoredRun]]:
    cells: dict[tuple[str, str], list[StoredRun]] = {}
    for r in (r for r in runs if r.status == "ok"):
        cells.setdefault((_workload(r), r.server), []).append(r)
    return cells


def _verdict(ratio: float, ci: Sequence[float] | None) -> str:
    if ci is not None and not ci[0] <= 1 <= ci[1] and abs(ratio - 1) >= NOISE:
        return FASTER if ratio > 1 else SLOWER
    return SAME if inside_band(ci, NOISE) else UNTOLD


def _fingerprints(run: StoredRun) -> dict[str, str]:
    """A run's result fingerprint per item, where its workload keeps them (SSB)."""
    plugin = workloads.of_run(run)
    return plugin.fingerprints(run.summary) if plugin else {}


@dataclass(frozen=True)
class DifferentResult:
    """An item (an SSB query) whose result fingerprint on ``server`` is not the
    baseline's."""

    server: str
    query: str
    digest: str
    baseline_digest: str


def result_differences(runs: list[StoredRun], baseline: str) -> list[DifferentResult]:
    """Items (SSB's queries) whose result fingerprint on a server differs from
    ``baseline``'s."""
    seen: dict[str, dict[str, str]] = {}  # server -> query -> digest
    for r in runs:
        seen.setdefault(r.server, {}).update(_fingerprints(r))
    base = seen.get(baseline, {})
    out = []
    for server, digests in sorted(seen.items()):
        for q, d in sorted(digests.items()):
            if server != baseline and q in base and base[q] != d:
                out.append(DifferentResult(server, q, d, base[q]))
    return out


def fingerprint_table(runs: list[StoredRun]) -> tuple[list[str], list[dict[str, str]]]:
    """(servers, one row per item (SSB query) with each server's fingerprint)."""
    seen: dict[str, dict[str, str]] = {}
    for r in runs:
        seen.setdefault(r.server, {}).update(_fingerprints(r))
    servers = sorted(seen)
    queries = sorted({q for d in seen.values() for q in d})
    return servers, [{"query": q, **{s: seen[s].get(q, "-") for s in servers}}
                     for q in queries]


# --- expected findings: metric server_ratio -----------------------------------------------

def evaluate_run_set(store: RunReader, expectations: Sequence[Expectation],
                     runs: list[StoredRun]) -> dict[str, list[Finding]]:
    """server_ratio and server_cpu_ratio findings: {run_id: verdicts to store with that
    run} (the runs of the expectation's server)."""
    out: dict[str, list[Finding]] = {}
    wanted = [e for e in expectations if e.metric in ("server_ratio", "server_cpu_ratio")]
    if not wanted:
        return out
    cells = by_cell(store, runs)
    for e in wanted:
        assert e.server is not None and e.baseline_server is not None
        x = _tps_finding(e, cells, runs) if e.metric == "server_ratio" else \
            _cpu_finding(e, store, runs)
        for r in runs:
            if r.server == e.server:
                out.setdefault(r.run_id, []).append(x)
    return out


def _tps_finding(e: Expectation, cells: dict[tuple[str, str, int], list[NDArray[Any]]],
                 runs: list[StoredRun]) -> Finding:
    """server_ratio: median tps at the expectation's thread count, server against
    baseline server."""
    assert e.server is not None and e.baseline_server is not None
    workload = next((_workload(r) for r in runs if r.status == "ok"), "?")
    n = e.threads or _hold_threads(runs)
    mine = cells.get((workload, e.server, n))
    base = cells.get((workload, e.baseline_server, n))
    value, ci, why = None, None, None
    if mine and base:
        value, ci, _ = server_ratio(base, mine)
    else:
        lacking = e.server if not mine else e.baseline_server
        why = why_missing(runs, lacking, None,
                          f"no throughput intervals at {n} threads of {lacking}")
    return verdict(e, value, why, e.server, e.variant or "", interval=ci,
                   runs=min(len(mine or []), len(base or [])),
                   baseline_server=e.baseline_server, threads=n)


def _cpu_finding(e: Expectation, store: RunReader, runs: list[StoredRun]) -> Finding:
    """server_cpu_ratio: mysqld's CPU per transaction at the expectation's thread
    count, the ratio of the two servers' runs' geometric means; its 95% interval
    Welch's t on the logs from 2 runs a side (the runs are the unit, as for
    server_ratio), none with one."""
    assert e.server is not None and e.baseline_server is not None
    n = e.threads or _hold_threads(runs)
    sides = [_cpu_logs(store, runs, s, n) for s in (e.baseline_server, e.server)]
    value, ci, why = None, None, None
    la, lb = sides
    if la and lb and min(len(la), len(lb)) >= 2:
        value, lo, hi, _ = welch_log_ratio(la, lb, 0.05)
        ci = (lo, hi)
    elif la and lb:
        value = math.exp(statistics.fmean(lb) - statistics.fmean(la))
    else:
        lacking = e.server if not lb else e.baseline_server
        why = why_missing(runs, lacking, None, f"no mysqld CPU series (mysqld_process) "
                                               f"with throughput at {n} threads of {lacking}")
    return verdict(e, value, why, e.server, e.variant or "", interval=ci,
                   runs=min(len(sides[0]), len(sides[1])),
                   baseline_server=e.baseline_server, threads=n)


def _cpu_logs(store: RunReader, runs: list[StoredRun], server: str, threads: int
              ) -> list[float]:
    """The log of mysqld's CPU per transaction at ``threads`` of each ok run of
    ``server``."""
    out = []
    for r in (r for r in runs if r.server == server and r.status == "ok"):
        x = cpu_by_threads(store, r).get(threads)
        if x is not None:
            out.append(math.log(x))
    return out


def _hold_threads(runs: list[StoredRun]) -> int:
    return next((int(r.summary.threads) for r in runs if r.summary.threads), 1)
