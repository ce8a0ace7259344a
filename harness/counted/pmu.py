"""Whether this host's hardware counts instructions (a PMU that perf reaches): on lab
hardware it does; on a VM without counters ``perf stat -e instructions`` answers
``<not supported>``. The harness counts with callgrind either way and says which
counter it used and what the hardware answered."""
from __future__ import annotations

from .. import proc
from ..errors import ToolError


def hardware_counter() -> str:
    """What ``perf stat -e instructions:u`` answers on this host, in a few words."""
    try:
        r = proc.run([proc.which("perf"), "stat", "-x,", "-e", "instructions:u", "true"],
                     timeout=30, what="perf stat", check=False)
    except (ToolError, OSError) as e:
        return f"perf could not run ({e})"
    fields = (r.stderr.strip().splitlines() or [""])[-1].split(",")
    if fields and fields[0].strip().isdigit():
        return f"instructions:u counted ({fields[0].strip()} for 'true')"
    return f"instructions:u {fields[0].strip() or 'not counted'}"
