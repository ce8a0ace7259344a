"""``harness compare``: two my.cnf files, two variants or two stored run sets, judged
metric by metric; the verdicts printed and saved (compare.json and its HTML page)."""
from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from typing import Any

from .. import formats
from ..analysis import ab_verdict as ab
from ..analysis import compare as cmp
from ..analysis.ab_verdict import Comparison
from ..analysis.sequential import SequentialRule
from ..errors import InputError
from ..report import compare_html, html
from ..report.conditions import Conditions, conditions
from ..report.environment import compare_environment
from ..report.select import report_dir
from ..runner.designs import (
    CnfChange,
    cnf_difference,
    compare_run,
    switchback_compare,
    upgrade_run,
)
from ..runner.request import CompareRequest
from ..store import Store, open_store
from . import counted

NOTHING = "nothing to compare"  # two my.cnf files the server reads the same


@dataclass
class Judged:
    """One judgement to print and save: its comparisons, the sequential rule that
    decided (if one ran), what the my.cnf files changed and the design's notes."""

    run_set: str
    comparisons: list[Comparison]
    rule: SequentialRule | None = None
    changes: list[CnfChange] | None = None  # None: no my.cnf files given
    notes: list[str] = field(default_factory=list)


def cmd_compare(a: argparse.Namespace) -> int:
    a.measure = _measure(a)
    if a.measure == "instructions":
        return _counted(a)
    noise = ab.NOISE if a.noise is None else a.noise / 100
    limits = ab.Limits(alpha=a.alpha, noise=noise, max_cv=a.max_cv / 100)
    metrics = [*ab.BUILTIN, *(cmp.parse_metric(m) for m in a.metric or [])]
    store = open_store(a.results)
    _check_compare_flags(a)
    rule, changes, notes = None, None, []
    if a.run_sets:
        base, cand, bname, cname = cmp.stored_groups(store, a.run_sets, a.variants)
        run_set = a.run_sets[-1]
    else:
        req = _request(a)
        changes = _print_cnf_difference(a, req)
        if changes == [] and not a.aa:
            return _nothing_to_compare(a, req)
        switched = None if req.upgrade else switchback_compare(req, store, limits)
        if switched is not None:
            return _print_comparisons(a, store, Judged(
                switched.run_set, switched.comparisons, None, changes, req.notes))
        done = (upgrade_run if req.upgrade else compare_run)(req, store, limits, metrics)
        run_set, base, cand, bname, cname, rule = (done.run_set, done.base, done.cand,
                                                   done.bname, done.cname, done.rule)
        notes = req.notes
    metrics = [*ab.headline_metrics([*base, *cand]), *metrics]
    comparisons = _comparisons(store, (base, cand), metrics, (bname, cname), limits,
                               _across(a))
    return _print_comparisons(a, store, Judged(run_set, comparisons, rule, changes, notes))


def _counted(a: argparse.Namespace) -> int:
    """compare --measure instructions: the counted comparison, after the files'
    difference (none: said at once)."""
    counted.check_flags(a)
    req = _request(a)
    changes = _print_cnf_difference(a, req)
    if changes == [] and not a.aa:
        return _nothing_to_compare(a, req)
    return counted.cmd_counted(a, req, changes)


def _across(a: argparse.Namespace) -> str | None:
    """An upgrade's one comparison: what its two builds' sides share (None: not one)."""
    if not a.baseline_server:
        return None
    return f"one my.cnf ({a.cnf})" if a.cnf else "the scenario's options"


def _measure(a: argparse.Namespace) -> str:
    """--measure, else the scenario's ``measure:`` (a scenario file given), else time."""
    if a.measure or not a.scenario or a.run_sets:
        return str(a.measure or "time")
    from ..scenario import load_scenario
    return load_scenario(a.scenario).model.measure


def _comparisons(store: Store, runs: tuple[list[Any], list[Any]], metrics: list[ab.Metric],
                 names: tuple[str, str], limits: ab.Limits, across: str | None
                 ) -> list[Comparison]:
    """Baseline against candidate, server by server; ``across``: an upgrade's one
    comparison, its sides two builds (the label says what they share)."""
    base, cand = runs
    if across is not None:
        return [cmp.compare_runs(store, base, cand, metrics, *names, across, limits)]
    b_by, c_by = cmp.by_server(base), cmp.by_server(cand)
    found = [cmp.compare_runs(store, b_by[server], c_by[server], metrics, *names, server,
                              limits) for server in b_by if server in c_by]
    if not found:
        raise InputError(f"baseline ({', '.join(b_by) or 'no runs'}) and candidate "
                         f"({', '.join(c_by) or 'no runs'}) share no server")
    return found


def _request(a: argparse.Namespace) -> CompareRequest:
    req = CompareRequest(
        scenario=a.scenario, baseline=a.baseline, candidate=a.candidate,
        variants=a.variants or [], design=a.design, repetitions=a.repetitions,
        servers=a.server or [], budget=a.budget, effect=a.effect, watch=a.watch,
        alpha=a.alpha, window_s=a.window_s, windows=a.windows,
        disposable_confirmed=a.i_know_this_is_disposable,
        measure_lock=not a.no_measure_lock, quiet=a.quiet,
        baseline_server=a.baseline_server, candidate_server=a.candidate_server, cnf=a.cnf,
        measure=a.measure, events=a.events, counter=a.counter)
    req.scenario = req.scenario_file(a.workload)
    req.choose_servers()
    return req


def _print_cnf_difference(a: argparse.Namespace, req: CompareRequest
                          ) -> list[CnfChange] | None:
    """The question first: what the candidate my.cnf changes (None: no my.cnf files)."""
    if not (req.baseline and req.candidate and req.scenario):
        return None
    server, changes = cnf_difference(req)
    if not a.json:
        print(f"{req.candidate} against {req.baseline}, as {server} reads them: "
              f"{len(changes)} option(s) differ")
        for c in changes:
            print(f"  {c.option}: {_shown(c.baseline)} -> {_shown(c.candidate)}")
    return changes


def _nothing_to_compare(a: argparse.Namespace, req: CompareRequest) -> int:
    """Two my.cnf files the server reads the same (a comment, the order, a spelling):
    said at once, nothing run, exit 0."""
    why = (f"{req.first_build.name} reads {req.baseline} and {req.candidate} the same: no "
           "option differs, so there is nothing to compare; --aa runs them against each "
           "other anyway (an A/A run)")
    if a.json:
        print(json.dumps({"format": formats.COMPARE.marker(), "run_set": "",
                          "verdict": NOTHING, "exit_code": 0, "decided_by": why,
                          "comparisons": [], "cnf_diff": []}, indent=2))
    else:
        print(f"verdict: {NOTHING.upper()}: {why}")
    return 0


def _shown(v: Any) -> str:
    return "(not set: the server's default)" if v is None else str(v)


def _print_comparisons(a: argparse.Namespace, store: Store, j: Judged) -> int:
    """The one verdict (a sequential rule's when it decided, else the comparisons'),
    printed, saved (its JSON and HTML page, under names of their own; compare.json and
    compare.html the latest); its exit code."""
    rule, comparisons = j.rule, j.comparisons
    final = ab.final_verdict(comparisons, rule)
    decided = final if rule is not None else None
    out: dict[str, Any] = {"format": formats.COMPARE.marker(), "run_set": j.run_set,
                           **final.to_json(),
                           "comparisons": [c.to_json(decided) for c in comparisons]}
    if rule is not None:
        out["sequential"] = rule.to_json()
    if j.changes is not None:
        out["cnf_diff"] = [c.to_json() for c in j.changes]
    out["notes"] = j.notes
    out["environment"] = compare_environment(store, comparisons)
    ran = conditions(store, comparisons)
    out["conditions"] = ran.to_json() if ran else None
    saved = compare_html.save(out, report_dir(store, j.run_set),
                              html.flame_graph_diffs(store, comparisons))
    if a.json:
        print(json.dumps(out, indent=2))
        return final.exit_code
    print()
    _print_how(rule, j.notes, ran)
    for c in comparisons:
        print(c.text(with_verdict=rule is None and len(comparisons) == 1))
    if rule is not None or len(comparisons) > 1:
        print(final.line() + f" ({final.by})")
    print(f"saved: {saved.json}, {saved.html} (the latest also as {saved.latest_json.name} "
          f"and {saved.latest_html.name})")
    return final.exit_code


def _print_how(rule: SequentialRule | None, notes: list[str], ran: Conditions | None
               ) -> None:
    """Before the table: what was run, the sequential rule's decision, and which design
    ran and why (as the page shows them)."""
    for line in ran.lines() if ran else []:
        print(line)
    if rule is not None:
        print(rule.text())
        print("per metric, the fixed-size statistics on the same runs (shown, not counted: "
              "the sequential rule decides):")
    for n in notes:
        if n.startswith(("design:", "between runs:")):
            print(n)


def _check_compare_flags(a: argparse.Namespace) -> None:
    _check_stored_flags(a)
    if a.events or a.counter != "auto":
        raise InputError(f"{'--events' if a.events else '--counter'} is a count's: give "
                         "--measure instructions")
    if a.watch and not a.budget:
        raise InputError("--watch names the figure --budget stops on: give --budget too")
    if a.cnf and not (a.baseline_server and a.candidate_server):
        raise InputError("--cnf is the my.cnf of an upgrade: give --baseline-server and "
                         "--candidate-server too (two my.cnf files: --baseline and "
                         "--candidate)")


def _check_stored_flags(a: argparse.Namespace) -> None:
    """--run-sets judges stored runs: no flag that runs any."""
    if a.run_sets:
        if a.scenario or a.baseline or a.candidate:
            raise InputError("--run-sets compares stored runs: give no scenario, --baseline "
                             "or --candidate")
        if len(a.run_sets) > 2:
            raise InputError("--run-sets: one run set (with --variants) or two")
        if a.budget or a.workload:
            raise InputError(f"{'--budget' if a.budget else '--workload'} runs a comparison: "
                             "not with --run-sets")
        if a.baseline_server or a.candidate_server:
            raise InputError("--run-sets compares stored runs: not with --baseline-server "
                             "or --candidate-server")
