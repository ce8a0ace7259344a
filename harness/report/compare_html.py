"""A comparison as a page: per server, the metrics' verdicts, the workload's items
judged one by one (a replay's digests: every one, most slowed first, with its share of
the time) and the items whose results differ. Reads the comparisons' JSON (what
``harness compare`` saves as compare.json), nothing else."""
from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from .html import CSS, html_table

__all__ = ["write"]

_CLASS = {"worse": "bad", "better": "ok", None: "unsure"}


def write(out: dict[str, Any], folder: Path) -> Path:
    """``folder/compare.html`` for compare.json's content ``out``; its path."""
    title = f"compare, run set {out['run_set']}"
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
             f"</title><style>{CSS}</style></head><body><h1>{html.escape(title)}</h1>"]
    if "verdict" in out:  # compare.json written before the one verdict has none
        parts.append(f"<p class='{_CLASS.get(out['verdict'], '')}'>verdict: "
                     f"<b>{html.escape(out['verdict'])}</b> (decided by "
                     f"{html.escape(out['decided_by'])}; exit code {out['exit_code']})</p>")
    for c in out["comparisons"]:
        parts += _comparison(c)
    parts.append("</body></html>")
    page = folder / "compare.html"
    page.write_text("\n".join(parts))
    return page


def _comparison(c: dict[str, Any]) -> list[str]:
    verdict = c["verdict"]
    parts = [f"<h2>{html.escape(c['server'])}: {html.escape(c['candidate'])} against "
             f"{html.escape(c['baseline'])}</h2>",
             f"<p class='{_CLASS.get(verdict, '')}'>verdict: <b>{html.escape(verdict)}</b> "
             f"({len(c['runs_baseline'])} baseline and {len(c['runs_candidate'])} candidate "
             f"runs; {html.escape(c['design'])})</p>",
             *([f"<p>the fixed-size statistics on the same runs: "
                f"{html.escape(c['fixed_size']['verdict'])} (shown, not counted: the "
                "sequential rule decides)</p>"] if c.get("fixed_size") else []),
             html_table(["metric", "baseline", "candidate", "ratio", "95% CI", "p", "verdict",
                     "why"],
                    [[m["metric"], _num(m["baseline_median"]), _num(m["candidate_median"]),
                      _ratio(m["ratio"]), _ci(m["ci95"]), _num(m["p_value"]),
                      m["verdict"] or "NO VERDICT", m["why"]] for m in c["metrics"]])]
    if c.get("items"):
        parts.append(f"<h3>By item</h3><p>{html.escape(c['items_note'])}. Ratio of the "
                     "candidate's median to the baseline's (lower is faster).</p>")
        parts.append(html_table(
            ["item", "", "share of time", "baseline", "candidate", "ratio", "95% CI",
             "verdict"],
            [[x["item"][:16], x["label"][:120], f"{x['share']:.1%}",
              _num(x["baseline_median"]), _num(x["candidate_median"]), _ratio(x["ratio"]),
              _ci(x["ci95"]), x["verdict"] or "NO VERDICT"] for x in c["items"]]))
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


def _ci(ci: list[float] | tuple[float, float] | None) -> str:
    return "-" if ci is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]"
