"""Which reports a stored run set gets, the same after ``harness run`` and for ``harness
report``: the phase report where its runs have phases (side loads), the upgrade verdicts
where its scenario names a baseline server, each workload's own tables (SSB's flights),
else the expected findings' verdicts. What the reports need from the scenario (the
indexes to watch, the baseline server) is stored with each run (``details.report``), so
a report never depends on the scenario file still being where it was."""
from __future__ import annotations

from pathlib import Path

from .. import workloads
from ..errors import InputError
from ..store import RunReader, Store, StoredRun
from ..store.hints import Hints
from ..table import print_table
from . import upgrade
from .hints import hints_of
from .phase_report import print_report, print_verdicts
from .text import print_columns


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
                                 f"{store.safe_url()}")
            found = [one]
        runs += [r for r in found if r.run_id not in {x.run_id for x in runs}]
    return runs, sets
