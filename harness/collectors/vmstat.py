"""``vmstat -n 1`` as it streams: its own columns (``si``, ``so``, ``wa`` ..., which
node_exporter does not have; Prometheus sees them as ``harness_vmstat_*``), on the
server's host: this machine, or a lab host over its connection."""
from __future__ import annotations

from .. import proc
from .base import Collector, CollectorContext, Line, Panel, Point
from .procfile import elsewhere


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
            note = f"{self.name}: not collected: {elsewhere(self.ctx)}"
            self.ctx.notes.append(note)
            self.ctx.event(self.ctx.clock(), "collector_skipped", self.name,
                           {"reason": elsewhere(self.ctx)})
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


PLUGIN = Vmstat
