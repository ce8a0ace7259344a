"""``harness run`` (a scenario's matrix, or its servers spread over a lab's hosts) and
``harness validate``."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .. import formats
from ..analysis import reference
from ..analysis.figures import SUMMARY_KEYS
from ..errors import HarnessError, InputError, ScenarioError
from ..paths import CHECKOUT
from ..progress import Progress
from ..providers import is_lab, lab_hosts, lab_inventory
from ..report import html
from ..report.select import report_dir, reports_for
from ..runner import Runner, RunOptions, RunResult, nightly, summary_table
from ..runner.lab import run_on_lab
from ..scenario import LoadedScenario, load_scenario
from ..store import Store, StoredRun, open_store
from ..table import print_table
from .counted_run import cmd_counted_run, countable_of, measure_of
from .results import held_against


def cmd_run(a: argparse.Namespace) -> int:
    sc = _scaled(load_scenario(a.scenario), a)
    if a.keep and a.target != "local":
        raise InputError(f"--keep: keeps local sandboxes only (not --target {a.target})")
    store = open_store(a.results)
    if measure_of(a, sc) == "instructions":
        return cmd_counted_run(a, sc, store)
    lab = _lab_share(a, sc)
    if lab is not None:
        return _run_on_lab(a, sc, store, *lab)
    ref = _reference(a, sc)
    runner = Runner(sc, store, _run_options(a), Progress(quiet=a.quiet))
    results = runner.run()
    if a.json:
        _print_run_json(runner.run_set, results)
    else:
        _print_run(sc, store, runner.run_set, results, a.html)
    held = held_against(ref, a.against, store.runs(run_set=runner.run_set)) \
        if ref and results else 0
    return held if results and all(r.status == "ok" for r in results) else 1


def _reference(a: argparse.Namespace, sc: LoadedScenario) -> reference.Reference | None:
    """``--against``'s reference, read before any server starts (and of this scenario)."""
    if not a.against:
        return None
    if a.json or a.run_set:
        raise InputError("--against: prints a table; not with --json or on a lab host")
    ref = reference.load(Path(a.against))
    if ref.scenario != sc.model.name:
        raise InputError(f"--against {a.against}: a reference of scenario {ref.scenario}, "
                         f"not of {sc.model.name} ({a.scenario})")
    return ref


def _lab_share(a: argparse.Namespace, sc: LoadedScenario
               ) -> tuple[Path, list[Any], list[str]] | None:
    """(inventory, hosts, servers) when ``--target ansible:INVENTORY`` (no @HOST) has
    several hosts for several servers: the matrix is spread over them."""
    if not is_lab(a.target) or "@" in a.target or a.run_set:
        return None
    inventory, hosts = lab_inventory(a.target), lab_hosts(a.target)
    servers = a.server or [s.name for s in sc.model.servers if s.name]
    return (inventory, hosts, servers) if len(hosts) > 1 and len(servers) > 1 else None


def _run_options(a: argparse.Namespace) -> RunOptions:
    return RunOptions(servers=a.server or [], basedirs=a.basedir or [],
                      variants=a.variant or [], repetitions=a.repetitions, target=a.target,
                      fail_fast=a.fail_fast, collectors=not a.no_collectors,
                      metrics_port=a.metrics_port, pushgateway=a.pushgateway,
                      resume=a.resume, interleave=a.interleave,
                      disposable_confirmed=a.i_know_this_is_disposable, run_set=a.run_set,
                      keep=a.keep, measure_lock=not a.no_measure_lock)


def _print_run_json(run_set: str, results: list[RunResult]) -> None:
    print(json.dumps({"format": formats.RUN_SET.marker(), "run_set": run_set, "measure": "time",
                      "runs": [{"run_id": r.run_id, "server": r.server, "variant": r.variant,
                                "repetition": r.repetition, "status": r.status,
                                "error": r.error, "summary": r.summary.to_json()}
                               for r in results],
                      "table": summary_table(results)}, indent=2, default=str))


def _print_run(sc: LoadedScenario, store: Store, run_set: str, results: list[RunResult],
               html_report: bool = False) -> None:
    rows = summary_table(results)
    print(f"\nrun set {run_set} ({sc.model.name}): "
          f"{sum(r.status == 'ok' for r in results)}/{len(results)} runs ok")
    print_table(rows, ["server", "variant", "runs", "ok", *_figures_in(rows)])
    for r in results:
        if r.status != "ok":
            print(f"\n{r.run_id} {r.status}: {r.error}")
        elif r.summary.stall:
            print(f"\n{r.run_id} ok, stalled: {r.summary.stall} (its figures are a "
                  "stalled server's)")
    if results:
        _reports(sc, store, run_set, html_report)


def _figures_in(rows: list[dict[str, Any]]) -> list[str]:
    """The summary figures some row has, in their usual order."""
    return [k for k in SUMMARY_KEYS if any(k in r for r in rows)]


def _scaled(sc: Any, a: argparse.Namespace) -> Any:
    """The scenario at ``--scale`` (itself without it)."""
    if a.scale is None:
        return sc
    if not 0 < a.scale <= 100_000:
        raise InputError(f"--scale {a.scale:g}: a factor above 0 (2 doubles the sizes)")
    try:
        return sc.scaled(a.scale)
    except ValidationError as e:
        raise InputError(f"{a.scenario}: scaled x{a.scale:g}, the scenario is no "
                         f"longer valid: {e.errors()[0]['msg']}") from None


# Flags a lab host's child harness run takes over from this one: (flag, attribute).
_PASSED_ON = (("--fail-fast", "fail_fast"), ("--interleave", "interleave"),
              ("--no-collectors", "no_collectors"),
              ("--i-know-this-is-disposable", "i_know_this_is_disposable"),
              ("--no-measure-lock", "no_measure_lock"))


def _passthrough(a: argparse.Namespace) -> list[str]:
    """This run's flags, for each lab host's child run."""
    out = [x for v in a.variant or [] for x in ("--variant", v)]
    for flag, value in (("--repetitions", a.repetitions), ("--scale", a.scale)):
        if value:
            out += [flag, str(value)]
    return out + [flag for flag, attr in _PASSED_ON if getattr(a, attr)]


def _run_on_lab(a: argparse.Namespace, sc: LoadedScenario, store: Store, inventory: Path,
                hosts: list[Any], servers: list[str]) -> int:
    """The servers spread over the inventory's hosts, one child harness per host."""
    ref = _reference(a, sc)
    lab = run_on_lab(a.scenario, inventory, hosts, servers, _passthrough(a), a.results)
    for host, tail in lab.failed_tails.items():
        print(f"{host} (exit {lab.codes[host]}):\n" + "\n".join("    " + ln for ln in tail),
              file=sys.stderr)
    runs = store.runs(run_set=lab.run_set)
    print(f"\nrun set {lab.run_set} ({sc.model.name}): "
          f"{sum(r.status == 'ok' for r in runs)}/{len(runs)} runs ok on "
          f"{len(lab.shares)} hosts")
    rows = [{"server": r.server, "variant": r.variant, "host": r.host,
             "status": r.status, **_figures_of(r)} for r in runs]
    print_table(rows, ["server", "variant", "host", "status", *_figures_in(rows)])
    _print_errors(runs)
    codes = list(lab.codes.values())
    held = held_against(ref, a.against, runs) if ref and runs else 0
    return held if runs and all(c == 0 for c in codes) else max(codes, default=0) or 1


def _print_errors(runs: list[StoredRun]) -> None:
    """Why each run that is not ok is not, with its host."""
    for r in runs:
        if r.status != "ok":
            print(f"\n{r.run_id} on {r.host} {r.status}: {r.error}")


def _figures_of(run: StoredRun) -> dict[str, float]:
    return {k: v for k in SUMMARY_KEYS if (v := run.summary.figure(k)) is not None}


def _reports(sc: LoadedScenario, store: Store, run_set: str, html_report: bool) -> None:
    """After a run set: its reports (as ``harness report`` prints them), and for an
    experiment (or with ``--html``) the HTML report."""
    hints = reports_for(store, run_set, report_dir(store, run_set))
    if sc.model.expectations or html_report:
        page = html.write(store, store.runs(run_set=run_set), report_dir(store, run_set),
                          f"{sc.model.name}: {run_set}", baseline_server=hints.baseline_server)
        print(f"report: {page}")


def cmd_nightly(a: argparse.Namespace) -> int:
    scenarios = _nightly_scenarios(a)
    n = nightly.night(scenarios, a.target, a.results, a.notify,
                      disposable=a.i_know_this_is_disposable, regress=not a.no_regress,
                      counted=countable_of(a, scenarios))
    for host, scenario, code in n.failed:
        print(f"failed: {scenario} on {host} (exit {code})")
    return n.exit_code


def _nightly_scenarios(a: argparse.Namespace) -> list[str]:
    """The night's scenario files (scenarios/nightly/ by default), each read before
    any server starts; one that is refused is posted as the night's failure."""
    if a.scenarios:
        files = a.scenarios
    else:
        folder = CHECKOUT / "scenarios" / "nightly"
        files = sorted(str(p) for p in folder.glob("*.yaml"))
        if not files:
            raise InputError(f"no scenarios named, and no {folder}: name the night's "
                             "scenario files")
    for f in files:
        try:
            load_scenario(f)
        except HarnessError as e:
            why = "; ".join(e.problems[:3]) if isinstance(e, ScenarioError) else str(e)
            nightly.post_failure(a.notify, f"{f} refused: {why}", a.target, scenario=f,
                                 exit_code=e.exit_code)
            raise
    return files
