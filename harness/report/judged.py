"""Findings judged again: with another scenario's expectations (``report --judge``), and
the plan of runs a cell each finding needs, from its verdicts' spread."""
from __future__ import annotations

from typing import Any

from ..analysis import findings, plan
from ..analysis.phases import describe
from ..scenario import load_scenario
from ..store import Finding, RunReader, StoredRun
from ..table import print_table


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
