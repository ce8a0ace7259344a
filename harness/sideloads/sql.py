"""``kind: sql``: a DBA's statements on one connection, in order, each pass (read-only
on a server the harness does not own: its session is READ ONLY)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import model_validator

from ..inputs import inputfile, sqlread
from ..model import Ident, SideLoadModel


class SqlLoad(SideLoadModel):
    """Queries on one connection, in order, ``repeat`` times (or until the main ends)."""

    kind: Literal["sql"] = "sql"
    example: ClassVar[dict[str, Any]] = {
        "database": "sbtest", "query": "SELECT COUNT(*) FROM sbtest1", "start": 1}
    database: Ident | None = None
    query: str | list[str] | None = None
    file: str | None = None  # statements separated by ';' at line ends

    def statements(self, base: Path) -> list[str]:
        """The statements, in order (a file's split outside strings and comments)."""
        if self.file:
            return sqlread.split(self._text(base))
        given = [self.query] if isinstance(self.query, str) else list(self.query or [])
        return [q for text in given for q in sqlread.split(text)]

    def writes(self, base: Path) -> list[str]:
        """The whole text judged (its statements end in the same places in every
        reading), then each statement as the one query it is sent as."""
        texts = [self._text(base)] if self.file else (
            [self.query] if isinstance(self.query, str) else list(self.query or []))
        for text, several in [*((t, True) for t in texts),
                              *((q, False) for q in self.statements(base))]:
            bad = sqlread.first_write(text, several=several)
            if bad:
                return [self._where(text, *bad)]
        return []

    def _where(self, text: str, excerpt: str, why: str) -> str:
        """A refusal's place: a query with its text; a file by its line only (its text is
        not shown: it may not be SQL at all)."""
        if not self.file:
            return f"query: {excerpt!r} - {why}"
        at = text.find(excerpt[:20])
        line = f", line {text.count(chr(10), 0, at) + 1}" if at >= 0 else ""
        return f"file: {self.file}{line} - {why}"

    def _text(self, base: Path) -> str:
        return inputfile.read_text(base / str(self.file), "sql file")

    def file_problems(self, base: Path) -> list[str]:
        why = self.file and inputfile.problem(base / self.file, "sql file")
        return [why] if why else []

    @model_validator(mode="after")
    def _source(self) -> SqlLoad:
        if (self.query is None) == (self.file is None):
            raise ValueError("give exactly one of 'query' or 'file'")
        return self

    def run_pass(self, load: Any, p: Any) -> None:
        load.queries(p, self.database, [(None, q) for q in self.statements(load.base_dir)])


PLUGIN = SqlLoad
