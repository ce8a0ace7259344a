"""OS collectors: ``vmstat 1`` (its own columns: ``si``, ``so``, ``wa`` ..., which
node_exporter does not have; Prometheus sees them as ``harness_vmstat_*``), and, named
as node_exporter names them so existing dashboards work, /proc/meminfo
(node_memory_*_bytes) and /proc/diskstats (node_disk_*); the mysqld process from /proc
(harness_mysqld_*), and a container's cgroups (container_*, as cAdvisor names them).
/proc/vmstat and /proc/stat are in node.py."""
from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from .. import proc
from ..host.profile import CGROUP_ROOT, cgroups_of
from .base import (
    MB,
    Collector,
    CollectorContext,
    Line,
    Panel,
    Point,
    PolledCollector,
    Unsupported,
)

_TICKS = os.sysconf("SC_CLK_TCK")


# procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu-----
#  r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st
#  1  0      0 23673096   3252 901064    0    0   785  1992 1290 3531  8  5 86  0  0
def parse_vmstat_header(line: str) -> list[str] | None:
    cols = line.split()
    return cols if cols[:2] == ["r", "b"] else None


def parse_vmstat_line(header: list[str], line: str) -> list[Point] | None:
    parts = line.split()
    if len(parts) != len(header) or not all(p.isdigit() for p in parts):
        return None
    # memory columns are KiB with the default unit; stored in bytes
    kib = {"swpd", "free", "buff", "cache", "inact", "active"}
    return [(c + ("_bytes" if c in kib else ""),
             float(v) * (1024 if c in kib else 1), None) for c, v in zip(header, parts,
                                                                          strict=True)]


class Vmstat(Collector):
    """The real ``vmstat -n 1`` stream (its first line, averages since boot, is skipped)."""

    name = "vmstat"
    panels = (
        Panel("vmstat CPU %", (Line("vmstat", "us", "user"), Line("vmstat", "sy", "system"),
                               Line("vmstat", "wa", "iowait"))),
        Panel("vmstat blocks in / out per s", (Line("vmstat", "bi", "in"),
                                               Line("vmstat", "bo", "out"))),
        Panel("swap in / out (vmstat si, so: KB/s)", (Line("vmstat", "si", "in"),
                                                      Line("vmstat", "so", "out"))))
    server_access = "reads"
    default_interval_s = 1.0

    def __init__(self, ctx: CollectorContext, interval_s: float | None = None):
        super().__init__(ctx, interval_s)
        self.header: list[str] | None = None
        self.lines = 0
        self.stream: proc.LineStream | None = None

    def _on_line(self, line: str) -> None:
        if self.header is None:
            self.header = parse_vmstat_header(line)
            return
        points = parse_vmstat_line(self.header, line)
        if points is None:
            return
        self.lines += 1
        if self.lines == 1:
            return  # since-boot averages, not this interval
        self.emit(self.ctx.clock(), points)

    def __enter__(self) -> Vmstat:
        if self.ctx.remote_host and self.ctx.remote is None:
            note = f"{self.name}: not collected: {_elsewhere(self.ctx)}"
            self.ctx.notes.append(note)
            self.ctx.event(self.ctx.clock(), "collector_skipped", self.name,
                           {"reason": _elsewhere(self.ctx)})
            return self
        every = str(max(1, int(self.interval_s)))
        argv = (self.ctx.remote.wrap(["vmstat", "-n", every]) if self.ctx.remote
                else [proc.which("vmstat", "apt-get install procps"), "-n", every])
        if self.ctx.remote:
            self.ctx.notes.append(f"{self.name}: sampled on {self.ctx.remote.where} over "
                                  "its connection")
        self.stream = proc.LineStream(argv, self._on_line, self.ctx.artifacts / "vmstat.log",
                                      what="vmstat", grace_s=1.0)
        self.stream.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.stream is not None:
            self.stream.__exit__(*exc)


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


class ProcFile(PolledCollector):
    """A /proc file read and parsed at every tick."""

    path = ""

    @staticmethod
    def parse(text: str) -> list[Point]:
        raise NotImplementedError

    stream: proc.LineStream | None = None

    def setup(self) -> None:
        if self.ctx.remote_host and self.ctx.remote is None:
            raise Unsupported(_elsewhere(self.ctx))
        if self.ctx.remote is not None:
            # The file read there once per interval, over one connection.
            self._block: list[str] = []
            self._latest: str | None = None
            every = max(1, int(self.interval_s))
            self.stream = proc.LineStream(self.ctx.remote.wrap([
                "sh", "-c", f"while :; do cat {self.path}; echo {_BLOCK_END}; "
                            f"sleep {every}; done"]), self._on_line,
                what=f"{self.name} on {self.ctx.remote.where}", grace_s=1.0)
            self.stream.__enter__()
            self.ctx.notes.append(f"{self.name}: sampled on {self.ctx.remote.where} over "
                                  "its connection")

    def _on_line(self, line: str) -> None:
        if line.strip() == _BLOCK_END:
            self._latest, self._block = "".join(self._block), []
        else:
            self._block.append(line if line.endswith("\n") else line + "\n")

    def collect(self) -> Iterable[Point]:
        if self.stream is None:
            return self.parse(Path(self.path).read_text())
        return self.parse(self._latest) if self._latest is not None else []

    def teardown(self) -> None:
        if self.stream is not None:
            self.stream.__exit__(None, None, None)


_BLOCK_END = "--harness-block-end--"


def _elsewhere(ctx: CollectorContext) -> str:
    return (f"mysqld runs on {ctx.remote_host}, and this collector reads this machine's "
            "OS")


class Meminfo(ProcFile):
    name = "meminfo"
    panels = (Panel("page cache: dirty (MB)", (Line("meminfo", "node_memory_Dirty_bytes",
                                                    scale=1 / MB),)),)
    server_access = "reads"
    path = "/proc/meminfo"
    parse = staticmethod(parse_meminfo)


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


def parse_proc_stat(text: str) -> tuple[float, float, float]:
    """utime, stime (seconds) and thread count from /proc/PID/stat."""
    rest = text[text.rindex(")") + 2:].split()  # the command name may hold spaces
    return int(rest[11]) / _TICKS, int(rest[12]) / _TICKS, float(rest[17])


class MysqldProcess(PolledCollector):
    """CPU, memory and IO of the mysqld process, from /proc (the server's own view)."""

    name = "mysqld_process"
    panels = (Panel("mysqld swapped out (MB)", (Line(
        "mysqld_process", "harness_mysqld_swap_bytes", scale=1 / MB),)),)
    server_access = "reads"
    default_interval_s = 1.0

    def setup(self) -> None:
        if not self.ctx.mysqld_pid:
            raise Unsupported("the mysqld process is not on this host")
        self.base = Path(f"/proc/{self.ctx.mysqld_pid}")

    def collect(self) -> Iterable[Point]:
        utime, stime, threads = parse_proc_stat((self.base / "stat").read_text())
        out: list[Point] = [
            ("harness_mysqld_cpu_seconds_total", utime, {"mode": "user"}),
            ("harness_mysqld_cpu_seconds_total", stime, {"mode": "system"}),
            ("harness_mysqld_threads", threads, None)]
        for line in (self.base / "status").read_text().splitlines():
            if line.startswith(("VmRSS:", "VmSwap:", "VmSize:")):
                key, kb = line.split()[0][2:-1].lower(), float(line.split()[1])
                out.append((f"harness_mysqld_{key}_bytes", kb * 1024, None))
        try:
            io = dict(line.split(": ") for line in (self.base / "io").read_text().splitlines())
            out.append(("harness_mysqld_read_bytes_total", float(io["read_bytes"]), None))
            out.append(("harness_mysqld_write_bytes_total", float(io["write_bytes"]), None))
        except (OSError, KeyError):
            pass  # /proc/PID/io needs the same user or root
        return out


class Container(PolledCollector):
    """Memory and CPU of mysqld's container, from its cgroups: the container's view of
    memory (what its limit counts), where meminfo and vmstat show the host's. Series
    are labelled view="container" and the container's name (cAdvisor's metric names)."""

    name = "container"
    server_access = "reads"
    default_interval_s = 1.0

    def setup(self) -> None:
        if not self.ctx.container or not self.ctx.mysqld_pid:
            raise Unsupported("the server is not a container")
        cg = cgroups_of(self.ctx.mysqld_pid)
        if "memory" not in cg or "cpuacct" not in cg:
            raise Unsupported("no cgroup v1 memory/cpuacct hierarchy for the container")
        self.mem = CGROUP_ROOT / "memory" / cg["memory"].lstrip("/")
        self.cpu = CGROUP_ROOT / "cpuacct" / cg["cpuacct"].lstrip("/")
        self.labels = {"view": "container", "container": self.ctx.container}

    def collect(self) -> Iterable[Point]:
        stat = dict(line.split() for line in (self.mem / "memory.stat").read_text()
                    .splitlines())
        lb = self.labels
        out: list[Point] = [
            ("container_memory_usage_bytes",
             float((self.mem / "memory.usage_in_bytes").read_text()), lb),
            # The limit in force: the lowest of the container's and its parents' (a
            # host profile is the container's cgroup parent).
            ("container_spec_memory_limit_bytes", float(stat["hierarchical_memory_limit"]),
             lb),
            ("container_cpu_usage_seconds_total",
             float((self.cpu / "cpuacct.usage").read_text()) / 1e9, lb)]
        for key, metric in (("total_rss", "rss"), ("total_cache", "cache"),
                            ("total_swap", "swap"), ("total_dirty", "dirty"),
                            ("total_writeback", "writeback")):
            if key in stat:
                out.append((f"container_memory_{metric}", float(stat[key]), lb))
        return out
