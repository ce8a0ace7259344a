"""InnoDB's background threads by their OS thread ids, for ``host_profile.background_cpu``.

performance_schema.threads names each of the server's threads by its instrument and
gives its id in the OS (``THREAD_OS_ID``, MySQL 5.7 and later), which is what a cgroup
takes. Only reads: the guard's read-only promise holds for a server of the user's.
"""
from __future__ import annotations

import pymysql

from ..errors import HarnessError
from ..server.mysql import Endpoint, connection, query

# A thread kind -> its instruments, per server generation (5.7: page_cleaner_thread;
# 8.0 and later: the page flush coordinator and its workers).
KINDS: dict[str, tuple[str, ...]] = {
    "purge": ("thread/innodb/srv_purge_thread", "thread/innodb/srv_worker_thread"),
    "page_cleaner": ("thread/innodb/page_cleaner_thread",
                     "thread/innodb/page_flush_coordinator_thread",
                     "thread/innodb/page_flush_thread"),
    "master": ("thread/innodb/srv_master_thread",),
}
NO_COLUMN = 1054  # unknown column: THREAD_OS_ID came with 5.7
POOLED = ("purge", "master")  # MariaDB 10.5 and later: tasks of InnoDB's thread pool


def unsupported(flavor: str, version: tuple[int, ...], kinds: list[str]) -> str | None:
    """Why a server of ``flavor`` and ``version`` cannot give these threads' OS ids,
    or None."""
    if flavor == "mariadb":
        if version < (10, 5):
            return "MariaDB before 10.5 has no performance_schema.threads.THREAD_OS_ID"
        pooled = [k for k in kinds if k in POOLED]
        if pooled:
            return (f"MariaDB 10.5 and later run InnoDB's {' and '.join(pooled)} as tasks of "
                    "a thread pool, with no thread of their own (page_cleaner has one)")
        return None
    if version < (5, 7):
        return "performance_schema.threads has THREAD_OS_ID from MySQL 5.7"
    return None


class BackgroundThreadsError(HarnessError):
    """The threads a host profile names cannot be found on this server."""


def thread_ids(endpoint: Endpoint, kinds: list[str], server: str) -> dict[str, list[int]]:
    """kind -> the OS thread ids of its threads on ``server`` (named in errors)."""
    wanted = [name for k in kinds for name in KINDS[k]]
    marks = ", ".join(["%s"] * len(wanted))
    try:
        with connection(endpoint) as conn:
            rows = query(conn, "SELECT NAME, THREAD_OS_ID FROM performance_schema.threads "
                         f"WHERE NAME IN ({marks}) AND THREAD_OS_ID IS NOT NULL", wanted)
            on = query(conn, "SELECT COUNT(*) FROM performance_schema.threads")[0][0]
    except pymysql.err.MySQLError as e:
        if e.args and e.args[0] == NO_COLUMN:
            raise BackgroundThreadsError(
                f"host_profile.background_cpu: {server} has no performance_schema.threads."
                "THREAD_OS_ID (MySQL 5.7 and later give each thread's OS id)") from None
        raise
    if not on:
        raise BackgroundThreadsError(
            f"host_profile.background_cpu: performance_schema is off on {server} "
            "(performance_schema=ON names the threads)")
    return _by_kind(rows, kinds, server)


def _by_kind(rows: list[tuple], kinds: list[str], server: str) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {k: [] for k in kinds}
    for name, tid in rows:
        for k in kinds:
            if name in KINDS[k]:
                out[k].append(int(tid))
    missing = [k for k, tids in out.items() if not tids]
    if missing:
        raise BackgroundThreadsError(
            f"host_profile.background_cpu: no {' or '.join(missing)} thread in "
            f"performance_schema.threads on {server} (MariaDB 10.5 and later run InnoDB's "
            "background work as tasks of a thread pool, with no thread of its own)")
    return {k: sorted(v) for k, v in out.items()}
