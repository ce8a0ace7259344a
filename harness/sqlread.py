"""Is a piece of SQL read-only? Tokenised (strings, quoted names, comments), not grepped.

Used where the harness may only read: a ``sql`` side load on a server it does not own.
Allowed: SELECT (not INTO OUTFILE/DUMPFILE, not a locking read), WITH ... SELECT, SHOW,
EXPLAIN/DESCRIBE of anything but EXPLAIN ANALYZE of a write, TABLE, VALUES, HELP, USE,
DO, session-scoped SET, and transaction brackets. Anything else - and any executable
``/*! ... */`` comment, which the server runs as SQL - is a write. A stored function
called from a SELECT may still write: such side loads also run in a READ ONLY session.
"""
from __future__ import annotations

import re
from collections.abc import Iterator

_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<exec>/\*[M]?!)                        # /*!50001 ... */ runs on the server
  | (?P<comment>/\*.*?\*/|(?:--(?:\s|$)|\#)[^\n]*)
  | (?P<string>'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*")
  | (?P<ident>`(?:[^`]|``)*`)
  | (?P<var>@@?[A-Za-z0-9_.$]+)
  | (?P<word>[A-Za-z_][A-Za-z0-9_$]*)
  | (?P<semi>;)
  | (?P<other>.)
""", re.X | re.S)

_READ_FIRST = {"SELECT", "SHOW", "TABLE", "VALUES", "HELP", "USE", "DO", "DESCRIBE",
               "DESC", "BEGIN", "COMMIT", "ROLLBACK"}
_WRITE_WORDS = {"INSERT", "UPDATE", "DELETE", "REPLACE"}


def tokens(sql: str) -> Iterator[tuple[str, str]]:
    for m in _TOKEN.finditer(sql):
        kind = m.lastgroup or "other"
        if kind in ("space", "comment"):
            continue
        yield kind, m.group()


def split(sql: str) -> list[str]:
    """The statements' texts, split at ';' outside strings, quoted names and comments
    (what the guard judged is what runs)."""
    out, start = [], 0
    for m in _TOKEN.finditer(sql):
        if m.lastgroup == "semi":
            out.append(sql[start:m.start()])
            start = m.end()
    out.append(sql[start:])
    return [t.strip() for t in out if list(tokens(t))]


def statements(sql: str) -> list[list[tuple[str, str]]]:
    """The statements of ``sql`` (split at ';' outside strings and comments)."""
    out: list[list[tuple[str, str]]] = [[]]
    for kind, text in tokens(sql):
        if kind == "semi":
            out.append([])
        else:
            out[-1].append((kind, text))
    return [s for s in out if s]


def _after(stmt: list[tuple[str, str]], n: int) -> list[tuple[str, str]]:
    """The statement without its first ``n`` words."""
    seen = 0
    for i, (k, _) in enumerate(stmt):
        if k == "word":
            seen += 1
            if seen == n:
                return stmt[i + 1:]
    return []


def write_reason(stmt: list[tuple[str, str]]) -> str | None:
    """Why one tokenised statement may change the server, or None when it only reads."""
    if any(k == "exec" for k, _ in stmt):
        return "an executable /*! ... */ comment (the server runs what is in it)"
    words = [t.upper() for k, t in stmt if k == "word"]
    first = words[0] if words else (stmt[0][1] if stmt else "")
    if first in ("EXPLAIN", "DESCRIBE", "DESC"):
        # The plan only, nothing runs - but EXPLAIN ANALYZE runs the statement.
        return write_reason(_after(stmt, 2)) if words[1:2] == ["ANALYZE"] else None
    if first == "ANALYZE":  # MariaDB's ANALYZE <statement> runs it; ANALYZE TABLE writes
        return (write_reason(_after(stmt, 1)) if words[1:2] in (["SELECT"], ["WITH"])
                else "ANALYZE TABLE rewrites index statistics")
    if first == "START":
        return None if words[1:2] == ["TRANSACTION"] else f"START {' '.join(words[1:2])}"
    if first == "SET":
        scoped = {"GLOBAL", "PERSIST", "PERSIST_ONLY", "PASSWORD", "DEFAULT"} & set(words)
        if scoped or any(k == "var" and t.lower().startswith(("@@global.", "@@persist"))
                         for k, t in stmt):
            return "SET of a global setting, a password or a default role"
        return None
    if first in ("SELECT", "WITH", "VALUES", "TABLE"):
        bad = ({"OUTFILE", "DUMPFILE"} & set(words)) or (
            "UPDATE" in words and first == "SELECT") or (
            "SHARE" in words) or (_WRITE_WORDS & set(words) and first == "WITH")
        if bad:
            return "writes a file, locks rows for update or share, or changes rows"
        return None
    if first in _READ_FIRST:
        return None
    return f"{first or '(empty)'} is not a read-only statement"


def first_write(sql: str) -> tuple[str, str] | None:
    """The first statement of ``sql`` that may change the server, and why; or None."""
    for stmt in statements(sql):
        why = write_reason(stmt)
        if why:
            text = " ".join(t for _, t in stmt)
            return (text if len(text) <= 80 else text[:77] + "..."), why
    return None
