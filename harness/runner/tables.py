"""What a finished run says in one line, and a run set in a table."""
from __future__ import annotations

import statistics
from typing import Any

from ..analysis.figures import FIGURES, SUMMARY_KEYS
from ..store import RunSummary
from .options import RunResult


def headline(summary: RunSummary) -> str:
    """One line on a finished run, whatever its workload: its own headline, else the
    figures its summary has (a summary with none says so; it never raises)."""
    samples = f"{summary.samples} samples"
    stall = f"; {summary.stall}" if summary.stall else ""
    if summary.headline:
        return f"{summary.headline}{stall}, {samples}"
    figures = [f"{f.label} {v:.0f}" if abs(v) >= 1e4 else f"{f.label} {v:.4g}"
               for f in FIGURES if (v := summary.figure(f.key)) is not None]  # never 4e+04
    return ", ".join(figures or ["no headline figure in its summary"]) + stall + \
        f", {samples}"


def summary_table(results: list[RunResult]) -> list[dict[str, Any]]:
    """Per server x variant: runs, and the median over repetitions of each headline
    figure its workload reports (tps and p95 latency; an SSB flight's cold and warm
    seconds)."""
    groups: dict[tuple[str, str], list[RunResult]] = {}
    for r in results:
        groups.setdefault((r.server, r.variant), []).append(r)
    rows = []
    for (server, variant), rs in groups.items():
        ok = [r for r in rs if r.status == "ok"]
        row: dict[str, Any] = {"server": server, "variant": variant, "runs": len(rs),
                               "ok": len(ok)}
        for key in SUMMARY_KEYS:
            vals = [v for r in ok if (v := r.summary.figure(key)) is not None]
            if vals or any(key in r.summary.measured for r in rs):
                row[key] = statistics.median(vals) if vals else None
        rows.append(row)
    return rows
