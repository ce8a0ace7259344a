"""``harness report ... -o DIR``: PNG plots and one self-contained HTML file (the plots
embedded as data URIs: it opens offline, mails as one file).

Every time axis is seconds since the main workload started, so runs of different
servers and variants line up; each run keeps one colour on every panel. Phase windows
(warmup, side loads) are shaded.
"""
from __future__ import annotations

import base64
import html
import statistics
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

from .. import workloads
from ..analysis import upgrade as upgrade_verdicts
from ..analysis.ab_verdict import bootstrap_median_ci
from ..analysis.figures import headline_of
from ..analysis.moved import Moved
from ..analysis.oncpu import folded_texts
from ..analysis.phases import describe, windows
from ..collectors import REGISTRY
from ..collectors.base import MB, Line, Panel
from ..stats.interval import interval_text
from ..stats.verdict import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED
from ..store import RunReader, StoredRun
from . import findings_figure, flamegraph, upgrade
from .files import file_name
from .phase_report import page_bytes
from .text import host_line

# Every collector's panels, in the registry's order (each collector declares its own).
PANELS = tuple(p for c in REGISTRY.values() for p in c.panels)
FOLDED = {a: how for c in REGISTRY.values() for a, how in c.flame_graphs.items()}
MARKS = {kind: label for c in REGISTRY.values() for kind, label in c.marks.items()}
OUTCOME_CLASS = {REPRODUCED: "ok", NOT_REPRODUCED: "bad", INCONCLUSIVE: "unsure"}
INDEX_METRIC = "mysql_info_schema_innodb_buffer_page_index_pages"
STYLE: Any = {"figure.dpi": 100, "font.size": 9, "axes.grid": True, "grid.alpha": 0.3,
         "axes.spines.top": False, "axes.spines.right": False, "legend.fontsize": 7,
         "legend.frameon": False}


def _points(store: RunReader, run_id: str, line: Line) -> tuple[list[float], list[float]]:
    found = [s for s in store.series(run_id, source=line.source, metric=line.metric)
             if all(s.labels.get(k) == v for k, v in line.labels)]
    if not found:
        return [], []
    s = found[0]
    t, v = cast(list[float], s.t.tolist()), cast(list[float], s.v.tolist())
    if line.rate:
        pairs = [((t[i] + t[i - 1]) / 2, (v[i] - v[i - 1]) / (t[i] - t[i - 1]))
                 for i in range(1, len(t)) if t[i] > t[i - 1]]
        t, v = [p[0] for p in pairs], [p[1] for p in pairs]
    return t, [x * line.scale for x in v]


def lines_drawn(store: RunReader, run_id: str, line: Line) -> list[Line]:
    """The lines ``line`` stands for in one run: itself, or with ``top`` one line per
    value of its label, the ones that grew most over the run (waits: most time)."""
    if line.top is None:
        return [line]
    label, n = line.top
    grew = sorted(((s.v[-1] - s.v[0], s.labels.get(label, "")) for s in store.series(
        run_id, source=line.source, metric=line.metric)
        if len(s.v) > 1 and not s.labels.get(label, "").startswith(line.skip)),
        reverse=True)
    return [replace(line, top=None, label=value, labels=((label, value),))
            for growth, value in grew[:n] if growth > 0]


def _label(r: StoredRun) -> str:
    return f"{r.server} / {r.variant} #{r.repetition}"


def _t0(r: StoredRun) -> float:
    return r.summary.start_s


def _shade(ax: Any, wins: list[Any], r: StoredRun, colour: str,
           named: set[str] | None = None) -> None:
    """Shade the run's phase windows lightly in its colour; name each phase once."""
    t0 = _t0(r)
    for w in wins:
        ax.axvspan(w.start - t0, w.end - t0, color=colour, alpha=0.03 if w.name == "warmup"
                   else 0.07, lw=0)
        if named is not None and w.name not in named:
            named.add(w.name)
            ax.text(w.start - t0, 1.0, f" {w.name}", fontsize=7, va="bottom",
                    transform=ax.get_xaxis_transform())


def plot_all(store: RunReader, runs: list[StoredRun], out: Path,
             baseline_server: str | None = None) -> list[tuple[str, Path]]:
    """Every figure of the report as (caption, PNG path)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    figs: list[tuple[str, Path]] = []
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    colour = {r.run_id: colours[i % len(colours)] for i, r in enumerate(runs)}
    with plt.rc_context(STYLE):
        figs.append(("Throughput and p95 latency over time",
                     _over_time(plt, store, runs, colour, out / "throughput.png")))
        for plugin, mine in workloads.runs_by_plugin(runs):
            figs += [(caption, _save(fig, out / name))
                     for caption, name, fig in plugin.html(plt, store, mine, colour)]
        if baseline_server:
            path = upgrade.figure(store, runs, baseline_server, out / "per_threads.png")
            if path is not None:
                figs.append((f"Throughput per thread count per server (against "
                             f"{baseline_server})", path))
        figs += _panel_figures(plt, _panels(store, runs), colour, out)
        path = findings_figure.figure(plt, runs, out / "findings.png")
        if path is not None:
            figs.append(("Expected findings: each value with its 95% interval against the "
                         "range expected (shaded); green reproduced, red not, amber "
                         "inconclusive", path))
        # Buffer pool contents per index, a stacked area per run.
        for r in runs:
            path = _pool_stack(plt, store, r, out / f"pool-{file_name(r.run_id)}.png")
            if path is not None:
                figs.append((f"Buffer pool per index: {_label(r)}", path))
    return figs


def _over_time(plt: Any, store: RunReader, runs: list[StoredRun], colour: dict[str, str],
               path: Path) -> Path:
    """Each run's throughput and latency over time, its warmup and side loads shaded,
    each event a collector marks (its ``marks``: a stall whose stacks were taken)
    marked."""
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(11, 6.5), sharex=True)
    named: set[str] = set()
    for r in runs:
        t0, c = _t0(r), colour[r.run_id]
        events = store.events(r.run_id)
        wins = windows(events, skip=())
        tps = workloads.throughput(store, r.run_id)
        lat = workloads.latency(store, r.run_id)
        if tps:
            a1.plot(tps[0].t - t0, tps[0].v, color=c, lw=0.9, label=_label(r))
        if lat:
            a2.plot(lat[0].t - t0, lat[0].v, color=c, lw=0.9, label=_label(r))
        _shade(a1, wins, r, c, named)
        _shade(a2, wins, r, c)
        for e in (e for e in events if e.kind in MARKS):
            a1.axvline(e.t - t0, color=c, ls=":", lw=1.2)
            a1.text(e.t - t0, 0.95, f" {MARKS[e.kind]}", color=c, fontsize=7,
                    va="top", transform=a1.get_xaxis_transform())
    a1.set_ylabel(workloads.throughput_label())
    a2.set_ylabel("p95 latency (ms)")
    a2.set_yscale("log")
    a2.set_xlabel("seconds since the main workload started (shaded: warmup, side loads)")
    a1.legend(loc="lower left", ncol=2)
    return _save(fig, path)


def _panels(store: RunReader, runs: list[StoredRun]) -> list[tuple[Any, list[Any]]]:
    """The InnoDB / OS panels any run has data for; one whose every line stays flat
    (no swap, an unused change buffer) says nothing and is left out."""
    panels = []
    for p in PANELS:
        data = []
        for r in runs:
            for line in (x for ln in p.lines for x in lines_drawn(store, r.run_id, ln)):
                t, v = _points(store, r.run_id, line)
                if t:
                    data.append((r, line, t, v))
        if data and any(max(v) != min(v) for _, _, _, v in data):
            panels.append((p, data))
    return panels


def _panel_figures(plt: Any, panels: list[tuple[Any, list[Any]]], colour: dict[str, str],
                   out: Path) -> list[tuple[str, Path]]:
    """The collectors' panels: the metrics in one figure, each ranked panel in its own."""
    figs = []
    flat = [x for x in panels if not _ranked(x[0])]
    if flat:
        figs.append(("InnoDB and OS metrics (each run in its colour of the throughput "
                     "figure)", _metrics(plt, flat, colour, out / "metrics.png")))
    for p, data in (x for x in panels if _ranked(x[0])):
        figs.append((f"{p.title[0].upper()}{p.title[1:]}: each run's own top, one row "
                     "a run (a line in the same colour in every row)",
                     _per_run(plt, p, data, out / f"{p.lines[0].metric}.png")))
    return figs


def _ranked(p: Panel) -> bool:
    """A panel of each run's top lines by a label (wait instruments): drawn a row a run."""
    return any(ln.top for ln in p.lines)


def _metrics(plt: Any, panels: list[tuple[Any, list[Any]]], colour: dict[str, str],
             path: Path) -> Path:
    """One panel per metric: the run told by its colour, the line by its style."""
    from matplotlib.lines import Line2D

    fig, axes = plt.subplots(len(panels), 1, figsize=(11, 2.6 * len(panels)),
                             sharex=True, squeeze=False)
    styles = ["-", "--", ":"]
    for ax, (p, data) in zip(axes[:, 0], panels, strict=True):
        for r, line, t, v in data:
            ls = styles[p.lines.index(line) % len(styles)]
            ax.plot([x - _t0(r) for x in t], v, color=colour[r.run_id], lw=0.9,
                    ls=ls, label=f"{_label(r)} {line.label}".strip())
        ax.set_title(p.title, loc="left")
        if len(p.lines) > 1:
            ax.legend(handles=[Line2D([], [], color="k", lw=0.9, ls=styles[i],
                                      label=ln.label) for i, ln in enumerate(p.lines)],
                      loc="upper right", ncol=len(p.lines))
    axes[-1][0].set_xlabel("seconds since the main workload started")
    return _save(fig, path)


def _per_run(plt: Any, p: Panel, data: list[Any], path: Path) -> Path:
    """A ranked panel, one row a run on one scale (the post's Mutex Waits per version):
    each run's top lines, an instrument in the same colour in every row."""
    names = list(dict.fromkeys(line.label for _, line, _, _ in data))
    runs = list(dict.fromkeys(r.run_id for r, _, _, _ in data))
    fig, axes = plt.subplots(len(runs), 1, figsize=(11, 2.3 * len(runs) + 0.6),
                             sharex=True, sharey=True, squeeze=False)
    for ax, run_id in zip(axes[:, 0], runs, strict=True):
        mine = [d for d in data if d[0].run_id == run_id]
        for r, line, t, v in mine:
            ax.plot([x - _t0(r) for x in t], v, lw=0.9,
                    color=f"C{names.index(line.label) % 10}", label=line.label)
        ax.set_title(_label(mine[0][0]), loc="left", fontsize=9)
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=6)
    fig.suptitle(p.title, x=0.01, ha="left", fontsize=10)
    axes[-1][0].set_xlabel("seconds since the main workload started")
    return _save(fig, path)


def _save(fig: Any, path: Path) -> Path:
    import matplotlib.pyplot as plt
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def _largest(named: dict[str, list[float]], top: int, n: int
             ) -> tuple[list[list[float]], list[str]]:
    """The ``top`` largest stacks by their peak, the rest summed as one."""
    ranked = sorted(named, key=lambda k: -max(named[k]))
    keep, rest = ranked[:top], ranked[top:]
    stacks, labels = [named[k] for k in keep], list(keep)
    if rest:
        stacks.append([sum(named[k][i] for k in rest) for i in range(n)])
        labels.append(f"{len(rest)} others")
    return stacks, labels


def _pool_stack(plt: Any, store: RunReader, r: StoredRun, path: Path, top: int = 6
                ) -> Path | None:
    found = store.series(r.run_id, source="buffer_pool_index", metric=INDEX_METRIC)
    if not found:
        return None
    page = float(page_bytes(r))
    times: list[float] = sorted({float(t) for s in found for t in s.t})
    named = {}
    for s in found:
        name = ".".join(x for x in (s.labels.get("schema"), s.labels.get("name"),
                                    s.labels.get("index")) if x) or "(other)"
        at = dict(s.points())
        named[name] = [at.get(t, 0.0) * page / MB for t in times]
    stacks, labels = _largest(named, top, len(times))
    fig, ax = plt.subplots(figsize=(11, 3.4))
    ax.stackplot([t - _t0(r) for t in times], stacks, labels=labels, alpha=0.85)
    _shade(ax, windows(store.events(r.run_id), skip=()), r, "grey")
    ax.set_ylabel("MB in the buffer pool")
    ax.set_xlabel("seconds since the main workload started")
    ax.legend(loc="upper left", ncol=3)
    return _save(fig, path)




def comparison_rows(runs: list[StoredRun]) -> list[dict[str, Any]]:
    """Per server and variant: runs, the median of each run's headline figure (tps,
    rows/s, SSB warm flight seconds) with a bootstrap 95% interval of that median
    across repetitions, median p95."""
    groups: dict[tuple[str, str], list[StoredRun]] = {}
    for r in runs:
        if r.status == "ok":
            groups.setdefault((r.server, r.variant), []).append(r)
    rows = []
    for (server, variant), rs in sorted(groups.items()):
        fig = headline_of(rs[0].summary)
        key, name = fig.key, fig.label
        tps = [v for r in rs if (v := r.summary.figure(key)) is not None]
        if not tps:
            continue
        p95 = [v for r in rs if (v := r.summary.figure("latency_p95_ms")) is not None]
        ci = bootstrap_median_ci(tps) if len(tps) >= 2 else None
        rows.append({"server": server, "variant": variant, "runs": len(rs), "figure": name,
                     "tps_median": statistics.median(tps), "tps_ci95": ci,
                     "p95_ms_median": statistics.median(p95) if p95 else None})
    return rows


def _or_dash(v: float | None) -> Any:
    return "-" if v is None else v


def html_table(head: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    def cell(x: Any) -> str:
        if isinstance(x, float):
            x = f"{x:.1f}" if abs(x) >= 100 else f"{x:.3g}"
        return f"<td>{html.escape(str(x))}</td>"
    return ("<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"
            + "".join("<tr>" + "".join(cell(x) for x in r) + "</tr>" for r in rows)
            + "</table>")


def moved_table(moved: Sequence[Moved]) -> str:
    """What moved per transaction (analysis/moved.py) as a table."""
    return html_table(
        ["quantity", "baseline", "candidate", "ratio", "95% CI", ""],
        [[x.quantity, f"{x.baseline:.4g}", f"{x.candidate:.4g}",
          "-" if x.ratio is None else f"x{x.ratio:.3f}", interval_text(x.ci95),
          "" if x.apart else "within noise"] for x in moved])


CSS = """body{font-family:sans-serif;max-width:1150px;margin:1em auto;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:13px}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}th{background:#f3f3f3}
img{max-width:100%;border:1px solid #eee}.ok{color:#060}.bad{color:#a00}.unsure{color:#b60}
code{background:#f6f6f6;padding:0 3px}"""


def write(store: RunReader, runs: list[StoredRun], out: Path, title: str,
          baseline_server: str | None = None) -> Path:
    """Plots under ``out`` and ``out/report.html`` with them embedded; its path. With
    ``baseline_server`` (an upgrade), the verdicts per thread count against it too."""
    t_start = time.monotonic()
    figs = plot_all(store, runs, out, baseline_server)
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>"
             f"{html.escape(title)}</title><style>{CSS}</style></head><body>",
             f"<h1>{html.escape(title)}</h1>"]
    parts.append("<h2>Runs</h2>" + html_table(
        ["run", "scenario", "server", "version", "variant", "rep", "target", "host", "status",
         "figure", "value", "p95 ms"],
        [[r.run_id, r.scenario, r.server, r.version, r.variant,
          r.repetition, r.target, r.host, r.status,
          headline_of(r.summary).label,
          _or_dash(r.summary.figure(headline_of(r.summary).key)),
          _or_dash(r.summary.figure("latency_p95_ms"))] for r in runs]))
    rows = comparison_rows(runs)
    parts.append("<h2>Servers and variants</h2><p>Median of the runs' headline figure (tps, "
                 "insert rows/s or SSB warm flight seconds), with a bootstrap 95% interval of "
                 "that median across repetitions.</p>" + html_table(
                     ["server", "variant", "ok runs", "figure", "median", "95% CI", "p95 ms"],
                     [[x["server"], x["variant"], x["runs"], x["figure"], x["tps_median"],
                       "-" if x["tps_ci95"] is None else
                       f"[{x['tps_ci95'][0]:.1f}, {x['tps_ci95'][1]:.1f}]",
                       x["p95_ms_median"] if x["p95_ms_median"] is not None else "-"]
                      for x in rows]))
    if baseline_server:
        parts.append(_upgrade_section(store, runs, baseline_server))
    findings = [x for xs in findings_figure.verdict_rows(runs).values() for x in xs]
    if findings:
        items = "".join(
            f"<li class='{OUTCOME_CLASS[e.outcome]}'>"
            f"{html.escape(label)}: {html.escape(describe(e))}</li>" for label, e in findings)
        parts.append("<h2>Expected findings</h2><p>Reproduced when the finding's 95% "
                     "interval lies within the range expected, not reproduced when it lies "
                     "outside, inconclusive when it straddles a bound.</p>"
                     f"<ul>{items}</ul>")
    for caption, path in figs:
        data = base64.b64encode(path.read_bytes()).decode()
        parts.append(f"<h2>{html.escape(caption)}</h2><img alt='{html.escape(caption)}' "
                     f"src='data:image/png;base64,{data}'>")
    parts += _flame_graphs(store, runs)
    parts.append("<h2>Environment</h2>" + _environment(runs))
    parts.append(f"<p><small>harness report, {len(runs)} run(s), rendered in "
                 f"{time.monotonic() - t_start:.1f} s</small></p></body></html>")
    page = out / "report.html"
    page.write_text("\n".join(parts))
    return page


def _flame_graphs(store: RunReader, runs: list[StoredRun]) -> list[str]:
    """The folded stacks a collector wrote (its ``flame_graphs``) of each server and
    variant, from its first run that has them; hover a frame for its name and share."""
    out, seen = [], set()
    for r, name in ((r, name) for r in runs for name in FOLDED):
        cell = (r.server, r.variant, name)
        folded = None if cell in seen else store.artifact(r.run_id, name)
        if not folded:
            continue
        seen.add(cell)
        how = FOLDED[name]
        drawing = flamegraph.svg(folded.decode(errors="replace"),
                                 f"{how.heading}: {_label(r)} ({r.run_id})")
        if drawing:
            out.append(f"<h2>{html.escape(how.heading)}: {html.escape(_label(r))}</h2>"
                       f"<p>{html.escape(how.about)} A frame's width is its share of the "
                       "samples, its callers below it. Hover a frame for its name.</p>"
                       f"{drawing}")
    return out


def flame_graph_diffs(store: RunReader, comparisons: list[Any]) -> list[str]:
    """For the compare page: each comparison's differential flame graph (the folded
    stacks of all the candidate's runs against all the baseline's), where both sides
    have them; none for a switchback (one run is both sides)."""
    out = []
    for c, name in ((c, name) for c in comparisons for name, how in FOLDED.items()
                    if how.differential):
        if set(c.runs_baseline) == set(c.runs_candidate):
            continue
        base, cand = (_folded(store, ids, name) for ids in (c.runs_baseline,
                                                            c.runs_candidate))
        out += _flame_diff(f" on {c.server}: {c.candidate} against {c.baseline}", base, cand)
    return out


def _flame_diff(which: str, base: str, cand: str) -> list[str]:
    """The candidate's folded stacks drawn against the baseline's, under "Where mysqld's
    CPU moved" and ``which`` (" on SERVER: ...", ": SERVER against ..."); none where a
    side has no stacks."""
    drawing = flamegraph.diff_svg(base, cand, f"mysqld on CPU{which}") \
        if base and cand else ""
    if not drawing:
        return []
    return [f"<h2>Where mysqld's CPU moved{html.escape(which)}</h2><p>The candidate's "
            "flame graph (perf samples of mysqld's stacks over every run's measured "
            "part), each frame red where its share of the samples grew from the "
            "baseline's, blue where it shrank, the stronger the more; frames only the "
            "baseline had are not drawn. Hover a frame for both shares.</p>" + drawing]


def _cpu_functions(store: RunReader, runs: list[StoredRun], baseline: str) -> str:
    """Where each server's CPU per transaction went against ``baseline``'s, by function
    (report/upgrade.py words it)."""
    return "".join(
        f"<h3>{html.escape(c.workload)}: {html.escape(upgrade.cpu_heading(c, baseline))}"
        "</h3>" + html_table(upgrade.CPU_COLUMNS, [list(r.values()) for r in upgrade.cpu_rows(c)])
        for c in upgrade.cpu_functions(store, runs, baseline))


def _folded(store: RunReader, run_ids: list[str], name: str) -> str:
    """The folded stacks of every run in ``run_ids`` together (counts add up)."""
    texts = folded_texts(store, run_ids, name)
    return "\n".join(texts) if len(texts) == len(run_ids) else ""


def _upgrade_section(store: RunReader, runs: list[StoredRun], baseline: str) -> str:
    rows = upgrade_verdicts.verdicts(store, runs, baseline)
    seconds = any(r.interval == upgrade_verdicts.SECONDS for r in rows)
    out = (f"<h2>Against {html.escape(baseline)}, per thread count</h2><p>Median of the "
           f"runs' median tps; {upgrade.INTERVAL_TEXT}; faster or slower when it excludes 1 "
           f"by at least {upgrade_verdicts.NOISE:.0%}."
           + (f" Note: {html.escape(upgrade.SECONDS_TEXT)}." if seconds else "") + "</p>"
           + html_table(
               ["workload", "threads", "server", "runs", "tps", "ratio", "95% CI",
                "verdict"],
               [[r.workload, r.threads, r.server, r.runs, r.tps,
                 "-" if r.ratio is None else f"x{r.ratio:.3f}",
                 interval_text(r.ci95), r.text()]
                for r in rows]))
    for m in upgrade_verdicts.moved(store, runs, baseline):
        out += (f"<h3>What moved per transaction: {html.escape(m.workload)}, "
                f"{html.escape(m.server)} against {html.escape(baseline)}</h3><p>"
                f"{html.escape(upgrade.MOVED_TEXT)}; baseline {html.escape(baseline)}, "
                f"candidate {html.escape(m.server)}.</p>" + moved_table(m.moved))
    out += _cpu_functions(store, runs, baseline)
    servers, table = upgrade_verdicts.fingerprint_table(runs)
    if table:
        diffs = upgrade_verdicts.result_differences(runs, baseline)
        out += (f"<h2>Result fingerprints ({len(diffs)} differ from "
                 f"{html.escape(baseline)})</h2>" + html_table(
                     ["query", *servers], [[r["query"], *[r[s] for s in servers]]
                                           for r in table]))
    return out


def _environment(runs: list[StoredRun]) -> str:
    """Per run: the server build, the options the scenario set, host and tools."""
    rows = []
    for r in runs:
        d = r.details
        host = d.host or {}
        opts = ", ".join(f"{k}={v}" for k, v in sorted((d.options or {}).items()))
        rows.append([r.run_id, d.version_string or r.version, opts or "(none)",
                     host_line(host),
                     f"{host.get('sysbench', '')}, python {host.get('python', '')}, "
                     f"harness {host.get('harness', '')}"])
    return html_table(["run", "server build", "options set by the scenario (non-default)",
                   "host", "tools"], rows)
