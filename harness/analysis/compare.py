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

from ..errors import InputError, UnavailableError
from ..stats.steady import settled_after
from ..store import RunReader, StoredRun
from . import power
from .ab_verdict import CPU_PER_TX, Comparison, Limits, Metric, MetricVerdict, judge
from .counters import rate_between
from .figures import headline_of
from .items import item_verdicts, result_differences
from .moved import measured_part, per_transaction, tps_over, what_moved
from .power import Noise
from .stalls import Stalls, of_runs, stalled


def run_value(store: RunReader, run: StoredRun, metric: Metric) -> float | None:
    """One run's value of ``metric``: a summary key, or a stored series over the
    measured part (after warmup): rate per second of a counter, median of a gauge."""
    if metric.summary_key:
        x = run.summary.figure(metric.summary_key)
        return None if metric.latency and x is not None and x <= 0 else x
    assert metric.series is not None
    source, _, name = metric.series.rpartition("/")
    found = store.series(run.run_id, source=source or None, metric=name)
    if not found:
        return None
    start = measured_from(store, run)
    if metric.per_transaction:
        return _per_transaction(store, run, found, start, metric.scale)
    values = [x for s in found  # several label sets (e.g. per index): summed
              if (x := _measured(s, start, metric.rate)) is not None]
    return sum(values) if values else None


def _per_transaction(store: RunReader, run: StoredRun, found: list[Any], start: float,
                     scale: float) -> float | None:
    """Series ``found`` grown over the run's measured part, per transaction of it, in
    the metric's unit (``scale``)."""
    end = measured_part(measured_from)(store, run)[1]
    x = per_transaction(found, tps_over(store, run, start, end), start, end)
    return None if x is None else x * scale


def _measured(s: Any, start: float, rate: bool) -> float | None:
    """One series over the measured part (from ``start``): its rate per second (a
    counter) or its median (a gauge); None under two points."""
    if rate:
        return rate_between(s.points(), start)
    pts = [v for t, v in s.points() if t >= start]
    return statistics.median(pts) if len(pts) >= 2 else None


def measured_from(store: RunReader, run: StoredRun) -> float:
    """When a run's measured part starts: the end of its warmup (0 without one)."""
    return max([e.t for e in store.events(run.run_id)
                if e.kind == "phase_end" and e.name == "warmup"], default=0.0)


def noise_of(store: RunReader, base: list[StoredRun], cand: list[StoredRun]
             ) -> Noise | None:
    """Where the headline throughput's run-to-run variation comes from, each side's
    components averaged (:mod:`.power`), and what helps; None under 3 runs a side or
    for a workload without a throughput series."""
    from ..workloads import of_run

    plugin = of_run(base[0]) if base else None
    if plugin is None or plugin.throughput is None:
        return None
    key = headline_of(base[0].summary).key
    source, metric, _ = plugin.throughput
    sides, secs_of = [], []
    for runs in (base, cand):
        values, secs = _runs_and_seconds(store, runs, key, source, metric)
        sides.append(power.components(values, secs, _seconds(secs)))
        secs_of += secs
    a, b = sides
    if a is None or b is None:
        return None
    settling = statistics.median(settled_after(x) for x in secs_of)
    return power.merged(a, b).noise(_overhead_s([*base, *cand]), key, settling,
                                    per_side=min(a.runs, b.runs))


def _runs_and_seconds(store: RunReader, runs: list[StoredRun], key: str, source: str,
                      metric: str) -> tuple[list[float], list[list[float]]]:
    """Each run's figure ``key`` and its measured seconds of the throughput series
    (runs lacking either left out)."""
    values, secs = [], []
    for r in runs:
        found = store.series(r.run_id, source=source, metric=metric)
        value = r.summary.figure(key)
        if value is not None and found:
            start = measured_from(store, r)
            values.append(value)
            secs.append([v for t, v in found[0].points() if t > start])
    return values, secs


def _seconds(secs: list[list[float]]) -> float:
    """A run's measured seconds: its points (sampled each second)."""
    return statistics.median(len(s) for s in secs) if secs else 0.0


def _overhead_s(runs: list[StoredRun]) -> float:
    """The machine time of a run beyond its measured seconds: median over the runs."""
    spent = [(datetime.fromisoformat(r.ended_at) - datetime.fromisoformat(r.started_at))
             .total_seconds() - float(r.summary.duration_s or 0)
             for r in runs if r.ended_at and r.started_at]
    return max(0.0, statistics.median(spent)) if spent else 0.0


def compare_runs(store: RunReader, base: list[StoredRun], cand: list[StoredRun],
                 metrics: Sequence[Metric], baseline: str, candidate: str, server: str,
                 limits: Limits | None = None) -> Comparison:
    """The comparison of two groups of stored runs (only ok runs count, but for the
    stalls: a run failed because its server hung is a stalled run of its side)."""
    hung = [r for r in base if _hung(r)], [r for r in cand if _hung(r)]
    base = [r for r in base if r.status == "ok"]
    cand = [r for r in cand if r.status == "ok"]
    comp = Comparison(baseline, candidate, server, [r.run_id for r in base],
                      [r.run_id for r in cand], limits=limits or Limits())
    comp.metrics = _judged(store, base, cand, metrics, comp.limits)
    comp.stalls = stalls_of(store, base + hung[0], cand + hung[1], comp.limits.alpha)
    comp.noise = noise_of(store, base, cand)
    comp.items, comp.items_note = item_verdicts(base, cand, comp.limits)
    comp.results_differ, comp.results_note = result_differences(base, cand)
    comp.moved = what_moved(store, base, cand, measured_from, comp.limits.seed)
    return comp


def _judged(store: RunReader, base: list[StoredRun], cand: list[StoredRun],
            metrics: Sequence[Metric], limits: Limits) -> list[MetricVerdict]:
    """Each metric judged (and mysqld's CPU a transaction where every run has it)."""
    out = []
    for m in [*metrics, *sampled_everywhere(store, [*base, *cand], [CPU_PER_TX])]:
        (ia, a), (ib, b) = (_values_of(store, side, m) for side in (base, cand))
        out.append(judge(m, a, b, limits, runs=(ia, ib)))
    return out


def sampled_everywhere(store: RunReader, runs: list[StoredRun], metrics: list[Metric]
                       ) -> list[Metric]:
    """The series metrics that every run stored (a collector switched off in some: left
    out, rather than judged on the runs that have it)."""
    def has(r: StoredRun, m: Metric) -> bool:
        assert m.series is not None
        source, _, name = m.series.rpartition("/")
        return bool(store.series(r.run_id, source=source or None, metric=name))
    return [m for m in metrics if runs and all(has(r, m) for r in runs)]


def _hung(run: StoredRun) -> bool:
    """A run failed because its server answered nothing for most of its measured part
    (runner/measure.py: its stalls kept in the run's details)."""
    return run.status == "failed" and bool(run.details.server_stalls) and \
        "answered nothing" in (run.error or "")


def stalls_of(store: RunReader, base: list[StoredRun], cand: list[StoredRun],
              alpha: float) -> Stalls | None:
    """Each side's runs that made no progress in most of their measured seconds, or
    whose server answered nothing for a good part of them (a stall in the run's
    headline): analysis/stalls.py; None for a workload without a throughput series."""
    from .. import workloads

    def side(runs: list[StoredRun]) -> list[bool]:
        out = []
        for r in runs:
            found = workloads.throughput(store, r.run_id)
            if found:  # mostly nothing done, or a server that answered nothing for long
                start = measured_from(store, r)
                out.append(stalled([v for t, v in found[0].points() if t > start])
                           or r.summary.stall is not None)
        return out

    a, b = side(base), side(cand)
    return of_runs(a, b, alpha) if a and b else None


def _values_of(store: RunReader, runs: list[StoredRun], m: Metric
               ) -> tuple[list[str], list[float]]:
    """The runs that have metric ``m``, and their values."""
    ids, values = [], []
    for r in runs:
        x = run_value(store, r, m)
        if x is not None:
            ids.append(r.run_id)
            values.append(x)
    return ids, values


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
            raise UnavailableError(f"{flag} {f}: no such file")
    return sc.amended(lambda data: data.update(variants={
        "baseline": {"my_cnf": str(Path(baseline).absolute()),
                     "description": f"baseline: {baseline}"},
        "candidate": {"my_cnf": str(Path(candidate).absolute()),
                      "description": f"candidate: {candidate}"}}))


def by_server(runs: list[StoredRun]) -> dict[str, list[StoredRun]]:
    out: dict[str, list[StoredRun]] = {}
    for r in runs:
        out.setdefault(r.server, []).append(r)
    return out


def stored_groups(store: RunReader, run_sets: list[str], variants: list[str] | None
                  ) -> tuple[list[StoredRun], list[StoredRun], str, str]:
    """Baseline and candidate runs from one run set (two variants) or two."""
    found = [_run_set(store, rs) for rs in run_sets]
    if len(found) == 1:
        if not variants:
            have = sorted({r.variant for r in found[0]})
            raise InputError(f"--run-sets {run_sets[0]}: one run set needs --variants "
                             f"BASELINE CANDIDATE (it has: {', '.join(have)})")
        found.append(found[0])
    sets = run_sets * 2 if len(run_sets) == 1 else run_sets
    picked = [_side(runs, rs, variants[i] if variants else None)
              for i, (runs, rs) in enumerate(zip(found, sets, strict=False))]
    names = [f"{rs}/{variants[i]}" if variants else rs for i, rs in enumerate(sets)]
    return picked[0], picked[1], names[0], names[1]


def _run_set(store: RunReader, run_set: str) -> list[StoredRun]:
    runs = store.runs(run_set=run_set)
    if not runs:
        raise UnavailableError(f"--run-sets: no run set '{run_set}' in the store")
    return runs


def _side(runs: list[StoredRun], run_set: str, variant: str | None
          ) -> list[StoredRun]:
    """One side's runs: those of ``variant``, or the run set's whole when it holds one."""
    if variant:
        runs = [r for r in runs if r.variant == variant]
        if not runs:
            raise InputError(f"run set {run_set} has no runs of variant {variant}")
    elif len({r.variant for r in runs}) > 1:
        raise InputError(f"run set {run_set} holds several variants "
                         f"({', '.join(sorted({r.variant for r in runs}))}); "
                         "pick with --variants BASELINE CANDIDATE")
    return runs
