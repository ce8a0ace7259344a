"""/proc/stat as node_exporter shows it (``node_cpu_seconds_total`` per CPU and mode,
context switches, interrupts, forks, running and blocked processes)."""
from __future__ import annotations

import os

from .base import Point
from .procfile import ProcFile

_TICKS = os.sysconf("SC_CLK_TCK")


# /proc/stat's cpu columns, as node_exporter names the modes (guest time is inside user).
CPU_MODES = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


_STAT_LINES = {"ctxt": "node_context_switches_total", "processes": "node_forks_total",
               "procs_running": "node_procs_running", "procs_blocked": "node_procs_blocked"}


def parse_node_stat(text: str) -> list[Point]:
    """/proc/stat -> node_cpu_seconds_total{cpu, mode}, node_intr_total and the
    counters and gauges of ``_STAT_LINES``."""
    out: list[Point] = []
    for line in text.splitlines():
        f = line.split()
        if not f:
            continue
        if f[0].startswith("cpu") and f[0] != "cpu":  # per CPU only, as node_exporter
            for mode, ticks in zip(CPU_MODES, f[1:1 + len(CPU_MODES)], strict=False):
                out.append(("node_cpu_seconds_total", int(ticks) / _TICKS,
                            {"cpu": f[0][3:], "mode": mode}))
        elif f[0] == "intr":
            out.append(("node_intr_total", float(f[1]), None))
        elif f[0] in _STAT_LINES:
            out.append((_STAT_LINES[f[0]], float(f[1]), None))
    return out


class ProcStat(ProcFile):
    name = "node_stat"
    server_access = "reads"
    path = "/proc/stat"
    parse = staticmethod(parse_node_stat)


PLUGIN = ProcStat
