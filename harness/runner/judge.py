"""The findings stage: what one run can judge as soon as its samples are stored (its
phases, its workload's own expectations, a series over its measured window), and what
only the whole run set can (variants or servers against each other), kept with the runs
they judge. The judging itself is the analysis layer's and the plugins'; this is when
and where the verdicts go."""
from __future__ import annotations

from .. import workloads
from ..analysis import findings, upgrade
from ..analysis.phases import Window, evaluate, stored_phases
from ..analysis.pooled import pooled_verdicts
from ..scenario import Scenario
from ..store import Finding, RunSummary, Store, StoredRun
from ..workloads.base import WorkloadResult


def judge_run(store: Store, m: Scenario, run_id: str, server: str, variant: str,
              result: WorkloadResult, summary: RunSummary, page_bytes: int) -> None:
    """Phases and the expected findings one run can judge, into ``summary``."""
    _phases(store, m, run_id, server, variant, result, summary, page_bytes)
    if m.expectations:
        summary.expectations = summary.expectations + workloads.plugin(
            m.workload.kind).judge_run(m.expectations, summary, server, variant)
    if any(e.metric == "series" for e in m.expectations):
        found, keep = findings.evaluate_run(store, run_id, m.expectations,
                                            Window("main", *(summary.main_window or (0, 0))),
                                            server, variant)
        summary.expectations = summary.expectations + found
        summary.series_stats = keep


def _phases(store: Store, m: Scenario, run_id: str, server: str, variant: str,
            result: WorkloadResult, summary: RunSummary, page_bytes: int) -> None:
    """Per-phase summary and expected findings into ``summary`` (after the samples
    are stored: the buffer pool walk's series come from the store)."""
    if not m.side_loads:
        return
    watch = sorted({*m.watch_indexes, *(e.index for e in m.expectations if e.index)})
    summary.phases, series = stored_phases(store, run_id, result.intervals, watch,
                                           page_bytes)
    if m.expectations:
        summary.expectations = evaluate(m.expectations, summary.phases, series,
                                        page_bytes, server, variant)


Verdicts = dict[str, list[Finding]]  # by run id


def judge_run_set(store: Store, m: Scenario, run_set: str) -> tuple[Verdicts, Verdicts]:
    """Findings that compare variants (a workload's own, a series' baseline_variant)
    or servers (server_ratio), once every run is stored, then each per-run finding
    pooled over a cell's repetitions; each verdict is stored with the runs it judges
    (replacing an earlier one of the same name and kind). The new verdicts, and each
    judged run's expectations as now stored."""
    if not m.expectations:
        return {}, {}
    runs = store.runs(run_set=run_set)
    found: Verdicts = {}
    judges = [p.judge_run_set(m.expectations, mine)
              for p, mine in workloads.runs_by_plugin(runs)]
    for judged in (*judges, findings.evaluate_run_set(m.expectations, runs),
                   upgrade.evaluate_run_set(store, m.expectations, runs)):
        for run_id, xs in judged.items():
            found.setdefault(run_id, []).extend(xs)
    stored = _store(store, runs, found)
    runs = [r.but(summary=r.summary.but(expectations=stored[r.run_id]))
            if r.run_id in stored else r for r in runs]
    pooled: Verdicts = {}
    for x in pooled_verdicts(runs):
        for r in runs:
            if (r.server, r.variant, r.status) == (x.server, x.variant, "ok"):
                pooled.setdefault(r.run_id, []).append(x)
                found.setdefault(r.run_id, []).append(x)
    return found, {**stored, **_store(store, runs, pooled)}


def _store(store: Store, runs: list[StoredRun], found: Verdicts) -> Verdicts:
    """``found`` stored with each run, in place of its verdicts of the same name and
    kind (pooled or not); each touched run's expectations as now stored."""
    out: Verdicts = {}
    for r in runs:
        if r.run_id not in found:
            continue
        new = {_key(x) for x in found[r.run_id]}
        summary = r.summary.but(expectations=[
            x for x in r.summary.expectations if _key(x) not in new] + found[r.run_id])
        store.update_run(r.run_id, summary=summary)
        out[r.run_id] = summary.expectations
    return out


def _key(x: Finding) -> tuple[str, bool]:
    return x.name, x.pooled
