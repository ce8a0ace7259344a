"""/proc/diskstats, named as node_exporter names it (node_disk_* per device)."""
from __future__ import annotations

import re

from .base import Point
from .procfile import ProcFile

_SKIP_DEVICES = re.compile(r"^(loop|ram|sr|fd|zram)\d*")


def parse_diskstats(text: str) -> list[Point]:
    """/proc/diskstats -> node_disk_* per device (sectors are 512 bytes, times in ms)."""
    out: list[Point] = []
    for line in text.splitlines():
        f = line.split()
        if len(f) < 14 or _SKIP_DEVICES.match(f[2]):
            continue
        dev = {"device": f[2]}
        v = [float(x) for x in f[3:14]]
        for metric, value in (
                ("reads_completed_total", v[0]), ("reads_merged_total", v[1]),
                ("read_bytes_total", v[2] * 512), ("read_time_seconds_total", v[3] / 1000),
                ("writes_completed_total", v[4]), ("writes_merged_total", v[5]),
                ("written_bytes_total", v[6] * 512), ("write_time_seconds_total", v[7] / 1000),
                ("io_now", v[8]), ("io_time_seconds_total", v[9] / 1000),
                ("io_time_weighted_seconds_total", v[10] / 1000)):
            out.append((f"node_disk_{metric}", value, dev))
    return out


class Diskstats(ProcFile):
    name = "diskstats"
    server_access = "reads"
    path = "/proc/diskstats"
    parse = staticmethod(parse_diskstats)


PLUGIN = Diskstats
