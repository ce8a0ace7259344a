"""A counted comparison (``compare --measure instructions``) as a page: the verdict on
instructions per transaction with its interval, the counter and design, what moved by
function, and every window. Reads the comparison's JSON alone; one file, offline."""
from __future__ import annotations

import html
from typing import Any

from .html import CSS, html_table

_CLASS = {"worse": "bad", "better": "ok", "could not tell": "unsure"}


def render(out: dict[str, Any], _drawings: list[str]) -> str:
    """The page for a counted comparison's JSON ``out``."""
    title = (f"compare (instructions counted): {out['candidate']} against "
             f"{out['baseline']} on {out['server']}")
    c = out["counter"]
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
             f"</title><style>{CSS}</style></head><body><h1>{html.escape(title)}</h1>",
             f"<p class='{_CLASS.get(out['verdict'], '')}'>verdict: <b>"
             f"{html.escape(out['verdict'])}</b>{html.escape(_headline(out))}</p>",
             "<h2>How it was counted</h2><ul>" + "".join(
                 f"<li>{html.escape(x)}</li>" for x in [
                     f"counter: {c['name']} ({c['version']}), {c['threads']}; the "
                     f"hardware counter: {c['hardware']}",
                     f"design: {out['design']}; {out['events_per_window']:,} transactions "
                     f"a window of {out['test']}, 1 client thread",
                     *out["notes"]]) + "</ul>"]
    if out["moved"]:
        parts.append("<h2>What moved, by function</h2><p>Inclusive instructions a "
                     "transaction (the function and all it called), callgrind's own "
                     "costs.</p>" + html_table(
                         ["function", "baseline", "candidate", "change"],
                         [[m["function"], f"{m['baseline']:,.0f}", f"{m['candidate']:,.0f}",
                           f"{m['change']:+,.0f}"] for m in out["moved"]]))
    if out.get("classes"):
        parts.append("<h2>By transaction type</h2><p>Each type in a connection of its own; "
                     "the verdict above is the mix's (each type weighted by its share), "
                     "these at the same level.</p>" + html_table(
                         ["type", "baseline", "candidate", "ratio", "interval", "verdict"],
                         [_class_row(c) for c in out["classes"]]))
    parts.append("<h2>Windows</h2>" + html_table(
        ["#", "class", "side", "lifetime", "transactions", "instructions a transaction",
         "judged"],
        [[w["index"], w.get("cls") or "-", w["side"], w["lifetime"], w["transactions"],
          f"{w['per_tx']:,.1f}", "yes" if w["judged"] else "no (warm-up or settle)"]
         for w in out["windows"]]))
    parts.append("</body></html>")
    return "\n".join(parts)


def _headline(out: dict[str, Any]) -> str:
    if out.get("ratio") is None:
        return ""
    lo, hi = out["interval"]
    return (f": instructions per transaction x{out['ratio']:.4f} of the baseline, "
            f"interval [{lo:.4f}, {hi:.4f}] (band +-{out['band']:.2%})")


def _class_row(c: dict[str, Any]) -> list[str]:
    if c["per_tx"] is None or c["interval"] is None:
        return [c["class"], "-", "-", "-", "-", c["verdict"]]
    lo, hi = c["interval"]
    return [c["class"], f"{c['per_tx'][0]:,.0f}", f"{c['per_tx'][1]:,.0f}",
            f"x{c['ratio']:.4f}", f"[{lo:.4f}, {hi:.4f}]", c["verdict"]]
