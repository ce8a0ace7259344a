"""Compare item by item, where a workload's run has items of its own (a replay's query
digests): which got slower, which faster, and whether that is more than chance.

Each item is judged like a headline metric (analysis/ab_verdict.py's ``judge``: the ratio
of the candidate's median to the baseline's over the runs, its bootstrap interval, a
Mann-Whitney test and the noise threshold), on the value the plugin gives it (a digest's
mean milliseconds a statement: lower is better). With k items judged at once, chance
alone would call some of them changed, so each is judged at alpha / k (Bonferroni). An
exact Mann-Whitney test on n runs a side cannot go below 2 / C(2n, n): with too few runs
no item can be decided, and the note says how many it takes.

Where the plugin keeps its items' results as checksums, the items whose results differ
between the sides are named, with a statement that shows it when the sample holds one.
An item whose checksum differs between runs of one side is not deterministic (NOW(),
RAND(), a LIMIT without ORDER BY, writes racing each other): it is counted, not judged.
"""
from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeVar

from ..jsonvalue import JsonDict
from ..store import RunSummary, StoredRun
from .ab_verdict import Limits, Metric, MetricVerdict, judge

if TYPE_CHECKING:
    from ..workloads.base import ItemResults, WorkloadPlugin

__all__ = ["ItemVerdict", "ResultsDiffer", "item_verdicts", "result_differences",
           "runs_needed"]

T = TypeVar("T")
Timed = tuple[str, float, float]  # an item in one run: (label, value, share of the time)


@dataclass(frozen=True)
class ItemVerdict:
    """One item judged as a metric is (lower is better), with its label and its median
    share of a baseline run's time."""

    item: str
    label: str
    share: float
    judged: MetricVerdict

    @property
    def ratio(self) -> float | None:
        return self.judged.ratio

    def to_json(self) -> JsonDict:
        return {"item": self.item, "label": self.label, "share": self.share,
                **self.judged.to_json()}


@dataclass(frozen=True)
class ResultsDiffer:
    """An item whose results differ between the sides, with a sampled statement whose
    own results do (None: none in the sample)."""

    item: str
    label: str
    example: str | None

    def to_json(self) -> JsonDict:
        return {"item": self.item, "label": self.label, "example": self.example}


def runs_needed(alpha: float) -> int:
    """The fewest runs a side with which an exact two-sided Mann-Whitney test can reach
    ``alpha`` (its smallest p-value is 2 / C(2n, n))."""
    n = 2
    while 2 / math.comb(2 * n, n) >= alpha:
        n += 1
    return n


def _plugin(base: list[StoredRun], cand: list[StoredRun]
            ) -> WorkloadPlugin[Any, Any] | None:
    """The workload's plugin; None when either side is empty or it has no plugin."""
    from ..workloads import of_run

    return of_run(base[0]) if base and cand else None


def _per_run(base: list[StoredRun], cand: list[StoredRun],
             read: Callable[[RunSummary], dict[str, T]]) -> list[list[dict[str, T]]]:
    """What ``read`` (the plugin's items or results) gives of each run of each side."""
    return [[read(r.summary) for r in side] for side in (base, cand)]


def item_verdicts(base: list[StoredRun], cand: list[StoredRun], limits: Limits
                  ) -> tuple[list[ItemVerdict], str]:
    """Each item found in enough runs of both sides, judged (most slowed first), and a
    note on how they were judged; nothing for a workload without items."""
    plugin = _plugin(base, cand)
    if plugin is None:
        return [], ""
    per = _per_run(base, cand, plugin.items)
    ids = [i for i in dict.fromkeys(k for x in per[0] for k in x)  # in (nearly) every run
           if _in_enough_runs(per, i, limits.min_runs)]
    if not ids:
        return [], ""
    lim = replace(limits, alpha=limits.alpha / len(ids))
    out = [_item_verdict(per, i, lim) for i in ids]
    out.sort(key=lambda x: -(x.ratio or 1.0))
    return out, _note(plugin.item_name, len(ids), lim.alpha, min(len(base), len(cand)))


def _in_enough_runs(per: list[list[dict[str, T]]], item: str, min_runs: int) -> bool:
    """Whether ``item`` is in ``min_runs`` runs of each side (every run of a side with
    fewer)."""
    return all(sum(item in x for x in side) >= min(min_runs, len(side)) for side in per)


def _item_verdict(per: list[list[dict[str, Timed]]], item: str, lim: Limits
                  ) -> ItemVerdict:
    """One item judged: its seconds per run of each side (lower is better)."""
    a, b = ([x[item][1] for x in side if item in x] for side in per)
    v = judge(Metric(item, higher_is_better=False), a, b, lim)
    if min(len(a), len(b)) < runs_needed(lim.alpha) and v.verdict is not None:
        v = replace(v, verdict=None, why=f"{min(len(a), len(b))} runs a side cannot "
                    f"reach alpha {lim.alpha:.2g}: no verdict")
    mine = [x[item] for x in per[0] if item in x]
    return ItemVerdict(item, mine[0][0], round(statistics.median(x[2] for x in mine), 4), v)


def _note(name: str, k: int, alpha: float, runs: int) -> str:
    need = runs_needed(alpha)
    note = (f"{k} {name}s in every side's runs, each judged at alpha {alpha:.2g} (/{k}; "
            "not part of the overall verdict)")
    if runs < need:
        note += (f"; with {runs} runs a side none can be decided: it takes {need} runs a "
                 "side (--repetitions)")
    return note


def result_differences(base: list[StoredRun], cand: list[StoredRun]
                       ) -> tuple[list[ResultsDiffer], str]:
    """The items (in every run of both sides, each side agreeing with itself) whose
    results differ between the sides, and a note; nothing without checksums."""
    plugin = _plugin(base, cand)
    if plugin is None:
        return [], ""
    per = _per_run(base, cand, plugin.results)
    ids = _in_every_run(per)
    if not ids:
        return [], ""
    uneven: list[str] = []
    unstable: list[str] = []
    differ: list[ResultsDiffer] = []
    for i in ids:
        kind = _how_results_compare(per, i)
        if kind == "uneven":
            uneven.append(i)
        elif kind == "unstable":
            unstable.append(i)
        elif kind == "differ":
            differ.append(_difference(i, per[0][0][i], per[1][0][i]))
    return differ, _results_note(plugin.item_name, len(ids), len(differ), len(unstable),
                                 len(uneven))


def _in_every_run(per: list[list[dict[str, T]]]) -> list[str]:
    """The items in every run of both sides, in the baseline's order."""
    runs = [x for side in per for x in side]
    return [i for i in dict.fromkeys(k for x in per[0] for k in x)
            if all(i in x for x in runs)]


def _how_results_compare(per: list[list[dict[str, ItemResults]]], item: str) -> str:
    """uneven (runs ran different numbers of its statements), unstable (its results
    differ between runs of one side), differ (between the sides) or same."""
    if len({x[item].count for side in per for x in side}) > 1:
        return "uneven"
    if any(len({x[item].checksum for x in side}) > 1 for side in per):
        return "unstable"
    return "differ" if per[0][0][item].checksum != per[1][0][item].checksum else "same"


def _results_note(name: str, ids: int, differ: int, unstable: int, uneven: int) -> str:
    note = f"results of {ids - unstable - uneven} {name}s compared: {differ} differ"
    if unstable:
        note += (f"; {unstable} vary between runs of one side (not deterministic), "
                 "not compared")
    if uneven:
        note += (f"; {uneven} ran a different number of statements in some run (a "
                 "replay cut short by duration_s?), not compared")
    return note


def _difference(item: str, a: ItemResults, b: ItemResults) -> ResultsDiffer:
    """One item whose results differ, with a sampled statement whose own do."""
    example = next((sql for k, (v, sql) in a.sample.items()
                    if k in b.sample and b.sample[k][0] != v), None)
    return ResultsDiffer(item, a.label, example)
