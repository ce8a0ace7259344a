"""/proc/vmstat as node_exporter shows it (``node_vmstat_*``: swap-ins and -outs,
page-ins and -outs, faults, OOM kills, in pages or events since boot), so Grafana and
PMM dashboards work unchanged."""
from __future__ import annotations

from .base import Point
from .procfile import ProcFile

# What node_exporter's vmstat collector exports by default.
VMSTAT_FIELDS = ("pgfault", "pgmajfault", "pgpgin", "pgpgout", "pswpin", "pswpout",
                 "oom_kill")


def parse_proc_vmstat(text: str) -> list[Point]:
    """/proc/vmstat -> node_vmstat_<field> (node_exporter's default fields)."""
    out: list[Point] = []
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key in VMSTAT_FIELDS and value.strip().isdigit():
            out.append((f"node_vmstat_{key}", float(value), None))
    return out


class ProcVmstat(ProcFile):
    name = "node_vmstat"
    server_access = "reads"
    path = "/proc/vmstat"
    parse = staticmethod(parse_proc_vmstat)


PLUGIN = ProcVmstat
