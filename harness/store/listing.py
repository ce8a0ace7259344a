"""``harness runs`` at once: an SQLite store's runs table read with the standard library
alone (no SQLAlchemy, no summary model), for a listing.

It answers only where that read is the whole truth: an SQLite file of this harness's
format, whole (not cut short), that opens read-only and in which no run is left
``running`` (the full store marks those of a dead harness first). Anything else - a
server store, an older format, a damaged file, a run set it does not hold - is None,
and the command opens the store as every other command does, with its messages.
"""
from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..jsonvalue import number
from .damage import cut_short
from .version import FORMAT_VERSION

if TYPE_CHECKING:
    from .run import StoredRun

# A run's fields as `runs --json` prints them (docs/schemas/run.schema.json).
RUN_KEYS = ("run_id", "run_set", "scenario", "server", "flavor", "version", "variant",
            "repetition", "target", "host", "status", "started_at", "ended_at")


@dataclass(frozen=True)
class ListedRun:
    """One run as a listing shows it: its fields, and the figures asked for (by the
    listing's name: tps, p95_ms ...; None where the run has no such figure)."""

    run_id: str
    run_set: str
    scenario: str
    server: str
    flavor: str
    version: str
    variant: str
    repetition: int
    target: str
    host: str
    status: str
    started_at: str
    ended_at: str | None
    figures: Mapping[str, float | None]

    def to_json(self) -> dict[str, object]:
        return {k: getattr(self, k) for k in RUN_KEYS}


def listed_of(r: StoredRun, figures: Mapping[str, str]) -> ListedRun:
    """A run the full store read, as a listing shows it."""
    return ListedRun(**{k: getattr(r, k) for k in RUN_KEYS},
                     figures={n: r.summary.figure(k) for n, k in figures.items()})


def quick_runs(url: str, figures: Mapping[str, str], scenario: str | None = None,
               run_set: str | None = None) -> list[ListedRun] | None:
    """The runs (oldest first) of the SQLite store at ``url``, each with ``figures``
    (name -> the summary's key); None where only the full store can answer."""
    if not url.startswith("sqlite:///"):
        return None
    path = Path(url[len("sqlite:///"):])
    if not path.is_file() or cut_short(path):
        return None
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            rows = _rows(db, scenario, run_set)
    except (sqlite3.Error, ValueError):
        return None
    if rows is None or (run_set and not rows):
        return None
    return [_listed(row, figures) for row in rows]


def _rows(db: sqlite3.Connection, scenario: str | None, run_set: str | None
          ) -> list[tuple[object, ...]] | None:
    """The runs' rows, or None: another format, or a run still marked running."""
    got = db.execute("SELECT value FROM harness_meta WHERE key = 'format_version'").fetchone()
    if got is None or got[0] != str(FORMAT_VERSION):
        return None
    if db.execute("SELECT 1 FROM runs WHERE status = 'running' LIMIT 1").fetchone():
        return None
    where, args = [], []
    for column, value in (("scenario", scenario), ("run_set", run_set)):
        if value:
            where.append(f"{column} = ?")
            args.append(value)
    sql = (f"SELECT {', '.join(RUN_KEYS)}, summary FROM runs"
           + (f" WHERE {' AND '.join(where)}" if where else "")
           + " ORDER BY started_at, run_id")
    return db.execute(sql, args).fetchall()


def _listed(row: tuple[object, ...], figures: Mapping[str, str]) -> ListedRun:
    f = dict(zip(RUN_KEYS, row, strict=False))
    words = {k: str(v) for k, v in f.items() if k not in ("repetition", "ended_at")}
    summary = json.loads(str(row[-1])) if row[-1] else {}
    measured = summary.get("measured") or {} if isinstance(summary, dict) else {}
    return ListedRun(**words, repetition=int(str(f["repetition"])),
                     ended_at=None if f["ended_at"] is None else str(f["ended_at"]),
                     figures={n: number(measured.get(k)) for n, k in figures.items()})
