"""The mysqld process from /proc (harness_mysqld_*): its CPU, threads, memory, swap and
IO, the server's own view."""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from .. import procfs
from .base import MB, Line, Panel, Point, PolledCollector, Unsupported


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
        self.pid = self.ctx.mysqld_pid
        self.base = Path(f"/proc/{self.pid}")

    def collect(self) -> Iterable[Point]:
        st = procfs.read(self.pid)
        out: list[Point] = [
            ("harness_mysqld_cpu_seconds_total", st.utime_s, {"mode": "user"}),
            ("harness_mysqld_cpu_seconds_total", st.stime_s, {"mode": "system"}),
            ("harness_mysqld_threads", st.threads, None)]
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


PLUGIN = MysqldProcess
