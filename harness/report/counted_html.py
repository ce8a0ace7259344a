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
    parts.append("<h2>Windows</h2>" + html_table(
        ["#", "side", "lifetime", "transactions", "instructions a transaction", "judged"],
        [[w["index"], w["side"], w["lifetime"], w["transactions"], f"{w['per_tx']:,.1f}",
          "yes" if w["judged"] else "no (warm-up or settle)"] for w in out["windows"]]))
    parts.append("</body></html>")
    return "\n".join(parts)


def _headline(out: dict[str, Any]) -> str:
    if out.get("ratio") is None:
        return ""
    lo, hi = out["interval"]
    return (f": instructions per transaction x{out['ratio']:.4f} of the baseline, "
            f"interval [{lo:.4f}, {hi:.4f}] (band +-{out['band']:.2%})")
