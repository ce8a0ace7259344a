"""The quick commands: ``harness runs`` at once. An SQLite store's runs are read with
the standard library (store/listing.py) and printed, loading neither SQLAlchemy nor a
report nor an analysis module; what that read cannot answer goes to the full store
(cli/results.py)."""
from __future__ import annotations

import argparse
import json

from .. import formats
from ..store.listing import ListedRun, quick_runs
from ..store.url import as_url, default_url
from ..table import print_table
from .args.common import REGRESS_KEYS

COLUMNS = ["run_id", "run_set", "scenario", "server", "version", "variant", "repetition",
           "target", "host", "status", "started_at"]


def cmd_runs(a: argparse.Namespace) -> int:
    url = as_url(a.results) if a.results else default_url()
    listed = quick_runs(url, REGRESS_KEYS, a.scenario, a.run_set)
    if listed is None:
        from .results import runs_from_store
        listed = runs_from_store(a)
    return print_runs(listed, a.json)


def print_runs(runs: list[ListedRun], as_json: bool) -> int:
    """The runs as a table (tps and p95 always; the other regress figures where a run
    has them), or as JSON (format runs 2)."""
    if as_json:
        print(json.dumps({"format": formats.RUNS.marker(),
                          "runs": [r.to_json() for r in runs]}, indent=2))
        return 0
    rows = [{**r.to_json(), **r.figures} for r in runs]
    extra = [n for n in REGRESS_KEYS if n not in ("tps", "p95_ms") and
             any(x[n] is not None for x in rows)]
    print_table(rows, [*COLUMNS, "tps", "p95_ms", *extra])
    return 0
