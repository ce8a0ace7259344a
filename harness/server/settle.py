"""How long a change of an option takes to settle, which decides how a comparison of two
values can be run.

- ``IMMEDIATE``: SET GLOBAL takes effect for the next statement and leaves nothing behind
  (innodb_flush_log_at_trx_commit, innodb_io_capacity, sync_binlog ...): the two values
  can alternate in windows of one run (a switchback).
- ``SLOW``: dynamic, but what it sizes or switches is state that builds up: a cache or a
  log whose resize runs in the background (and can block the server while it shrinks),
  whose contents one side leaves to the next window. Switched every few seconds, each
  window measures the switch, not the value. Compared by interleaved runs, each starting
  the server with its side's value from the same data and warming up.
- ``RESTART``: not dynamic at all. The server decides: the switchback's first SET
  GLOBAL is refused, the run stops at once and the comparison falls back to interleaved
  runs, naming the server's words.

``SLOW`` is what an option does, which no server reports; each entry says why, in the
words the comparison prints. Names are as mysqld resolves them (``mycnf.resolved_name``).
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Settle(Enum):
    IMMEDIATE = "immediate"
    SLOW = "slow to settle"
    RESTART = "restart only"


_POOL = "the pages one side cached carry into the other's windows"
SLOW: dict[str, str] = {
    "innodb_buffer_pool_size": (
        "the buffer pool resizes in the background, chunk by chunk, blocking the server "
        "while it shrinks, and " + _POOL),
    "innodb_buffer_pool_instances": "it sizes the buffer pool's instances; " + _POOL,
    "innodb_buffer_pool_chunk_size": "it sizes the buffer pool's chunks; " + _POOL,
    "innodb_old_blocks_time": "it changes which pages the buffer pool keeps; " + _POOL,
    "innodb_old_blocks_pct": "it changes which pages the buffer pool keeps; " + _POOL,
    "innodb_redo_log_capacity": (
        "the redo log resizes in the background and the checkpoint age one side built "
        "carries into the other's windows"),
    "innodb_log_file_size": (
        "the redo log is resized (MariaDB from 10.9 at run time) and the checkpoint age "
        "one side built carries into the other's windows"),
    "innodb_log_files_in_group": "it sizes the redo log; the checkpoint age carries over",
    "innodb_log_buffer_size": "the log buffer is resized while writes wait",
    "innodb_adaptive_hash_index": (
        "switched off, the adaptive hash index is emptied; switched on, it fills again "
        "only as pages are read, over minutes"),
    "innodb_adaptive_hash_index_parts": "it partitions the adaptive hash index, "
                                        "which fills again only as pages are read",
    "innodb_change_buffer_max_size": (
        "the change buffer fills and is merged over minutes; what one side buffered is "
        "merged in the other's windows"),
    "innodb_change_buffering": (
        "what one side buffered is merged in the other's windows"),
    "table_open_cache": "the table cache fills again only as tables are opened",
    "table_definition_cache": "the definition cache fills again only as tables are opened",
    "table_open_cache_instances": "the table cache fills again only as tables are opened",
    "thread_cache_size": "the thread cache fills again only as connections end",
    "query_cache_size": "the query cache is emptied and fills again only as queries repeat",
    "query_cache_type": "the query cache fills again only as queries repeat",
    "key_buffer_size": "the MyISAM key cache is emptied and fills again only as keys are read",
    "aria_pagecache_buffer_size": "the Aria page cache fills again only as pages are read",
}


@dataclass(frozen=True)
class Settling:
    """One option's class and, for a slow one, why."""

    option: str
    settle: Settle
    why: str = ""


def of(option: str) -> Settling:
    """How a change of ``option`` settles, as far as the harness knows before the server
    is asked: SLOW for the caches and logs above, else IMMEDIATE (a static option is found
    RESTART by the server's refusal, not here)."""
    why = SLOW.get(option)
    return Settling(option, Settle.SLOW, why) if why else Settling(option, Settle.IMMEDIATE)


def slow(options: list[str] | dict[str, object]) -> list[Settling]:
    """The options among ``options`` that are slow to settle."""
    return [s for o in options if (s := of(o)).settle is Settle.SLOW]
