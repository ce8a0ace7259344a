"""What ``harness compare`` was asked to run: its flags as the designs read them, the
scenario they name (a shipped workload's or the user's), the two builds and the two
sides' names."""
from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from ..analysis import compare as cmp
from ..analysis.switchback import WINDOW_S, WINDOWS
from ..errors import InputError
from ..paths import AB_DIR, ab_workloads
from ..scenario import LoadedScenario, load_scenario
from ..server import catalog, cnffile, refs

AB_WORKLOADS = ab_workloads()


@dataclass
class CompareRequest:
    """What ``harness compare`` was asked to run (its flags, as the designs read them)."""

    scenario: str | None = None
    baseline: str | None = None  # my.cnf files, with candidate
    candidate: str | None = None
    variants: list[str] = field(default_factory=list)
    design: str = "auto"  # auto | interleaved | switchback
    repetitions: int = 5
    servers: list[str] = field(default_factory=list)
    budget: str | None = None  # a duration: the sequential rule's
    effect: float = 3.0  # percent
    watch: str | None = None
    alpha: float = 0.05
    window_s: int = WINDOW_S
    windows: int = WINDOWS
    disposable_confirmed: bool = False
    measure_lock: bool = True
    quiet: bool = False
    notes: list[str] = field(default_factory=list)  # the design's, for the report
    # An upgrade: one my.cnf (or the scenario's options) on two builds.
    baseline_server: str | None = None
    candidate_server: str | None = None
    cnf: str | None = None
    measure: str = "time"  # time | instructions (counted: runner/counted.py)
    events: int | None = None  # a counted window's transactions
    counter: str = "auto"  # a count's counter: auto | callgrind | perf (harness/counted/)

    @property
    def upgrade(self) -> bool:
        return bool(self.baseline_server or self.candidate_server)

    def say(self, msg: str) -> None:
        """A line on stderr, unless --quiet."""
        if not self.quiet:
            print(msg, file=sys.stderr)

    def note(self, msg: str) -> None:
        """What the design chose and why: said, and kept for the report."""
        self.notes.append(msg)
        self.say(msg)

    def scenario_file(self, workload: str | None) -> str | None:
        """The scenario to run: the one given, or with two my.cnf files and none, the
        shipped workload (scenarios/ab/, oltp_read_write unless ``workload`` says)."""
        if workload and self.scenario:
            raise InputError("--workload picks a shipped workload when no scenario is given; "
                             "give one or the other")
        if self.scenario or not (self.baseline and self.candidate or self.upgrade):
            if workload:
                raise InputError("--workload goes with --baseline and --candidate my.cnf "
                                 "files, or --baseline-server and --candidate-server")
            return self.scenario
        return str(AB_DIR / f"{workload or AB_WORKLOADS[0]}.yaml")

    def choose_servers(self) -> None:
        """With the shipped workload and no --server: the builds the last ``cnf check``
        of the candidate (else the baseline) file judged it on, else the build the
        files' version groups name ([mysqld-8.4]), else the workload's own server; each
        said."""
        if self.servers or self.upgrade or not self.scenario or \
                Path(self.scenario).resolve().parent != AB_DIR.resolve():
            return
        files = [Path(f) for f in (self.candidate, self.baseline) if f and Path(f).is_file()]
        checked = cnffile.last_checked(files)
        if checked is not None:
            self.servers = list(checked.servers)
            self.note(f"server: {', '.join(checked.servers)}, the build(s) the last 'harness "
                      f"cnf check' of {checked.path} judged it on ({checked.at}; --server "
                      "NAME|FILE|DIR picks another)")
            return
        named = refs.named_by_groups(files)
        if named is not None:
            self.servers = [named.name]
            self.note(f"server: {named.name}, the one the my.cnf's {named.group} group "
                      "names (--server NAME|FILE|DIR picks another)")
            return
        shipped = [s.name for s in self.loaded.model.servers if s.name]
        self.note(f"server: {', '.join(shipped)}, the shipped workload's (the my.cnf files "
                  "name no version group; --server NAME|FILE|DIR picks another)")

    @cached_property
    def builds(self) -> list[catalog.Build]:
        """The builds the comparison runs on (the servers named: catalog names, tarballs,
        folders; else the scenario's, else the default)."""
        sc = self.loaded
        names = (self.servers or [s.name for s in sc.model.servers if s.name] or
                 [catalog.DEFAULT_SERVER])
        return [refs.build(n, log=self.say) for n in names]

    @property
    def first_build(self) -> catalog.Build:
        """The build the my.cnf files are read as (the first server the comparison
        runs on): what the two sides differ in is what that mysqld reads."""
        return self.builds[0]

    @cached_property
    def loaded(self) -> LoadedScenario:
        """The scenario, read once: the my.cnf difference, the switchback and the
        interleaved runs all read this one."""
        if not self.scenario:
            raise InputError("compare: give a scenario (with --baseline/--candidate my.cnf "
                             "files or --variants) or --run-sets")
        return load_scenario(self.scenario)

    @cached_property
    def prepared(self) -> tuple[LoadedScenario, list[str]]:
        """The scenario to run (the my.cnf files as its variants, CPUs kept awake) and
        its two variants, made once."""
        return compare_pair(self, self.loaded)

    def names(self, pair: list[str]) -> tuple[str, str]:
        """How the sides are called: the my.cnf files, else the variants."""
        if self.baseline and self.candidate:
            return self.baseline, self.candidate
        return pair[0], pair[1]


def compare_pair(req: CompareRequest, sc: LoadedScenario, awake: bool = True
                 ) -> tuple[LoadedScenario, list[str]]:
    """The scenario to run (with the my.cnf files as variants) and its two variants;
    ``awake``: its CPUs kept awake during runs (a timed comparison's)."""
    if bool(req.baseline) != bool(req.candidate):
        raise InputError("--baseline and --candidate go together")
    if req.baseline and req.variants:
        raise InputError("give --baseline/--candidate files or --variants, not both")
    if req.baseline and req.candidate:
        sc = cmp.with_cnf_variants(sc, req.baseline, req.candidate)
        pair = ["baseline", "candidate"]
    elif req.variants or len(sc.model.variants) == 2:
        pair = list(req.variants or sc.model.variants)
    else:
        raise InputError(f"{req.scenario}: has {len(sc.model.variants)} variant(s); name two "
                         "with --variants BASELINE CANDIDATE, or give --baseline and "
                         "--candidate my.cnf files")
    return (kept_awake(sc, req.note) if awake else sc), pair


def kept_awake(sc: LoadedScenario, say: Callable[[str], None]) -> LoadedScenario:
    """The scenario with its CPUs kept awake during runs, unless it says otherwise: idle
    CPUs that wake slowly are the largest noise a comparison meets on a VM
    (docs/noise.md)."""
    if "cpu_keepalive" in sc.model.model_fields_set:
        return sc
    say("cpu keep-alive: on for the comparison (the scenario does not set cpu_keepalive; "
        "false there turns it off)")
    return sc.amended(lambda data: data.update(cpu_keepalive=True))
