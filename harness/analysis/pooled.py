"""A finding judged once over the repetitions of a cell.

Each run of a server and variant judges a per-run finding (a phase's tps ratio, a
series over a window) with its own within-run interval. Over the cell's repetitions the
finding is judged again, once: its value is the median of the runs' values, and its 95%
interval comes from a two-level bootstrap over what the verdicts stored - the runs
resampled (the run-to-run variation), then each picked run's value drawn from its own
within-run interval, taken as normal (the second-to-second variation). A run without an
interval adds none of the second. Any kind of finding pools the same way, from its
stored verdicts alone, so ``report --judge`` and ``regress`` read it like the runs'.
"""
from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace

import numpy as np

from ..stats.interval import BOOTSTRAP, sd_of, stated_ci
from ..stats.verdict import NOT_REPRODUCED, OUTCOMES, verdict
from ..store import Finding, StoredRun


def pool(xs: Sequence[Finding], n: int = BOOTSTRAP, seed: int = 0) -> Finding | None:
    """One verdict over the runs' verdicts ``xs`` of one finding on one server and
    variant (two runs with a value at least), or None."""
    have = [(x, float(x.value)) for x in xs if x.value is not None]
    if len(have) < 2:
        return None
    values = [v for _, v in have]
    ci = stated_ci(values, [sd_of(x.ci95) for x, _ in have], n, seed)
    first = have[0][0]
    bounds = SimpleNamespace(name=first.name, metric=first.metric, min=first.min,
                             max=first.max, inconclusive_by_design=first.by_design)
    own = {k: v for k, v in first.own.items() if k not in _JUDGED}
    return verdict(bounds, float(np.median(values)), None, first.server,
                   first.variant, interval=ci, runs=len(have), pooled=True,
                   run_values=[round(v, 4) for v in values], **own)


# What pool() decides afresh, beside the common fields; the rest of a finding's own
# (phase, series, window, ...) the pooled one keeps.
_JUDGED = {"by_design", "window_value", "baseline_value"}


def pooled_verdicts(runs: Sequence[StoredRun]) -> list[Finding]:
    """Per server, variant and per-run finding with two ok runs or more: the pooled
    verdict (stored verdicts of one run each; run-set findings are pooled already)."""
    groups: dict[tuple[str, str, str], list[Finding]] = {}
    for r in runs:
        if r.status != "ok":
            continue
        for x in r.summary.expectations:
            if x.runs == 1 and not x.pooled and _per_run(x):
                groups.setdefault((x.server, x.variant, x.name), []).append(x)
    return [p for xs in groups.values() if (p := pool(xs)) is not None]


def _per_run(x: Finding) -> bool:
    """Not a run-set finding (those compare variants or servers and are stored with
    each run they judge, the same verdict each time)."""
    return not (x.own.get("baseline_variant") or x.own.get("baseline_server"))


def standing(runs: Sequence[StoredRun]) -> list[Finding]:
    """The verdicts a run set stands by, each once: a cell's pooled verdict in place of
    its runs' own, a run-set finding (stored with each run it judges) once, and none of
    a failed run's own (it was not judged: a run-set finding over it says so)."""
    pooled = {(x.server, x.variant, x.name) for r in runs
              for x in r.summary.expectations if x.pooled}
    out: list[Finding] = []
    for r in runs:
        for x in r.summary.expectations:
            mine = (x.server, x.variant, x.name)
            if r.status != "ok" and _per_run(x) and not x.pooled:
                continue
            if (x.pooled or mine not in pooled) and x not in out:
                out.append(x)
    return out


def tally(verdicts: Sequence[Finding]) -> str:
    """"8 findings: 6 reproduced, 1 inconclusive, 1 NOT reproduced"."""
    counts = {o: sum(x.outcome == o for x in verdicts) for o in OUTCOMES}
    said = ", ".join(f"{n} {'NOT reproduced' if o == NOT_REPRODUCED else o}"
                     for o, n in counts.items() if n)
    return f"{len(verdicts)} finding{'s' if len(verdicts) != 1 else ''}: {said or 'none'}"
