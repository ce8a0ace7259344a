"""What a run set's reports take from its scenario, stored with each run
(``details.report``) so that a report never depends on the scenario file still being
where it was."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..jsonvalue import JsonDict


@dataclass
class Hints:
    """The indexes to watch and the baseline server of a run set's reports."""

    watch_indexes: list[str] = field(default_factory=list)  # schema.table.index
    baseline_server: str | None = None
    note: str | None = None  # where they came from, when not from the runs themselves

    def to_json(self) -> JsonDict:
        return {"watch_indexes": self.watch_indexes, "baseline_server": self.baseline_server}

    @classmethod
    def from_json(cls, stored: dict[str, Any]) -> Hints:
        return cls(list(stored.get("watch_indexes", [])), stored.get("baseline_server"))
