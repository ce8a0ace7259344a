"""The phase report of a run set: a table per server x variant shaped like a published
experiment's (main workload alone and during each side load, side-load seconds alone
and concurrent, watched indexes in the pool before and at their minimum), the expected
findings, and plots with every side-load window shaded."""
from __future__ import annotations

import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import workloads
from ..analysis.phases import describe
from ..stats.verdict import NOT_JUDGED
from ..store import RunReader, StoredRun
from ..store.phase import Diagnostics, Phase
from .files import file_name

Row = dict[str, Any]


def _med(xs: list[float | None]) -> float | None:
    vals = [x for x in xs if x is not None]
    return round(statistics.median(vals), 3) if vals else None


def refresh(store: RunReader, runs: list[StoredRun], watch: list[str]) -> None:
    """Phase summaries of runs stored before their diagnostics (or the collapsed share)
    existed, recomputed from their samples (in memory; the store is not changed)."""
    from ..analysis.phases import stored_phases
    for r in runs:
        phases = r.summary.phases
        if phases and any(p.partial for p in phases):
            r.summary = r.summary.but(phases=stored_phases(
                store, r.run_id, None, watch, page_bytes(r))[0])


def phase_table(runs: list[StoredRun]) -> tuple[list[Row], list[str]]:
    """One row per server x variant (medians over repetitions) and its column names.

    A phase during which the main workload ran is "concurrent": it gets the main's tps
    inside it and the watched indexes before/at minimum. A phase outside the main
    workload is "alone": only its seconds.
    """
    groups: dict[tuple[str, str], list[StoredRun]] = {}
    for r in runs:
        if r.summary.phases is not None:
            groups.setdefault((r.server, r.variant), []).append(r)
    cols = ["server", "variant", "runs", "main tps alone"]
    rows: list[Row] = []
    for (server, variant), rs in groups.items():
        phases = _by_phase(rs)
        row: Row = {"server": server, "variant": variant, "runs": len(rs),
                    "main tps alone": _med([p.tps_median_outside
                                            for ps in phases.values() for p in ps])}
        for name, ps in phases.items():
            cells = _phase_cells(name, ps)
            row.update(cells)
            cols += [k for k in cells if k not in cols]
        rows.append(row)
    return rows, cols


def _by_phase(rs: list[StoredRun]) -> dict[str, list[Phase]]:
    """The runs' phase summaries, by phase name."""
    phases: dict[str, list[Phase]] = {}
    for p in (p for r in rs for p in r.summary.phases or []):
        phases.setdefault(p.phase, []).append(p)
    return phases


# A phase's diagnostics: (the rate, column label with {name} and {tag}).
DIAGNOSTICS: tuple[tuple[Callable[[Diagnostics], float | None], str], ...] = (
    (lambda d: d.side_load_mb_per_s, "{name}{tag} MB/s"),
    (lambda d: d.pages_read_per_s, "pages read/s in {name}{tag}"),
    (lambda d: d.pages_made_young_per_s, "made young/s in {name}{tag}"),
    (lambda d: d.pages_not_made_young_per_s, "not made young/s in {name}{tag}"),
    (lambda d: d.old_sublist_residence_s, "old sublist residence s in {name}{tag}"))


def _index_cells(name: str, ps: list[Phase]) -> Row:
    """Each watched index's MB in the pool before the phase and at its minimum in it."""
    cells: Row = {}
    for ix in ps[0].indexes:
        short = ".".join(ix.split(".")[1:])
        cells[f"{short} MB before {name}"] = _med([p.indexes[ix].mb_before for p in ps])
        cells[f"{short} MB min in {name}"] = _med([p.indexes[ix].mb_min_during for p in ps])
    return cells


def _phase_cells(name: str, ps: list[Phase]) -> Row:
    """One phase's columns of a row, in order (medians over the runs' phases)."""
    concurrent = any(p.main_intervals_inside for p in ps)
    if concurrent:
        cells: Row = {f"main tps during {name}": _med([p.tps_median_inside for p in ps]),
                      f"share of {name} collapsed": _med(
                          [p.tps_collapsed_share for p in ps]),
                      f"{name} s (concurrent)": _med([p.seconds for p in ps]),
                      **_index_cells(name, ps)}
    else:
        cells = {f"{name} s (alone)": _med([p.seconds for p in ps])}
    tag = "" if concurrent else " (alone)"
    for rate, label in DIAGNOSTICS:
        cells[label.format(name=name, tag=tag)] = _med(
            [rate(p.diagnostics) if p.diagnostics else None for p in ps])
    return cells


def verdicts(runs: list[StoredRun]) -> list[str]:
    """Each run's findings as lines; a run that did not end ok has its own findings
    "not judged" (what it measured before it failed says nothing of the server)."""
    out = []
    for r in runs:
        for x in r.summary.expectations:
            cell = f"[{r.server} / {r.variant} rep {r.repetition}] "
            failed = r.status != "ok" and not (x.own.get("baseline_variant")
                                                   or x.own.get("baseline_server"))
            out.append(cell + (f"{x.name}: {NOT_JUDGED}the run {r.status}"
                               if failed else describe(x)))
    return out


def print_verdicts(runs: list[StoredRun]) -> None:
    lines = verdicts(runs)
    if lines:
        print("\nexpected findings:")
        for line in lines:
            print("  " + line)


def page_bytes(run: StoredRun) -> int:
    import json
    if run.artifacts is None:
        return 16384
    try:
        v = json.loads((Path(run.artifacts) / "variables.json").read_text())
        return int(v.get("innodb_page_size") or 16384)
    except (OSError, ValueError, TypeError):
        return 16384


def plots(store: RunReader, runs: list[StoredRun], out_dir: Path,
          watch: list[str]) -> list[Path]:
    """Per server: main tps over time (every variant on one figure, side-load windows
    shaded) and each watched index's MB in the pool. Time 0 is the main's start."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    by_server: dict[str, list[StoredRun]] = {}
    for r in runs:
        if r.status in ("ok", "failed") and r.summary.phases is not None:
            by_server.setdefault(r.server, []).append(r)
    for server, rs in by_server.items():
        panels = 1 + len(watch)
        fig, axes = plt.subplots(panels, 1, figsize=(11, 3.6 * panels), sharex=True,
                                 squeeze=False)
        colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for i, r in enumerate(rs):
            _run_lines(store, r, axes, watch, colours[i % len(colours)])
        _label_axes(axes, server, watch)
        path = out_dir / f"{file_name(server)}.png"
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written


def _run_lines(store: RunReader, r: StoredRun, axes: Any, watch: list[str], colour: str
               ) -> None:
    """One run on a server's figure: its throughput, each watched index's MB, its
    side-load windows shaded and named."""
    from ..analysis.phases import index_series, windows

    t0 = r.summary.start_s
    label = f"{r.variant} (rep {r.repetition})"
    tps = workloads.throughput(store, r.run_id)
    if tps:
        axes[0][0].plot(tps[0].t - t0, tps[0].v, color=colour, lw=0.9, label=label)
    page = page_bytes(r)
    for j, ix in enumerate(watch, start=1):
        pts = index_series(store, r.run_id, [ix])[ix]
        axes[j][0].plot([t - t0 for t, _ in pts], [v * page / 1048576 for _, v in pts],
                        color=colour, lw=1.2, label=label)
    for w in windows(store.events(r.run_id)):
        for ax in axes[:, 0]:
            ax.axvspan(w.start - t0, w.end - t0, color=colour, alpha=0.12)
        axes[0][0].text(w.start - t0, 0.98, f" {w.name}", color=colour, fontsize=8,
                        va="top", transform=axes[0][0].get_xaxis_transform())


def _label_axes(axes: Any, server: str, watch: list[str]) -> None:
    axes[0][0].set_yscale("symlog", linthresh=10)
    axes[0][0].set_ylabel(f"main workload {workloads.throughput_label()} (log)")
    axes[0][0].set_title(f"{server}: main workload, side-load windows shaded")
    for j, ix in enumerate(watch, start=1):
        axes[j][0].set_ylabel(f"{ix} MB in pool")
    axes[-1][0].set_xlabel("seconds since the main workload started")
    for ax in axes[:, 0]:
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="lower left")


def print_report(store: RunReader, run_set: str, table: Callable[[list[Row], list[str]], None],
                 plot_dir: Path | None, watch: list[str]) -> list[Path]:
    runs = store.runs(run_set=run_set)
    refresh(store, runs, watch)
    rows, cols = phase_table(runs)
    if not rows:
        print(f"run set {run_set}: no run with side-load phases")
        return []
    print(f"\nphases of run set {run_set} (medians over repetitions):")
    table(rows, cols)
    print_verdicts(runs)
    written = plots(store, runs, plot_dir, watch) if plot_dir is not None else []
    for p in written:
        print(f"plot: {p}")
    return written
