"""A run set's report hints as its runs stored them (``details.report``); for runs
stored before they were, read from the scenario file the runs name, saying so."""
from __future__ import annotations

from ..errors import HarnessError
from ..scenario import load_scenario
from ..store import StoredRun
from ..store.hints import Hints


def hints_of(runs: list[StoredRun]) -> Hints:
    """The hints stored with the runs; for runs stored before they were, read from the
    scenario file the runs name, saying so (or that it is gone)."""
    for r in runs:
        if r.details.report is not None:
            return r.details.report
    files = sorted({str(r.details.scenario_file) for r in runs})
    for f in files:
        try:
            h = load_scenario(f).model.report_hints()
        except (HarnessError, OSError):
            continue
        h.note = f"runs stored before their reports' hints were: read from {f}"
        return h
    return Hints(note="runs stored before their reports' hints were, and their scenario "
                      f"file ({', '.join(files)}) no longer reads: no watched indexes, "
                      "no upgrade verdict")
