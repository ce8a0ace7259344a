"""Where mysqld spends its CPU: ``perf record`` of mysqld's stacks at ``hz`` samples a
second (99 by default, off the timer tick) from the start of the run to its end, folded
as Brendan Gregg's stackcollapse-perf folds them (``thread;root;...;leaf count``, one
line per stack) into the run's ``cpu.folded``, which the HTML report draws as a flame
graph. The build's own symbols name the frames (perf reads them from the binaries mysqld
mapped, a Debian-root build's too). With ``threads: [1, ...]`` it records only while the
workload runs those client thread counts (as each workload says them: a ramp's step,
its hold), paused through perf's control FIFO in between; each stretch is a
``profiling`` event, so mysqld's CPU per transaction can be read over the same seconds.

Off unless a scenario turns it on (``collectors: {cpu_profile: {enabled: true, hz:
99}}``). perf samples every CPU mysqld may run on and keeps mysqld's samples: per-CPU
events cost mysqld nothing measurable here (x1.025 [0.965, 1.088] CPU a transaction),
where events on mysqld's own threads (``perf -p``) cost it x1.132 [1.083, 1.183]
(docs/collectors.md), because this VM has no hardware counters and perf's clock event is
then a timer started and stopped at every switch of those threads.
A non-root harness the kernel allows only ``-p`` (perf_event_paranoid 1) gets that, and
its note says so. Off, with a note saying why, where perf cannot see mysqld: no perf, a
mysqld on another machine or in a container, a kernel that refuses (perf_event_paranoid
above 1 for a non-root harness)."""
from __future__ import annotations

import errno
import os
import re
import select
import shutil
import signal
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path

from .. import proc, procfs
from .base import PROFILING, Collector, CollectorContext, FlameGraph

FOLDED = "cpu.folded"
ENABLE_TIMEOUT_S = 60.0  # perf's set-up on a busy host
_OFFSET = re.compile(r"\+0x[0-9a-f]+$")
_TROUBLE = re.compile(r"^\s*(LOST|LOST_SAMPLES|THROTTLE) events:\s+(\d+)", re.M)


def fold(script: str) -> Counter[str]:
    """``perf script -F comm,ip,sym`` output -> folded stacks: the thread's name, then
    the frames from the root to the leaf, ``;``-joined, with their sample counts."""
    stacks: Counter[str] = Counter()
    comm: str | None = None
    frames: list[str] = []
    for line in [*script.splitlines(), ""]:
        if not line.strip():
            if comm is not None:
                stacks[";".join([comm, *reversed(frames)])] += 1
            comm, frames = None, []
        elif line.startswith("\t") and comm is not None:
            frames.append(_frame(line))
        elif comm is None:
            comm = line.strip().replace(";", ":") or "?"
    return stacks


def _frame(line: str) -> str:
    """One callchain line (``\\t<ip> <symbol>``) as a frame name: the symbol without its
    offset and argument list, ``[unknown]`` without one."""
    parts = line.split(None, 1)
    sym = _OFFSET.sub("", parts[1].strip()) if len(parts) > 1 else "[unknown]"
    if sym.endswith(")") and "(" in sym and not sym.startswith("operator"):
        sym = sym[:sym.index("(")]
    return sym.replace(";", ":") or "[unknown]"


class CpuProfile(Collector):
    name = "cpu_profile"
    on_by_default = False
    server_access = "reads"  # perf reads the process; the server is not touched
    hz_default = 99
    flame_graphs = {FOLDED: FlameGraph(
        "CPU flame graph",
        "perf samples of mysqld's stacks over the run (or the thread counts it was told).",
        differential=True)}

    def __init__(self, ctx: CollectorContext, interval_s: float | None = None):
        super().__init__(ctx, interval_s)
        self.p: subprocess.Popen[bytes] | None = None
        self.data = ctx.artifacts / "perf.data"
        self.log = ctx.artifacts / "perf-record.log"
        self.fifos: Path | None = None
        self.scope: list[str] = []
        # While perf records: mysqld's CPU seconds and the run clock when it began;
        # what it recorded so far (both None: mysqld's CPU time could not be read).
        self.recording: tuple[float | None, float] | None = None
        self.used: float | None = 0.0
        self.seconds = 0.0

    def __enter__(self) -> CpuProfile:
        why = self._why_not()
        if why:
            self.ctx.notes.append(f"cpu_profile: not recorded: {why}")
            self.ctx.event(self.ctx.clock(), "collector_skipped", self.name, {"reason": why})
            return self
        self.scope = self._scope()
        self.fifos = Path(tempfile.mkdtemp(prefix="perf-control-"))
        ctl, ack = self.fifos / "ctl", self.fifos / "ack"
        os.mkfifo(ctl, 0o600)
        os.mkfifo(ack, 0o600)
        # Started with its events off (-D -1) and switched on through its control FIFO:
        # the ack comes once perf has opened an event on every thread of mysqld, so the
        # workload's connection threads, made after, inherit one. Without the handshake
        # a run on a busy host got 5 samples where mysqld used 2.97 CPU s; the likely
        # cause (not proven: beside CPU hogs the old code also passed) is perf still
        # setting itself up while sysbench connected, missing those threads.
        with open(self.log, "wb") as log:
            self.p = proc.popen(["perf", "record", "-F", str(self.hz), "-g", "--quiet",
                                 "-D", "-1", "--control", f"fifo:{ctl},{ack}",
                                 *self.scope, "-o", str(self.data)],
                                stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
        if not self.command("enable", ENABLE_TIMEOUT_S):
            said = self.log.read_text(errors="replace")[-300:].strip()
            self.ctx.notes.append("cpu_profile: perf record did not start recording "
                                  f"(perf 5.9 or later is needed for --control): {said}")
            proc.stop_process(self.p, grace_s=5, first=signal.SIGINT)
            self.p = None
            shutil.rmtree(self.fifos, ignore_errors=True)
            self.fifos = None
            return self
        self.recording = (self._mysqld_cpu_s(), self.ctx.clock())
        self.ctx.notes.append(
            f"cpu_profile: perf at {self.hz} Hz: at 99 Hz no cost seen within 3% of "
            "throughput or mysqld's CPU a transaction on mariadb-10.11 and mysql-5.7.29 "
            "(measured, docs/collectors.md); a higher rate costs more")
        if self.only_threads and self.command("disable"):
            self.recording = None  # until the workload runs one of those thread counts
        return self

    def at_threads(self, threads: int) -> None:
        """With ``threads:`` set, record while the workload runs one of those counts."""
        if self.only_threads and self.p is not None:
            _ = self.resume() if threads in self.only_threads else self.pause()

    def pause(self) -> bool:
        """Stop recording for now (perf's events off: it costs nothing meanwhile);
        whether perf acked. What it recorded so far is counted for the note."""
        if self.recording is None:
            return self.p is not None
        if not self.command("disable"):
            return False
        self._count()
        return True

    def resume(self) -> bool:
        """Record again after :meth:`pause`; whether perf acked."""
        if self.recording is not None:
            return True
        if self.p is None or not self.command("enable"):
            return False
        self.recording = (self._mysqld_cpu_s(), self.ctx.clock())
        self._said("start", self.recording[1])
        return True

    def _said(self, what: str, t: float) -> None:
        """With ``threads:``, each stretch recorded is an event (``profiling``, start or
        stop, naming the artifact): the upgrade's CPU by function reads mysqld's CPU per
        transaction over the same stretches."""
        if self.only_threads:
            self.ctx.event(t, PROFILING, what, {"artifact": FOLDED})

    def _count(self) -> None:
        """Add the stretch being recorded to what was (mysqld's CPU, seconds)."""
        assert self.recording is not None
        cpu0, t0 = self.recording
        cpu1 = self._mysqld_cpu_s()
        t1 = self.ctx.clock()
        self.seconds += t1 - t0
        self._said("stop", t1)
        if cpu0 is None or cpu1 is None or self.used is None:
            self.used = None
        else:
            self.used += cpu1 - cpu0
        self.recording = None

    def command(self, word: str, timeout_s: float = ENABLE_TIMEOUT_S) -> bool:
        """Write ``word`` (``enable``, ``disable``) to perf's control FIFO once it reads
        it; whether perf acked within ``timeout_s`` (False as soon as it exits, or when
        it is not running). :meth:`pause` and :meth:`resume` use it."""
        if self.fifos is None:
            return False
        ctl, ack = self.fifos / "ctl", self.fifos / "ack"
        deadline = time.monotonic() + timeout_s
        fd = None
        while fd is None:
            try:
                fd = os.open(ctl, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as e:  # ENXIO: perf has not opened it yet
                if e.errno != errno.ENXIO or self._gone(deadline):
                    return False
                time.sleep(0.02)
        reply = b""
        rd = os.open(ack, os.O_RDONLY | os.O_NONBLOCK)
        try:
            os.write(fd, f"{word}\n".encode())
            while b"ack" not in reply:
                if self._gone(deadline):
                    return False
                ready, _, _ = select.select([rd], [], [], 0.1)
                reply += os.read(rd, 64) if ready else b""
            return True
        finally:
            os.close(fd)
            os.close(rd)

    def _gone(self, deadline: float) -> bool:
        return self.p is None or self.p.poll() is not None or time.monotonic() >= deadline

    def _scope(self) -> list[str]:
        """What perf samples: every CPU mysqld may run on where the kernel allows it
        (its samples are picked out by pid when folded), else mysqld's threads."""
        if not self.system_wide:
            return ["-p", str(self.ctx.mysqld_pid)]
        cpus = sorted(os.sched_getaffinity(self.ctx.mysqld_pid or 0))
        return ["-a", "-C", ",".join(map(str, cpus))]

    @property
    def system_wide(self) -> bool:
        """Whether perf may sample whole CPUs: root, or perf_event_paranoid 0 or lower."""
        return os.geteuid() == 0 or _paranoid() <= 0

    def _why_not(self) -> str | None:
        if self.ctx.remote_host or self.ctx.container or not self.ctx.mysqld_pid:
            return "mysqld is not a process of this machine that perf can attach to"
        if shutil.which("perf") is None:
            return "perf is not installed (Debian: linux-perf)"
        level = _paranoid()
        if os.geteuid() != 0 and level > 1:
            return (f"kernel.perf_event_paranoid is {level}: only root may profile another "
                    "process (set it to 1 or lower, or run as root)")
        return None

    def _mysqld_cpu_s(self) -> float | None:
        """mysqld's CPU seconds so far, all its threads (None once it is gone)."""
        try:
            return procfs.read(self.ctx.mysqld_pid).cpu_s if self.ctx.mysqld_pid else None
        except OSError:
            return None

    def _shortfall(self, samples: int, used: float | None) -> str:
        """perf samples a thread on its CPU time: about mysqld's CPU seconds over the
        profile times hz. Far fewer means perf lost them, and the note says so."""
        if used is None:
            return ""
        said = f"; mysqld used {used:.2f} CPU s meanwhile (~{used * self.hz:.0f} expected)"
        if samples < 0.5 * used * self.hz:
            said += ": perf lost most samples, the graph is partial"
        return said

    def __exit__(self, *exc: object) -> None:
        if self.p is None:
            return
        if self.recording is not None:
            self._count()
        proc.stop_process(self.p, grace_s=30, first=signal.SIGINT)
        if self.fifos is not None:
            shutil.rmtree(self.fifos, ignore_errors=True)
            self.fifos = None
        try:
            out = proc.run(["perf", "script", "-i", self.data, "-F", "comm,ip,sym",
                            "--pid", str(self.ctx.mysqld_pid)],
                           timeout=600, check=False, what="perf script")
            stacks = fold(out.stdout)
            troubles = self._troubles()
        finally:
            self.data.unlink(missing_ok=True)  # MBs a minute; the folded stacks stay
        (self.ctx.artifacts / FOLDED).write_text(
            "".join(f"{s} {n}\n" for s, n in sorted(stacks.items())))
        samples = sum(stacks.values())
        self.ctx.notes.append(f"cpu_profile: {samples} samples of mysqld at {self.hz} Hz "
                              f"over {self.seconds:.0f} s{self._threads_said()} into "
                              f"{FOLDED} ({self._scope_said()})"
                              f"{self._shortfall(samples, self.used)}{troubles}")

    def _threads_said(self) -> str:
        if not self.only_threads:
            return ""
        counts = ", ".join(map(str, sorted(self.only_threads)))
        if not self.seconds:
            return (f" (only at {counts} client thread(s), which the workload never ran: "
                    "nothing recorded)")
        return f" while the workload ran {counts} client thread(s)"

    def _scope_said(self) -> str:
        if self.scope[0] == "-a":
            return f"sampled on CPUs {self.scope[-1]}"
        return ("sampled on mysqld's own threads: perf_event_paranoid allows no more to "
                "a non-root harness, and that costs mysqld more CPU")

    def _troubles(self) -> str:
        """What perf's own statistics of the recording say went wrong: records of lost
        samples (its buffers overflowed) and throttling (the kernel held the rate)."""
        out = proc.run(["perf", "report", "-i", self.data, "--stats"], timeout=120,
                       check=False, what="perf report --stats")
        said = [f"{int(m.group(2))} {m.group(1)} records" for m in _TROUBLE.finditer(
            out.stdout) if int(m.group(2))]
        return f" (perf's own statistics: {', '.join(said)})" if said else ""


def _paranoid() -> int:
    """kernel.perf_event_paranoid (2, the strictest default, where it cannot be read)."""
    path = Path("/proc/sys/kernel/perf_event_paranoid")
    try:
        return int(path.read_text())
    except (OSError, ValueError):
        return 2


PLUGIN = CpuProfile
