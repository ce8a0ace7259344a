"""What a counted comparison (``compare --measure instructions``) runs: one build,
each side's options, whether they switch by SET GLOBAL or by restarts, the workload's
windows (its plugin's counted probe: a sysbench test, TPC-C's five types), the window's
size and the budget; read from the request and the scenario, refused by name where a
count cannot be taken."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import counted
from ..analysis.sequential import parse_duration
from ..counted import Counter
from ..errors import InputError
from ..scenario import LoadedScenario
from ..server import settle
from ..server.catalog import Build
from ..server.mycnf import Value
from ..workloads import PLUGINS, plugin
from ..workloads.base import CountedProbe, WorkloadPlugin
from . import designs, switchback
from .plan import translated
from .request import CompareRequest, compare_pair

BUDGET = "15m"  # the default: a 1% change ends in a minute or three, no change too


@dataclass
class CountedPlan:
    """What a counted comparison runs: each side's build (the same one for two option
    sets, two for an upgrade) and options, how they are switched, the workload's
    windows, and how long it may take."""

    builds: tuple[Build, Build]
    names: tuple[str, str]
    sides: tuple[dict[str, Value | None], dict[str, Value | None]]
    diff: dict[str, tuple[Any, Any]]
    dynamic: bool
    probe: CountedProbe
    events: int  # a window's transactions (of the commonest class)
    counter: Counter
    hardware: str  # what the host's hardware counter answered
    budget_s: float
    alpha: float
    band: float
    scenario: str

    @property
    def design(self) -> str:
        if self.upgrade:
            return ("restarts of each build's sandbox, each loaded from the same data, "
                    "one lifetime a unit")
        return ("switchback: SET GLOBAL in one lifetime" if self.dynamic
                else "restarts from the same data, one lifetime a unit")

    @property
    def upgrade(self) -> bool:
        return self.builds[0].name != self.builds[1].name

    @property
    def server(self) -> str:
        """The build, or an upgrade's two: ``mysql-5.7.29 -> mysql-8.0.31``."""
        a, b = (x.name for x in self.builds)
        return f"{a} -> {b}" if self.upgrade else a


def plan(req: CompareRequest, band: float) -> CountedPlan:
    """The plan of ``req`` (InputError naming the flag or the scenario's field when it
    cannot be counted)."""
    if req.upgrade:
        return _upgrade_plan(req, band)
    sc, pair = compare_pair(req, req.loaded, awake=False)  # a count needs no awake CPUs
    if len(req.builds) != 1:
        raise InputError(f"--measure instructions: one server at a time ({len(req.builds)} "
                         "given; pick one with --server)")
    build = req.first_build
    probe = probe_of(sc)
    sides = tuple(sc.variant_options(v, sc.variant_file(v, build)) for v in pair)
    try:
        diff, dynamic = switchback.differing(sc, pair, build), req.design != "interleaved"
    except switchback.SwitchbackError as e:
        diff, dynamic = _plain_diff(sides[0], sides[1]), False
        req.note(f"design: restarts ({e})")
    if dynamic and (slow := settle.slow(list(diff))):
        dynamic = False
        req.note("design: restarts (" + "; ".join(f"{s.option} is slow to settle: {s.why}"
                                                  for s in slow) + ")")
    return CountedPlan((build, build), req.names(pair), (sides[0], sides[1]), diff, dynamic,
                       probe, req.events or probe.default_events, *counted.choose(req.counter),
                       _budget(req), req.alpha, band, sc.model.name)


def _budget(req: CompareRequest) -> float:
    try:
        return parse_duration(req.budget or BUDGET)
    except ValueError as e:
        raise InputError(f"--budget {e}") from None


def _upgrade_plan(req: CompareRequest, band: float) -> CountedPlan:
    """Two builds on one my.cnf (``--cnf``, each build reading it as it reads it: a
    renamed option translated, a removed one left out, each said), by restarts."""
    base, cand = designs.upgrade_builds(req)
    sc, variant = designs.upgrade_scenario(req, awake=False)
    probe = probe_of(sc)
    sides = []
    for b in (base, cand):
        options, changed = translated(b, sc.variant_options(variant, sc.variant_file(variant,
                                                                                     b)))
        sides.append(options)
        for v in changed:
            req.note(f"{b.name}: {v.option} {v.status}" + (f" ({v.note})" if v.note else ""))
    return CountedPlan((base, cand), (base.name, cand.name), (sides[0], sides[1]),
                       _plain_diff(sides[0], sides[1]), False, probe,
                       req.events or probe.default_events, *counted.choose(req.counter),
                       _budget(req), req.alpha, band, sc.model.name)


def countable() -> list[str]:
    """The workload kinds whose plugins say how to count them."""
    return [k for k, pl in PLUGINS.items() if type(pl).counted is not WorkloadPlugin.counted]


def probe_of(sc: LoadedScenario) -> CountedProbe:
    """The windows of the scenario's workload, on its own kind's dataset entry."""
    wl = sc.model.workload
    data = next((d for d in sc.model.dataset if d.kind == wl.kind), None)
    probe = plugin(wl.kind).counted(wl, data) if data is not None else None
    if probe is None:
        raise InputError(f"{sc.path}: --measure instructions counts {' and '.join(countable())}"
                         f" workloads on their own datasets (this one is {wl.kind}; "
                         "--workload oltp_point_select is the count's probe)")
    if sc.model.side_loads:
        raise InputError(f"{sc.path}: --measure instructions counts the workload alone: "
                         "it has side loads")
    return probe


def _plain_diff(a: dict[str, Value | None], b: dict[str, Value | None]
                ) -> dict[str, tuple[Any, Any]]:
    return {k: (a.get(k), b.get(k)) for k in sorted({*a, *b}) if a.get(k) != b.get(k)}
