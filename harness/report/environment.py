"""The environment a comparison ran in, for its page: each side's first run, its build
and host."""
from __future__ import annotations

from typing import Any

from ..store import RunReader
from .text import host_line


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
            d = run.details
            rows.append({"side": side, "run_id": run.run_id,
                         "build": f"{run.server}: {d.version_string or run.version}",
                         "host": host_line(d.host or {})})
    return rows
