"""A run as the runner creates it (:class:`RunRecord`) and as the store holds it
(:class:`StoredRun`: what ``Store.runs()`` and ``Store.get_run()`` return).

Typed, as the summary is (store/summary.py): everything reads its fields as attributes
(``run.server``); a script that wants the row as a dict has ``dataclasses.asdict``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from .details import RunDetails
from .summary import RunSummary


@dataclass
class RunRecord:
    """One cell of a scenario's matrix (server x variant x repetition), as the runner
    creates it in the store."""

    run_id: str
    run_set: str
    scenario: str
    server: str
    flavor: str
    version: str
    variant: str
    target: str
    host: str
    started_at: str  # ISO 8601 UTC
    repetition: int = 1
    status: str = "running"  # running | ok | failed | interrupted
    # version string, config, host facts, tool versions, the report's hints ...
    details: RunDetails = field(default_factory=RunDetails)
    artifacts: str | None = None  # the run's folder, as this store finds it


@dataclass
class StoredRun(RunRecord):
    """A run read back: the record, with what the runner stored later."""

    ended_at: str | None = None
    error: str | None = None
    summary: RunSummary = field(default_factory=RunSummary)
    owner: str | None = None  # host:pid of the process that wrote it

    @classmethod
    def from_row(cls, row: dict[str, Any], folder: Path | None) -> StoredRun:
        """A ``runs`` table row: its JSON read, the artifacts folder of an SQLite store
        made absolute (``folder``: the store's; a copied store finds its own)."""
        d = dict(row)
        d["details"] = RunDetails.from_json(json.loads(d["details"]) if d.get("details")
                                            else None)
        d["summary"] = RunSummary.from_json(json.loads(d["summary"]) if d.get("summary")
                                            else None, where=f"run {d['run_id']}")
        if d.get("artifacts") and folder is not None:
            d["artifacts"] = str(folder / d["artifacts"])
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})

    def but(self, **changes: Any) -> StoredRun:
        """A copy with ``changes`` (a summary judged afresh, say); the store is not
        changed."""
        return replace(self, **changes)


FIELDS = tuple(f.name for f in fields(StoredRun))
