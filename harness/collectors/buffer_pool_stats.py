"""The InnoDB buffer pool's own statistics (INNODB_BUFFER_POOL_STATS summed over pool
instances): cheap, every second."""
from __future__ import annotations

from collections.abc import Iterable

from .base import Point, PolledCollector, Unsupported

STATS_PREFIX = "mysql_info_schema_innodb_buffer_pool_stats_"

# Cumulative columns of INNODB_BUFFER_POOL_STATS (the rest are gauges or rates).
_CUMULATIVE = {"pages_made_young", "pages_not_made_young", "number_pages_read",
               "number_pages_created", "number_pages_written", "number_pages_get",
               "number_read_ahead", "number_read_ahead_evicted", "lru_io_total",
               "uncompress_total"}


_SKIP = {"pool_id"}


class BufferPoolStats(PolledCollector):
    """INNODB_BUFFER_POOL_STATS summed over pool instances: the cheap companion."""

    name = "buffer_pool_stats"
    server_access = "reads"
    default_interval_s = 1.0

    def setup(self) -> None:
        cols = [r[0] for r in self.query(
            "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = "
            "'information_schema' AND TABLE_NAME = 'INNODB_BUFFER_POOL_STATS' "
            "ORDER BY ORDINAL_POSITION")]
        if not cols:
            raise Unsupported("information_schema.INNODB_BUFFER_POOL_STATS does not exist")
        self.cols = [c for c in cols if c.lower() not in _SKIP]

    def collect(self) -> Iterable[Point]:
        sums = ", ".join(f"SUM(`{c}`)" for c in self.cols)
        (row,) = self.query(f"SELECT {sums} FROM information_schema.INNODB_BUFFER_POOL_STATS")
        out: list[Point] = []
        for col, value in zip(self.cols, row, strict=True):
            if value is None:
                continue
            name = col.lower()
            out.append((STATS_PREFIX + name + ("_total" if name in _CUMULATIVE else ""),
                        float(value), None))
        return out


PLUGIN = BufferPoolStats
