"""A slow query log read back as the statements a server ran, each with its session.

Written with ``long_query_time = 0``, the slow log is a capture of a workload: every
statement, the connection that sent it, the default database and the time it took.
This reads the formats the servers write:

- MySQL 5.5 to 9.x: ``# Time:``, ``# User@Host: u[u] @ host [ip]  Id: N``, ``#
  Query_time: ... Rows_examined: N`` (with ``log_slow_extra``, 8.0.14+, also
  ``Thread_id``, ``Errno``, ``Start``, ``End`` ...), then ``use db;`` when the default
  database changed, ``SET timestamp=N;`` and the statement;
- MariaDB and Percona Server: ``# Thread_id: N  Schema: db  QC_hit: No`` and their
  extended lines (``# Rows_affected:``, ``# Full_scan:``, ``# explain:`` ...).

Entries are split as pt-query-digest's SlowLogParser splits them, so the statements and
their counts are the ones a DBA sees in its report: a line that starts with ``#`` after a
statement's closing ``;`` starts the next entry, whatever header it is (``# Time:``,
``# User@Host:``, ``# Thread_id:``, ``# Query_time:`` ...); at an entry's start every
``#`` line is header (MariaDB's lone ``#`` around its ``# explain:`` lines included), and
so are ``use db;`` and the ``SET timestamp=``, ``SET insert_id=``, ``SET
last_insert_id=`` lines a server writes before a statement (``SET
insert_id=5,timestamp=...;`` before an INSERT that generated an AUTO_INCREMENT value).

The log is streamed line by line (a multi-GB capture never sits in memory). The server's
banner after a restart is passed over; an entry cut short at the end of the file (no
closing ``;``) is skipped and counted, as is a header without a statement. A statement
with bytes that are not UTF-8 keeps them (as surrogate escapes) and is counted.
"""
from __future__ import annotations

import gzip
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, cast

from ..errors import InputError
from ..inputs import inputfile

__all__ = ["CapturedLog", "Entry", "SlowLog", "bounded_lines", "open_bytes"]

_ADMIN = b"# administrator command: "
_BANNER = re.compile(rb"\S+, Version: .* started with:$|Tcp port: \d+ +Unix socket: |"
                     rb"Time +Id +Command +Argument$")
_FIELD = re.compile(rb"(\w+):(.*?)(?=\s+\w+:|\s*$)")
_USE = re.compile(rb"use `?([^`;\s]+)`?;$")  # as the server writes it: lower case
# The SET lines a server writes before a statement (pt-query-digest's header lines).
_SET_HEADER = re.compile(rb"SET (?:last_insert_id|insert_id|timestamp)\b")
_TIMESTAMP = re.compile(rb"\btimestamp\s*=\s*(\d+(?:\.\d+)?)")
_OLD_TIME = re.compile(rb"# Time: (\d{6}) +(\d+:\d\d:\d\d)")  # MariaDB, MySQL 5.5/5.6
# The first lines of any slow log: its banner or an entry's header.
_LOOKS_LIKE = re.compile(rb"# (Time|User@Host|Thread_id|Query_time):|" + _BANNER.pattern)
SNIFF_LINES = 50


@dataclass
class Entry:
    """One logged statement."""

    session: int  # the connection's thread id (0: the log does not say)
    db: str | None  # the default database it ran in
    sql: str  # without its closing ';' (administrator commands: "administrator command: Quit")
    query_time: float
    rows_sent: int
    rows_examined: int
    errno: int  # log_slow_extra's Errno, Percona's Last_errno; 0 when not logged
    timestamp: float | None  # its SET timestamp (the statement's start, in seconds)
    offset: int  # where its header starts in the file, in bytes
    start: float | None = None  # when it began, epoch seconds, as precisely as the log says
    start_precision: float = 1.0  # seconds: 1e-6 (MySQL 5.7+) or 1 (MariaDB, MySQL 5.6)

    @property
    def admin(self) -> bool:
        """A protocol command (Quit, Prepare, Init DB ...), not a statement."""
        return self.sql.startswith("administrator command: ")


# Bytes of one statement kept in memory; a longer one is skipped, counted, never read
# whole (64 MiB: max_allowed_packet's default on MySQL 8.0+, MariaDB 10.6+).
MAX_STATEMENT = 64 << 20
TOO_LONG = f"a statement over {MAX_STATEMENT >> 20} MiB (not replayed)"


def bounded_lines(f: IO[bytes], limit: int | None = None
                  ) -> Iterator[tuple[bytes, int, bool]]:
    """Each line of ``f`` (with its end), its length in the file, and whether it was
    cut: a line over ``limit`` bytes comes as its first ``limit``, the rest read in
    pieces and dropped, so one huge statement never sits in memory whole."""
    limit = MAX_STATEMENT if limit is None else limit
    while line := f.readline(limit + 1):
        n, cut = len(line), len(line) > limit
        if cut and not line.endswith(b"\n"):
            while more := f.readline(1 << 20):
                n += len(more)
                if more.endswith(b"\n"):
                    break
        yield (line[:limit] if cut else line), n, cut


@dataclass
class _Pending:
    offset: int = -1
    fields: dict[bytes, bytes] = field(default_factory=dict)
    body: list[bytes] = field(default_factory=list)
    size: int = 0
    too_long: bool = False

    def add(self, line: bytes, cut: bool) -> None:
        """A line of the statement, unless it has grown past MAX_STATEMENT (then only
        a marker stays: the entry is counted and skipped)."""
        self.size += len(line)
        if cut or self.size > MAX_STATEMENT:
            self.too_long = True
        if not self.too_long:
            self.body.append(line)
        elif not self.body:
            self.body.append(b"")


def first_lines_match(f: IO[bytes], test: Callable[[bytes], bool]) -> bool:
    """Whether one of the first SNIFF_LINES lines (before any NUL byte), without its line
    end, passes ``test``; ``f`` is rewound to its start either way."""
    try:
        for n, (line, _, _) in enumerate(bounded_lines(f, 1 << 16)):
            if n >= SNIFF_LINES or b"\0" in line:
                return False
            if test(line.rstrip(b"\r\n")):
                return True
        return False
    finally:
        f.seek(0)


def _is_header(line: bytes, cur: _Pending) -> bool:
    """Whether ``line`` is a header line of an entry. pt-query-digest's record separator
    is ";\\n#": after a closing ';' any '#' line starts an entry; before a statement any
    '#' line is its header."""
    return line.startswith(b"#") and not line.startswith(_ADMIN) and (
        not cur.body or cur.body[-1].rstrip().endswith(b";"))


class CapturedLog:
    """The entries of one captured log file (plain or gzip), in the order they were
    written; ``skipped`` counts what was passed over, by reason. Each format says
    whether a file is one (``_sniff``) and reads its entries (``_entries``)."""

    def __init__(self, path: Path):
        self.path = path
        self.skipped: Counter[str] = Counter()
        self.binary = 0  # statements with bytes that are not UTF-8

    def __iter__(self) -> Iterator[Entry]:
        with open_bytes(self.path) as f:
            self._sniff(f)
            yield from self._entries(f)

    def _sniff(self, f: IO[bytes]) -> None:
        raise NotImplementedError

    def _entries(self, f: IO[bytes]) -> Iterator[Entry]:
        raise NotImplementedError


class SlowLog(CapturedLog):
    """A slow query log's entries."""

    def __init__(self, path: Path):
        super().__init__(path)
        self._db: str | None = None  # MySQL writes "use db;" only when it changes

    def _sniff(self, f: IO[bytes]) -> None:
        """Refuse a file that is not a slow log, before anything is replayed from it."""
        if first_lines_match(f, lambda line: _LOOKS_LIKE.match(line) is not None):
            return
        raise InputError(f"{self.path}: not a slow query log (no '# Time:', '# User@Host:' "
                         f"or server banner in its first {SNIFF_LINES} lines) nor a general "
                         "log (no '<time>\\t<id> Query\\t...' line)")

    def _entries(self, f: IO[bytes]) -> Iterator[Entry]:
        cur = _Pending()
        offset = 0
        for raw, n, cut in bounded_lines(f):
            line = raw.rstrip(b"\r\n")
            starts = _is_header(line, cur)
            if starts or _BANNER.match(line):
                if cur.body:
                    yield from self._done(cur, final=False)
                    cur = _Pending()
                if starts:
                    cur.offset = offset if cur.offset < 0 else cur.offset
                    if not _OLD_TIME.match(line):  # its clock reads as a field
                        cur.fields.update(_FIELD.findall(line[2:]))
            elif cur.offset >= 0 or cur.body:
                cur.add(line, cut)
            offset += n
        if cur.body or cur.offset >= 0:
            yield from self._done(cur, final=True)

    def _done(self, cur: _Pending, final: bool) -> Iterator[Entry]:
        body, timestamp = self._header_lines(cur.body)
        if cur.too_long:
            self.skipped[TOO_LONG] += 1
            return
        text = b"\n".join(body).rstrip()
        if not text:
            self.skipped["a header without a statement"] += 1
            return
        if not text.endswith(b";"):
            self.skipped["cut short at the end of the log" if final
                         else "a statement without its closing ';'"] += 1
            return
        yield self._entry(cur, text[:-1].removeprefix(b"# "), timestamp)

    def _header_lines(self, body: list[bytes]) -> tuple[list[bytes], float | None]:
        """The statement's lines without the header lines before it (``use db;``, the
        SET lines), and the ``timestamp`` its SET line gives."""
        timestamp = None
        while body:
            if m := _USE.match(body[0]):
                self._db = m.group(1).decode("utf-8", "surrogateescape")
            elif _SET_HEADER.match(body[0]):
                if m := _TIMESTAMP.search(body[0]):
                    timestamp = float(m.group(1))
            else:
                break
            body = body[1:]
        return body, timestamp

    def _entry(self, cur: _Pending, text: bytes, timestamp: float | None) -> Entry:
        try:
            sql = text.decode("utf-8")
        except UnicodeDecodeError:
            sql = text.decode("utf-8", "surrogateescape")
            self.binary += 1
        f = {k.decode(): v.strip().decode("utf-8", "replace") for k, v in cur.fields.items()}
        schema = f.get("Schema")
        start, precision = _start(f, timestamp)
        return Entry(session=_int(f.get("Thread_id") or f.get("Id")),
                     db=schema if schema else self._db, sql=sql,
                     query_time=_float(f.get("Query_time")),
                     rows_sent=_int(f.get("Rows_sent")),
                     rows_examined=_int(f.get("Rows_examined")),
                     errno=_int(f.get("Errno") or f.get("Last_errno")),
                     timestamp=timestamp, offset=cur.offset,
                     start=start, start_precision=precision)


def _start(f: dict[str, str], timestamp: float | None) -> tuple[float | None, float]:
    """When the statement began: log_slow_extra's ``Start``, else MySQL's ``# Time`` (when
    it ended, to the microsecond) less its ``Query_time``, else its ``SET timestamp`` (to
    the second: MariaDB, MySQL 5.5/5.6), with its precision in seconds."""
    if (t := _iso(f.get("Start"))) is not None:
        return t, 1e-6
    if (t := _iso(f.get("Time"))) is not None:
        return t - _float(f.get("Query_time")), 1e-6
    return timestamp, 1.0


def _iso(v: str | None) -> float | None:
    """An ISO 8601 time as MySQL 5.7+ writes it (UTC ``Z``, or an offset with
    ``log_timestamps = SYSTEM``), in epoch seconds."""
    if not v or "T" not in v:
        return None
    try:
        return datetime.fromisoformat(v).timestamp()
    except ValueError:
        return None


def open_bytes(path: Path) -> IO[bytes]:
    """A capture file's bytes, gunzipped when it is gzip; a missing file is an InputError
    naming it."""
    raw = inputfile.open_input(path, "captured log")
    try:
        if raw.read(2) == b"\x1f\x8b":
            raw.seek(0)
            gz = gzip.GzipFile(fileobj=raw, mode="rb")
            gz.myfileobj = raw  # type: ignore[assignment]  # closed with it
            return cast(IO[bytes], gz)
        raw.seek(0)
        return raw
    except OSError as e:
        raw.close()
        raise InputError(f"{path}: {e.strerror or e}") from None


def _int(v: str | None) -> int:
    try:
        return int(v or 0)
    except ValueError:
        return 0


def _float(v: str | None) -> float:
    try:
        return float(v or 0)
    except ValueError:
        return 0.0
