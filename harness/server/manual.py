"""A server series no binary of runs here, read from its vendor's manual: MySQL 8.4.

``harness cnf check FILE --to mysql-8.4`` (or ``--server mysql-8.4``) cannot ask an 8.4
mysqld, so it says what Oracle's manual lists for the options of the file: those 8.4
removed, and the defaults 8.4 changed for options the file leaves out. Every row names
the manual's page it was read from, and nothing here is presented as a server's answer:
the file's lines are read as MySQL 8.0.31's own mysqld reads them (8.4 reads option
files the same way), then held to these rows.

Only rows read from the pages named are kept; the manual lists more (server status
variables, Group Replication and keyring options, and more changed InnoDB defaults in
the table below): the page is the complete list.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..jsonvalue import JsonDict
from .mycnf import base_name, norm

VERSION_REFERENCE_84 = ("https://dev.mysql.com/doc/mysqld-version-reference/en/"
                        "optvar-changes-8-4.html")
VERSION_REFERENCE_82 = ("https://dev.mysql.com/doc/mysqld-version-reference/en/"
                        "optvar-changes-8-2.html")
WHAT_IS_NEW_84 = "https://dev.mysql.com/doc/refman/8.4/en/mysql-nutshell.html"
IO_CAPACITY_84 = "https://dev.mysql.com/doc/refman/8.4/en/innodb-configuring-io-capacity.html"
IO_THREADS_84 = ("https://dev.mysql.com/doc/refman/8.4/en/"
                 "innodb-performance-multiple_io_threads.html")


@dataclass(frozen=True)
class ManualRow:
    """One change the manual lists: an option removed, or a default changed."""

    option: str
    change: str  # "removed" | "default changed"
    note: str
    page: str
    now: str = ""  # the new default
    was: str = ""  # the default before (the series the file was likely written for)

    def to_json(self) -> JsonDict:
        return {k: v for k, v in (("option", self.option), ("change", self.change),
                                  ("now", self.now), ("was", self.was),
                                  ("note", self.note), ("page", self.page)) if v}


REMOVED, DEFAULT = "removed", "default changed"


@dataclass(frozen=True)
class ManualSeries:
    name: str  # as a command names it: mysql-8.4
    title: str
    reader: str  # the build that reads the file's lines (option files read the same)
    since: str  # the series its defaults are compared with
    rows: tuple[ManualRow, ...]


MYSQL_84 = ManualSeries("mysql-8.4", "MySQL 8.4", "mysql-8.0.31", "MySQL 8.0", rows=(
    ManualRow("default_authentication_plugin", REMOVED,
              "removed in 8.4.0: authentication_policy names the default; "
              "mysql_native_password is off unless --mysql-native-password=ON",
              VERSION_REFERENCE_84),
    ManualRow("binlog_transaction_dependency_tracking", REMOVED,
              "removed in 8.4.0: WRITESET is the only way, internal", VERSION_REFERENCE_84),
    ManualRow("avoid_temporal_upgrade", REMOVED, "removed in 8.4.0", VERSION_REFERENCE_84),
    ManualRow("group_replication_recovery_complete_at", REMOVED, "removed in 8.4.0",
              VERSION_REFERENCE_84),
    ManualRow("admin_ssl", REMOVED, "removed in 8.4.0", VERSION_REFERENCE_84),
    ManualRow("have_openssl", REMOVED, "removed in 8.4.0", VERSION_REFERENCE_84),
    ManualRow("have_ssl", REMOVED, "removed in 8.4.0", VERSION_REFERENCE_84),
    ManualRow("expire_logs_days", REMOVED,
              "removed in 8.2.0: binlog_expire_logs_seconds (days x 86400)",
              VERSION_REFERENCE_82),
    ManualRow("abort_slave_event_count", REMOVED, "removed in 8.2.0", VERSION_REFERENCE_82),
    ManualRow("disconnect_slave_event_count", REMOVED, "removed in 8.2.0",
              VERSION_REFERENCE_82),
    ManualRow("innodb_change_buffering", DEFAULT, "change buffering is off by default",
              WHAT_IS_NEW_84, now="none", was="all"),
    ManualRow("innodb_adaptive_hash_index", DEFAULT, "the adaptive hash index is off by "
              "default", WHAT_IS_NEW_84, now="OFF", was="ON"),
    ManualRow("innodb_buffer_pool_in_core_file", DEFAULT, "OFF where MADV_DONTDUMP is "
              "supported (Linux)", WHAT_IS_NEW_84, now="OFF", was="ON"),
    ManualRow("innodb_buffer_pool_instances", DEFAULT, "1 for a pool of 1 GiB or less; "
              "else from the pool's chunks and a quarter of the logical CPUs, 1 to 64",
              WHAT_IS_NEW_84, now="1 (pool <= 1 GiB)", was="8 (1 if the pool < 1 GiB)"),
    ManualRow("innodb_io_capacity", DEFAULT, "", IO_CAPACITY_84, now="10000", was="200"),
    ManualRow("innodb_read_io_threads", DEFAULT, "half the logical CPUs, at least 4",
              IO_THREADS_84, now="max(CPUs / 2, 4)", was="4"),
))

SERIES = {s.name: s for s in (MYSQL_84,)}


@dataclass
class ManualReading:
    """A file held to a series' manual rows: each of its lines the manual lists, and the
    defaults that changed for what it leaves out."""

    series: ManualSeries
    lines: list[tuple[str, object, ManualRow]] = field(default_factory=list)
    unset: list[ManualRow] = field(default_factory=list)

    @property
    def removed(self) -> bool:
        return any(r.change == REMOVED for _o, _v, r in self.lines)

    def to_json(self) -> JsonDict:
        return {"source": "manual", "series": self.series.title,
                "read_as": self.series.reader,
                "lines": [{"option": o, "value": None if v is None else str(v),
                           **r.to_json()} for o, v, r in self.lines],
                "defaults_not_set": [r.to_json() for r in self.unset]}


def read(series: ManualSeries, options: dict[str, object]) -> ManualReading:
    """``options`` (as the reader build read the file) held to the series' rows."""
    by_name = {norm(r.option): r for r in series.rows}
    out = ManualReading(series)
    seen = set()
    for raw, value in options.items():
        row = by_name.get(norm(base_name(raw)))
        if row is not None:
            out.lines.append((raw, value, row))
            seen.add(norm(row.option))
    out.unset = [r for r in series.rows if r.change == DEFAULT and norm(r.option) not in seen]
    return out
