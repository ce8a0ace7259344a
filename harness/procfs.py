"""One reading of ``/proc/PID/stat`` (proc(5)), for every part of the harness that
asks what a process is, whose child it is and how much CPU it has used: the server's
and the clients' CPU collectors, perf's expected sample count, the store's check that
a run's writer still lives, the benchmarks of the harness's own cost."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class ProcStat:
    program: str  # comm: at most 15 bytes of the executable's name
    ppid: int
    session: int
    utime_s: float
    stime_s: float
    threads: int
    start_ticks: int  # clock ticks after boot: (pid, start_ticks) names one process

    @property
    def cpu_s(self) -> float:
        return self.utime_s + self.stime_s


def parse(raw: bytes | str) -> ProcStat:
    """The fields of one stat line. The name sits between the first "(" and the last
    ")" and may hold spaces and parentheses itself, so the rest is split after it."""
    text = raw.decode(errors="replace") if isinstance(raw, bytes) else raw
    cut = text.rindex(")")
    rest = text[cut + 2:].split()  # rest[0] is field 3 (state) of proc(5)
    return ProcStat(program=text[text.index("(") + 1:cut], ppid=int(rest[1]),
                    session=int(rest[3]), utime_s=int(rest[11]) / TICKS,
                    stime_s=int(rest[12]) / TICKS, threads=int(rest[17]),
                    start_ticks=int(rest[19]))


def read(pid: int) -> ProcStat:
    """Process ``pid``'s stat (OSError once it is gone)."""
    return parse(Path(f"/proc/{pid}/stat").read_bytes())


def read_all() -> dict[int, ProcStat]:
    """Every process's stat, in one pass (one that ends meanwhile is left out)."""
    out = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                out[int(entry)] = read(int(entry))
            except (OSError, ValueError, IndexError):
                continue
    return out


def boot_time() -> float:
    """The epoch second the host booted (``btime`` of /proc/stat)."""
    for line in Path("/proc/stat").read_text().splitlines():
        if line.startswith("btime "):
            return float(line.split()[1])
    raise OSError("/proc/stat has no btime line")
