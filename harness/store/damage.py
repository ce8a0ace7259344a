"""Whether an SQLite store file is damaged, in a DBA's words: SQLite's own check, and
a file cut short told by its size against the page count its header holds."""
from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path


def cut_short(path: Path) -> bool:
    """Whether an SQLite file is shorter than its header's page count says (a full disk,
    a copy that stopped), told from its bytes alone: nothing opens it as a database, so
    nothing (an empty -wal, -shm) is made beside it. A file with a write-ahead log
    beside it is not judged so (the log may hold what the file lacks)."""
    if path.with_name(path.name + "-wal").exists():
        return False
    try:
        page = page_size(path)
        return bool(page) and path.stat().st_size < header_pages(path) * page
    except OSError:
        return False


def damage(path: Path) -> str | None:
    """What is wrong with an SQLite store file, in a DBA's words; None if SQLite finds it
    whole (its quick check). Read as it is (immutable: no lock, no -wal or -shm made)
    when no write-ahead log is beside it."""
    wal = path.with_name(path.name + "-wal").exists()
    uri = f"file:{path}?mode=ro" + ("" if wal else "&immutable=1")
    try:
        with contextlib.closing(sqlite3.connect(uri, uri=True)) as db:
            found = [r[0] for r in db.execute("PRAGMA quick_check(5)")]
    except sqlite3.DatabaseError as e:
        found = [str(e)]
    if found == ["ok"]:
        return None
    size, page = path.stat().st_size, page_size(path)
    counted = header_pages(path) * page
    cut = f"; {size:,} bytes where its header counts {counted:,}: cut short" \
        if size < counted else f"; {size:,} bytes"
    return f"the store file {path} is damaged ({found[0]}{cut})"


def page_size(path: Path) -> int:
    with path.open("rb") as f:
        head = f.read(18)
    if not head.startswith(b"SQLite format 3\x00"):
        return 0
    n = int.from_bytes(head[16:18], "big")
    return 65536 if n == 1 else n


def header_pages(path: Path) -> int:
    """The database's size in pages, as its header says (0 if it has no header)."""
    with path.open("rb") as f:
        head = f.read(32)
    return int.from_bytes(head[28:32], "big") if len(head) == 32 else 0
