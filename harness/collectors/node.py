"""The host as node_exporter shows it, so Grafana and PMM dashboards work unchanged:
/proc/vmstat (``node_vmstat_*``: swap-ins and -outs, page-ins and -outs, faults, OOM
kills, in pages or events since boot) and /proc/stat (``node_cpu_seconds_total`` per CPU
and mode, context switches, interrupts, forks, running and blocked processes). Read on
the server's host: this machine, or a lab host over its connection."""
from __future__ import annotations

import os

from .base import Point
from .host import ProcFile

_TICKS = os.sysconf("SC_CLK_TCK")

# What node_exporter's vmstat collector exports by default.
VMSTAT_FIELDS = ("pgfault", "pgmajfault", "pgpgin", "pgpgout", "pswpin", "pswpout",
                 "oom_kill")
# /proc/stat's cpu columns, as node_exporter names the modes (guest time is inside user).
CPU_MODES = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
_STAT_LINES = {"ctxt": "node_context_switches_total", "processes": "node_forks_total",
               "procs_running": "node_procs_running", "procs_blocked": "node_procs_blocked"}


def parse_proc_vmstat(text: str) -> list[Point]:
    """/proc/vmstat -> node_vmstat_<field> (node_exporter's default fields)."""
    out: list[Point] = []
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key in VMSTAT_FIELDS and value.strip().isdigit():
            out.append((f"node_vmstat_{key}", float(value), None))
    return out


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


class ProcVmstat(ProcFile):
    name = "node_vmstat"
    server_access = "reads"
    path = "/proc/vmstat"
    parse = staticmethod(parse_proc_vmstat)


class ProcStat(ProcFile):
    name = "node_stat"
    server_access = "reads"
    path = "/proc/stat"
    parse = staticmethod(parse_node_stat)
