"""The switchback design of ``harness compare``: the scenario it runs.

One run of the workload on a server started with the baseline's options, cut into
windows of ``window_s`` seconds after the warmup; each window starts with SET GLOBAL of
its side's values of the options that differ, in quads of ABBA or BAAB, each quad's
orientation drawn at random here (the verdict's test rests on that coin:
analysis/switchback.py).
Only where every option that differs can change at run time: the first window sets its
side's values (the baseline's again, or the candidate's), so a static option is refused
there, the run stops at once,
and ``compare --design auto`` falls back to interleaved runs.
"""
from __future__ import annotations

import random
from typing import Any

from ..analysis.switchback import EVENT_PREFIX, schedule
from ..scenario import LoadedScenario
from ..server.mycnf import norm

VARIANT = "switchback"


def why_not(sc: LoadedScenario, pair: list[str]) -> str | None:
    """Why the comparison cannot be run as a switchback (None: it can)."""
    try:
        differing(sc, pair)
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


def differing(sc: LoadedScenario, pair: list[str]) -> dict[str, tuple[Any, Any]]:
    """{option: (baseline value, candidate value)} of the options that differ. An
    option one side leaves out is refused: its value there is the server's default,
    which the run would have to name before the server is up."""
    a, b = ({norm(k): v for k, v in sc.variant_options(name).items()} for name in pair)
    one_sided = sorted(k for k in {*a, *b} if (k in a) != (k in b))
    if one_sided:
        raise SwitchbackError(
            f"{', '.join(one_sided)}: set by one side only (give it on both sides, the "
            "server's default on the other, to compare by switchback)")
    return {k: (a[k], b[k]) for k in sorted(a) if a[k] != b[k]}


class SwitchbackError(ValueError):
    """The comparison cannot be run as a switchback (the words say why)."""


def scenario(sc: LoadedScenario, pair: list[str], window_s: int, windows: int) -> LoadedScenario:
    """The switchback scenario: one variant (the baseline's options) whose measured
    part is ``windows`` windows, each marked by a config change named
    ``switchback-<i>-<A|B>``, the quads' orientations drawn from the system's
    randomness (the run's events keep them)."""
    diff = differing(sc, pair)
    sides = schedule(windows, random.SystemRandom())

    def windowed(data: dict[str, Any]) -> None:
        data["variants"] = {VARIANT: dict(data["variants"][pair[0]], description=(
            f"switchback: {pair[0]} (A) and {pair[1]} (B) in {windows} windows of "
            f"{window_s} s, quads ABBA or BAAB at random"))}
        data["workload"]["duration_s"] = window_s * windows
        data["config_changes"] = [
            {"name": f"{EVENT_PREFIX}{i}-{side}", "stop_run_on_error": True,
             "start": {"after": "warmup", "delay_s": i * window_s},
             "set_global": {k: ab[0 if side == "A" else 1] for k, ab in diff.items()}}
            for i, side in enumerate(sides)]
        data.pop("repetitions", None)
    return sc.amended(windowed)
