"""The switchback design of ``harness compare``: the scenario it runs.

One run of the workload on one server, cut into windows of ``window_s`` seconds after
the warmup; each window starts with SET GLOBAL of its side's values of the options that
differ, in quads of ABBA or BAAB, each quad's orientation drawn at random here (the
verdict's test rests on that coin: analysis/switchback.py).
Only where every option that differs can change at run time: the first window sets its
side's values (the baseline's again, or the candidate's), so a static option is refused
there, the run stops at once, and ``compare --design auto`` falls back to interleaved
runs. The server starts with the baseline's options, or the candidate's when it leaves
options to the server's default: that side's windows set them back to the values read
at the start (the defaults as the server computed them).
"""
from __future__ import annotations

import random
from typing import Any

from ..analysis.switchback import EVENT_PREFIX, schedule
from ..scenario import LoadedScenario
from ..server.catalog import Build
from ..server.mycnf import norm, resolved_name

VARIANT = "switchback"


def why_not(sc: LoadedScenario, pair: list[str], build: Build | None = None) -> str | None:
    """Why the comparison cannot be run as a switchback (None: it can)."""
    try:
        differing(sc, pair, build)
    except SwitchbackError as e:
        return str(e)
    m = sc.model
    if m.side_loads:
        return "it has side loads (their phases would fall in some windows only)"
    if m.config_changes:
        return "it has config_changes of its own"
    if not hasattr(m.workload, "duration_s"):
        return f"its workload ({m.workload.kind}) does not run for a duration"
    if getattr(m.workload, "ramp", None):
        return "its workload ramps its threads"
    return None


def _options(sc: LoadedScenario, variant: str, build: Build | None) -> dict[str, Any]:
    """A variant's options by the names SET GLOBAL knows: its my.cnf read as ``build``'s
    mysqld reads it (every group it reads, includes; a prefix it takes resolved), or
    without a build the file's [mysqld] section alone."""
    file = sc.variant_file(variant, build) if build is not None else None
    return {(resolved_name(build, k, v) if build is not None else norm(k)): v
            for k, v in sc.variant_options(variant, file).items()}


def differing(sc: LoadedScenario, pair: list[str], build: Build | None = None
              ) -> dict[str, tuple[Any, Any]]:
    """{option: (baseline value, candidate value)} of the options that differ; None:
    that side leaves it to the server's default. The server starts with the options of
    the side that leaves options out (:func:`started_with`) and reads the defaults
    there, so options left out by each side in turn are refused."""
    a, b = (_options(sc, name, build) for name in pair)
    only = [sorted(set(x) - set(y)) for x, y in ((a, b), (b, a))]
    if only[0] and only[1]:
        raise SwitchbackError(
            f"{', '.join(only[0])} set by the baseline only and {', '.join(only[1])} by the "
            "candidate only: the server starts with one side's options and reads the "
            "other's defaults there (give them on both sides to compare by switchback)")
    return {k: (a.get(k), b.get(k)) for k in sorted({*a, *b}) if a.get(k) != b.get(k)}


def started_with(diff: dict[str, tuple[Any, Any]]) -> int:
    """Which side's options the server starts with (0 the baseline, 1 the candidate):
    the one that leaves options to the server's default (the baseline when neither
    does), so the values read at the start are those defaults, as the server computed
    them with that side's other options."""
    return 1 if any(b is None for _, b in diff.values()) else 0


def window_change(diff: dict[str, tuple[Any, Any]], side: int) -> dict[str, Any]:
    """A window's SET GLOBAL for ``side`` (0 A, 1 B): the values it gives, and the
    options it leaves to the server's default set back to the value read at the start."""
    return {"set_global": {k: v[side] for k, v in diff.items() if v[side] is not None},
            "reset": [k for k, v in diff.items() if v[side] is None]}


class SwitchbackError(ValueError):
    """The comparison cannot be run as a switchback (the words say why)."""


def scenario(sc: LoadedScenario, pair: list[str], window_s: int, windows: int,
             build: Build | None = None) -> LoadedScenario:
    """The switchback scenario: one variant (the baseline's options) whose measured
    part is ``windows`` windows, each marked by a config change named
    ``switchback-<i>-<A|B>``, the quads' orientations drawn from the system's
    randomness (the run's events keep them)."""
    diff = differing(sc, pair, build)
    sides = schedule(windows, random.SystemRandom())
    start = started_with(diff)

    def windowed(data: dict[str, Any]) -> None:
        data["variants"] = {VARIANT: dict(data["variants"][pair[start]], description=(
            f"switchback: {pair[0]} (A) and {pair[1]} (B) in {windows} windows of "
            f"{window_s} s, quads ABBA or BAAB at random; the server started with "
            f"{pair[start]}'s options"))}
        data["workload"]["duration_s"] = window_s * windows
        data["config_changes"] = [
            {"name": f"{EVENT_PREFIX}{i}-{side}", "stop_run_on_error": True,
             "start": {"after": "warmup", "delay_s": i * window_s},
             **window_change(diff, 0 if side == "A" else 1)}
            for i, side in enumerate(sides)]
        data.pop("repetitions", None)
    return sc.amended(windowed)
