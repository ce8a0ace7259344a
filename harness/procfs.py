"""One reading of ``/proc/PID/stat`` (proc(5)), for every part of the harness that
asks what a process is, whose child it is and how much CPU it has used: the server's
and the clients' CPU collectors, perf's expected sample count, the store's check that
a run's writer still lives, the benchmarks of the harness's own cost; and the TCP
addresses a process listens on (a sandbox's check that it listens where it was told);
and ``/proc/meminfo``'s lines (the host's facts, the memory a my.cnf asks for)."""
from __future__ import annotations

import ipaddress
import os
import sys
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


def listening(pid: int) -> list[str]:
    """The TCP addresses process ``pid`` listens on, as ``address:port`` (IPv6 in
    brackets), sorted: its socket inodes (``/proc/PID/fd``) looked up in its network
    namespace's tables (``/proc/PID/net/tcp``, ``tcp6``; proc(5)). Reading another
    account's process needs root (OSError otherwise)."""
    inodes = {link[8:-1] for link in _fd_links(pid) if link.startswith("socket:[")}
    found = []
    for table, v6 in (("tcp", False), ("tcp6", True)):
        rows = Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]
        found += [_address(f[1], v6) for f in map(str.split, rows)
                  if f[3] == "0A" and f[9] in inodes]  # 0A: TCP_LISTEN
    return sorted(found)


def _fd_links(pid: int) -> list[str]:
    out = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            out.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except OSError:  # closed meanwhile
            continue
    return out


def _address(field: str, v6: bool) -> str:
    """``0100007F:0CEA`` -> ``127.0.0.1:3306``: the kernel prints each 32-bit word of
    the address in the host's byte order, the port as a number."""
    addr, port = field.split(":")
    raw = bytes.fromhex(addr)
    if sys.byteorder == "little":
        raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
    if v6:
        return f"[{ipaddress.IPv6Address(raw)}]:{int(port, 16)}"
    return f"{ipaddress.IPv4Address(raw)}:{int(port, 16)}"


def meminfo_kb(key: str) -> int | None:
    """One line of /proc/meminfo in kB (``MemTotal``, ``SwapTotal`` ...); None when the
    file or the line is not there."""
    try:
        text = Path("/proc/meminfo").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return None
