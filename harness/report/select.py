"""Which reports a stored run set gets, the same after ``harness run`` and for ``harness
report``: the phase report where its runs have phases (side loads), the upgrade verdicts
where its scenario names a baseline server, each workload's own tables (SSB's flights),
else the expected findings' verdicts. What the reports need from the scenario (the
indexes to watch, the baseline server) is stored with each run (``details.report``), so
a report never depends on the scenario file still being where it was."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import workloads
from ..analysis import findings, plan
from ..analysis.phases import describe
from ..errors import HarnessError, InputError
from ..scenario import Scenario, load_scenario
from ..store import Finding, RunReader, Store, StoredRun
from . import upgrade
from .phase_report import print_report, print_verdicts
from .text import host_line, print_columns, print_table


@dataclass
class Hints:
    """What a run set's reports take from its scenario."""

    watch_indexes: list[str] = field(default_factory=list)  # schema.table.index
    baseline_server: str | None = None
    note: str | None = None  # where they came from, when not from the runs themselves

    def to_json(self) -> dict[str, Any]:
        return {"watch_indexes": self.watch_indexes, "baseline_server": self.baseline_server}


def hints_of_scenario(model: Scenario) -> Hints:
    """The hints a run stores: the indexes its side loads watch and its findings name,
    and its baseline server."""
    return Hints(sorted({*model.watch_indexes, *(e.index for e in model.expectations
                                                 if e.index)}), model.baseline_server)


def hints_of(runs: list[StoredRun]) -> Hints:
    """The hints stored with the runs; for runs stored before they were, read from the
    scenario file the runs name, saying so (or that it is gone)."""
    for r in runs:
        stored = (r.details or {}).get("report")
        if stored is not None:
            return Hints(list(stored.get("watch_indexes", [])), stored.get("baseline_server"))
    files = sorted({str((r.details or {}).get("scenario_file")) for r in runs})
    for f in files:
        try:
            h = hints_of_scenario(load_scenario(f).model)
        except (HarnessError, OSError):
            continue
        h.note = f"runs stored before their reports' hints were: read from {f}"
        return h
    return Hints(note="runs stored before their reports' hints were, and their scenario "
                      f"file ({', '.join(files)}) no longer reads: no watched indexes, "
                      "no upgrade verdict")


def report_dir(store: RunReader, run_set: str) -> Path:
    """Where a run set's reports (plots, HTML, compare.json) are written."""
    return Path(store.artifacts_root()) / "reports" / run_set


def reports_for(store: RunReader, run_set: str, plots: Path | None) -> Hints:
    """Print a stored run set's reports (plots into ``plots`` when given); its hints."""
    runs = store.runs(run_set=run_set)
    hints = hints_of(runs)
    if hints.note:
        print(f"note: {hints.note}")
    phased = any(r.summary.phases is not None for r in runs)
    if phased:
        print_report(store, run_set, print_columns, plots, hints.watch_indexes)
    if hints.baseline_server:
        upgrade.print_report(store, runs, hints.baseline_server, print_table)
    print_workload_reports(store, runs)
    if not phased:
        print_verdicts(runs)
    return hints


def print_workload_reports(store: RunReader, runs: list[StoredRun]) -> None:
    """Each workload's own tables (SSB's flights), for its runs."""
    for plugin, mine in workloads.runs_by_plugin(runs):
        plugin.report(store, mine, print_table)


def runs_named(store: Store, ids: list[str]) -> tuple[list[StoredRun], list[str]]:
    """The runs of run sets or single runs (ids or unambiguous prefixes), each once,
    and which of ``ids`` were run sets."""
    runs: list[StoredRun] = []
    sets: list[str] = []
    for ident in ids:
        found = store.runs(run_set=ident)
        if found:
            sets.append(ident)
        else:
            one = store.get_run(ident)
            if one is None:
                raise InputError(f"no run set or run '{ident}' in the store "
                                 f"{store._safe_url()}")
            found = [one]
        runs += [r for r in found if r.run_id not in {x.run_id for x in runs}]
    return runs, sets


def print_rejudged(store: RunReader, runs: list[StoredRun], scenario: str) -> None:
    judged = findings.rejudge(store, runs, load_scenario(scenario).model.expectations)
    print(f"\nexpected findings judged again with {scenario} (not stored):")
    for r, x in judged:
        which = f"{x.runs} runs" if x.pooled else f"rep {r.repetition}"
        print(f"  [{r.server} / {r.variant} {which}] {describe(x)}")
    if not judged:
        print("  none: the file has no metric: series expectation for these runs")


def print_plan(store: RunReader, runs: list[StoredRun], judge: str | None) -> None:
    """Each finding's plan from its verdicts in each run set (judged again, each run set
    on its own, with --judge's scenario where it has them)."""
    expectations = load_scenario(judge).model.expectations if judge else []
    triples = []
    for run_set in sorted({_set_of(r) for r in runs}):
        mine = [r for r in runs if _set_of(r) == run_set]
        triples += _verdicts_of(store, run_set, mine, expectations if judge else None)
    plans = plan.plan(triples)
    print("\nruns a cell each finding needs to be decided in 19 of 20 repeats, from the "
          f"spread of its values over {len({t[0] for t in triples})} run set(s):")
    if plans:
        print_table(plan.rows(plans), ["finding", "server", "variant", "values", "bound",
                                        "spread", "from", "advice"])
    else:
        print("  none: these runs stored no expected finding")


def _set_of(run: StoredRun) -> str:
    return run.run_set or run.run_id


def _verdicts_of(store: RunReader, run_set: str, runs: list[StoredRun],
                 expectations: list[Any] | None) -> list[tuple[str, StoredRun, Finding]]:
    """(run set, run, verdict) of each finding: judged again with ``expectations``
    where given, else (and for the findings they do not name) as stored."""
    again = findings.rejudge(store, runs, expectations) if expectations is not None else []
    names = {x.name for _, x in again}
    return [(run_set, r, x) for r, x in again] + \
        [(run_set, r, x) for r in runs for x in r.summary.expectations
         if x.name not in names]


def compare_environment(store: RunReader, comparisons: list[Any]) -> list[dict[str, str]]:
    """For the compare page: the first run of each side of each comparison, its server
    build and host (a switchback's one run, once, as both sides)."""
    rows: list[dict[str, str]] = []
    for c in comparisons:
        firsts = {"baseline": c.runs_baseline[:1], "candidate": c.runs_candidate[:1]}
        if firsts["baseline"] == firsts["candidate"]:
            firsts = {"both sides": firsts["baseline"]}
        for side, ids in firsts.items():
            run = store.get_run(ids[0]) if ids else None
            if run is None:
                continue
            d = run.details or {}
            rows.append({"side": side, "run_id": run.run_id,
                         "build": f"{run['server']}: {d.get('version_string') or run['version']}",
                         "host": host_line(d.get("host") or {})})
    return rows
