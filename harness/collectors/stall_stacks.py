"""Where the server's threads wait when it stalls: the server's statement rate watched
twice a second (``Questions``), and when it falls below a tenth of its recent median
while statements are still running (``Threads_running`` of 2 or more: work is waiting,
not absent), every thread's stack taken once the way pt-pmp takes them (gdb's ``thread
apply all bt``, kept as ``stall-N.gdb.txt``), as Percona's pt-stalk does on a trigger.
The stacks, aggregated by pt-pmp itself (one line per distinct stack, with how many
threads had it), are kept as ``stall-N.pmp.txt`` and folded together into the
run's ``stall.folded``, which the HTML report draws as a flame graph of where threads
waited; each stall is an event with its rates.

Off unless a scenario turns it on (``collectors: {stall_stacks: {enabled: true}}``):
gdb stops mysqld for the moment it takes the stacks (about a second), so at most
``CAPTURES`` stalls a run are taken, ``GAP_S`` seconds apart. Only on a mysqld the
harness started on this machine: never on a server it does not own, in a container or
on a lab host (a note says so).
"""
from __future__ import annotations

import os
import re
import shutil
import statistics
from collections import Counter, deque
from collections.abc import Iterable
from pathlib import Path

from .. import proc
from .base import CollectorContext, FlameGraph, Point, PolledCollector, Unsupported

FOLDED = "stall.folded"
CAPTURES = 3
GAP_S = 10.0
_AGGREGATED = re.compile(r"^ *(\d+) (\S.*)$")  # pt-pmp: "  12 leaf,caller,...,root"


class StallWatch:
    """The stall rule over successive (statements a second, statements running) pairs:
    a stall starts when ``hold`` samples in a row are under ``floor`` times the median
    of the last ``keep`` samples outside stalls (``warm`` of them at least) with two or
    more statements running. :meth:`add` says True once, where a stall starts."""

    def __init__(self, floor: float = 0.1, warm: int = 10, hold: int = 2, keep: int = 60):
        self.floor, self.warm, self.hold = floor, warm, hold
        self.normal: deque[float] = deque(maxlen=keep)
        self.low = 0
        self.baseline: float | None = None

    def add(self, rate: float, running: int) -> bool:
        ready = len(self.normal) >= self.warm
        self.baseline = statistics.median(self.normal) if ready else None
        if self.baseline and rate < self.floor * self.baseline and running >= 2:
            self.low += 1
            return self.low == self.hold
        self.low = 0
        self.normal.append(rate)
        return False


def folded(pmp: str, root: str) -> Counter[str]:
    """pt-pmp's aggregated stacks (leaf first, comma-separated) as folded stacks under
    ``root`` (root first, ``;``-joined), with their thread counts."""
    out: Counter[str] = Counter()
    for line in pmp.splitlines():
        m = _AGGREGATED.match(line)
        if m:
            frames = [f.replace(";", ":") or "?" for f in reversed(m.group(2).split(","))]
            out[";".join([root, *frames])] += int(m.group(1))
    return out


def gdb_argv(pid: int) -> list[str]:
    """pt-pmp's gdb command (every thread's backtrace, once), and where the program was
    mapped by a loader run by hand (a Debian-root build: /proc/PID/exe is the loader, so
    gdb would name none of mysqld's own frames) its symbols added at the address it was
    mapped at."""
    argv = ["gdb", "-batch", "-nx", "-ex", "set pagination 0"]
    program = mapped_program(pid)
    if program is not None:
        argv += ["-ex", f"add-symbol-file {program[0]} -o {program[1]:#x}"]
    return [*argv, "-ex", "thread apply all bt", "-p", str(pid)]


def mapped_program(pid: int) -> tuple[str, int] | None:
    """(path, load address) of the file mapped in ``pid`` under its executable's name
    that is not its executable (the program a loader mapped), or None."""
    try:
        exe = os.readlink(f"/proc/{pid}/exe")
        maps = Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return None
    for line in maps.splitlines():
        parts = line.split(None, 5)
        path = parts[5].strip() if len(parts) == 6 else ""
        if path and path != exe and Path(path).name == Path(exe).name:
            return path, int(parts[0].split("-")[0], 16)
    return None


class StallStacks(PolledCollector):
    name = "stall_stacks"
    on_by_default = False
    # gdb stops the process for a moment: only on a server the harness started.
    server_access = "adapts"
    default_interval_s = 0.5
    marks = {"stall": "stall"}  # stacks were taken here
    flame_graphs = {FOLDED: FlameGraph(
        "Where threads waited in stalls", "Every thread's stack (pt-pmp) when the "
        "statement rate fell below a tenth of its median with statements running, each "
        "stall under its own root.")}

    def __init__(self, ctx: CollectorContext, interval_s: float | None = None):
        super().__init__(ctx, interval_s)
        self.watch = StallWatch()
        self.last: tuple[float, float] | None = None  # (t, Questions)
        self.taken: list[float] = []
        self.pauses: list[float] = []  # each capture's pt-pmp time: mysqld's pause within it
        self.stacks: Counter[str] = Counter()

    def setup(self) -> None:
        why = self._why_not()
        if why:
            raise Unsupported(why)

    def _why_not(self) -> str | None:
        if not self.ctx.owned:
            return "gdb would stop a server the harness does not own"
        if self.ctx.remote_host or self.ctx.container or not self.ctx.mysqld_pid:
            return "mysqld is not a process of this machine that gdb can attach to"
        missing = [t for t in ("pt-pmp", "gdb") if shutil.which(t) is None]
        if missing:
            return f"{' and '.join(missing)} not installed (Debian: percona-toolkit, gdb)"
        return None

    def collect(self) -> Iterable[Point]:
        rows = dict(self.query("SHOW GLOBAL STATUS WHERE Variable_name IN "
                               "('Questions', 'Threads_running')"))
        t, questions = self.ctx.clock(), float(rows["Questions"])
        running = int(rows["Threads_running"])
        last, self.last = self.last, (t, questions)
        if last is None or t <= last[0]:
            return []
        rate = (questions - last[1]) / (t - last[0])
        if self.watch.add(rate, running) and self._may_take(t):
            self._take(t, rate, running)
        return [("harness_stall_statements_per_second", rate, None),
                ("harness_stalled", float(self.watch.low >= self.watch.hold), None)]

    def _may_take(self, t: float) -> bool:
        return len(self.taken) < CAPTURES and (not self.taken or t - self.taken[-1] >= GAP_S)

    def _take(self, t: float, rate: float, running: int) -> None:
        """Every thread's stack once, by pt-pmp; kept, folded, and an event."""
        self.taken.append(t)
        n = len(self.taken)
        raw = self.ctx.artifacts / f"stall-{n}.gdb.txt"
        began = self.ctx.clock()
        taken = proc.run(gdb_argv(int(self.ctx.mysqld_pid or 0)), timeout=120, check=False,
                         what="gdb", env={"DEBUGINFOD_URLS": ""})
        self.pauses.append(self.ctx.clock() - began)  # gdb held mysqld at most this long
        raw.write_text(taken.stdout)
        out = proc.run(["pt-pmp", str(raw)], timeout=120, check=False, what="pt-pmp")
        (self.ctx.artifacts / f"stall-{n}.pmp.txt").write_text(out.stdout + out.stderr)
        got = folded(out.stdout, f"stall {n} at {t:.0f} s")
        self.stacks.update(got)
        self.ctx.event(t, "stall", self.name, {
            "statements_per_second": round(rate, 1), "running": running,
            "baseline": round(self.watch.baseline or 0.0, 1),
            "threads": sum(got.values()), "stacks": f"stall-{n}.pmp.txt",
            "pause_s": round(self.pauses[-1], 2)})

    def teardown(self) -> None:
        if self.taken:
            (self.ctx.artifacts / FOLDED).write_text(
                "".join(f"{s} {n}\n" for s, n in sorted(self.stacks.items())))
        self.ctx.notes.append(
            f"stall_stacks: {len(self.taken)} stall(s) taken" + (
                f" at {', '.join(f'{t:.0f} s' for t in self.taken)} into {FOLDED} (pt-pmp "
                f"took {', '.join(f'{p:.1f} s' for p in self.pauses)}: mysqld stopped "
                "within that)"
                if self.taken else " (none seen)"))


PLUGIN = StallStacks


__all__ = ["FOLDED", "StallStacks", "StallWatch", "folded"]
