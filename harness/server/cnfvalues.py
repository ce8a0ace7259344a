"""What each server will use of a my.cnf, as its own mysqld holds it after reading the
file (``mysqld --verbose --help``'s table): each option's value in the server's terms
(sizes in bytes), the values it adjusts (to its maxima, or to what the open-files limit
allows: ``max_connections = 100000`` held at 19190 here) with both numbers, and the
memory the file asks for, summed as MySQLTuner sums it, against this host's."""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ..procfs import meminfo_kb
from .catalog import Build
from .cnfcheck import Verdict, line_read, names_of
from .mycnf import norm, parse_size, values_after

# MySQLTuner's sums (1.9.9, Debian's mysqltuner: max_peak_memory without
# performance_schema's own, which only a running server reports): the server's buffers
# once, with the smaller of the two temporary table limits, and each connection's.
SERVER_BUFFERS = ("key_buffer_size", "innodb_buffer_pool_size",
                  "innodb_additional_mem_pool_size", "innodb_log_buffer_size",
                  "query_cache_size", "aria_pagecache_buffer_size")
PER_CONNECTION = ("read_buffer_size", "read_rnd_buffer_size", "sort_buffer_size",
                  "thread_stack", "max_allowed_packet", "join_buffer_size")


@dataclass(frozen=True)
class Memory:
    """The memory a file asks of one build: its buffers, each connection's, the
    connections it allows (as the server holds them), and this host's memory."""

    server: int
    per_connection: int
    connections: int
    host: int | None

    @property
    def most(self) -> int:
        return self.server + self.per_connection * self.connections

    def line(self, name: str) -> str:
        said = (f"memory on {name} (summed as MySQLTuner does): buffers {_size(self.server)}"
                f" + {_size(self.per_connection)} a connection x {self.connections} "
                f"connections = {_size(self.most)} at most")
        if self.host is None:
            return said
        if self.server > self.host:
            return said + f"; this host has {_size(self.host)}: the buffers alone are more"
        if self.most > self.host:
            return said + (f"; this host has {_size(self.host)}: more than "
                           f"{(self.host - self.server) // max(self.per_connection, 1)} busy "
                           "connections would not fit")
        return said + f", within this host's {_size(self.host)}"

    def to_json(self) -> dict[str, int | None]:
        return {"server_buffers": self.server, "per_connection": self.per_connection,
                "connections": self.connections, "at_most": self.most,
                "host": self.host}


def with_values(build: Build, verdicts: list[Verdict]
                ) -> tuple[list[Verdict], Memory | None]:
    """The verdicts with the value the build will use of each line it reads, those it
    adjusts said with both numbers; and the memory the file asks for there."""
    lines = [line for v in verdicts if (line := line_read(v)) is not None]
    table, said = values_after(build, lines)
    deprecated = deprecations(said)
    verdicts = [_deprecated(v, deprecated) for v in verdicts]
    if not table:
        return verdicts, None
    return [_used(v, table) for v in verdicts], _memory(table)


# The server's own words: "'binlog_format' is deprecated and will be removed in a future
# release.", "The syntax 'sync_master_info' is deprecated ... Please use sync_source_info
# instead.", "--character-set-server: The character set UTF8MB3 is deprecated ... Please
# consider using UTF8MB4 instead."
_DEPRECATED = re.compile(
    r"(?:The syntax )?'-*([\w-]+)(?:/-\w)?' is deprecated and will be removed in a future "
    r"release\.(?: Please use '?-*([\w-]+)'? instead)?"
    r"|--([\w-]+): (.*?) is deprecated and will be removed in a future release\."
    r"(?: Please consider using (\S+?) instead)?")


def deprecations(said: str) -> dict[str, str]:
    """Option -> "deprecated" or "deprecated -> what to use", from mysqld's warnings."""
    out: dict[str, str] = {}
    for m in _DEPRECATED.finditer(said):
        if m.group(1):
            out[norm(m.group(1))] = "deprecated" + (f" -> {m.group(2)}" if m.group(2) else "")
        else:
            what = m.group(4)[:1].lower() + m.group(4)[1:]
            out[norm(m.group(3))] = f"deprecated ({what})" + (f" -> {m.group(5)}"
                                                                if m.group(5) else "")
    return out


def _deprecated(v: Verdict, deprecated: dict[str, str]) -> Verdict:
    said = next((deprecated[n] for n in names_of(v) if n in deprecated), None)
    return replace(v, deprecated=said) if said else v


def _used(v: Verdict, table: dict[str, str | None]) -> Verdict:
    if line_read(v) is None:
        return v
    name = norm(v.new_name or v.resolved or v.option)
    uses = table.get(name)
    if uses is None:
        return v
    asked = parse_size(v.new_value if v.new_name else v.value)
    held = parse_size(uses)
    if asked is not None and held is not None and asked != held:
        return replace(v, uses=uses, adjusted=f"{asked} -> {held}")
    return replace(v, uses=uses)


def _memory(table: dict[str, str | None]) -> Memory | None:
    def size(name: str) -> int:
        return parse_size(table.get(name)) or 0
    connections = size("max_connections")
    if not connections:
        return None
    return Memory(sum(map(size, SERVER_BUFFERS)) + min(size("tmp_table_size"),
                                                      size("max_heap_table_size")),
                  sum(map(size, PER_CONNECTION)), connections, _host_memory())


def _host_memory() -> int | None:
    kb = meminfo_kb("MemTotal")
    return None if kb is None else kb * 1024


def _size(n: int) -> str:
    for unit, div in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div:
            return f"{n / div:.1f} {unit}"
    return f"{n} bytes"
