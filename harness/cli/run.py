"""``harness run`` (a scenario's matrix, or its servers spread over a lab's hosts) and
``harness validate``."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..analysis.figures import SUMMARY_KEYS
from ..errors import HarnessError, InputError
from ..progress import Progress
from ..providers import ansible
from ..report import html
from ..report.select import report_dir, reports_for
from ..report.text import print_my_cnf_reading, print_table
from ..runner import Runner, RunOptions, summary_table
from ..runner.guard import check_static
from ..runner.lab import run_on_lab
from ..runner.plan import check_cells, check_profile, select_servers, select_variants
from ..scenario import LoadedScenario, load_scenario
from ..server import catalog
from ..store import open_store


def cmd_run(a: argparse.Namespace) -> int:
    sc = _scaled(load_scenario(a.scenario), a)
    if a.keep and a.target != "local":
        raise InputError(f"--keep: keeps local sandboxes only (not --target {a.target})")
    store = open_store(a.results)
    if a.target.startswith("ansible:") and "@" not in a.target and not a.run_set:
        inventory, _ = ansible.parse_target(a.target)
        hosts = ansible.inventory_hosts(inventory)
        servers = a.server or [s.name for s in sc.model.servers if s.name]
        if len(hosts) > 1 and len(servers) > 1:
            return _run_on_lab(a, sc, store, inventory, hosts, servers)
    opts = RunOptions(servers=a.server or [], basedirs=a.basedir or [], variants=a.variant or [],
                      repetitions=a.repetitions, target=a.target, fail_fast=a.fail_fast,
                      collectors=not a.no_collectors, metrics_port=a.metrics_port,
                      pushgateway=a.pushgateway, resume=a.resume, interleave=a.interleave,
                      disposable_confirmed=a.i_know_this_is_disposable, run_set=a.run_set,
                      keep=a.keep, measure_lock=not a.no_measure_lock)
    runner = Runner(sc, store, opts, Progress(quiet=a.quiet))
    results = runner.run()
    rows = summary_table(results)
    if a.json:
        print(json.dumps({"run_set": runner.run_set,
                          "runs": [{"run_id": r.run_id, "server": r.server,
                                    "variant": r.variant, "repetition": r.repetition,
                                    "status": r.status, "error": r.error,
                                    "summary": r.summary.to_json()} for r in results],
                          "table": rows}, indent=2, default=str))
    else:
        print(f"\nrun set {runner.run_set} ({sc.model.name}): "
              f"{sum(r.status == 'ok' for r in results)}/{len(results)} runs ok")
        print_table(rows, ["server", "variant", "runs", "ok",
                            *[k for k in SUMMARY_KEYS if any(k in r for r in rows)]])
        for r in results:
            if r.status != "ok":
                print(f"\n{r.run_id} {r.status}: {r.error}")
        if results:
            _reports(sc, store, runner.run_set)
    return 0 if results and all(r.status == "ok" for r in results) else 1


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


def _run_on_lab(a: argparse.Namespace, sc: LoadedScenario, store: Any, inventory: Path,
                hosts: list[Any], servers: list[str]) -> int:
    """The servers spread over the inventory's hosts, one child harness per host."""
    passthrough = [*sum((["--variant", v] for v in a.variant or []), []),
                   *(["--repetitions", str(a.repetitions)] if a.repetitions else []),
                   *(["--scale", str(a.scale)] if a.scale else []),
                   *(["--fail-fast"] if a.fail_fast else []),
                   *(["--interleave"] if a.interleave else []),
                   *(["--no-collectors"] if a.no_collectors else []),
                   *(["--i-know-this-is-disposable"] if a.i_know_this_is_disposable else []),
                   *(["--no-measure-lock"] if a.no_measure_lock else [])]
    lab = run_on_lab(a.scenario, inventory, hosts, servers, passthrough, a.results)
    for host, tail in lab.failed_tails.items():
        print(f"{host} (exit {lab.codes[host]}):\n" + "\n".join("    " + ln for ln in tail),
              file=sys.stderr)
    runs = store.runs(run_set=lab.run_set)
    print(f"\nrun set {lab.run_set} ({sc.model.name}): "
          f"{sum(r['status'] == 'ok' for r in runs)}/{len(runs)} runs ok on "
          f"{len(lab.shares)} hosts")
    rows = [{"server": r["server"], "variant": r["variant"], "host": r["host"],
             "status": r["status"], **{k: v for k in SUMMARY_KEYS
                                       if (v := r["summary"].figure(k)) is not None}}
            for r in runs]
    print_table(rows, ["server", "variant", "host", "status",
                       *[k for k in SUMMARY_KEYS if any(k in r for r in rows)]])
    codes = list(lab.codes.values())
    return 0 if runs and all(c == 0 for c in codes) else max(codes, default=0) or 1


def _reports(sc: LoadedScenario, store: Any, run_set: str) -> None:
    """After a run set: its reports (as ``harness report`` prints them), and for an
    experiment the HTML report."""
    hints = reports_for(store, run_set, report_dir(store, run_set))
    if sc.model.expectations:  # an experiment: its figures too
        page = html.write(store, store.runs(run_set=run_set), report_dir(store, run_set),
                          f"{sc.model.name}: {run_set}", baseline_server=hints.baseline_server)
        print(f"report: {page}")


def cmd_validate(a: argparse.Namespace) -> int:
    bad = 0
    for f in a.files:
        try:
            sc = load_scenario(f)
            specs = select_servers(sc, RunOptions())
            installed = [s.name for s in specs if s.name and catalog.is_installed(
                catalog.get_entry(s.name))]
            external = [s.title for s in specs if s.external]
            builds = [catalog.detect_build(catalog.get_entry(n).install_dir, name=n)
                      for n in installed]
            variants = select_variants(sc, RunOptions())
            cells = check_cells(sc, builds, variants)
            check_static(sc, specs, {v: sc.variant_options(v) for v in variants})
            skipped = [s.title for s in specs if s.name not in installed and not s.external]
            note = (f" (options not checked against {', '.join(skipped)}: not installed; "
                    "'harness servers install NAME' first)") if skipped else ""
            if external:
                note += (f" (external {', '.join(external)}: not contacted; 'harness run' "
                         "checks their variables and what the harness may do there)")
            profile = check_profile(sc, [catalog.get_entry(s.name) for s in specs if s.name],
                                    a.target, bool(external))
            print(f"{f}: ok{note}")
            for line in profile:
                print(f"  host_profile applies {line}")
            print_my_cnf_reading(cells)
        except HarnessError as e:
            bad += 1
            print(f"error: {e}", file=sys.stderr)
    return 2 if bad else 0
