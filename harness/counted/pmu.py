"""Whether this host's hardware counts instructions (a PMU that perf reaches): on lab
hardware it does; on a VM without counters ``perf stat -e instructions`` answers
``<not supported>``. The harness counts with callgrind either way and says which
counter it used and what the hardware answered."""
from __future__ import annotations

from .. import proc
from ..errors import ToolError
from .perf import event


def hardware_counter() -> str:
    """What ``perf stat -e instructions:u`` (or HARNESS_PERF_EVENT's event) answers on
    this host, in a few words."""
    name = event()
    try:
        r = proc.run([proc.which("perf"), "stat", "-x,", "-e", name, "true"],
                     timeout=30, what="perf stat", check=False)
    except (ToolError, OSError) as e:
        return f"perf could not run ({e})"
    fields = (r.stderr.strip().splitlines() or [""])[-1].split(",")
    try:
        float(fields[0])
    except ValueError:
        return f"{name} {fields[0].strip() or 'not counted'}"
    return f"{name} counted ({fields[0].strip()} for 'true')"


def counts(answer: str) -> bool:
    """Whether :func:`hardware_counter`'s answer is a count."""
    return " counted (" in answer
