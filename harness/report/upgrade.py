"""The upgrade verdict as text (the table per thread count, SSB's differing results) and
as a figure (throughput per thread count, a line per server); the verdicts themselves
come from analysis/upgrade.py."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..analysis.ab_verdict import moved_lines
from ..analysis.upgrade import (
    SECONDS,
    CpuByFunction,
    UpgradeVerdict,
    WhatMoved,
    by_cell,
    cpu_by_function,
    fingerprint_table,
    moved,
    result_differences,
    verdicts,
)
from ..collectors import REGISTRY
from ..stats.interval import interval_text
from ..store import RunReader, StoredRun

# The folded stacks a collector writes that compare across builds (perf's CPU profile).
PROFILES = tuple(a for c in REGISTRY.values() for a, how in c.flame_graphs.items()
                 if how.differential)
CPU_COLUMNS = ["function", "baseline us", "candidate us", "change us"]

INTERVAL_TEXT = ("the ratio of the runs' geometric means, its 95% interval Welch's t on the "
                 "logs of the runs' medians")
MOVED_TEXT = ("every step and the hold together, each run's counters over its "
              "transactions; 2 ok runs a server or more")
SECONDS_TEXT = ("with one run a side the interval is a bootstrap of that run's seconds: "
                "it does not see how much one server instance differs from the next (run "
                "with repetitions: 3 or more for an interval that does)")


def print_report(store: RunReader, runs: list[StoredRun], baseline: str,
                 print_table: Callable[[list[dict[str, Any]], list[str]], None]) -> None:
    """The upgrade table (and SSB's differing results) as text."""
    rows = verdicts(store, runs, baseline)
    what_moved = moved(store, runs, baseline)
    cpu = cpu_functions(store, runs, baseline)
    for workload in dict.fromkeys(r.workload for r in rows):
        print(f"\n{workload}: throughput per thread count against {baseline} (median of "
              f"the runs; {INTERVAL_TEXT}):")
        mine = [r for r in rows if r.workload == workload]
        print_table([_shown(r) for r in mine],
                    ["threads", "server", "runs", "tps", "ratio", "ci95", "verdict"])
        if any(r.interval == SECONDS for r in mine):
            print(f"  note: {SECONDS_TEXT}")
        _print_where(workload, what_moved, cpu, baseline, print_table)
    _print_fingerprints(runs, baseline, print_table)


def _print_where(workload: str, what_moved: list[WhatMoved], cpu: list[CpuByFunction],
                 baseline: str, print_table: Callable[[list[dict[str, Any]], list[str]], None]
                 ) -> None:
    """What moved per transaction, and where the CPU went by function, per server."""
    for m in (m for m in what_moved if m.workload == workload):
        print(f"\n{workload}: {m.server} against {baseline}, {MOVED_TEXT}:")
        print("\n".join(moved_lines(m.moved)))
    for c in (c for c in cpu if c.workload == workload):
        print(f"\n{workload}: {cpu_heading(c, baseline)}:")
        print_table(cpu_rows(c), CPU_COLUMNS)


def cpu_functions(store: RunReader, runs: list[StoredRun], baseline: str
                  ) -> list[CpuByFunction]:
    """Where each server's CPU per transaction went against ``baseline``'s, by
    function, from every profile its runs stored."""
    return [c for a in PROFILES for c in cpu_by_function(store, runs, baseline, a)]


def cpu_heading(c: CpuByFunction, baseline: str) -> str:
    shown = sum(f.change_us for f in c.functions)
    return (f"{c.server} against {baseline}, where mysqld's CPU per transaction went "
            f"({c.baseline_us:.1f} -> {c.candidate_us:.1f} us, x"
            f"{c.candidate_us / c.baseline_us:.2f}): each function on the CPU in perf's "
            f"samples ({c.runs[0]} and {c.runs[1]} profiled runs), its share of the "
            f"samples times the CPU per transaction; the {len(c.functions)} that moved "
            f"most account for {shown:+.1f} us of the {c.candidate_us - c.baseline_us:+.1f}"
            f", frames perf found no symbol for {c.unknown.change_us:+.1f} "
            f"({c.unknown.baseline_us:.1f} -> {c.unknown.candidate_us:.1f})")


def cpu_rows(c: CpuByFunction) -> list[dict[str, Any]]:
    return [{"function": f.function[:80], "baseline us": f"{f.baseline_us:.2f}",
             "candidate us": f"{f.candidate_us:.2f}", "change us": f"{f.change_us:+.2f}"}
            for f in c.functions]


def _print_fingerprints(runs: list[StoredRun], baseline: str,
                        print_table: Callable[[list[dict[str, Any]], list[str]], None]
                        ) -> None:
    """SSB's result fingerprint per query and server, those that differ named."""
    servers, table = fingerprint_table(runs)
    if not table:
        return
    diffs = result_differences(runs, baseline)
    print(f"\nresult fingerprints per server ({len(diffs)} differ from {baseline}):")
    print_table(table, ["query", *servers])
    for d in diffs:
        print(f"  DIFFERENT RESULT: {d.query} on {d.server}: {d.digest} "
              f"({baseline}: {d.baseline_digest})")


def _shown(row: UpgradeVerdict) -> dict[str, Any]:
    """A verdict as the table prints it."""
    return {**asdict(row), "ci95": interval_text(row.ci95),
            "ratio": "-" if row.ratio is None else f"x{row.ratio:.3f}", "verdict": row.text()}


def figure(store: RunReader, runs: list[StoredRun], baseline: str, path: Path
           ) -> Path | None:
    """Throughput per thread count, a line per server with its runs' spread."""
    import matplotlib.pyplot as plt

    per_workload: dict[str, list[UpgradeVerdict]] = {}
    for r in verdicts(store, runs, baseline):
        per_workload.setdefault(r.workload, []).append(r)
    drawn = {w: rows for w, rows in per_workload.items()
             if len({r.threads for r in rows}) >= 2}  # a line needs two thread counts
    if not drawn:
        return None
    cells = by_cell(store, runs)
    fig, axes = plt.subplots(1, len(drawn), figsize=(6.5 * len(drawn), 4.5), squeeze=False)
    for ax, (workload, mine) in zip(axes[0], drawn.items(), strict=True):
        for server in dict.fromkeys(r.server for r in mine):
            _server_line(ax, [r for r in mine if r.server == server], cells, baseline)
        _threads_axis(plt, ax, workload, sorted({r.threads for r in mine}))
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def _server_line(ax: Any, rows: list[UpgradeVerdict],
                 cells: dict[tuple[str, str, int], list[NDArray[Any]]], baseline: str) -> None:
    """One server's tps per thread count (its rows), the band its runs span."""
    server, workload = rows[0].server, rows[0].workload
    pts = sorted((r.threads, r.tps) for r in rows)
    xs = [n for n, _ in pts]
    spread = [[float(np.median(x)) for x in cells[(workload, server, n)]] for n in xs]
    line = ax.plot(xs, [y for _, y in pts], marker="o",
                   lw=2.2 if server == baseline else 1.2, label=server)
    ax.fill_between(xs, [min(v) for v in spread], [max(v) for v in spread],
                    color=line[0].get_color(), alpha=0.15)


def _threads_axis(plt: Any, ax: Any, workload: str, threads: list[int]) -> None:
    ax.set_xscale("log", base=2)
    ax.set_xticks(threads)
    ax.get_xaxis().set_major_formatter(plt.matplotlib.ticker.ScalarFormatter())
    ax.set_title(workload, loc="left")
    ax.set_xlabel("threads")
    ax.set_ylabel("tps (median of runs; band: min-max of runs)")
    ax.legend(fontsize=8)
