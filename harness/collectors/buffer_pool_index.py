"""What is in the InnoDB buffer pool per schema, table and index: the costly walk of
INNODB_BUFFER_PAGE (every 10 s by default; only small pools on a server the harness
does not own)."""
from __future__ import annotations

import re
from collections.abc import Iterable

from .base import Point, PolledCollector, Unsupported

INDEX_METRIC = "mysql_info_schema_innodb_buffer_page_index_pages"


# `sbtest`.`sbtest1`          (5.6, 5.7, MariaDB)
# `db`.`t` /* Partition `p0` */
_TABLE = re.compile(r"^`(?P<schema>(?:[^`]|``)*)`\.`(?P<table>(?:[^`]|``)*)`")
# sbtest/sbtest1, my@002ddb/t#P#p0  (5.5: the file name, each special character as @xxxx)
_FILE_TABLE = re.compile(r"^(?P<schema>[^/`]+)/(?P<table>[^#]+)")
_FILE_CHAR = re.compile(r"@([0-9a-f]{4})")


# MySQL 5.6+, MariaDB: one row per page of the pool. FILE_PAGE pages are the LRU's
# (the pool's "database pages"); pages of no table (undo, system, change buffer)
# are grouped under name "" so the per-index sum adds up to the pool's data pages.
INDEX_QUERY = ("SELECT TABLE_NAME, INDEX_NAME, COUNT(*) FROM "
               "information_schema.INNODB_BUFFER_PAGE WHERE PAGE_STATE = 'FILE_PAGE' "
               "GROUP BY TABLE_NAME, INDEX_NAME")


# Percona Server 5.5 has no INNODB_BUFFER_PAGE: its INNODB_BUFFER_POOL_PAGES_INDEX joined
# to its dictionary tables gives the same breakdown for index pages.
PERCONA55_INDEX_QUERY = (
    "SELECT CONCAT('`', t.SCHEMA, '`.`', t.NAME, '`'), i.NAME, COUNT(*) FROM "
    "information_schema.INNODB_BUFFER_POOL_PAGES_INDEX p JOIN "
    "information_schema.INNODB_SYS_INDEXES i ON i.INDEX_ID = p.index_id JOIN "
    "information_schema.INNODB_SYS_TABLES t ON t.TABLE_ID = i.TABLE_ID "
    "GROUP BY t.SCHEMA, t.NAME, i.NAME")


def split_table(table_name: str | None) -> tuple[str, str]:
    if not table_name:
        return "", ""
    m = _TABLE.match(table_name)
    if m:
        return m.group("schema").replace("``", "`"), m.group("table").replace("``", "`")
    m = _FILE_TABLE.match(table_name)
    if m:
        return _unfiled(m.group("schema")), _unfiled(m.group("table"))
    return "", table_name


def _unfiled(name: str) -> str:
    """A name as 5.5 writes it in a file name (``my@002ddb``) as it is (``my-db``)."""
    return _FILE_CHAR.sub(lambda m: chr(int(m.group(1), 16)), name)


def index_points(rows: Iterable[tuple[str | None, str | None, int]]) -> list[Point]:
    out: list[Point] = []
    for table, index, pages in rows:
        schema, name = split_table(table)
        out.append((INDEX_METRIC, float(pages), {"schema": schema, "name": name,
                                                  "index": index or ""}))
    return out


# The largest pool whose pages buffer_pool_index walks on a server the harness does not
# own, unless the scenario allows it.
FOREIGN_POOL_LIMIT = 256 << 20


class BufferPoolIndex(PolledCollector):
    """Pages per index: walks the whole pool (its cost is in harness_collector_*)."""

    name = "buffer_pool_index"
    server_access = "adapts"  # the pool walk: only small pools on a foreign server
    default_interval_s = 10.0

    def _has_table(self, table: str) -> bool:
        return bool(self.query(
            "SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = "
            f"'information_schema' AND TABLE_NAME = '{table}'"))

    def setup(self) -> None:
        if not self.ctx.owned and self.name not in self.ctx.heavy_ok:
            (size,) = self.query("SELECT @@innodb_buffer_pool_size")[0]
            if int(size) > FOREIGN_POOL_LIMIT:
                raise Unsupported(
                    f"the buffer pool of this server the harness does not own is "
                    f"{int(size) >> 20} MB: walking INNODB_BUFFER_PAGE every "
                    f"{self.interval_s:g} s stalls a pool that size (the MySQL manual warns "
                    f"against it in production); read only below {FOREIGN_POOL_LIMIT >> 20} "
                    "MB, or set collectors: {buffer_pool_index: {allow_external: true}}")
        if self._has_table("INNODB_BUFFER_PAGE"):
            self.sql = INDEX_QUERY
        elif self._has_table("INNODB_BUFFER_POOL_PAGES_INDEX"):
            self.sql = PERCONA55_INDEX_QUERY
        else:
            raise Unsupported("no INNODB_BUFFER_PAGE (MySQL 5.6+, MariaDB) nor "
                              "INNODB_BUFFER_POOL_PAGES_INDEX (Percona Server 5.5)")

    def collect(self) -> Iterable[Point]:
        return index_points(self.query(self.sql))


PLUGIN = BufferPoolIndex
