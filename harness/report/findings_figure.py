"""The expected findings drawn: one panel per finding, the range it expects shaded, and
each verdict's value with its 95% interval, coloured by outcome (reproduced, not
reproduced, inconclusive), so a reader sees how far from its bound each one fell."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..stats.verdict import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED
from ..store import Finding, StoredRun

COLOUR = {REPRODUCED: "#1a7f37", NOT_REPRODUCED: "#b00020", INCONCLUSIVE: "#c77700"}


def verdict_rows(runs: list[StoredRun]) -> dict[str, list[tuple[str, Finding]]]:
    """{finding name: [(label, verdict)]}; a run-set verdict stored with each of its runs
    is drawn once."""
    out: dict[str, list[tuple[str, Finding]]] = {}
    seen = set()
    for r in runs:
        for x in r.summary.expectations:
            key = (x.name, x.server, x.variant, x.value, str(x.ci95), x.runs, x.pooled)
            if key in seen:
                continue
            seen.add(key)
            label = f"{x.server} / {x.variant}" + (
                f", {x.runs} runs pooled" if x.pooled else
                "" if x.own.get("baseline_variant") or x.own.get("baseline_server") else
                f" rep {r.repetition}")
            out.setdefault(x.name, []).append((label, x))
    return out


def figure(plt: Any, runs: list[StoredRun], path: Path) -> Path | None:
    rows = verdict_rows(runs)
    if not rows:
        return None
    tall = 0.6 + sum(0.8 + 0.3 * len(v) for v in rows.values())
    fig, axes = plt.subplots(len(rows), 1, figsize=(11, max(2.2, tall)), squeeze=False)
    for ax, (name, found) in zip(axes[:, 0], rows.items(), strict=True):
        _panel(ax, name, found)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def _panel(ax: Any, name: str, found: list[tuple[str, Finding]]) -> None:
    first = found[0][1]
    lo, hi = _extent(found)
    _bounds(ax, first.min, first.max, lo, hi)
    for i, (_, x) in enumerate(found):
        if x.value is None:
            continue
        c = COLOUR[x.outcome]
        if x.ci95:
            ax.plot(x.ci95, [i, i], color=c, lw=2.2, solid_capstyle="butt")
        ax.plot([x.value], [i], "o", color=c, ms=5)
    ax.set_yticks(range(len(found)), [label for label, _ in found])
    ax.set_ylim(len(found) - 0.5, -0.5)
    ax.grid(axis="y", visible=False)
    ax.set_title(name, fontsize=8, loc="left")


def _extent(found: list[tuple[str, Finding]]) -> tuple[float, float]:
    """The x range a panel shows: every value, interval and bound, padded."""
    first = found[0][1]
    xs = [v for _, x in found for v in (x.value, *(x.ci95 or ()))
          if v is not None] + [b for b in (first.min, first.max) if b is not None]
    lo, hi = min(xs), max(xs)
    pad = (hi - lo) * 0.15 or abs(hi) * 0.1 or 0.1
    return lo - pad, hi + pad


def _bounds(ax: Any, low: float | None, high: float | None, lo: float, hi: float) -> None:
    """The expected range shaded (to the panel's edge where a side is open), its
    bounds dashed."""
    ax.set_xlim(lo, hi)
    ax.axvspan(low if low is not None else lo, high if high is not None else hi,
               color="#1a7f37", alpha=0.08, lw=0)
    for b in (low, high):
        if b is not None:
            ax.axvline(b, color="#1a7f37", lw=0.8, ls="--")
