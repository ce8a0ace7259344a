"""The designs of ``harness compare``: a switchback on one server (the two option sets
alternating in windows of one run) where the options allow it, else interleaved runs of
the two variants, a fixed number or until the sequential rule decides (``--budget``).
Each returns what it ran (the switchback's comparisons, or each side's stored runs) for
the command to judge and print."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import workloads
from ..analysis import compare as cmp
from ..analysis import switchback as sb
from ..analysis.ab_verdict import Comparison, Limits, Metric
from ..analysis.sequential import Budget, SequentialRule, parse_duration
from ..analysis.switchback import MIN_QUADS, least_p
from ..errors import InputError, UnavailableError
from ..jsonvalue import JsonDict
from ..progress import Progress
from ..scenario import LoadedScenario
from ..server import catalog, mycnf, optionfile, refs, settle
from ..store import Store, StoredRun
from . import Runner, switchback
from .options import RunOptions
from .plan import check_cells, select_variants
from .request import CompareRequest, kept_awake

SEQUENTIAL_MAX_ROUNDS = 200  # a cap; the budget ends a comparison long before


@dataclass
class Switchback:
    """A switchback's run set and its comparisons (one per run: per server)."""

    run_set: str
    comparisons: list[Comparison]


@dataclass
class Interleaved:
    """Interleaved runs: the run set, each side's runs and names, and with a budget the
    sequential rule that stopped them."""

    run_set: str
    base: list[StoredRun]
    cand: list[StoredRun]
    bname: str
    cname: str
    rule: SequentialRule | None


def switchback_compare(req: CompareRequest, store: Store, limits: Limits) -> Switchback | None:
    """``--design switchback`` (or auto, where the options allow it); None when the
    interleaved design is to run instead."""
    if req.design == "interleaved" or not req.scenario:
        return None
    diff = _switchable(req)
    if diff is None:
        return None
    sc, pair = req.prepared
    req.note(f"design: switchback, {req.windows} windows of {req.window_s} s on one "
             f"server (options that differ: {', '.join(diff) or 'none'})")
    opts = RunOptions(servers=req.servers, variants=[switchback.VARIANT],
                      disposable_confirmed=req.disposable_confirmed,
                      measure_lock=req.measure_lock, purpose="compare")
    runner = Runner(switchback.scenario(sc, pair, req.window_s, req.windows, req.first_build),
                    store, opts, Progress(quiet=req.quiet))
    runner.run()
    runs = store.runs(run_set=runner.run_set)
    refused = [why for r in runs if (why := sb.refusal(store.events(r.run_id)))]
    if refused and req.design == "auto":
        req.note(f"design: interleaved runs (switchback refused: {refused[0]})")
        return None
    bname, cname = req.names(pair)
    judged = [sb.compare_run(store, r, bname, cname, limits) for r in runs]
    return None if _stalled_after_switches(req, judged) else Switchback(runner.run_set, judged)


def _switchable(req: CompareRequest) -> dict[str, tuple[Any, Any]] | None:
    """The options a switchback would switch, or None when the comparison is to run as
    interleaved runs (said in a note; refused outright under ``--design switchback``).
    Both sides are first read as each build would start with them: a value one side's
    mysqld refuses stops the comparison here, before a window runs."""
    sc, pair = req.prepared
    select_variants(sc, RunOptions(variants=pair))  # an unknown one: the same error as runs
    check_cells(sc, req.builds, pair)
    why = switchback.why_not(sc, pair, req.first_build) or switchback_refused_by_flags(req)
    if why:
        if req.design == "switchback":
            raise InputError(f"--design switchback: {req.scenario}: {why}")
        req.note(f"design: interleaved runs ({why})")
        return None
    diff = switchback.differing(sc, pair, req.first_build)
    return diff if _settles_at_once(req, list(diff)) else None


def _stalled_after_switches(req: CompareRequest, judged: list[Comparison]) -> bool:
    """Whether an automatic switchback's windows stalled (then the comparison runs again
    as interleaved runs, said in a note)."""
    stalled = next((c.stalls for c in judged if c.stalls is not None
                    and c.stalls.baseline + c.stalls.candidate >= STALLED_WINDOWS), None)
    if stalled is None or req.design != "auto":
        return False
    req.note(f"design: interleaved runs, each from the same data with a restart and a "
             f"warmup: the switchback's windows stalled after its switches "
             f"({stalled.text()}), so its windows measured the switch")
    _restart_between(req)
    return True


# Stalled windows (both sides) after which an automatic switchback is run again as
# interleaved runs: one may be the host's; two are the switch's doing.
STALLED_WINDOWS = 2


def _settles_at_once(req: CompareRequest, options: list[str]) -> bool:
    """Whether every option that differs takes effect at once (else, under ``auto``,
    the comparison is run as interleaved runs from the same data and says why;
    ``--design switchback`` switches them anyway, saying what that measures)."""
    slow = settle.slow(options)
    if not slow:
        return True
    why = "; ".join(f"{s.option} is slow to settle: {s.why}" for s in slow)
    if req.design == "switchback":
        req.note(f"design: switchback as --design switchback asks, although {why}; each "
                 "window measures the switch as much as the value")
        return True
    req.note(f"design: interleaved runs, each from the same data with a restart and a "
             f"warmup, because {why}; switching every {req.window_s} s would measure the "
             "switch, not the value")
    _restart_between(req)
    return False


def _restart_between(req: CompareRequest) -> None:
    """The interleaved runs restart the server between runs (a scenario that keeps it
    running would set the slow option by SET GLOBAL again)."""
    sc, pair = req.prepared
    if sc.model.between_runs == "warmup":
        req.note("between runs: restart (the scenario's between_runs: warmup would switch "
                 "the option at run time)")
        req.prepared = (sc.amended(lambda data: data.update(between_runs="restart")), pair)


@dataclass
class CnfChange:
    """One option the two my.cnf files set differently, as the build reads them (None:
    the file does not set it: the server's default)."""

    option: str
    baseline: Any
    candidate: Any

    def to_json(self) -> JsonDict:
        return {"option": self.option, "baseline": self.baseline, "candidate": self.candidate}


def cnf_difference(req: CompareRequest) -> tuple[str, list[CnfChange]]:
    """What the candidate my.cnf changes against the baseline's, each read as the first
    server's mysqld reads it (groups, includes): (that server, the options that differ)."""
    assert req.scenario and req.baseline and req.candidate
    for flag, f in (("--baseline", req.baseline), ("--candidate", req.candidate)):
        if not Path(f).is_file():
            raise UnavailableError(f"{flag} {f}: no such file")
    build = req.first_build
    # innodb-buffer-pool-size is innodb_buffer_pool_size to mysqld (the last one read
    # wins), and so is a prefix it takes (thread_cache: thread_cache_size)
    a, b = ({mycnf.resolved_name(build, k, v): v
             for k, v in optionfile.read(Path(f), build).options.items()}
            for f in (req.baseline, req.candidate))
    return build.name, [CnfChange(k, a.get(k), b.get(k)) for k in sorted(set(a) | set(b))
                        if a.get(k) != b.get(k)]


def switchback_refused_by_flags(req: CompareRequest) -> str | None:
    """Why the flags rule a switchback out (a budget, a number of windows that cannot
    give a verdict at alpha), or None."""
    if req.budget:
        return "--budget stops interleaved runs; a switchback runs its --windows"
    if req.windows % 4 or req.windows < 4 * MIN_QUADS:
        return (f"--windows {req.windows}: a multiple of 4 (whole quads, the unit of the "
                f"test), at least {4 * MIN_QUADS} ({MIN_QUADS} quads)")
    quads = req.windows // 4
    if least_p(quads) >= req.alpha:
        fewest = next(n for n in range(MIN_QUADS, 64) if least_p(n) < req.alpha)
        return (f"--windows {req.windows}: {quads} quads cannot give p < {req.alpha} "
                f"(their least p is {least_p(quads):.3g}); at least {4 * fewest}")
    return None


def compare_run(req: CompareRequest, store: Store, limits: Limits, metrics: list[Metric]
                ) -> Interleaved:
    """Baseline and candidate run interleaved (``metrics`` gains the scenario's
    compare_metrics)."""
    sc, pair = req.prepared
    metrics += [cmp.parse_metric(m) for m in sc.model.compare_metrics]
    if req.repetitions < limits.min_runs:
        print(f"warning: {req.repetitions} repetitions cannot give a verdict (at least "
              f"{limits.min_runs} per side)", file=sys.stderr)
    progress = Progress(quiet=req.quiet)
    opts = RunOptions(servers=req.servers, variants=pair, repetitions=req.repetitions,
                      interleave=True, disposable_confirmed=req.disposable_confirmed,
                      measure_lock=req.measure_lock, purpose="compare")
    rule = sequential(req, req.budget, sc, pair, progress) if req.budget else None
    if rule is not None:
        opts.repetitions, opts.stop_rule = SEQUENTIAL_MAX_ROUNDS, rule
    runner = Runner(sc, store, opts, progress)
    runner.run()
    runs = store.runs(run_set=runner.run_set)
    return Interleaved(runner.run_set, [r for r in runs if r.variant == pair[0]],
                       [r for r in runs if r.variant == pair[1]], *req.names(pair), rule)


def upgrade_run(req: CompareRequest, store: Store, limits: Limits, metrics: list[Metric]
                ) -> Interleaved:
    """One my.cnf (``--cnf``, each build reading it as it reads it: renamed options
    translated, removed ones left out, each said) or the scenario's one variant, on the
    baseline and the candidate build, whole runs interleaved (A B, B A, ...), each on a
    new sandbox from the same data: two builds cannot switch within a run."""
    base, cand = upgrade_builds(req)
    sc, variant = upgrade_scenario(req)
    metrics += [cmp.parse_metric(m) for m in sc.model.compare_metrics]
    req.note(f"design: interleaved runs of {base.name} and {cand.name} ({base.name} "
             f"{cand.name}, {cand.name} {base.name}, ...), each on a new sandbox from the "
             "same data: two builds cannot be switched within a run")
    if req.repetitions < limits.min_runs:
        print(f"warning: {req.repetitions} repetitions cannot give a verdict (at least "
              f"{limits.min_runs} per side)", file=sys.stderr)
    opts = RunOptions(servers=[req.baseline_server or "", req.candidate_server or ""],
                      variants=[variant], repetitions=req.repetitions, interleave=True,
                      disposable_confirmed=req.disposable_confirmed,
                      measure_lock=req.measure_lock, purpose="compare")
    runner = Runner(sc, store, opts, Progress(quiet=req.quiet))
    runner.run()
    runs = store.runs(run_set=runner.run_set)
    return Interleaved(runner.run_set, [r for r in runs if r.server == base.name],
                       [r for r in runs if r.server == cand.name], base.name, cand.name, None)


def upgrade_builds(req: CompareRequest) -> tuple[catalog.Build, catalog.Build]:
    """The two builds of an upgrade, refused when the flags do not make one."""
    if not (req.baseline_server and req.candidate_server):
        raise InputError("--baseline-server and --candidate-server go together")
    clashes = [flag for flag, given in (
        ("--baseline/--candidate", req.baseline or req.candidate), ("--server", req.servers),
        ("--variants", req.variants), ("--budget", req.budget),
        ("--design switchback", req.design == "switchback")) if given]
    if clashes:
        raise InputError(f"--baseline-server/--candidate-server compare two builds on one "
                         f"my.cnf (--cnf): not with {', '.join(clashes)}")
    base, cand = (refs.build(s, log=req.say) for s in (req.baseline_server,
                                                       req.candidate_server))
    if base.name == cand.name:
        raise InputError(f"--baseline-server and --candidate-server are the same build "
                         f"({base.name})")
    return base, cand


def upgrade_scenario(req: CompareRequest, awake: bool = True) -> tuple[LoadedScenario, str]:
    """The scenario an upgrade runs and its one variant: the my.cnf as that variant,
    translated for each build, or the scenario's own when it has exactly one;
    ``awake``: its CPUs kept awake during runs (a timed comparison's)."""
    sc = req.loaded
    if req.cnf:
        if not Path(req.cnf).is_file():
            raise UnavailableError(f"--cnf {req.cnf}: no such file")
        cnf = str(Path(req.cnf).absolute())
        sc = sc.amended(lambda data: data.update(translate=True, variants={
            "cnf": {"my_cnf": cnf, "description": f"my.cnf: {req.cnf}"}}))
    elif len(sc.model.variants) != 1:
        raise InputError(f"{req.scenario}: {len(sc.model.variants)} variants; an upgrade runs "
                         "one: give --cnf MY_CNF")
    return (kept_awake(sc, req.note) if awake else sc), next(iter(sc.model.variants))


def sequential(req: CompareRequest, duration: str, sc: LoadedScenario, pair: list[str],
               progress: Progress) -> SequentialRule:
    """The stopping rule of ``--budget``/``--effect`` (one server: its rounds are what
    the looks count)."""
    servers = req.servers or [s.name or s.title for s in sc.model.servers]
    if len(servers) != 1:
        raise InputError(f"--budget: one server at a time ({len(servers)} given; pick one "
                         "with --server)")
    try:
        budget = Budget(parse_duration(duration))
    except ValueError as e:
        raise InputError(f"--budget {e}") from None
    if not 0 < req.effect < 100:
        raise InputError(f"--effect {req.effect:g}: a percentage above 0, e.g. 3")
    kind = sc.model.workload.kind
    figures = workloads.plugin(kind).figures
    if req.watch and not any(req.watch in (f.regress, f.key) for f in figures):
        raise InputError(f"--watch {req.watch}: the {kind} workload's figures are "
                         + ", ".join(str(f.regress or f.key) for f in figures))
    return SequentialRule(pair[0], pair[1], req.effect / 100, budget, alpha=req.alpha,
                          log=progress.log, watch=req.watch)
