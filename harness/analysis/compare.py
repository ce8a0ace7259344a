"""A/B comparisons of stored runs: each run's value of a metric (a summary figure, or the
rate or median of a stored series over the measured part), the two groups judged metric
by metric (:mod:`.ab_verdict`), per item (:mod:`.items`) and with where the noise comes
from (:mod:`.power`); and what ``harness compare`` reads (a metric named on the command
line, a pair of my.cnf files, stored run sets)."""
from __future__ import annotations

import statistics
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from ..errors import InputError
from . import power
from .ab_verdict import Comparison, Limits, Metric, judge
from .figures import headline_of
from .items import item_verdicts, result_differences
from .moved import what_moved
from .steady import settled_after


def run_value(store: Any, run: dict[str, Any], metric: Metric) -> float | None:
    """One run's value of ``metric``: a summary key, or a stored series over the
    measured part (after warmup): rate per second of a counter, median of a gauge."""
    if metric.summary_key:
        return run["summary"].figure(metric.summary_key)
    assert metric.series is not None
    source, _, name = metric.series.rpartition("/")
    found = store.series(run["run_id"], source=source or None, metric=name)
    if not found:
        return None
    start = measured_from(store, run)
    values: list[float] = []
    for s in found:  # several label sets (e.g. per index): summed
        pts = [(t, v) for t, v in s.points() if t >= start]
        if len(pts) < 2:
            continue
        if metric.rate:
            (t0, v0), (t1, v1) = pts[0], pts[-1]
            values.append((v1 - v0) / (t1 - t0) if t1 > t0 else 0.0)
        else:
            values.append(statistics.median(v for _, v in pts))
    return sum(values) if values else None


def measured_from(store: Any, run: dict[str, Any]) -> float:
    """When a run's measured part starts: the end of its warmup (0 without one)."""
    return max([e["t"] for e in store.events(run["run_id"])
                if e["kind"] == "phase_end" and e["name"] == "warmup"], default=0.0)


def noise_of(store: Any, base: list[dict[str, Any]], cand: list[dict[str, Any]]
             ) -> dict[str, Any] | None:
    """Where the headline throughput's run-to-run variation comes from, each side's
    components averaged (:mod:`.power`), and what helps; None under 3 runs a side or
    for a workload without a throughput series."""
    from ..workloads import of_run

    plugin = of_run(base[0]) if base else None
    if plugin is None or plugin.throughput is None:
        return None
    key = headline_of(base[0]["summary"]).key
    source, metric, _ = plugin.throughput
    sides, secs_of = [], []
    for runs in (base, cand):
        values, secs = [], []
        for r in runs:
            found = store.series(r["run_id"], source=source, metric=metric)
            value = r["summary"].figure(key)
            if value is not None and found:
                start = measured_from(store, r)
                values.append(value)
                secs.append([v for t, v in found[0].points() if t > start])
        sides.append(power.components(values, secs, _seconds(secs)))
        secs_of += secs
    a, b = sides
    if a is None or b is None:
        return None
    settling = statistics.median(settled_after(x) for x in secs_of)
    return power.merged(a, b).noise(_overhead_s([*base, *cand]), key, settling,
                                    per_side=min(a.runs, b.runs))


def _seconds(secs: list[list[float]]) -> float:
    """A run's measured seconds: its points (sampled each second)."""
    return statistics.median(len(s) for s in secs) if secs else 0.0


def _overhead_s(runs: list[dict[str, Any]]) -> float:
    """The machine time of a run beyond its measured seconds: median over the runs."""
    spent = [(datetime.fromisoformat(r["ended_at"]) - datetime.fromisoformat(r["started_at"]))
             .total_seconds() - float(r["summary"].duration_s or 0)
             for r in runs if r.get("ended_at") and r.get("started_at")]
    return max(0.0, statistics.median(spent)) if spent else 0.0


def compare_runs(store: Any, base: list[dict[str, Any]], cand: list[dict[str, Any]],
                 metrics: Sequence[Metric], baseline: str, candidate: str, server: str,
                 limits: Limits | None = None) -> Comparison:
    """The comparison of two groups of stored runs (only ok runs count)."""
    base = [r for r in base if r["status"] == "ok"]
    cand = [r for r in cand if r["status"] == "ok"]
    comp = Comparison(baseline, candidate, server, [r["run_id"] for r in base],
                      [r["run_id"] for r in cand], limits=limits or Limits())
    for m in metrics:
        a = [(r["run_id"], x) for r in base if (x := run_value(store, r, m)) is not None]
        b = [(r["run_id"], x) for r in cand if (x := run_value(store, r, m)) is not None]
        comp.metrics.append(judge(m, [x for _, x in a], [x for _, x in b], comp.limits,
                                  runs=([i for i, _ in a], [i for i, _ in b])))
    comp.noise = noise_of(store, base, cand)
    comp.items, comp.items_note = item_verdicts(base, cand, comp.limits)
    comp.results_differ, comp.results_note = result_differences(base, cand)
    comp.moved = what_moved(store, base, cand, measured_from, comp.limits.seed)
    return comp


# --- the command: run baseline and candidate interleaved, or read stored run sets -----

def parse_metric(text: str) -> Metric:
    """``[SOURCE/]METRIC[:rate|median]:higher|lower``: a stored series, how one run's
    value is taken (rate per second of a counter, median of a gauge; default rate for
    a ``*_total`` name, else median) and which way is better."""
    parts = text.split(":")
    how = parts[1] if len(parts) == 3 else None
    if len(parts) not in (2, 3) or not parts[0] or parts[-1] not in ("higher", "lower") \
            or how not in (None, "rate", "median"):
        raise InputError(f"--metric {text}: give [SOURCE/]METRIC[:rate|median]:higher or "
                         ":lower (which way is better), e.g. global_status/"
                         "mysql_global_status_innodb_data_reads:rate:lower")
    rate = how == "rate" or (how is None and parts[0].endswith("_total"))
    return Metric(parts[0] + (":rate" if rate else ""), parts[-1] == "higher",
                  series=parts[0], rate=rate)


def with_cnf_variants(sc: Any, baseline: str, candidate: str) -> Any:
    """The scenario with exactly two variants, ``baseline`` and ``candidate``, each the
    [mysqld] section of a my.cnf file (layered on the scenario's own mysqld options)."""
    for flag, f in (("--baseline", baseline), ("--candidate", candidate)):
        if not Path(f).is_file():
            raise InputError(f"{flag} {f}: no such file")
    return sc.amended(lambda data: data.update(variants={
        "baseline": {"my_cnf": str(Path(baseline).absolute()),
                     "description": f"baseline: {baseline}"},
        "candidate": {"my_cnf": str(Path(candidate).absolute()),
                      "description": f"candidate: {candidate}"}}))


def by_server(runs: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for r in runs:
        out.setdefault(r["server"], []).append(r)
    return out


def stored_groups(store: Any, run_sets: list[str], variants: list[str] | None
                  ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str, str]:
    """Baseline and candidate runs from one run set (two variants) or two."""
    found = []
    for rs in run_sets:
        runs = store.runs(run_set=rs)
        if not runs:
            raise InputError(f"--run-sets: no run set '{rs}' in the store")
        found.append(runs)
    if len(found) == 1:
        if not variants:
            have = sorted({r["variant"] for r in found[0]})
            raise InputError(f"--run-sets {run_sets[0]}: one run set needs --variants "
                             f"BASELINE CANDIDATE (it has: {', '.join(have)})")
        found.append(found[0])
    picked = []
    for runs, rs, i in zip(found, run_sets * 2 if len(run_sets) == 1 else run_sets, (0, 1),
                           strict=False):
        if variants:
            runs = [r for r in runs if r["variant"] == variants[i]]
            if not runs:
                raise InputError(f"run set {rs} has no runs of variant {variants[i]}")
        elif len({r["variant"] for r in runs}) > 1:
            raise InputError(f"run set {rs} holds several variants "
                             f"({', '.join(sorted({r['variant'] for r in runs}))}); "
                             "pick with --variants BASELINE CANDIDATE")
        picked.append(runs)
    names = [f"{rs}/{variants[i]}" if variants else rs
             for i, rs in enumerate(run_sets * 2 if len(run_sets) == 1 else run_sets)]
    return picked[0], picked[1], names[0], names[1]
