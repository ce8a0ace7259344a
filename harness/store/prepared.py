"""What loading one dataset did, as a run's summary keeps it (``prepare``): the database,
its rows, how long it took, and what its kind adds of its own (SSB's generate and load
seconds, a dump's deferred indexes and skipped statements ...)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..jsonvalue import JsonDict

__all__ = ["Prepared"]

_COMMON = ("database", "rows", "seconds", "rows_per_s", "kind", "tables")


@dataclass(frozen=True)
class Prepared:
    database: str
    rows: int
    seconds: float
    rows_per_s: float | None = None
    kind: str | None = None  # the dataset's kind where it names it
    tables: int | dict[str, int] | None = None  # how many, or each one's rows
    own: JsonDict = field(default_factory=dict)  # its kind's own figures

    @classmethod
    def timed(cls, database: str, rows: int, seconds: float, **more: Any) -> Prepared:
        """``rows`` loaded in ``seconds``: the rate worked out, the times rounded."""
        return cls(database, rows, round(seconds, 3), round(rows / max(seconds, 1e-6), 1),
                   **more)

    @property
    def table_count(self) -> int | None:
        return len(self.tables) if isinstance(self.tables, dict) else self.tables

    def line(self) -> str:
        """As the progress log says it."""
        rate = f" ({self.rows_per_s:.0f} rows/s)" if self.rows_per_s is not None else ""
        return (f"prepared {self.database}: {self.rows} rows in {self.seconds:.1f} s{rate}"
                + self.own_text())

    def own_text(self) -> str:
        """Its kind's own figures that are one value each, as '; name value, ...' (a
        datadir's in-place upgrade: ``upgrade completed, upgrade_s 3.1``)."""
        said = [f"{k} {v}" for k, v in self.own.items()
                if isinstance(v, str | int | float) and not isinstance(v, bool)]
        return f"; {', '.join(said)}" if said else ""

    def to_json(self) -> JsonDict:
        """Stored flat, its kind's figures beside the common ones (as before it was
        typed); a common field not set is left out."""
        common: JsonDict = {k: v for k, v in (
            ("database", self.database), ("rows", self.rows), ("seconds", self.seconds),
            ("rows_per_s", self.rows_per_s), ("kind", self.kind), ("tables", self.tables))
            if v is not None}
        return {**common, **self.own}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Prepared:
        """A stored one; a datadir's, stored before it named its database, reads with
        the database unknown ("?")."""
        return cls(str(d.get("database", "?")), int(d.get("rows") or 0),
                   float(d.get("seconds") or 0.0), d.get("rows_per_s"), d.get("kind"),
                   d.get("tables"), {k: v for k, v in d.items() if k not in _COMMON})
