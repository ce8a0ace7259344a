"""``harness run --measure instructions`` (or a scenario's ``measure: instructions``):
counted runs, printed as they are stored."""
from __future__ import annotations

import argparse
import json
import sys

from .. import formats
from ..errors import InputError
from ..progress import Progress
from ..runner.counted_plan import probe_of
from ..runner.counted_run import WINDOWS, counted_runs
from ..scenario import LoadedScenario, load_scenario
from ..store import Store


def measure_of(a: argparse.Namespace, sc: LoadedScenario) -> str:
    """--measure, else the scenario's ``measure:``; --events and --windows only with
    instructions."""
    measure = str(a.measure or sc.model.measure)
    if measure != "instructions" and (a.events or a.windows != WINDOWS or
                                      a.counter != "auto"):
        raise InputError("--events, --windows and --counter are a counted run's: give "
                         "--measure instructions")
    return measure


def cmd_counted_run(a: argparse.Namespace, sc: LoadedScenario, store: Store) -> int:
    _check_flags(a)
    run_set, runs = counted_runs(sc, a.server or [], a.variant or [], store, a.events,
                                 a.windows, Progress(quiet=a.quiet), a.counter)
    if a.json:
        print(json.dumps({"format": formats.RUN_SET.marker(), "run_set": run_set,
                          "measure": "instructions", "runs": [
            {"run_id": r.run_id, "server": r.server, "variant": r.variant,
             "status": r.status, "error": r.error,
             "summary": r.summary.to_json() if r.summary else None} for r in runs]},
            indent=2, default=str))
    else:
        print(f"\nrun set {run_set} (instructions counted):")
        for r in runs:
            print(f"  {r.run_id}  {r.line()}")
    return 0 if runs and all(r.status == "ok" for r in runs) else 1


def _check_flags(a: argparse.Namespace) -> None:
    """What a counted run cannot take, refused before anything runs."""
    clashes = [flag for flag, given in (
        ("--target " + a.target, a.target != "local"), ("--basedir", a.basedir),
        ("--keep", a.keep), ("--resume", a.resume), ("--interleave", a.interleave),
        ("--repetitions", a.repetitions), ("--metrics-port", a.metrics_port),
        ("--pushgateway", a.pushgateway), ("--against", a.against)) if given]
    if clashes:
        raise InputError("--measure instructions counts on local sandboxes, one lifetime a "
                         f"server and variant: not with {', '.join(clashes)}")


def countable_of(a: argparse.Namespace, scenarios: list[str]) -> list[str]:
    """With ``nightly --count-instructions``, the night's scenarios that can be counted
    (each other one said, and run timed only); local sandboxes only."""
    if not a.count_instructions:
        return []
    if a.target != "local":
        raise InputError(f"--count-instructions counts on local sandboxes: not with --target "
                         f"{a.target}")
    out = []
    for f in scenarios:
        try:
            probe_of(load_scenario(f))
            out.append(f)
        except InputError as e:
            print(f"nightly: {f} is run timed only, not counted ({e})", file=sys.stderr)
    return out
