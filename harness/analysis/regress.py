"""Nightly regression detection over the stored history.

One value per ok run (its median tps, or p95 latency) per history: runs of one scenario,
server, variant, target and host, in start order. Change points come from Apache
Otava's E-divisive with a t-test merge step (Fleming et al., "Hunter", ICPE 2023;
``otava.analysis.compute_change_points``), with these defaults:

- ``window`` 30 runs for the split step, ``p-value`` 0.001;
- a minimum magnitude derived from the history's own noise: twice the relative
  run-to-run standard deviation (estimated from successive differences, robust to the
  step itself: median |x[i] - x[i-1]| / 0.954 / median), and never under the metric's
  floor: 2% for what the clock measures, 0.2% for counted instructions per transaction
  (a count repeats to 0.02-0.05%);
- at least 5 runs before and after a change (a single odd night is not a change).

Each change point is reported once, with the runs on either side and what differs in
their environment (server build, options, host facts). A regression is a change the
wrong way (tps down, latency up); it is new when the first run after it started at or
after ``--since``.

Each history also states what it can see (:func:`sensitivity`): its noise, and the
smallest step found with 90% probability once ``min_points`` runs follow it. With
``spread`` = 1.6 * sigma * sqrt(1/before + 1/after) (1.6: what E-divisive here needs
over a plain two-sample test, measured on seeded normal histories of 30 + 5 runs: at
sigma 2% and 5% it found 90% of 3-sigma steps; this states 3.5 sigma), the larger of:
the difference clears the minimum magnitude (floor + z(0.9) * spread), and it passes
the test at ``p-value`` ((z(1 - p/2) + z(0.9)) * spread). A unit test holds the
statement to >= 85% found, at low and at high noise.
"""
from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..jsonvalue import JsonDict
from ..stats.logratio import welch_log_ratio
from ..stats.verdict import INCONCLUSIVE, NOT_REPRODUCED
from ..store import RunReader, StoredRun
from .ab_verdict import moved_lines
from .compare import measured_from
from .figures import REGRESS_FLOORS, REGRESS_METRICS
from .moved import Moved, what_moved

P_VALUE = 0.001
WINDOW = 30
MIN_POINTS = 5
MIN_MAGNITUDE_FLOOR = 0.02
NOISE_FACTOR = 2.0
MEDIAN_MR = 0.954  # median |x1 - x2| / sigma for a normal sample
E_DIVISIVE_FACTOR = 1.6  # the step E-divisive needs over a plain t-test's (measured)

# name: (run summary key, higher is better). A run without the key (another workload)
# is not part of that metric's history.
METRICS = REGRESS_METRICS
HISTORY_KEYS = ("scenario", "server", "variant", "target", "host")
HOST_KEYS = ("hostname", "kernel", "cpu_model", "cpus", "cpu_governor", "thp", "swappiness",
             "dirty_ratio", "mem_total_mb", "sysbench", "harness", "harness_commit")


@dataclass
class Change:
    history: dict[str, str]  # scenario, server, variant, target, host
    metric: str
    index: int  # position in the history of the first run after the change
    run_before: str
    run_after: str
    started_after: str
    mean_before: float
    mean_after: float
    change_pct: float
    p_value: float
    regression: bool
    new: bool
    environment: dict[str, list[Any]] = field(default_factory=dict)  # what differs: [before, after]
    # What moved per transaction between the runs either side (analysis/moved.py), when
    # :func:`explain` was asked.
    moved: list[Moved] = field(default_factory=list)

    def to_json(self) -> JsonDict:
        return asdict(self)

    def text(self) -> str:
        h = self.history
        what = "REGRESSION" if self.regression else "improvement"
        lines = [f"{what}{' (new)' if self.new else ''}: {h['scenario']} on {h['server']} / "
                 f"{h['variant']} ({h['target']}, {h['host']}): {self.metric} "
                 f"{self.mean_before:.4g} -> {self.mean_after:.4g} ({self.change_pct:+.1f}%, "
                 f"p = {self.p_value:.2g}) from run {self.run_after} "
                 f"({self.started_after}); last run before: {self.run_before}"]
        for k, (a, b) in self.environment.items():
            lines.append(f"    {k}: {a} -> {b}")
        if not self.environment:
            lines.append("    environment: no difference recorded between the two runs")
        lines += moved_lines(self.moved, "  ")
        return "\n".join(lines)


def noise(values: Sequence[float]) -> float:
    """Relative run-to-run standard deviation from successive differences."""
    if len(values) < 3:
        return 0.0
    mr = statistics.median(abs(b - a) for a, b in zip(values, values[1:], strict=False))
    mid = statistics.median(values)
    return mr / MEDIAN_MR / abs(mid) if mid else 0.0


def change_points(values: Sequence[float], window: int = WINDOW, p_value: float = P_VALUE,
                  min_points: int = MIN_POINTS, min_magnitude: float | None = None,
                  floor: float = MIN_MAGNITUDE_FLOOR) -> list[tuple[int, float, float, float]]:
    """(index of the first value after, mean before, mean after, p-value) per change."""
    from otava.analysis import compute_change_points

    if len(values) < 2 * min_points:
        return []
    floor = min_magnitude if min_magnitude is not None else max(
        floor, NOISE_FACTOR * noise(values))
    cps, _ = compute_change_points([float(v) for v in values], window_len=window,
                                   max_pvalue=p_value, min_magnitude=floor)
    out = []
    bounds = [0, *[cp.index for cp in cps], len(values)]
    for i, cp in enumerate(cps):
        before = values[bounds[i]:cp.index]
        after = values[cp.index:bounds[i + 2]]
        if len(before) < min_points or len(after) < min_points:
            continue
        mb, ma = statistics.fmean(before), statistics.fmean(after)
        if mb == 0 or abs(ma - mb) / abs(mb) < floor:
            continue
        out.append((int(cp.index), mb, ma, float(cp.stats.pvalue)))
    return out


def _env(run: StoredRun) -> dict[str, Any]:
    d = run.details
    host = d.host or {}
    env: dict[str, Any] = {"server build": d.version_string or run.version}
    for k, v in sorted((d.options or {}).items()):
        env[f"option {k}"] = v
    for k in HOST_KEYS:
        env[f"host {k}"] = host.get(k)
    return env


def env_diff(before: StoredRun, after: StoredRun) -> dict[str, list[Any]]:
    a, b = _env(before), _env(after)
    return {k: [a.get(k), b.get(k)] for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)}


def outside_comparisons(runs: list[StoredRun]) -> tuple[list[StoredRun], int]:
    """The runs not made as a side of a comparison (harness compare's A/B and switchback
    runs: a switchback's tps mixes both sides), and how many were left out."""
    kept = [r for r in runs if r.details.purpose != "compare"]
    return kept, len(runs) - len(kept)


def histories(runs: list[StoredRun]) -> dict[tuple[str, ...], list[StoredRun]]:
    out: dict[tuple[str, ...], list[StoredRun]] = {}
    for r in sorted(runs, key=lambda r: (r.started_at or "", r.run_id)):
        if r.status == "ok":
            key = (r.scenario, r.server, r.variant, r.target, r.host)
            out.setdefault(key, []).append(r)
    return out


def _values(rs: list[StoredRun], metric: str) -> list[tuple[StoredRun, float]]:
    """(run, value) of the runs of a history that have ``metric``."""
    key = METRICS[metric][0]
    return [(r, float(v)) for r in rs if (v := r.summary.figure(key)) is not None]


def smallest_step(values: Sequence[float], window: int = WINDOW, p_value: float = P_VALUE,
                  min_points: int = MIN_POINTS, min_magnitude: float | None = None,
                  power: float = 0.9, floor: float = MIN_MAGNITUDE_FLOOR) -> float | None:
    """The smallest relative step :func:`change_points` finds with probability ``power``
    once ``min_points`` runs follow it, at this history's noise; None when the history
    is too short for any change."""
    if len(values) < 2 * min_points:
        return None
    rel_sd = noise(values)
    floor = min_magnitude if min_magnitude is not None else max(
        floor, NOISE_FACTOR * rel_sd)
    z = statistics.NormalDist()
    before = min(window, len(values)) - min_points
    spread = E_DIVISIVE_FACTOR * rel_sd * (1 / before + 1 / min_points) ** 0.5
    clears_floor = floor + z.inv_cdf(power) * spread
    passes_test = (z.inv_cdf(1 - p_value / 2) + z.inv_cdf(power)) * spread
    return float(max(clears_floor, passes_test))


def sensitivity(runs: list[StoredRun], metrics: Sequence[str] = tuple(METRICS),
                **kw: Any) -> list[dict[str, Any]]:
    """Per history and metric: its runs, noise and the smallest step it can see."""
    out = []
    for key, rs in histories(runs).items():
        for name in metrics:
            values = [v for _, v in _values(rs, name)]
            if not values:
                continue
            step = smallest_step(values, **{"floor": REGRESS_FLOORS[name], **kw})
            out.append({"history": dict(zip(HISTORY_KEYS, key, strict=True)),
                        "metric": name, "runs": len(values),
                        "noise_pct": round(100 * noise(values), 2),
                        "smallest_step_pct": None if step is None else round(100 * step, 1)})
    return out


def sensitivity_text(s: dict[str, Any], min_points: int = MIN_POINTS) -> str:
    h = s["history"]
    where = (f"{h['scenario']} on {h['server']} / {h['variant']} ({h['target']}, "
             f"{h['host']}): {s['metric']}, {s['runs']} runs")
    if s["smallest_step_pct"] is None:
        return f"  {where}: too short to see a change ({2 * min_points} runs needed)"
    return (f"  {where}, noise {s['noise_pct']:.1f}%: sees a step of "
            f"{s['smallest_step_pct']:.1f}% or more ({min_points} runs after it)")


def detect(runs: list[StoredRun], metrics: Sequence[str] = tuple(METRICS),
           since: str | None = None, **kw: Any) -> list[Change]:
    """Every change point of every history and metric, oldest first."""
    found = []
    for key, rs in histories(runs).items():
        for name in metrics:
            higher_better = METRICS[name][1]
            pairs = _values(rs, name)
            values = [v for _, v in pairs]
            for idx, mb, ma, p in change_points(values, **{"floor": REGRESS_FLOORS[name],
                                                           **kw}):
                before, after = pairs[idx - 1][0], pairs[idx][0]
                worse = (ma < mb) if higher_better else (ma > mb)
                found.append(Change(
                    history=dict(zip(HISTORY_KEYS, key, strict=True)),
                    metric=name, index=idx, run_before=before.run_id,
                    run_after=after.run_id, started_after=after.started_at,
                    mean_before=round(mb, 4), mean_after=round(ma, 4),
                    change_pct=round(100 * (ma - mb) / mb, 2), p_value=p, regression=worse,
                    new=since is None or (after.started_at or "") >= since,
                    environment=env_diff(before, after)))
    return sorted(found, key=lambda c: c.started_after)


def segments(n: int, changes: Sequence[int]) -> list[tuple[int, int]]:
    """[start, end) of each stretch of a history of ``n`` runs between change points
    (given as the index of the first run after each)."""
    bounds = [0, *sorted(changes), n]
    return list(zip(bounds[:-1], bounds[1:], strict=True))


def step_interval(before: Sequence[float], after: Sequence[float], alpha: float = 0.05
                  ) -> tuple[float, float] | None:
    """The 95% interval of a change's size, after over before (Welch's on the logs, as
    the upgrade verdicts): None when a side has fewer than two runs or a value <= 0."""
    if len(before) < 2 or len(after) < 2 or min(*before, *after) <= 0:
        return None
    _, lo, hi, _ = welch_log_ratio([math.log(x) for x in before],
                                   [math.log(x) for x in after], alpha)
    return lo, hi


def explain(store: RunReader, runs: list[StoredRun], changes: list[Change],
            points: int = MIN_POINTS) -> None:
    """Set each change's ``moved``: what moved per transaction between the last
    ``points`` runs before it and the first ``points`` after (its history's runs that
    have its metric), as compare says it between two sides."""
    by_history = histories(runs)
    for c in changes:
        key = tuple(c.history[k] for k in HISTORY_KEYS)
        rs = [r for r, _ in _values(by_history.get(key, []), c.metric)]
        before, after = rs[max(0, c.index - points):c.index], rs[c.index:c.index + points]
        c.moved = what_moved(store, before, after, measured_from)


# --- expected findings across nights ------------------------------------------------------


@dataclass
class FindingChange:
    """An expected finding whose decided outcome changed between two runs of a history
    (reproduced to not reproduced, or back). Inconclusive verdicts are passed over: a
    finding that moves to or from inconclusive has not changed its answer."""

    history: dict[str, str]
    name: str
    before: str  # the outcome
    after: str
    run_before: str
    run_after: str
    started_after: str
    value_after: float | None
    ci95_after: list[float] | None
    new: bool

    @property
    def regression(self) -> bool:
        return self.after == NOT_REPRODUCED

    def to_json(self) -> JsonDict:
        return {**asdict(self), "regression": self.regression}

    def text(self) -> str:
        h = self.history
        ci = f" [95% CI {self.ci95_after[0]:.3f}, {self.ci95_after[1]:.3f}]" \
            if self.ci95_after else ""
        value = "n/a" if self.value_after is None else f"{self.value_after:.3f}{ci}"
        return (f"{'FINDING LOST' if self.regression else 'finding back'}"
                f"{' (new)' if self.new else ''}: {h['scenario']} on {h['server']} / "
                f"{h['variant']} ({h['target']}, {h['host']}): '{self.name}' {self.before} "
                f"-> {self.after} = {value} from run {self.run_after} "
                f"({self.started_after}); last decided before: {self.run_before}")


def finding_changes(runs: list[StoredRun], since: str | None = None
                    ) -> list[FindingChange]:
    """Every change of a finding's decided outcome along each history, oldest first."""
    found = []
    for key, rs in histories(runs).items():
        last: dict[tuple[str, bool], tuple[StoredRun, str]] = {}
        for r in rs:
            for x in r.summary.expectations:
                said = x.outcome
                if said == INCONCLUSIVE:
                    continue
                which = (x.name, x.pooled)
                prev = last.get(which)
                last[which] = (r, said)
                if prev is None or prev[1] == said:
                    continue
                found.append(FindingChange(
                    dict(zip(HISTORY_KEYS, key, strict=True)), x.name, prev[1], said,
                    prev[0].run_id, r.run_id, r.started_at, x.value,
                    x.ci95, since is None or (r.started_at or "") >= since))
    return sorted(found, key=lambda c: c.started_after or "")
