"""A damaged SQLite store: named as such, and every run still readable in it copied
into a new store (``harness store check --salvage OUT``).

SQLite says "database disk image is malformed" of a file cut short (a full disk, a copy
that stopped) or with pages overwritten. Each run is read on its own, row by row, from
a copy of the damaged file opened read-only, and where that cannot read it (a table's
or an index's pages gone: half a file reads no run at all) from the rows its pages
still hold, read page by page as SQLite's own ``.recover`` reads them (store/pages.py):
a run any of whose rows (the run, its series, their chunks, its events and files)
cannot be read in either is left out and named, never copied half.
"""
from __future__ import annotations

import contextlib
import functools
import json
import mmap
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Integer, create_engine, insert

from ..errors import InputError, StoreError, UnavailableError
from . import pages, schema
from .damage import page_size
from .db import Store

# Rows probed by rowid when the runs table cannot be scanned whole: past this many
# misses in a row, the table is taken to end.
_MISSES = 500


@dataclass
class Salvaged:
    copied: list[str] = field(default_factory=list)  # run ids
    lost: list[str] = field(default_factory=list)  # "run id: why"
    samples: int = 0


def salvage(path: Path, out: Store) -> Salvaged:
    """Every readable run of the damaged store file at ``path`` into ``out`` (a new,
    empty store)."""
    if out.runs():
        raise InputError(f"--salvage: {out.identity()} holds runs already; give a new file")
    got = Salvaged()
    with tempfile.TemporaryDirectory(prefix="salvage-") as tmp:
        copy = _readable_copy(path, Path(tmp))
        with _read_only(copy) as db, _read_only(_recovered(copy, Path(tmp))) as rec:
            for run_id in dict.fromkeys([*_run_ids(db), *_run_ids(rec)]):
                try:
                    rows = _whole_rows((db, rec), run_id)
                    _write(out, rows)
                except (sqlite3.DatabaseError, StoreError) as e:
                    got.lost.append(f"{run_id}: {e}")
                    continue
                got.copied.append(run_id)
                got.samples += sum(c["n"] for c in rows["chunks"])
    return got


def _whole_rows(dbs: tuple[sqlite3.Connection, ...], run_id: str
                ) -> dict[str, list[dict[str, Any]]]:
    """The run's rows from the first of ``dbs`` that holds them whole; the last one's
    error otherwise."""
    error: Exception = StoreError("its row cannot be read")
    for db in dbs:
        try:
            rows = _run_rows(db, run_id)
            _whole(rows)
            return rows
        except (sqlite3.DatabaseError, StoreError) as e:
            error = e
    raise error


def _recovered(copy: Path, folder: Path) -> Path:
    """A new database of every whole row the copy's pages still hold (store/pages.py:
    read page by page, as SQLite's .recover reads), in the store's own tables; a row
    seen twice (an older copy on a freed page) kept as first found."""
    out = folder / "recovered.db"
    engine = create_engine(f"sqlite:///{out}")
    schema.metadata.create_all(engine)
    engine.dispose()
    with copy.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        found = pages.rows(data, _tables(copy))
    with contextlib.closing(sqlite3.connect(out)) as db:
        for name, rows in found.items():
            if rows:
                marks = ", ".join("?" * len(rows[0]))
                db.executemany(f"INSERT OR IGNORE INTO {name} VALUES ({marks})", rows)
        db.commit()
    return out


def _tables(copy: Path) -> list[pages.Table]:
    """The store's tables as the page reader needs them: the root page the copy's
    schema gives (0, none, where it cannot be read), the columns the harness's
    schema gives."""
    roots: dict[str, int] = {}
    with contextlib.suppress(sqlite3.DatabaseError), _read_only(copy) as db:
        roots = dict(db.execute("SELECT name, rootpage FROM sqlite_master WHERE "
                                "type = 'table'").fetchall())
    out = []
    for t in schema.metadata.sorted_tables:
        cols = list(t.columns)
        pk = list(t.primary_key.columns)
        alias = cols.index(pk[0]) if len(pk) == 1 and \
            isinstance(pk[0].type, Integer) else None
        kinds = [(c.type.python_type, c.nullable or i == alias) for i, c in enumerate(cols)]
        out.append(pages.Table(t.name, int(roots.get(t.name) or 0), len(cols), alias,
                               functools.partial(_fits, kinds)))
    return out


def _fits(kinds: list[tuple[type, bool]], values: list[pages.Value]) -> bool:
    """Whether a record's values have the column types of a table (an int stored in a
    REAL column too, as SQLite stores 2.0)."""
    for (kind, nullable), v in zip(kinds, values, strict=True):
        if v is None:
            if not nullable:
                return False
        elif not (isinstance(v, kind) or (kind is float and isinstance(v, int))):
            return False
    return True


def _readable_copy(path: Path, folder: Path) -> Path:
    """A copy of the store file (and its write-ahead log) SQLite can open: a file cut
    short is filled to whole pages, and its header's page count made the file's (else
    SQLite calls even its table list malformed; the pages that are gone read as
    damage, each where it is met)."""
    copy = folder / "store.db"
    shutil.copyfile(path, copy)
    wal = path.with_name(path.name + "-wal")
    if wal.is_file():
        shutil.copyfile(wal, copy.with_name("store.db-wal"))
    page = page_size(copy)
    if page:
        size = copy.stat().st_size
        with copy.open("r+b") as f:
            f.seek(size)
            f.write(b"\0" * (-size % page))
            f.seek(28)  # the header's database size, in pages
            f.write(((size + page - 1) // page).to_bytes(4, "big"))
    return copy


def _read_only(path: Path) -> contextlib.closing[sqlite3.Connection]:
    if not path.is_file():
        raise UnavailableError(f"{path}: no such store file")
    return contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True))


def _run_ids(db: sqlite3.Connection) -> list[str]:
    """Every run id the file still names: in the runs table (scanned, then probed row
    by row past what a scan may miss), and in the series, events and files of runs whose
    own row is gone (those are named as lost, not skipped in silence)."""
    found: dict[str, None] = {}
    for sql in ("SELECT run_id FROM runs ORDER BY rowid",
                "SELECT DISTINCT run_id FROM series", "SELECT DISTINCT run_id FROM events",
                "SELECT DISTINCT run_id FROM artifacts"):
        try:
            found.update((r[0], None) for r in db.execute(sql))
        except sqlite3.DatabaseError:
            pass
    found.update((run_id, None) for run_id in _probed(db))
    return list(found)


def _probed(db: sqlite3.Connection) -> Iterator[str]:
    """The runs table read a rowid at a time, until ``_MISSES`` in a row are missing."""
    misses, rowid = 0, 0
    while misses < _MISSES:
        rowid += 1
        try:
            row = db.execute("SELECT run_id FROM runs WHERE rowid = ?", (rowid,)).fetchone()
        except sqlite3.DatabaseError:
            row = None
        misses = 0 if row else misses + 1
        if row:
            yield row[0]


def _rows(db: sqlite3.Connection, sql: str, *args: Any) -> list[dict[str, Any]]:
    cur = db.execute(sql, args)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def _run_rows(db: sqlite3.Connection, run_id: str) -> dict[str, list[dict[str, Any]]]:
    series = _rows(db, "SELECT * FROM series WHERE run_id = ?", run_id)
    chunks = [c for s in series for c in _rows(
        db, "SELECT * FROM chunks WHERE series_id = ? ORDER BY seq", s["series_id"])]
    return {"runs": _rows(db, "SELECT * FROM runs WHERE run_id = ?", run_id),
            "series": series, "chunks": chunks,
            "events": _rows(db, "SELECT * FROM events WHERE run_id = ?", run_id),
            "artifacts": _rows(db, "SELECT * FROM artifacts WHERE run_id = ?", run_id)}


def _whole(rows: dict[str, list[dict[str, Any]]]) -> None:
    """StoreError unless the run's rows are all there, as far as they can tell: the run's
    row, each series' chunks numbered from 0 without a gap, and as many samples as its
    summary counted (a damaged index page hides rows without an error)."""
    if len(rows["runs"]) != 1:
        raise StoreError("its row cannot be read")
    seqs: dict[int, list[int]] = {}
    for c in rows["chunks"]:
        seqs.setdefault(c["series_id"], []).append(c["seq"])
    if any(v != list(range(len(v))) for v in seqs.values()) or \
            len(seqs) != len(rows["series"]):
        raise StoreError("some of its chunks cannot be read")
    try:
        counted = int(json.loads(rows["runs"][0]["summary"] or "{}").get("samples") or 0)
    except (ValueError, AttributeError):
        counted = 0
    have = sum(c["n"] for c in rows["chunks"])
    if counted and have != counted:
        raise StoreError(f"{have} of its {counted} samples can be read")


def _write(out: Store, rows: dict[str, list[dict[str, Any]]]) -> None:
    """One run's rows into ``out``, in one transaction (its series and events keep
    their ids: the new store holds nothing else that could take them)."""
    tables = {"runs": schema.runs, "series": schema.series, "chunks": schema.chunks,
              "events": schema.events, "artifacts": schema.artifacts}
    try:
        with out.engine.begin() as c:
            for name, table in tables.items():
                if rows[name]:
                    c.execute(insert(table), rows[name])
    except Exception as e:  # noqa: BLE001 - named with the run, the rest goes on
        raise StoreError(f"writing run {rows['runs'][0]['run_id']} into "
                         f"{out.identity()}: {e}") from e
