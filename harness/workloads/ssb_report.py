"""The SSB plugin's findings and report panels: its expected findings (warm_cold_ratio,
flight_ratio), a table shaped like Percona's 2014 post (Version, Buffer, Cold, Run1,
Run2, Run3) with the buffer pool figures that explain it (hit ratio, pages read, pages
made young per warm flight), per-query times and a figure of the flights."""
from __future__ import annotations

import json
import math
import statistics
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..stats.logratio import welch_log_ratio
from ..stats.verdict import verdict, why_missing
from ..store import Finding, RunSummary
from .ssb_figures import Flight, SsbFigures

if TYPE_CHECKING:
    from ..scenario import Expectation
    from ..store import RunReader, StoredRun

Row = dict[str, Any]


def _verdict(e: Expectation, value: float | None, why: str | None, server: str,
             variant: str, **fields: Any) -> Finding:
    if getattr(e, "baseline_server", None):
        fields["baseline_server"] = e.baseline_server
    return verdict(e, value, why, server, variant, phase=None, index=None,
                   baseline_variant=e.baseline_variant, **fields)


def evaluate_run(expectations: Sequence[Expectation], summary: RunSummary, server: str,
                 variant: str) -> list[Finding]:
    """The per-run SSB findings (warm_cold_ratio) that apply to this run."""
    out = []
    for e in expectations:
        if e.metric != "warm_cold_ratio" or (e.variant and e.variant != variant) or \
                (e.server and e.server != server):
            continue
        warm, cold = summary.figure("warm_median_s"), summary.figure("cold_s")
        value = warm / cold if warm is not None and cold else None
        why = None if value is not None else "the run has no cold flight or no warm one"
        out.append(_verdict(e, value, why, server, variant))
    return out


def evaluate_run_set(expectations: Sequence[Expectation], runs: list[StoredRun]
                     ) -> dict[str, list[Finding]]:
    """flight_ratio findings over a run set: {run_id: verdicts to store with that run}
    (every run of the expectation's variant on the server gets the same verdict)."""
    out: dict[str, list[Finding]] = {}
    for e in (e for e in expectations if e.metric == "flight_ratio"):
        for server in sorted({r.server for r in runs if e.server in (None, r.server)}):
            x = _flight_finding(e, runs, server)
            for r in (r for r in runs if r.server == server and r.variant == e.variant):
                out.setdefault(r.run_id, []).append(x)
    return out


def _flight_finding(e: Expectation, runs: list[StoredRun], server: str) -> Finding:
    """One flight_ratio finding on ``server``: the median warm flight of the
    expectation's variant over its baseline variant's (on ``baseline_server`` where
    it names one: each version with its own default, as Percona's post compared 5.6
    with 5.5), with its interval."""
    base_server = e.baseline_server or server
    mine, base = _flown(runs, server, e.variant), _flown(runs, base_server, e.baseline_variant)
    value, ci, why = None, None, None
    if mine and base:
        value, ci = flight_ratio(base, mine)
    else:
        where, lacking = (server, e.variant) if not mine else (base_server,
                                                               e.baseline_variant)
        why = why_missing(runs, where, lacking, f"no finished run of {lacking} on "
                          f"{where} with warm flights")
    return _verdict(e, value, why, server, str(e.variant), interval=ci,
                    runs=min(len(mine), len(base)))


def _flown(runs: list[StoredRun], server: str, variant: str | None
           ) -> list[StoredRun]:
    """The runs of ``variant`` on ``server`` that ended ok with warm flights."""
    return [r for r in runs if r.status == "ok" and r.server == server
            and r.variant == variant and SsbFigures.of(r.summary).warm_s]


def _warm_medians(rs: Sequence[StoredRun]) -> list[float]:
    """Each run's median warm flight seconds."""
    return [m for r in rs if (m := SsbFigures.of(r.summary).warm_median_s) is not None]


def flight_ratio(base: Sequence[StoredRun], mine: Sequence[StoredRun]
                 ) -> tuple[float, tuple[float, float] | None]:
    """The warm-flight ratio and its 95% interval. Two runs a side or more: the ratio
    of the runs' geometric means of their median warm flight, with Welch's interval on
    the logs, as the upgrade verdict judges throughput (separate server instances differ
    more than flights within one: the runs are the unit). A bootstrap of 3 runs a side,
    then of their flights, covered the true ratio 88-94% of the time on simulated runs
    (tests/unit/test_three_valued.py); this one 96-98%. One run a side: the ratio of
    the medians, no interval."""
    if len(base) < 2 or len(mine) < 2:
        return statistics.median(_warm_medians(mine)) / statistics.median(
            _warm_medians(base)), None
    logs = [[math.log(m) for m in _warm_medians(rs)] for rs in (base, mine)]
    ratio, lo, hi, _ = welch_log_ratio(logs[0], logs[1], 0.05)
    return ratio, (lo, hi)


def _pool_size(run: StoredRun) -> str:
    if run.artifacts is None:
        return "?"
    try:
        v = json.loads((Path(run.artifacts) / "variables.json").read_text())
        b = int(v["innodb_buffer_pool_size"])
    except (OSError, ValueError, KeyError, TypeError):
        return "?"
    for unit, size in (("G", 1 << 30), ("M", 1 << 20)):
        if b >= size and b % size == 0:
            return f"{b // size}{unit}"
    return f"{b / 1048576:.0f}M"


def _med(xs: list[float | None]) -> float | None:
    vals = [x for x in xs if x is not None]
    return round(statistics.median(vals), 3) if vals else None


def _imed(xs: list[float | None]) -> int | None:
    m = _med(xs)
    return None if m is None else int(round(m))


def _groups(runs: list[StoredRun]) -> dict[tuple[str, str], list[StoredRun]]:
    """The ok SSB runs by (server, variant), in run order."""
    groups: dict[tuple[str, str], list[StoredRun]] = {}
    for r in runs:
        if r.status == "ok" and r.summary.workload == "ssb":
            groups.setdefault((r.server, r.variant), []).append(r)
    return groups


def flight_table(runs: list[StoredRun]) -> tuple[list[Row], list[str]]:
    """One row per server x variant (medians over repetitions): the post's columns,
    then what the warm flights did in the buffer pool."""
    groups = _groups(runs)
    warm_n = max((len(SsbFigures.of(r.summary).warm_s) for rs in groups.values()
                  for r in rs), default=0)
    cols = ["server", "variant", "runs", "buffer", "cold", *[f"run{i}" for i in
                                                          range(1, warm_n + 1)],
            "warm hit ratio", "warm pages read", "warm read-ahead", "warm made young",
            "cold page cache"]
    return [_flight_row(server, variant, rs, warm_n)
            for (server, variant), rs in groups.items()], cols


def _flight_row(server: str, variant: str, rs: list[StoredRun], warm_n: int) -> Row:
    """One server x variant's row of the flight table."""
    figs = [SsbFigures.of(r.summary) for r in rs]
    row: Row = {"server": server, "variant": variant, "runs": len(rs),
                "buffer": _pool_size(rs[0]), "cold": _med([f.cold_s for f in figs])}
    for i in range(warm_n):
        row[f"run{i + 1}"] = _med([f.warm_s[i] for f in figs if len(f.warm_s) > i])
    warm = [w for f in figs for w in f.warm]
    return {**row, **_in_the_pool(warm), "cold page cache": _cold_cache(figs)}


def _in_the_pool(warm: list[Flight]) -> Row:
    """What the warm flights did in the buffer pool (medians)."""
    hit = _med([f.hit_ratio for f in warm])
    return {"warm hit ratio": None if hit is None else f"{hit:.4f}",
            "warm pages read": _imed([f.pages_read for f in warm]),
            "warm read-ahead": _imed([f.read_ahead for f in warm]),
            "warm made young": _imed([f.made_young for f in warm])}


def _cold_cache(figs: list[SsbFigures]) -> str:
    """Whether the cold flights ran with the OS page cache dropped, and why not."""
    cold = [f.cold for f in figs if f.cold]
    if not cold:
        return "-"
    if all(c.page_cache_dropped for c in cold):
        return "dropped"
    return "kept: " + "; ".join(sorted({str(c.page_cache_why_not) for c in cold}))


def query_table(runs: list[StoredRun]) -> tuple[list[Row], list[str]]:
    """Median warm seconds per query, one row per server x variant."""
    groups = {k: [SsbFigures.of(r.summary) for r in rs] for k, rs in _groups(runs).items()}
    queries = _queries(f for figs in groups.values() for f in figs)
    rows = []
    for (server, variant), figs in groups.items():
        warm = [w for f in figs for w in f.warm]
        row: Row = {"server": server, "variant": variant}
        for q in queries:
            row[q] = _med([f.queries[q].seconds for f in warm if q in f.queries])
        rows.append(row)
    return rows, ["server", "variant", *queries]


def _queries(figs: Iterable[SsbFigures]) -> list[str]:
    """Every query any flight ran, in the order first seen."""
    return list(dict.fromkeys(q for f in figs for flight in f.flights for q in flight.queries))


def print_report(store: RunReader, runs: list[StoredRun],
                 table: Callable[[list[Row], list[str]], None]) -> None:
    """The flight table and the warm seconds per query, as text."""
    rows, cols = flight_table(runs)
    if not rows:
        print("no finished SSB run")
        return
    sets = ", ".join(sorted({r.run_set for r in runs}))
    print(f"\nSSB flights of run set {sets}, seconds for all queries (medians over "
          "repetitions):")
    table(rows, cols)
    rows, cols = query_table(runs)
    print("\nwarm seconds per query (median over warm flights):")
    table(rows, cols)


def flights_figure(plt: Any, runs: list[StoredRun], colour: dict[str, str]) -> Any:
    """Seconds per SSB flight (cold, run1, ...) and pages read, one line per run."""
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 3.6))
    for r in runs:
        fl = SsbFigures.of(r.summary).flights
        if not fl:
            continue
        names = [f.flight for f in fl]
        a1.plot(names, [f.seconds for f in fl], marker="o", color=colour[r.run_id],
                label=f"{r.server} / {r.variant} #{r.repetition}")
        a2.plot(names, [f.pages_read or 0 for f in fl], marker="o",
                color=colour[r.run_id])
    a1.set_ylabel("flight seconds")
    a2.set_ylabel("pages read (Innodb_buffer_pool_reads)")
    a1.legend(fontsize=7)
    return fig


def show_lines(summary: RunSummary) -> list[tuple[str, str]]:
    """Each flight of a run, for ``harness show``: seconds, pages read, hit ratio and its
    three slowest queries."""
    out = []
    for f in SsbFigures.of(summary).flights:
        slow = sorted(f.queries.items(), key=lambda q: -q[1].seconds)[:3]
        out.append((f"flight {f.flight}",
                    f"{f.seconds} s, {f.pages_read or 0:.0f} pages read, hit ratio "
                    f"{f.hit_ratio}; slowest "
                    + ", ".join(f"{q} {x.seconds:.2f} s" for q, x in slow)))
    return out
