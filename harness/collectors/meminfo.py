"""/proc/meminfo, named as node_exporter names it (node_memory_*_bytes), so existing
dashboards work."""
from __future__ import annotations

import re

from .base import MB, Line, Panel, Point
from .procfile import ProcFile


def parse_meminfo(text: str) -> list[Point]:
    """/proc/meminfo -> node_memory_<Key>_bytes (kB values) or node_memory_<Key> (counts)."""
    out: list[Point] = []
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z0-9_()]+):\s+(\d+)(?:\s+(kB))?$", line)
        if not m:
            continue
        key = m.group(1).replace("(", "_").replace(")", "")
        if m.group(3):
            out.append((f"node_memory_{key}_bytes", float(m.group(2)) * 1024, None))
        else:
            out.append((f"node_memory_{key}", float(m.group(2)), None))
    return out


class Meminfo(ProcFile):
    name = "meminfo"
    panels = (Panel("page cache: dirty (MB)", (Line("meminfo", "node_memory_Dirty_bytes",
                                                    scale=1 / MB),)),)
    server_access = "reads"
    path = "/proc/meminfo"
    parse = staticmethod(parse_meminfo)


PLUGIN = Meminfo
