"""A comparison as a page to attach to a change ticket: the question (the my.cnf
difference), the one verdict with its interval, the design and why, the power of the
runs, each run's headline figure with the two sides in two fixed colours, the noise,
the metrics' verdicts, the workload's items judged one by one (a replay's digests: every
one, most slowed first) and the items whose results differ, and the servers and hosts.
One file, offline, no scripts. Reads the comparison's JSON (what ``harness compare``
saves), and the drawings the caller made from the store (the differential flame graphs,
where cpu_profile ran on both sides).

Each judgement is saved under a name of its own (``compare-<UTC time>.json`` and
``.html``): judging stored runs again never overwrites an earlier verdict.
``compare.json`` and ``compare.html`` are copies of the latest."""
from __future__ import annotations

import base64
import html
import io
import json
import os
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..analysis.moved import Moved
from ..analysis.stalls import Stalls
from ..stats.interval import interval_text
from .conditions import Conditions
from .html import CSS, html_table, moved_table

__all__ = ["BASELINE_COLOUR", "CANDIDATE_COLOUR", "Saved", "render", "save"]

_CLASS = {"worse": "bad", "better": "ok", None: "unsure", "could not tell": "unsure",
          "no verdict": "unsure"}
BASELINE_COLOUR = "#1f77b4"  # blue, on every page and plot
CANDIDATE_COLOUR = "#ff7f0e"  # orange


@dataclass(frozen=True)
class Saved:
    """Where a judgement went: its own files, and the latest's copies."""

    json: Path
    html: Path
    latest_json: Path
    latest_html: Path


def save(out: dict[str, Any], folder: Path, drawings: list[str] | None = None,
         page_of: Callable[[dict[str, Any], list[str]], str] | None = None) -> Saved:
    """The judgement ``out`` as ``compare-<UTC time>.json`` and ``.html`` in ``folder``
    (a name no earlier judgement has), and as compare.json and compare.html (the
    latest, each replaced whole by a rename); ``drawings``: sections of the page the
    JSON does not hold (the differential flame graphs); ``page_of``: the page's maker
    (a counted comparison's own), else :func:`render`."""
    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps(out, indent=2)
    page = (page_of or render)(out, drawings or [])
    own = _claim(folder, datetime.now(UTC).strftime("compare-%Y%m%dT%H%M%SZ"))
    own.write_text(text)
    own_html = own.with_suffix(".html")
    own_html.write_text(page)
    latest = Saved(own, own_html, folder / "compare.json", folder / "compare.html")
    for path, content in ((latest.latest_json, text), (latest.latest_html, page)):
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_text(content)
        tmp.replace(path)
    return latest


def _claim(folder: Path, stem: str) -> Path:
    """``stem.json`` in ``folder``, or ``stem-2.json`` ..., made empty and ours (O_EXCL:
    two judgements in one second each get a file)."""
    for n in range(1, 1000):
        path = folder / (f"{stem}.json" if n == 1 else f"{stem}-{n}.json")
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
            return path
        except FileExistsError:
            continue
    raise OSError(f"{folder}: no free name for {stem}")


def render(out: dict[str, Any], drawings: list[str] | None = None) -> str:
    """The page for compare.json's content ``out``, with ``drawings`` (HTML sections)
    before the servers and hosts."""
    title = _title(out)
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
             f"</title><style>{CSS}{_SIDES_CSS}</style></head><body>"
             f"<h1>{html.escape(title)}</h1>"]
    parts += _question(out)
    if out.get("conditions"):
        parts.append("<h2>What was run</h2><ul>" + "".join(
            f"<li{' class=bad' if ln.startswith('warning') else ''}>{html.escape(ln)}</li>"
            for ln in Conditions(**out["conditions"]).lines()) + "</ul>")
    if "verdict" in out:  # compare.json written before the one verdict has none
        parts.append(f"<p class='verdict {_CLASS.get(out['verdict'], '')}'>verdict: "
                     f"<b>{html.escape(out['verdict'])}</b>{_headline(out)} (decided by "
                     f"{html.escape(out['decided_by'])}; exit code {out['exit_code']})</p>")
    if out.get("sequential"):
        parts.append(f"<p>{html.escape(_sequential(out['sequential']))}</p>")
    if out.get("notes"):
        parts.append("<h2>Design</h2><ul>" + "".join(
            f"<li>{html.escape(n)}</li>" for n in out["notes"]) + "</ul>")
    for c in out["comparisons"]:
        parts += _comparison(c)
    parts += drawings or []
    if out.get("environment"):
        parts.append("<h2>Servers and hosts</h2>" + html_table(
            ["side", "run", "server build", "host"],
            [[e["side"], e["run_id"], e["build"], e["host"]]
             for e in out["environment"]]))
    parts.append("</body></html>")
    return "\n".join(parts)


def _title(out: dict[str, Any]) -> str:
    """The two sides and the server: "compare: new.cnf against current.cnf on
    mariadb-10.11" (the run set where there is no comparison)."""
    cs = out.get("comparisons") or []
    if not cs:
        return f"compare, run set {out['run_set']}"
    servers = ", ".join(dict.fromkeys(c["server"] for c in cs))
    return f"compare: {cs[0]['candidate']} against {cs[0]['baseline']} on {servers}"


_SIDES_CSS = (f".baseline{{color:{BASELINE_COLOUR};font-weight:bold}}"
              f".candidate{{color:{CANDIDATE_COLOUR};font-weight:bold}}"
              ".verdict{font-size:1.3em}")


def _side(name: str) -> str:
    """A side's name in its colour (the markup is ours; the name is escaped)."""
    return f"<span class='{name}'>{html.escape(name)}</span>"


def _question(out: dict[str, Any]) -> list[str]:
    """What was asked: the candidate's my.cnf changes against the baseline's."""
    diff = out.get("cnf_diff")
    if diff is None:
        return []
    if not diff:
        return ["<h2>The question</h2><p>The two my.cnf files set the same options to the "
                "same values (an A/A comparison).</p>"]
    return ["<h2>The question</h2><p>What the candidate's my.cnf changes, as the server "
            "reads both files (not set: the server's default):</p>" + html_table(
                ["option", "baseline", "candidate"],
                [[d["option"], _shown(d["baseline"]), _shown(d["candidate"])]
                 for d in diff])]


def _shown(v: Any) -> str:
    return "(not set)" if v is None else str(v)


def _headline(out: dict[str, Any]) -> str:
    """The ratio and interval the verdict stands on: the sequential rule's last look, or
    the headline metric's where one comparison has them."""
    seq = out.get("sequential") or {}
    if seq.get("looks"):
        x = seq["looks"][-1]
        return html.escape(f": {seq['watch']} {_ratio(x['ratio'])} of the baseline, "
                           f"{x['level']:.1%} interval {interval_text(x['interval'])} "
                           f"(the sequential rule's look {x['k']})")
    if len(out["comparisons"]) != 1 or not out["comparisons"][0]["metrics"]:
        return ""
    metrics = out["comparisons"][0]["metrics"]
    m = _deciding(metrics, out["comparisons"][0]["verdict"])
    if m is None or m["ratio"] is None:
        return ""
    unjudged = [x["metric"] for x in metrics if x["verdict"] is None]
    return html.escape(f": {m['metric']} {_ratio(m['ratio'])} of the baseline, 95% CI "
                       f"{interval_text(m['ci95'])}" + (
                           f"; not judged: {', '.join(unjudged)}" if unjudged else ""))


def _deciding(metrics: list[dict[str, Any]], verdict: str) -> dict[str, Any] | None:
    """The metric the comparison's verdict stands on, as the text says it: the first
    whose own verdict is the comparison's (worse: a worse one, never the headline's
    interval that includes 1); else the first that has a ratio."""
    return next((m for m in metrics if m["verdict"] == verdict),
                next((m for m in metrics if m["ratio"] is not None), None))


def _sequential(seq: dict[str, Any]) -> str:
    text = (f"sequential rule: {seq.get('stopped') or seq.get('verdict')} (effect "
            f"{seq.get('effect', 0):.0%}, a look after each round)")
    if seq.get("looks"):
        text += (f"; at its last look, the power to see a change of {seq['effect']:.0%} "
                 f"was {seq['looks'][-1]['power']:.0%}")
    return text


def _comparison(c: dict[str, Any]) -> list[str]:
    verdict = c["verdict"]
    parts = [f"<h2>{html.escape(c['server'])}: {_side('candidate')} "
             f"{html.escape(c['candidate'])} against {_side('baseline')} "
             f"{html.escape(c['baseline'])}</h2>",
             f"<p class='{_CLASS.get(verdict, '')}'>verdict: <b>{html.escape(verdict)}</b> "
             f"({_measured(c)}; {html.escape(c['design'])})</p>",
             *([f"<p class='bad'>stalls: {html.escape(Stalls(**c['stalls']).text())}</p>"]
               if c.get("stalls") and (c["stalls"]["baseline"] or c["stalls"]["candidate"])
               else []),
             *([f"<p>the fixed-size statistics on the same runs: "
                f"{html.escape(c['fixed_size']['verdict'])} (shown, not counted: the "
                "sequential rule decides)</p>"] if c.get("fixed_size") else []),
             _power(c), *_plot(c),
             *([f"<p>noise: {html.escape(c['noise']['text'].split('; power: ')[0])}</p>"]
               if c.get("noise") else []),
             html_table(["metric", "baseline", "candidate", "ratio", "95% CI", "p", "verdict",
                         "why"],
                        [[m["metric"], _num(m["baseline_median"]),
                          _num(m["candidate_median"]), _ratio(m["ratio"]),
                          interval_text(m["ci95"]), _num(m["p_value"]),
                          m["verdict"] or "NO VERDICT", m["why"]]
                         for m in c["metrics"]])]
    return parts + _items(c)


def _measured(c: dict[str, Any]) -> str:
    """What each side's verdict rests on: its runs, or a switchback's windows."""
    if c["design"].startswith("switchback"):
        tps = next((m for m in c["metrics"] if m["metric"] == "tps"), None)
        pairs = len(tps["baseline"]) if tps else 0
        return f"{pairs} window pairs of one run"
    n, m = len(c["runs_baseline"]), len(c["runs_candidate"])
    return f"{n} baseline and {m} candidate run" + ("" if n == m == 1 else "s")


def _reach(c: dict[str, Any]) -> str:
    """The smallest change each metric's interval could tell from none."""
    told = [f"{html.escape(m['metric'])} {m['reach']:.1%}" for m in c["metrics"]
            if m.get("reach") is not None]
    return ("<p class='power'>reach: the smallest change each interval could tell from "
            f"none: {', '.join(told)}; a smaller one could hide in it.</p>") if told else ""


def _power(c: dict[str, Any]) -> str:
    """What the runs could see: the change called about as often as the noise says."""
    noise = c.get("noise") or {}
    if noise.get("detectable") is None:
        return _reach(c) or ("<p class='power'>reach: not known (no metric has an "
                             "interval)</p>")
    return (f"<p class='power'>power: with {noise['runs_a_side']} runs a side, a change of "
            f"<b>{noise['detectable']:.1%}</b> in {html.escape(noise['metric'])} is called "
            f"about {noise['detectable_power']:.0%} of the time, a smaller one less often: "
            "no significant difference is not proof of no change.</p>" + _reach(c))


def _plot(c: dict[str, Any]) -> list[str]:
    """The headline metric's value per run (or per window), in time order, each side in
    its colour, with each side's median: an embedded PNG."""
    if not c["metrics"]:
        return []
    m = c["metrics"][0]
    base, cand = m.get("baseline") or [], m.get("candidate") or []
    if not (base and cand):
        return []
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = _positions(c, len(base), len(cand))
    fig, ax = plt.subplots(figsize=(8, 3))
    for name, vals, x, colour, mark in (("baseline", base, xs[0], BASELINE_COLOUR, "o"),
                                        ("candidate", cand, xs[1], CANDIDATE_COLOUR, "s")):
        ax.scatter(x, vals, color=colour, marker=mark, label=name, zorder=3)
        ax.axhline(statistics.median(vals), color=colour, lw=1, ls="--")
    unit = "run" if xs[2] else "window"
    ax.set_xlabel(f"{unit}, in the order they ran" if xs[2] else "window, per side")
    ax.set_ylabel(m["metric"])
    ax.legend(loc="best")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    data = base64.b64encode(buf.getvalue()).decode()
    caption = f"{m['metric']} per {unit}: baseline blue, candidate orange, dashed: medians"
    return [f"<figure><img alt='{html.escape(caption)}' src='data:image/png;base64,{data}'>"
            f"<figcaption>{html.escape(caption)}</figcaption></figure>"]


def _positions(c: dict[str, Any], nb: int, nc: int
               ) -> tuple[list[int], list[int], bool]:
    """x of each value: the run's place in time (run ids sort by start) when there is a
    value per run, else its index on its side (a switchback's windows)."""
    runs_b, runs_c = c["runs_baseline"], c["runs_candidate"]
    if len(runs_b) == nb and len(runs_c) == nc:
        order = {r: i + 1 for i, r in enumerate(sorted([*runs_b, *runs_c]))}
        return [order[r] for r in runs_b], [order[r] for r in runs_c], True
    return list(range(1, nb + 1)), list(range(1, nc + 1)), False


def _items(c: dict[str, Any]) -> list[str]:
    parts = []
    if c.get("items"):
        parts.append(f"<h3>By item</h3><p>{html.escape(c['items_note'])}. Ratio of the "
                     "candidate's median to the baseline's (lower is faster).</p>")
        parts.append(html_table(
            ["item", "", "share of time", "baseline", "candidate", "ratio", "95% CI",
             "verdict"],
            [[x["item"][:16], x["label"][:120], f"{x['share']:.1%}",
              _num(x["baseline_median"]), _num(x["candidate_median"]), _ratio(x["ratio"]),
              interval_text(x["ci95"]), x["verdict"] or "NO VERDICT"] for x in c["items"]]))
    if c.get("moved"):
        parts.append("<h3>What moved per transaction</h3><p>Each quantity over a run's "
                     "measured part divided by its transactions; the sides' medians, their "
                     "ratio and its 95% interval. Those whose interval excludes 1 first, "
                     "then by size.</p>")
        parts.append(moved_table([Moved.from_json(m) for m in c["moved"]]))
    if c.get("results_note"):
        parts.append(f"<h3>Results</h3><p>{html.escape(c['results_note'])}.</p>")
        if c["results_differ"]:
            parts.append(html_table(["item", "", "a statement whose results differ"],
                                    [[x["item"][:16], x["label"][:120],
                                      x["example"] or "(none in the sample)"]
                                     for x in c["results_differ"]]))
    return parts


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}" if abs(x) >= 100 else f"{x:.3g}"


def _ratio(x: float | None) -> str:
    return "-" if x is None else f"x{x:.3f}"
