"""The CPU of the load's own side: every process this harness started, at any depth,
but the server (sysbench, a side load's mysqldump and split, a collector's vmstat or
perf), from /proc, summed per program name: ``harness_client_cpu_seconds_total`` by
``program``. What moved per transaction then tells a change on the server from one on
the client (a sysbench that got slower at building its statements, a client library
that costs more), as Mark Callaghan separates "CPU per query" of mysqld from the
client's.

Only this harness's descendants that share its session: another run's sysbench on the
same host is not counted, nor a daemon the harness started in a session of its own (the
server, a dockerd that outlives the run, a noise neighbour, a slow-disk FUSE daemon) with
all it starts. A program that runs in the harness's own process (the replay and the SSB
workloads' statements) is not a separate process and is not seen. A process that ends
between two samples loses at most the CPU of its last second.

The harness's own process is counted apart, ``harness_self_cpu_seconds_total``: the
statements of the workloads it runs in its own Python threads (a replay's clients, SSB's
queries) and its collectors. Its threads share one interpreter lock, so near one core
of it they, not the server, set the pace; a comparison's conditions say so."""
from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

from .. import procfs
from .base import Line, Panel, Point, PolledCollector

METRIC = "harness_client_cpu_seconds_total"
SELF_METRIC = "harness_self_cpu_seconds_total"
SERVER_PROGRAMS = frozenset({"mysqld", "mariadbd", "mysqld_safe", "mariadbd-safe"})


def descendants(root: int, leave_out: int | None = None
                ) -> Iterator[tuple[tuple[int, int], str, float]]:
    """((pid, start time), program, CPU seconds) of every process under ``root`` in its
    session, but ``leave_out``'s subtree and the server's programs."""
    stats = procfs.read_all()
    if root not in stats:
        return
    session = stats[root].session
    children: dict[int, list[int]] = {}
    for pid, st in stats.items():
        children.setdefault(st.ppid, []).append(pid)
    todo = list(children.get(root, []))
    while todo:
        pid = todo.pop()
        st = stats[pid]
        if pid == leave_out or st.program in SERVER_PROGRAMS or st.session != session:
            continue
        todo += children.get(pid, [])
        yield (pid, st.start_ticks), st.program, st.cpu_s


class ClientProcess(PolledCollector):
    name = "client_process"
    panels = (Panel("client CPU seconds per s (the harness's processes)", (
        Line("client_process", METRIC, rate=True, top=("program", 6)),
        Line("client_process", SELF_METRIC, "the harness process", rate=True))),)
    server_access = "reads"  # /proc of this host only
    default_interval_s = 1.0

    def setup(self) -> None:
        self.root = os.getpid()
        self.last: dict[tuple[int, int], float] = {}
        self.total: dict[str, float] = {}
        self.first = True
        self.own_start = procfs.read(self.root).cpu_s

    def collect(self) -> Iterable[Point]:
        """Each program's CPU, grown by each of its processes since the last sample (a
        process new since then: all its CPU; at the first sample: nothing yet)."""
        now: dict[tuple[int, int], float] = {}
        for key, comm, cpu in descendants(self.root, self.ctx.mysqld_pid):
            now[key] = cpu
            grown = 0.0 if self.first else cpu - self.last.get(key, 0.0)
            self.total[comm] = self.total.get(comm, 0.0) + max(grown, 0.0)
        self.last, self.first = now, False
        own = procfs.read(self.root).cpu_s - self.own_start
        return [*((METRIC, v, {"program": p}) for p, v in sorted(self.total.items())),
                (SELF_METRIC, own, {})]


PLUGIN = ClientProcess
