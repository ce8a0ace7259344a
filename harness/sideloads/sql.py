"""``kind: sql``: a DBA's statements on one connection, in order, each pass (read-only
on a server the harness does not own: its session is READ ONLY)."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, ClassVar, Literal

import pymysql
from pydantic import model_validator

from ..errors import HarnessError
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
        """A refusal's place: a query with its text; a file by its line only, and its
        reason without a word of the file but SQL's own (it may not be SQL at all: a
        token's file given by mistake)."""
        if not self.file:
            return f"query: {excerpt!r} - {why}"
        at = text.find(excerpt[:20])
        line = f", line {text.count(chr(10), 0, at) + 1}" if at >= 0 else ""
        return f"file: {self.file}{line} - {_without_words_of(why, excerpt)}"

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
        statements = self.statements(load.base_dir)
        try:
            load.queries(p, self.database, [(None, q) for q in statements])
        except pymysql.err.MySQLError as e:
            if not self.file:
                raise
            # the server's message quotes the statement ("... near 'x' at line 1"): of a
            # file, only SQL's own words are kept, in the output as in the store
            said = _without_words_of(str(e), " ".join(statements))
            raise HarnessError(f"file: {self.file}, statement {p.queries + 1}: "
                               f"{said}") from None


PLUGIN = SqlLoad


# The words a refusal may keep from a file: SQL's own verbs and keywords.
_SQL_WORDS = frozenset("""SELECT INSERT UPDATE DELETE REPLACE CREATE DROP ALTER TRUNCATE GRANT
REVOKE SET START BEGIN COMMIT ROLLBACK WITH LOAD DATA LOCAL INFILE CALL DO HANDLER LOCK
UNLOCK FLUSH RENAME SHOW EXPLAIN ANALYZE TRANSACTION READ WRITE ONLY GLOBAL SESSION PERSIST
XA PREPARE EXECUTE KILL SHUTDOWN INSTALL UNINSTALL OPTIMIZE REPAIR CHECK CHECKSUM RESET
PURGE CHANGE STOP USE NAMES CHARACTER CHARSET TABLE VALUES INTO OUTFILE DUMPFILE FOR SHARE
WORK CONSISTENT SNAPSHOT""".split())


def _without_words_of(why: str, excerpt: str) -> str:
    """``why`` with each word it shares with ``excerpt`` (the file's text) shown as
    '...', but SQL's own words."""
    for word in set(re.findall(r"[\w$@.]+", excerpt)):
        if word.upper() not in _SQL_WORDS:
            why = re.sub(rf"(?<![\w$@.]){re.escape(word)}(?![\w$@.])", "...", why,
                         flags=re.I)
    return why
