"""The rows of an SQLite file read page by page, as SQLite's own ``.recover`` does (the
sqlite3 shell's needs the sqlite_dbpage table, which Debian's build leaves out).

A file cut short (a full disk, a copy that stopped) loses the pages past the cut, and
with them, often, an interior page of a table or an index: SQLite then reads no row of
that table at all ("database disk image is malformed"), though most of its rows are on
pages still there. Here every table b-tree leaf page still in the file is read (the
file format: https://www.sqlite.org/fileformat2.html), its cells decoded into records,
a record whose overflow chain runs past the file dropped; each leaf is given to the
table whose tree reaches it from its root page, or, cut off from its root, to the table
whose columns its records fit (``fits``).
"""
from __future__ import annotations

import mmap
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass

Value = int | float | str | bytes | None
LEAF, INTERIOR = 0x0D, 0x05


@dataclass(frozen=True)
class Table:
    """A table as the reader needs it: its root page, its column count, which column
    (if any) is the rowid's alias, and whether a record fits it (for cut-off leaves)."""

    name: str
    root: int
    columns: int
    rowid_column: int | None
    fits: Callable[[list[Value]], bool]


class File:
    """An SQLite file's pages, from its bytes."""

    def __init__(self, data: bytes | mmap.mmap):
        self.data = data
        n = int.from_bytes(data[16:18], "big")
        self.page_size = 65536 if n == 1 else n
        self.usable = self.page_size - data[20]
        self.pages = len(data) // self.page_size

    def page(self, no: int) -> bytes | None:
        if not 1 <= no <= self.pages:
            return None
        return self.data[(no - 1) * self.page_size:no * self.page_size]

    def kind(self, no: int) -> int | None:
        page = self.page(no)
        return None if page is None else page[100 if no == 1 else 0]

    def leaves(self, root: int) -> Iterator[int]:
        """The leaf pages a table's tree reaches from ``root`` (missing pages skipped)."""
        todo, seen = [root], set()
        while todo:
            no = todo.pop()
            if no in seen:
                continue
            seen.add(no)
            kind, page = self.kind(no), self.page(no)
            if kind == LEAF:
                yield no
            elif kind == INTERIOR and page is not None:
                h = 100 if no == 1 else 0
                todo.append(int.from_bytes(page[h + 8:h + 12], "big"))
                todo += [int.from_bytes(page[p:p + 4], "big") for p in self._cells(no)]

    def _cells(self, no: int) -> list[int]:
        page = self.page(no)
        assert page is not None
        h = 100 if no == 1 else 0
        count = int.from_bytes(page[h + 3:h + 5], "big")
        start = h + (8 if page[h] == LEAF else 12)
        return [int.from_bytes(page[start + 2 * i:start + 2 * i + 2], "big")
                for i in range(count)]

    def records(self, no: int) -> Iterator[tuple[int, list[Value]]]:
        """(rowid, values) of each whole cell of leaf page ``no``."""
        page = self.page(no)
        assert page is not None
        for p in self._cells(no):
            try:
                size, p = _varint(page, p)
                rowid, p = _varint(page, p)
                payload = self._payload(page, p, size)
                if payload is not None:
                    yield rowid, _record(payload)
            except (IndexError, ValueError, struct.error, UnicodeDecodeError):
                continue  # a cell damaged in place: left out

    def _payload(self, page: bytes, p: int, size: int) -> bytes | None:
        u = self.usable
        x = u - 35
        if size <= x:
            return page[p:p + size]
        m = ((u - 12) * 32 // 255) - 23
        k = m + (size - m) % (u - 4)
        local = k if k <= x else m
        out = bytearray(page[p:p + local])
        nxt = int.from_bytes(page[p + local:p + local + 4], "big")
        while len(out) < size:
            over = self.page(nxt)
            if over is None:
                return None  # its overflow runs past the file: not whole
            out += over[4:u][:size - len(out)]
            nxt = int.from_bytes(over[:4], "big")
        return bytes(out)


def _varint(b: bytes, p: int) -> tuple[int, int]:
    v = 0
    for i in range(9):
        c = b[p + i]
        if i == 8:
            return (v << 8) | c, p + 9
        v = (v << 7) | (c & 0x7F)
        if c < 0x80:
            return v, p + i + 1
    raise ValueError("varint")


_INTS = {1: 1, 2: 2, 3: 3, 4: 4, 5: 6, 6: 8}


def _record(b: bytes) -> list[Value]:
    head, p = _varint(b, 0)
    types = []
    while p < head:
        t, p = _varint(b, p)
        types.append(t)
    out: list[Value] = []
    q = head
    for t in types:
        if t in _INTS:
            n = _INTS[t]
            out.append(int.from_bytes(b[q:q + n], "big", signed=True))
            q += n
        elif t == 7:
            out.append(struct.unpack(">d", b[q:q + 8])[0])
            q += 8
        elif t in (8, 9):
            out.append(t - 8)
        elif t >= 12:
            n = (t - 12) // 2
            if q + n > len(b):
                raise ValueError("short record")
            out.append(b[q:q + n] if t % 2 == 0 else b[q:q + n].decode())
            q += n
        else:
            out.append(None)
    return out


def rows(data: bytes | mmap.mmap, tables: list[Table]) -> dict[str, list[list[Value]]]:
    """Each table's rows still in ``data`` (whole records only), the rowid put in its
    alias column."""
    f = File(data)
    owner = {leaf: t for t in tables for leaf in f.leaves(t.root)}
    out: dict[str, list[list[Value]]] = {t.name: [] for t in tables}
    for no in _in_order(f, owner):
        for rowid, values in f.records(no):
            table = owner.get(no) or _fitting(tables, values)
            if table is None or len(values) != table.columns:
                continue
            if table.rowid_column is not None and values[table.rowid_column] is None:
                values[table.rowid_column] = rowid
            out[table.name].append(values)
    return out


def _in_order(f: File, owner: dict[int, Table]) -> list[int]:
    """The file's table leaves, those a tree reaches first: a cut-off leaf may be a
    freed page holding an older copy of a row, taken only where no reached page holds
    that row."""
    return sorted((no for no in range(1, f.pages + 1) if f.kind(no) == LEAF),
                  key=lambda no: no not in owner)


def _fitting(tables: list[Table], values: list[Value]) -> Table | None:
    found = [t for t in tables if len(values) == t.columns and t.fits(values)]
    return found[0] if len(found) == 1 else None
