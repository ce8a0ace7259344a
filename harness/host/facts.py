"""Facts about the machine a run happens on, recorded with every run (as pyperf does)."""
from __future__ import annotations

import functools
import os
import platform
import shutil
import socket
import sys
from pathlib import Path
from typing import Any

from .. import __version__, proc
from ..errors import ToolError
from ..paths import CHECKOUT
from ..procfs import meminfo_kb


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def _cpu_model() -> str | None:
    text = _read("/proc/cpuinfo") or ""
    for line in text.splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return None


@functools.cache
def harness_commit() -> str | None:
    """The git commit the harness runs from (``+dirty`` with uncommitted changes to its
    code), or None outside a checkout: so ``harness regress`` can blame a harness change."""
    top = CHECKOUT
    if not (top / ".git").exists() or shutil.which("git") is None:
        return None
    git = ["git", "-C", str(top)]
    try:
        head = proc.run([*git, "rev-parse", "--short=12", "HEAD"], timeout=10, check=False)
        dirty = proc.run([*git, "status", "--porcelain", "--", "harness", "ansible", "docker"],
                         timeout=10, check=False)
    except (OSError, ToolError):
        return None
    if head.returncode != 0:
        return None
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def _tool_version(argv: list[str]) -> str | None:
    if shutil.which(argv[0]) is None:
        return None
    try:
        r = proc.run(argv, timeout=10, check=False)
    except (OSError, ToolError):
        return None
    return (r.stdout or r.stderr).strip().splitlines()[0] if (r.stdout or r.stderr) else None


def busy_processes(threshold_pct: float = 20.0) -> list[str]:
    """Other processes using a lot of CPU (a noisy machine skews results); the harness's
    own children (a server it keeps between runs) are not "other"."""
    try:
        r = proc.run(["ps", "-eo", "pcpu,pid,ppid,comm", "--sort=-pcpu", "--no-headers"],
                     timeout=10, check=False)
    except (OSError, ToolError):
        return []
    out = []
    me = os.getpid()
    for line in r.stdout.splitlines()[:10]:
        parts = line.split(None, 3)
        if len(parts) == 4 and float(parts[0]) >= threshold_pct and \
                me not in (int(parts[1]), int(parts[2])):
            out.append(f"{parts[3]} (pid {parts[1]}, {parts[0]}% cpu)")
    return out


def host_facts() -> dict[str, Any]:
    gov = _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
    thp = _read("/sys/kernel/mm/transparent_hugepage/enabled")
    mem_kb = meminfo_kb("MemTotal")
    swap_kb = meminfo_kb("SwapTotal")
    return {
        "hostname": socket.gethostname(),
        "kernel": platform.release(),
        "os": _read("/etc/debian_version") and f"Debian {_read('/etc/debian_version')}",
        "cpu_model": _cpu_model(),
        "cpus": os.cpu_count(),
        "cpu_governor": gov,
        "thp": thp,
        "mem_total_mb": mem_kb // 1024 if mem_kb else None,
        "swap_total_mb": swap_kb // 1024 if swap_kb is not None else None,
        "swappiness": _read("/proc/sys/vm/swappiness"),
        "dirty_ratio": _read("/proc/sys/vm/dirty_ratio"),
        "dirty_background_ratio": _read("/proc/sys/vm/dirty_background_ratio"),
        "loadavg": _read("/proc/loadavg"),
        "busy_processes": busy_processes(),
        "python": sys.version.split()[0],
        "harness": __version__,
        "harness_commit": harness_commit(),
        "sysbench": _tool_version(["sysbench", "--version"]),
    }
