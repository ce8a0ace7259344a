"""A general query log read back as the statements a server received, each with its
session: the other capture a DBA may have (``general_log = ON`` costs less to turn on
than a slow log at ``long_query_time = 0``, and writes no timings).

One line a command, a statement's further lines after it:

- MySQL 5.7 to 9.x: ``2026-11-25T05:49:00.361167Z\\t   10 Query\\tSELECT 1`` (the time
  the command arrived, to the microsecond);
- MariaDB and MySQL 5.5/5.6: ``261125  5:49:03\\t     4 Query\\tSELECT 1``, the time
  written only when the second changes (``\\t\\t     4 Query\\t...`` below it).

A ``Query`` or ``Execute`` (a prepared statement with its values in place) is a
statement; ``Connect ... on DB`` and ``Init DB`` set the session's database (``Init DB``
is also passed on, so the replay's connection follows it), ``Quit`` ends the session;
the server's own statements (thread 0: MySQL 8.0+ logs its start-up DDL) are skipped;
``Prepare`` and ``Close stmt`` are skipped and counted (each ``Execute`` runs as a
statement); other commands are passed on as administrator commands. The log has no
terminator: its last entry is taken as it is. Streamed, like the slow log.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO

from ..errors import InputError
from .slowlog import (
    _BANNER,
    MAX_STATEMENT,
    SNIFF_LINES,
    TOO_LONG,
    CapturedLog,
    Entry,
    bounded_lines,
    first_lines_match,
)

__all__ = ["GeneralLog", "looks_general"]

_LINE = re.compile(rb"(?:(\d{4}-\d\d-\d\dT\S+)|(\d{6} +\d+:\d\d:\d\d))?\t+ *(\d+) "
                   rb"([A-Z][A-Za-z_ ]*?)\t(.*)")
_CONNECT_DB = re.compile(r" on (\S*)(?: using |$)")
_USE = re.compile(r"use\s+`?([^`;\s]+)`?\s*;?\s*$", re.I)
_STATEMENTS = ("Query", "Execute")
_SKIPPED = {"Prepare": "prepared statements' Prepare (each Execute runs as a statement)",
            "Close stmt": "prepared statements' Close stmt",
            "Reset stmt": "prepared statements' Reset stmt"}


def looks_general(line: bytes) -> bool:
    """A general log's command line (its first lines decide what a capture is)."""
    return _LINE.fullmatch(line) is not None


@dataclass
class _Command:
    offset: int
    session: int
    command: str
    start: float | None
    precision: float
    text: list[bytes] = field(default_factory=list)
    size: int = 0
    too_long: bool = False

    def add(self, line: bytes, cut: bool) -> None:
        """A line of the command's text, unless it has grown past MAX_STATEMENT."""
        self.size += len(line)
        self.too_long = self.too_long or cut or self.size > MAX_STATEMENT
        if not self.too_long:
            self.text.append(line)


class GeneralLog(CapturedLog):
    """A general query log's entries."""

    def __init__(self, path: Path):
        super().__init__(path)
        self._db: dict[int, str | None] = {}  # each session's database
        self._second: float | None = None  # the last time written (MariaDB, 5.6)

    def _sniff(self, f: IO[bytes]) -> None:
        if first_lines_match(f, looks_general):
            return
        raise InputError(f"{self.path}: not a general query log (no command line such as "
                         f"'<time>\\t<id> Query\\t<statement>' in its first {SNIFF_LINES} "
                         "lines)")

    def _entries(self, f: IO[bytes]) -> Iterator[Entry]:
        cur: _Command | None = None
        offset = 0
        for raw, n, cut in bounded_lines(f):
            line = raw.rstrip(b"\r\n")
            m = _LINE.fullmatch(line)
            if m or _BANNER.match(line):
                if cur is not None:
                    yield from self._done(cur)
                cur = self._command(m, offset) if m else None
                if cur is not None:
                    cur.too_long, cur.size = cut, len(line)
            elif cur is not None:
                cur.add(line, cut)
            offset += n
        if cur is not None:
            yield from self._done(cur)

    def _command(self, m: re.Match[bytes], offset: int) -> _Command:
        iso, old, session, command, text = m.groups()
        start, precision = self._second, 1.0
        if iso:
            start, precision = _seconds(iso.decode(), "%Y-%m-%dT%H:%M:%S.%f%z"), 1e-6
        elif old:
            start = self._second = _seconds(b" ".join(old.split()).decode(), "%y%m%d %H:%M:%S")
        return _Command(offset, int(session), command.decode(), start, precision, [text])

    def _decoded(self, c: _Command) -> str:
        """A command's text; bytes that are not UTF-8 kept as surrogates (and the
        statement counted as binary)."""
        text = b"\n".join(c.text)
        try:
            return text.decode("utf-8")
        except UnicodeDecodeError:
            self.binary += c.command in _STATEMENTS
            return text.decode("utf-8", "surrogateescape")

    def _follow_db(self, c: _Command, sql: str) -> None:
        """The session's default database after an Init DB or a USE statement."""
        if c.command == "Init DB":
            self._db[c.session] = sql.strip() or None
        elif c.command in _STATEMENTS and (m := _USE.match(sql)):
            self._db[c.session] = m.group(1)

    def _done(self, c: _Command) -> Iterator[Entry]:
        if c.session == 0:
            self.skipped["the server's own statements (thread 0, at its start)"] += 1
            return
        sql = self._decoded(c)
        if c.command == "Connect":
            m = _CONNECT_DB.search(sql)
            self._db[c.session] = (m.group(1) or None) if m else None
            return
        if c.command in _SKIPPED:
            self.skipped[_SKIPPED[c.command]] += 1
            return
        if c.too_long:
            self.skipped[TOO_LONG] += 1
            return
        self._follow_db(c, sql)
        if c.command in _STATEMENTS:
            sql = sql.rstrip().removesuffix(";")
            if not sql:
                self.skipped["an empty statement"] += 1
                return
        else:
            sql = f"administrator command: {c.command}"
        yield Entry(session=c.session, db=self._db.get(c.session), sql=sql, query_time=0.0,
                    rows_sent=0, rows_examined=0, errno=0, timestamp=None, offset=c.offset,
                    start=c.start, start_precision=c.precision)


def _seconds(text: str, fmt: str) -> float | None:
    """Epoch seconds of the log's clock (MySQL's ``Z`` is UTC; the old format has no
    zone and is read as local time, as the server wrote it)."""
    try:
        return datetime.strptime(text.replace("Z", "+0000"), fmt).timestamp()
    except ValueError:
        return None
