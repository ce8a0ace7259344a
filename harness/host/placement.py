"""CPU placement: mysqld on the CPUs the scenario states, the client on others.

On a small VM the scheduler moves the client (sysbench, a side load) and mysqld's
threads between CPUs as it likes, and each run gets its own mix of shared caches,
migrations and wake-ups: run-to-run noise that no amount of repetitions removes
cheaply. ``cpu_placement: {server: "1", client: "0"}`` pins every thread of mysqld to
the server's CPUs (threads it creates later, connections among them, inherit it from
the thread that creates them) and the harness itself to the client's, so everything
it starts from then on (sysbench, mysqldump, the side loads) runs there too. The
wake-up spinners of ``cpu_keepalive`` are started before, on every CPU. When the run
ends the harness gets its CPUs back and mysqld's threads get every CPU.
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def parse_cpus(text: str) -> set[int]:
    """``0``, ``0-1,3`` -> the CPU numbers (ValueError, saying why, when it is not one)."""
    cpus: set[int] = set()
    for part in str(text).split(","):
        lo, sep, hi = part.strip().partition("-")
        if not lo.isdigit() or (sep and not hi.isdigit()):
            raise ValueError(f"'{text}' is not a CPU list like 0 or 0-1,3")
        first, last = int(lo), int(hi) if sep else int(lo)
        if last < first:
            raise ValueError(f"'{text}': {part.strip()} runs backwards")
        cpus.update(range(first, last + 1))
    return cpus


def _tasks(pid: int) -> list[int]:
    try:
        return [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return []


def _pin(pid: int, cpus: set[int]) -> int:
    """Every thread of ``pid`` on ``cpus``; how many (threads that ended meanwhile are
    passed over)."""
    n = 0
    for tid in _tasks(pid):
        try:
            os.sched_setaffinity(tid, cpus)
            n += 1
        except ProcessLookupError:
            continue
    return n


def allowed(pid: int) -> str:
    """The CPUs ``pid``'s main thread may run on, as /proc says (``0-1``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Cpus_allowed_list:"):
            return line.split(":", 1)[1].strip()
    return ""


@contextmanager
def placed(server: set[int], client: set[int], mysqld_pid: int) -> Iterator[dict[str, Any]]:
    """mysqld's threads on ``server``, this process's on ``client``, for the block;
    yields what was done, for the run's details. Afterwards each thread of either gets
    back the CPUs it had (a thread started meanwhile: those of its process's first)."""
    mine = {tid: os.sched_getaffinity(tid) for tid in _tasks(os.getpid())}
    theirs = os.sched_getaffinity(mysqld_pid)
    try:
        threads = _pin(mysqld_pid, server)
        _pin(os.getpid(), client)
        yield {"server": sorted(server), "client": sorted(client), "mysqld_threads": threads}
    finally:
        _restore(os.getpid(), mine, mine[os.getpid()])
        _restore(mysqld_pid, {}, theirs)


def _restore(pid: int, had: dict[int, set[int]], default: set[int]) -> None:
    for tid in _tasks(pid):
        try:
            os.sched_setaffinity(tid, had.get(tid, default))
        except ProcessLookupError:
            continue
