"""SHOW ENGINE INNODB STATUS: log, checkpoint, purge, buffer pool and insert buffer.

The parser is pure and tested on captured outputs of every catalog server
(tests/data/innodb-status-*.txt). Fields a version does not print are absent from the
result, never 0. The first match wins: with several buffer pool instances the totals
come before the "INDIVIDUAL BUFFER POOL INFO" section.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

from .base import MB, Line, Panel, Point, PolledCollector

PREFIX = "mysql_engine_innodb_"

# Each pattern with a real line above it; groups map to the names after it.
_FIELDS: list[tuple[str, tuple[str, ...]]] = [
    # Log sequence number 17157065
    (r"^Log sequence number\s+(\d+)", ("log_sequence_number",)),
    # Log flushed up to   17157065
    (r"^Log flushed up to\s+(\d+)", ("log_flushed_up_to",)),
    # Pages flushed up to 3914971
    (r"^Pages flushed up to\s+(\d+)", ("pages_flushed_up_to",)),
    # Last checkpoint at  3704600
    (r"^Last checkpoint at\s+(\d+)", ("last_checkpoint_at",)),
    # Max checkpoint age    80826164          (XtraDB / Percona Server)
    (r"^Max checkpoint age\s+(\d+)", ("max_checkpoint_age",)),
    # Checkpoint age target 78300347          (XtraDB / Percona Server)
    (r"^Checkpoint age target\s+(\d+)", ("checkpoint_age_target",)),
    # History list length 295
    (r"^History list length\s+(\d+)", ("history_list_length",)),
    # Pending reads 0
    (r"^Pending reads\s+(\d+)", ("pending_reads",)),
    # Pending writes: LRU 0, flush list 0, single page 0
    (r"^Pending writes: LRU (\d+), flush list (\d+)", ("pending_writes_lru",
                                                       "pending_writes_flush_list")),
    (r"^Pending writes: LRU \d+, flush list \d+, single page (\d+)",
     ("pending_writes_single_page",)),
    # Buffer pool size   4056
    (r"^Buffer pool size\s+(\d+)$", ("buffer_pool_pages",)),
    # Free buffers       2836
    (r"^Free buffers\s+(\d+)", ("free_buffers",)),
    # Database pages     1220
    (r"^Database pages\s+(\d+)", ("database_pages",)),
    # Old database pages 430
    (r"^Old database pages\s+(\d+)", ("old_database_pages",)),
    # Modified db pages  877
    (r"^Modified db pages\s+(\d+)", ("modified_db_pages",)),
    # Pages made young 467, not young 0
    (r"^Pages made young (\d+), not young (\d+)", ("pages_made_young_total",
                                                   "pages_made_not_young_total")),
    # Pages read 170, created 1121, written 468
    (r"^Pages read (\d+), created (\d+), written (\d+)", ("pages_read_total",
                                                         "pages_created_total",
                                                         "pages_written_total")),
    # 179 OS file reads, 472 OS file writes, 4321 OS fsyncs
    (r"^(\d+) OS file reads, (\d+) OS file writes, (\d+) OS fsyncs",
     ("os_file_reads_total", "os_file_writes_total", "os_fsyncs_total")),
    # Ibuf: size 1, free list len 0, seg size 2, 0 merges
    (r"^Ibuf: size (\d+), free list len (\d+), seg size (\d+), (\d+) merges",
     ("ibuf_size_pages", "ibuf_free_list_len", "ibuf_seg_size_pages", "ibuf_merges_total")),
]
_MERGED = re.compile(r"^merged operations:\n insert (\d+), delete mark (\d+), delete (\d+)",
                     re.M)
_DISCARDED = re.compile(r"^discarded operations:\n insert (\d+), delete mark (\d+), "
                        r"delete (\d+)", re.M)
_COMPILED = [(re.compile(p, re.M), names) for p, names in _FIELDS]


def parse_innodb_status(text: str) -> dict[str, float]:
    """Numbers of one SHOW ENGINE INNODB STATUS output, keyed by metric suffix."""
    out: dict[str, float] = {}
    for rx, names in _COMPILED:
        m = rx.search(text)
        if m:
            for name, value in zip(names, m.groups(), strict=True):
                out[name] = float(value)
    for rx, what in ((_MERGED, "merged"), (_DISCARDED, "discarded")):
        m = rx.search(text)
        if m:
            for op, value in zip(("insert", "delete_mark", "delete"), m.groups(), strict=True):
                out[f"ibuf_{what}_{op}_total"] = float(value)
    if "log_sequence_number" in out and "last_checkpoint_at" in out:
        out["checkpoint_age"] = out["log_sequence_number"] - out["last_checkpoint_at"]
    return out


class InnodbStatus(PolledCollector):
    name = "innodb_status"
    panels = (
        Panel("checkpoint age (MB)", (Line(
            "innodb_status", "mysql_engine_innodb_checkpoint_age", scale=1 / MB),)),
        Panel("history list length", (Line(
            "innodb_status", "mysql_engine_innodb_history_list_length"),)),
        Panel("change buffer size (pages)", (Line(
            "innodb_status", "mysql_engine_innodb_ibuf_size_pages"),)))
    server_access = "reads"
    default_interval_s = 1.0

    def collect(self) -> Iterable[Point]:
        rows = self.query("SHOW ENGINE INNODB STATUS")
        parsed = parse_innodb_status(rows[0][2])
        if "log_sequence_number" not in parsed:
            raise ValueError("SHOW ENGINE INNODB STATUS has no LOG section")
        return [(PREFIX + k, v, None) for k, v in parsed.items()]


PLUGIN = InnodbStatus
