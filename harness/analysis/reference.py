"""A reproduction held against ours: an experiment's reference file, and a run set's
agreement with it finding by finding.

A reference is made from stored run sets of one scenario (``harness reference``): each
finding the run sets stand by (a cell's pooled verdict in place of its runs' own), with
its value, 95% interval and outcome; each cell's summary figures (median and range over
its runs); the host, scale and harness that made them. It is a small JSON file with
``reference_version``; a version newer than this harness knows is refused by name.

A finding agrees when both sides reached the same outcome (reproduced, NOT reproduced or
inconclusive) and their 95% intervals overlap (one side's value inside the other's
interval when only one has an interval; where neither has one, the outcome alone, and
the line says so). An outcome that differs is never agreement: it DIFFERS. Overlap is
the lenient reading: two intervals that only just touch still agree, so a finding that
DIFFERS on its intervals differs beyond both sides' run-to-run and within-run variation.
A reference whose interval holds one of the finding's bounds ([0.000, 0.912] on a
bound of 0.1) could not tell on which side of it the finding lies: the finding is "not
comparable", neither agreeing nor differing. A finding the reference
has and the run set does not (a server or variant not run) is "not run", and one the
run set has that the reference does not is listed, neither counted as a difference.

Summary figures (transactions a second, rows a second ...) depend on the hardware; they
are shown as the ratio of the run set's median to the reference's with both hosts, and
never decide agreement.
"""
from __future__ import annotations

import json
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..jsonvalue import JsonDict
from ..store import StoredRun
from ..store.finding import Finding
from .figures import SUMMARY_KEYS
from .pooled import standing

VERSION = 1
AGREES, DIFFERS, NOT_RUN, NEW = "agrees", "DIFFERS", "not run", "not in the reference"
NOT_COMPARABLE = "not comparable"
HOST_FACTS = ("cpu_model", "cpus", "mem_total_mb", "kernel", "os")

Cell = tuple[str, str]  # server, variant


@dataclass(frozen=True)
class CellFinding:
    """One finding of one cell as a run set stands by it."""

    name: str
    server: str
    variant: str
    value: float | None
    ci95: tuple[float, float] | None
    outcome: str
    runs: int
    bounds: tuple[float | None, float | None]  # the scenario's min and max

    @property
    def key(self) -> tuple[str, str, str]:
        return self.name, self.server, self.variant

    def text(self) -> str:
        if self.value is None:
            return f"no value, {self.outcome}"
        ci = f" [{_num(self.ci95[0])}, {_num(self.ci95[1])}]" if self.ci95 else \
            " (no interval)"
        return f"{_num(self.value)}{ci} {self.outcome}"


def _num(x: float) -> str:
    """A finding's number as its verdict line shows it (a count without decimals)."""
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.3f}"


@dataclass(frozen=True)
class Figure:
    """A summary figure of one cell: the median and range over its ok runs."""

    server: str
    variant: str
    key: str
    median: float
    low: float
    high: float
    runs: int


@dataclass
class Reference:
    scenario: str
    run_sets: list[str]
    made_at: str
    scale: float | None
    host: dict[str, Any]
    harness: str
    findings: list[CellFinding]
    figures: list[Figure]
    reference_version: int = VERSION

    def to_json(self) -> JsonDict:
        return asdict(self)


@dataclass(frozen=True)
class Agreement:
    """One finding of the reference against the run set's."""

    state: str  # AGREES, DIFFERS, NOT_RUN, NEW or NOT_COMPARABLE
    basis: str  # "intervals", "outcomes", "reference interval", ""
    reference: CellFinding | None
    yours: CellFinding | None

    def text(self) -> str:
        f = self.reference or self.yours
        assert f is not None
        head = f"{self.state:<8} {f.server} / {f.variant}: {f.name}"
        ours = f"reference {self.reference.text()}" if self.reference else ""
        mine = f"yours {self.yours.text()}" if self.yours else ""
        basis = {"outcomes": " (no interval on either side: judged by outcome)",
                 "outcome": " (the outcomes differ)",
                 "reference interval": " (the reference's interval holds its bound: "
                                       "it could not tell)"}.get(self.basis, "")
        return f"{head}{basis}\n           " + "; ".join(x for x in (mine, ours) if x)


@dataclass
class Held:
    """A run set held against a reference: each finding, each figure's ratio, and what
    differs in how the two were made."""

    agreements: list[Agreement]
    figures: list[tuple[Figure, float | None]]  # reference figure, yours / its median
    notes: list[str] = field(default_factory=list)

    @property
    def differs(self) -> int:
        return sum(a.state == DIFFERS for a in self.agreements)

    def tally(self) -> str:
        counts = {s: sum(a.state == s for a in self.agreements)
                  for s in (AGREES, DIFFERS, NOT_COMPARABLE, NOT_RUN, NEW)}
        return ", ".join(f"{n} {s}" for s, n in counts.items() if n) or "no findings"


def findings_of(runs: list[StoredRun]) -> list[CellFinding]:
    """The findings the ok runs stand by, one per cell (runs of one cell that were not
    pooled: their values' median, the span of their intervals)."""
    groups: dict[tuple[str, str, str], list[Finding]] = {}
    for x in standing([r for r in runs if r.status == "ok"]):
        groups.setdefault((x.name, x.server, x.variant), []).append(x)
    return [_one(name, server, variant, xs)
            for (name, server, variant), xs in sorted(groups.items())]


def _one(name: str, server: str, variant: str, xs: list[Finding]) -> CellFinding:
    values = [float(x.value) for x in xs if x.value is not None]
    outcomes = {x.outcome for x in xs}
    return CellFinding(
        name, server, variant, statistics.median(values) if values else None, _span_of(xs),
        outcomes.pop() if len(outcomes) == 1 else "mixed",
        sum(x.runs for x in xs), (xs[0].min, xs[0].max))


def _span_of(xs: list[Finding]) -> tuple[float, float] | None:
    """From the lowest end to the highest of the verdicts' intervals (a value without
    one counts as a point); None when none has an interval."""
    if not any(x.ci95 for x in xs):
        return None
    ends = [x.ci95 or [x.value, x.value] for x in xs if x.value is not None]
    return (min(e[0] for e in ends), max(e[1] for e in ends)) if ends else None


def figures_of(runs: list[StoredRun]) -> list[Figure]:
    cells: dict[Cell, list[StoredRun]] = {}
    for r in runs:
        if r.status == "ok":
            cells.setdefault((r.server, r.variant), []).append(r)
    out = []
    for (server, variant), rs in sorted(cells.items()):
        for k in SUMMARY_KEYS:
            vs = [v for r in rs if (v := r.summary.figure(k)) is not None]
            if vs:
                out.append(Figure(server, variant, k, statistics.median(vs), min(vs),
                                  max(vs), len(vs)))
    return out


def reference_of(runs: list[StoredRun], made_at: str) -> Reference:
    """The reference of stored runs of one scenario (their findings, figures, host)."""
    scenarios = sorted({r.scenario for r in runs})
    if len(scenarios) != 1:
        raise InputError(f"a reference is of one scenario; these runs are of {scenarios}")
    ok = [r for r in runs if r.status == "ok"]
    if not ok:
        raise InputError(f"no ok run of {scenarios[0]} to make a reference of")
    host = _host_of(ok[0])
    return Reference(
        scenario=scenarios[0], run_sets=sorted({r.run_set for r in runs}),
        made_at=made_at, scale=ok[0].details.scale,
        host={k: host.get(k) for k in HOST_FACTS}, harness=_harness(host),
        findings=findings_of(runs), figures=figures_of(runs))


def _host_of(run: StoredRun) -> dict[str, Any]:
    """The facts of the host a run measured on: the lab host's where a lab ran it."""
    return run.details.host_facts


def _harness(host: dict[str, Any]) -> str:
    commit = host.get("harness_commit")
    return f"{host.get('harness', '?')}" + (f" ({commit})" if commit else "")


def load(path: Path) -> Reference:
    """A reference file, refused with its name and the field at fault."""
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise InputError(f"--against {path}: {e.strerror or e}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(f"--against {path}: not a reference file (JSON): {e}") from None
    if not isinstance(d, dict) or "reference_version" not in d:
        raise InputError(f"--against {path}: no reference_version: not a reference file "
                         "(harness reference RUN_SET -o FILE makes one)")
    if d["reference_version"] != VERSION:
        raise InputError(f"--against {path}: reference_version {d['reference_version']}; "
                         f"this harness reads version {VERSION}")
    try:
        return Reference(
            **{**d, "findings": [_finding(x) for x in d["findings"]],
               "figures": [Figure(**x) for x in d["figures"]]})
    except (KeyError, TypeError, ValueError) as e:
        raise InputError(f"--against {path}: a field is missing or wrong: {e}") from None


def _finding(x: dict[str, Any]) -> CellFinding:
    ci = x["ci95"]
    return CellFinding(**{**x, "ci95": None if ci is None else (float(ci[0]), float(ci[1])),
                      "bounds": tuple(x["bounds"])})


def held(ref: Reference, runs: list[StoredRun]) -> Held:
    """The runs (of the reference's scenario) against the reference."""
    scenarios = sorted({r.scenario for r in runs})
    if scenarios != [ref.scenario]:
        raise InputError(f"the reference is of scenario {ref.scenario}; these runs are of "
                         f"{', '.join(scenarios)}")
    yours = {f.key: f for f in findings_of(runs)}
    agreements = [agreement(f, yours.pop(f.key, None)) for f in ref.findings]
    agreements += [Agreement(NEW, "", None, f) for f in yours.values()]
    mine = {(f.server, f.variant, f.key): f for f in figures_of(runs)}
    ratios = [(f, m.median / f.median if (m := mine.get((f.server, f.variant, f.key)))
               and f.median else None) for f in ref.figures]
    return Held(agreements, ratios, _notes(ref, runs))


def agreement(ref: CellFinding, yours: CellFinding | None) -> Agreement:
    """One finding: do the reference's and the run set's agree (module docstring)?"""
    if yours is None:
        return Agreement(NOT_RUN, "", ref, None)
    if _holds_a_bound(ref):
        return Agreement(NOT_COMPARABLE, "reference interval", ref, yours)
    a, b = _span(ref), _span(yours)
    if a is None or b is None or (ref.ci95 is None and yours.ci95 is None):
        same = ref.outcome == yours.outcome
        return Agreement(AGREES if same else DIFFERS, "outcomes", ref, yours)
    if ref.outcome != yours.outcome:
        return Agreement(DIFFERS, "outcome", ref, yours)
    overlap = a[0] <= b[1] and b[0] <= a[1]
    return Agreement(AGREES if overlap else DIFFERS, "intervals", ref, yours)


def _holds_a_bound(f: CellFinding) -> bool:
    """The finding's interval holds one of its bounds strictly inside: it could not
    tell on which side the finding lies."""
    return f.ci95 is not None and any(
        b is not None and f.ci95[0] < b < f.ci95[1] for b in f.bounds)


def _span(f: CellFinding) -> tuple[float, float] | None:
    if f.value is None:
        return None
    return f.ci95 or (f.value, f.value)


def _notes(ref: Reference, runs: list[StoredRun]) -> list[str]:
    """How the run set was made differently from the reference (scale, host)."""
    ok = [r for r in runs if r.status == "ok"]
    if not ok:
        return ["no ok run: nothing to hold against the reference"]
    details, host = ok[0].details, _host_of(ok[0])
    notes = []
    if details.scale != ref.scale:
        notes.append(f"scale {details.scale or 1} here, {ref.scale or 1} in the "
                     "reference: sizes differ, figures do not compare")
    differ = [f"{k} {host.get(k)} (reference {ref.host.get(k)})" for k in HOST_FACTS
              if host.get(k) != ref.host.get(k)]
    if differ:
        notes.append("another host: " + "; ".join(differ))
    return notes
