"""The lab's history site (``harness history --html DIR``): static pages anyone can open
from a file share, offline, with no script.

One page per history (a scenario's runs of one server, variant, target and host, as
``harness regress`` reads them), one chart per metric it has: each run a point linked to
its report, the noise band of each stretch between change points (its mean, +-2 times
the history's run-to-run noise), and each change point with its size, 95% interval and
what differed in the environment between the runs either side. Under the charts the
sensitivity of each metric ("sees a step of 4.1% or more") and the change points as a
table. The index lists the histories newest first, with each metric's latest value, a
trend line of its last runs and the regressions still open (the last change of a metric
a regression).
"""
from __future__ import annotations

import hashlib
import html
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..analysis import regress
from ..analysis.moved import Moved
from ..store import RunReader, StoredRun
from .html import CSS, html_table

WIDTH, HEIGHT, PAD = 1000, 300, 48
SPARK = 30  # runs in the index's trend line


@dataclass(frozen=True)
class Point:
    run_id: str
    started_at: str
    value: float
    link: str | None  # the run's report, relative to the site; None: none written


@dataclass
class Chart:
    """One metric of one history."""

    metric: str
    higher_is_better: bool
    points: list[Point]
    changes: list[regress.Change]
    steps: list[tuple[float, float] | None]  # each change's 95% interval (after / before)
    noise: float  # relative run-to-run sd
    seen: str  # what the history can see, in words

    @property
    def open_regression(self) -> regress.Change | None:
        last = self.changes[-1] if self.changes else None
        return last if last is not None and last.regression else None


@dataclass
class History:
    key: dict[str, str]
    runs: int
    last_run: str
    charts: list[Chart]

    @property
    def title(self) -> str:
        k = self.key
        return f"{k['scenario']} on {k['server']} / {k['variant']} ({k['target']}, {k['host']})"

    @property
    def page(self) -> str:
        digest = hashlib.sha1("\0".join(self.key.values()).encode()).hexdigest()[:8]
        slug = re.sub(r"[^A-Za-z0-9._-]+", "-", f"{self.key['scenario']}-{self.key['server']}"
                      f"-{self.key['variant']}")[:80]
        return f"h-{slug}-{digest}.html"


def histories(runs: list[StoredRun], reports: Path | None, site: Path,
              store: RunReader | None = None, **kw: Any) -> list[History]:
    """Each history of ``runs`` with a chart per metric it has, newest first; a point
    links to ``reports/RUN_SET/report.html`` where that file exists. With ``store``,
    each change point says what moved per transaction across it."""
    out = []
    for key, rs in regress.histories(runs).items():
        named = dict(zip(regress.HISTORY_KEYS, key, strict=True))
        charts = [c for m in regress.METRICS
                  if (c := _chart(m, rs, reports, site, store, kw))]
        if charts:
            out.append(History(named, len(rs), rs[-1].started_at or "", charts))
    return sorted(out, key=lambda h: h.last_run, reverse=True)


def _chart(metric: str, rs: list[StoredRun], reports: Path | None, site: Path,
           store: RunReader | None, kw: dict[str, Any]) -> Chart | None:
    key, higher = regress.METRICS[metric]
    pts = [Point(r.run_id, r.started_at or "", v, _link(r, reports, site))
           for r in rs if (v := r.summary.figure(key)) is not None]
    if not pts:
        return None
    changes = regress.detect([r for r in rs if r.summary.figure(key) is not None],
                             metrics=[metric], **kw)
    if store is not None:
        regress.explain(store, rs, changes)
    values = [p.value for p in pts]
    cuts = regress.segments(len(values), [c.index for c in changes])
    steps = [regress.step_interval(values[slice(*cuts[i])], values[slice(*cuts[i + 1])])
             for i in range(len(changes))]
    step = regress.smallest_step(values, **kw)
    seen = (f"too short to see a change ({2 * kw.get('min_points', regress.MIN_POINTS)} "
            "runs needed)" if step is None else f"sees a step of {100 * step:.1f}% or more")
    return Chart(metric, higher, pts, changes, steps, regress.noise(values), seen)


def _link(r: StoredRun, reports: Path | None, site: Path) -> str | None:
    if reports is None:
        return None
    page = reports / (r.run_set or r.run_id) / "report.html"
    return os.path.relpath(page, site) if page.is_file() else None


def line(h: History) -> str:
    """A history in one line: its runs, latest values and open regressions."""
    opened = [x for c in h.charts if (x := c.open_regression)]
    return (f"{h.title}: {h.runs} runs, last {h.last_run}; "
            + "; ".join(f"{c.metric} {c.points[-1].value:.4g}" for c in h.charts)
            + "".join(f"; OPEN REGRESSION {x.metric} {x.change_pct:+.1f}% since "
                      f"{x.started_after}" for x in opened))


def write_site(found: list[History], site: Path, title: str) -> Path:
    """``site/index.html`` and a page per history; the index's path."""
    site.mkdir(parents=True, exist_ok=True)
    for h in found:
        (site / h.page).write_text(_page(h, title), encoding="utf-8")
    index = site / "index.html"
    index.write_text(_index(found, title), encoding="utf-8")
    return index


def _head(title: str) -> str:
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
            f"</title><style>{CSS}\nsvg{{background:#fff}}</style></head><body>")


def _index(found: list[History], title: str) -> str:
    rows = []
    for h in found:
        latest = "; ".join(f"{c.metric} {c.points[-1].value:.4g}" for c in h.charts)
        opened = [c.open_regression for c in h.charts if c.open_regression]
        rows.append(
            f"<tr><td><a href='{html.escape(h.page)}'>{html.escape(h.title)}</a></td>"
            f"<td>{h.runs}</td><td>{html.escape(h.last_run)}</td><td>{latest}</td>"
            f"<td>{_spark(h.charts[0])}</td><td class='{'bad' if opened else 'ok'}'>"
            + ("; ".join(f"{x.metric} {x.change_pct:+.1f}% since {x.started_after[:10]}"
                         for x in opened if x) or "none") + "</td></tr>")
    table = ("<table><tr><th>history</th><th>runs</th><th>last run</th><th>latest</th>"
             "<th>trend</th><th>open regressions</th></tr>" + "".join(rows) + "</table>")
    return (_head(title) + f"<h1>{html.escape(title)}</h1><p>{len(found)} histories, "
            "newest first. A regression is open while the last change point of its "
            "metric is one.</p>" + (table if found else "<p>No ok runs stored.</p>")
            + "</body></html>")


def _spark(c: Chart) -> str:
    vs = [p.value for p in c.points[-SPARK:]]
    lo, hi = min(vs), max(vs)
    span = (hi - lo) or 1.0
    xs = [4 + i * 112 / max(len(vs) - 1, 1) for i in range(len(vs))]
    pts = " ".join(f"{x:.1f},{26 - 22 * (v - lo) / span:.1f}" for x, v in zip(xs, vs,
                                                                             strict=True))
    return (f"<svg width='120' height='30' role='img' aria-label='{c.metric} trend'>"
            f"<polyline points='{pts}' fill='none' stroke='#36c' stroke-width='1.5'/></svg>")


def _page(h: History, title: str) -> str:
    parts = [_head(f"{h.title} - {title}"), "<p><a href='index.html'>all histories</a></p>",
             f"<h1>{html.escape(h.title)}</h1>"]
    for c in h.charts:
        parts.append(f"<h2>{html.escape(c.metric)}</h2><p>{len(c.points)} runs, "
                     f"noise {100 * c.noise:.1f}% run to run: {c.seen}.</p>")
        parts.append(_svg(c))
        parts.append(_changes(c))
    return "".join(parts) + "</body></html>"


def _changes(c: Chart) -> str:
    if not c.changes:
        return "<p>No change point.</p>"
    rows = []
    for x, ci in zip(c.changes, c.steps, strict=True):
        interval = f"[{100 * (ci[0] - 1):+.1f}%, {100 * (ci[1] - 1):+.1f}%]" if ci else "-"
        env = "; ".join(f"{k}: {a} -> {b}" for k, (a, b) in x.environment.items()) \
            or "no difference recorded"
        rows.append(["REGRESSION" if x.regression else "improvement", x.started_after,
                     f"{x.mean_before:.4g} -> {x.mean_after:.4g}", f"{x.change_pct:+.1f}%",
                     interval, f"{x.p_value:.2g}", f"{x.run_before} / {x.run_after}", env,
                     _moved(x.moved)])
    return html_table(["change", "from", "mean", "size", "95% interval", "p",
                       "runs either side", "what differed",
                       "what moved per transaction"], rows)


def _moved(moved: list[Moved]) -> str:
    """The quantities whose interval excludes no change, as compare lists them."""
    return "; ".join(
        f"{m.quantity} " + (f"x{m.ratio:.2f}" if m.ratio is not None else m.ratio_text)
        for m in moved if m.apart) or ("nothing apart from noise" if moved else "-")


@dataclass(frozen=True)
class _Frame:
    """A chart's coordinates: run i and value v to pixels."""

    n: int  # runs
    lo: float  # the value at the bottom edge
    hi: float

    def x(self, i: float) -> float:
        return PAD + (WIDTH - 2 * PAD) * (i / max(self.n - 1, 1))

    def y(self, v: float) -> float:
        return HEIGHT - PAD + (2 * PAD - HEIGHT) * (v - self.lo) / (self.hi - self.lo)


def _stretches(c: Chart) -> list[tuple[int, int, float]]:
    """[start, end) and mean of each stretch between change points."""
    vs = [p.value for p in c.points]
    return [(a, b, sum(vs[a:b]) / (b - a))
            for a, b in regress.segments(len(vs), [x.index for x in c.changes])]


def _frame(c: Chart, stretches: list[tuple[int, int, float]]) -> _Frame:
    """Room for every point and band, and 8% more above and below."""
    vs = [p.value for p in c.points]
    lo = min(*vs, *(m * (1 - 2 * c.noise) for _, _, m in stretches))
    hi = max(*vs, *(m * (1 + 2 * c.noise) for _, _, m in stretches))
    span = (hi - lo) or abs(hi) or 1.0
    return _Frame(len(vs), lo - 0.08 * span, hi + 0.08 * span)


def _svg(c: Chart) -> str:
    stretches = _stretches(c)
    f = _frame(c, stretches)
    return "".join([
        f"<svg width='{WIDTH}' height='{HEIGHT}' role='img' "
        f"aria-label='{html.escape(c.metric)} over runs'>",
        f"<text x='{PAD}' y='16' font-size='12'>{html.escape(c.metric)} "
        f"({'higher' if c.higher_is_better else 'lower'} is better)</text>",
        *(_band(f, c.noise, s) for s in stretches),
        *(_change_line(f, ch, ci) for ch, ci in zip(c.changes, c.steps, strict=True)),
        _points(f, c.points), _axes(f, c), "</svg>"])


def _band(f: _Frame, noise: float, stretch: tuple[int, int, float]) -> str:
    """A stretch's mean (dashed) and its band of +-2 noise."""
    a, b, m = stretch
    x0, x1 = f.x(a - 0.4 if a else a), f.x(b - 0.6 if b < f.n else b - 1)
    top, bottom = f.y(m * (1 + 2 * noise)), f.y(m * (1 - 2 * noise))
    return (f"<rect x='{x0:.1f}' y='{top:.1f}' width='{max(x1 - x0, 1):.1f}' "
            f"height='{max(bottom - top, 1):.1f}' fill='#36c' opacity='0.12'/>"
            f"<line x1='{x0:.1f}' x2='{x1:.1f}' y1='{f.y(m):.1f}' y2='{f.y(m):.1f}' "
            "stroke='#36c' stroke-dasharray='4 3'/>")


def _change_line(f: _Frame, ch: regress.Change, ci: tuple[float, float] | None) -> str:
    """A change point: a line between the runs either side, its size and interval."""
    cx = f.x(ch.index - 0.5)
    colour = "#a00" if ch.regression else "#060"
    size = f"{ch.change_pct:+.1f}%" + (
        f" [{100 * (ci[0] - 1):+.1f}, {100 * (ci[1] - 1):+.1f}]" if ci else "")
    return (f"<line x1='{cx:.1f}' x2='{cx:.1f}' y1='{PAD / 2}' y2='{HEIGHT - PAD}' "
            f"stroke='{colour}' stroke-width='2'/><text x='{cx + 4:.1f}' "
            f"y='{PAD / 2 + 12}' font-size='12' fill='{colour}'>{size}</text>")


def _points(f: _Frame, points: list[Point]) -> str:
    """The runs, joined by a line; each a dot with its run, time and value, linked to
    its report where there is one."""
    line = " ".join(f"{f.x(i):.1f},{f.y(p.value):.1f}" for i, p in enumerate(points))
    out = [f"<polyline points='{line}' fill='none' stroke='#888' stroke-width='1'/>"]
    for i, p in enumerate(points):
        dot = (f"<circle cx='{f.x(i):.1f}' cy='{f.y(p.value):.1f}' r='3.5' fill='#222'>"
               f"<title>{html.escape(p.run_id)} {html.escape(p.started_at)}: "
               f"{p.value:.4g}</title></circle>")
        out.append(f"<a href='{html.escape(p.link)}'>{dot}</a>" if p.link else dot)
    return "".join(out)


def _axes(f: _Frame, c: Chart) -> str:
    """Dates under the first and last runs and the change points; two values up the side."""
    out = [f"<text x='{f.x(i):.1f}' y='{HEIGHT - PAD + 16}' font-size='11' "
           f"text-anchor='middle'>{html.escape(c.points[i].started_at[:10])}</text>"
           for i in sorted({0, f.n - 1, *(ch.index for ch in c.changes)})]
    vs = [p.value for p in c.points]
    out += [f"<text x='{PAD - 4}' y='{f.y(v) + 4:.1f}' font-size='11' "
            f"text-anchor='end'>{v:.4g}</text>" for v in sorted({min(vs), max(vs)})]
    return "".join(out)
