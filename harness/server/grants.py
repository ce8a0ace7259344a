"""What an account on a server the harness does not own may do, read from the server's
own ``SHOW GRANTS``.

On such a server the harness only reads, and read-only work runs in READ ONLY sessions
whose SQL the guard has read (:mod:`harness.inputs.sqlread`). An account that can only read
is the second wall: a scenario that says ``read_only_account: true`` is refused unless
the server lists no privilege beyond reading for it. The reading fails closed: any
privilege not known to be read-only counts as one that may write, and so do a role
(its privileges are not expanded), ``WITH GRANT OPTION`` and ``PROXY``. A partial
revoke (MySQL 8's ``REVOKE ... ON db.*``) is not subtracted: the account is judged by
what it was granted.
"""
from __future__ import annotations

import pymysql

from .mysql import query

# Privileges that read and change nothing (MySQL 5.5-9.x, MariaDB 10.1-11.x).
READING = frozenset({
    "USAGE", "SELECT", "SHOW VIEW", "SHOW DATABASES", "PROCESS", "REPLICATION CLIENT",
    "BINLOG MONITOR", "SLAVE MONITOR", "REPLICA MONITOR", "SHOW CREATE ROUTINE",
    "SHOW_ROUTINE",
})


def account_writes(conn: pymysql.connections.Connection) -> list[str]:
    """What the connected account may do beyond reading, one item per grant (empty: it
    can only read); a server that does not answer SHOW GRANTS: one item saying so."""
    try:
        rows = query(conn, "SHOW GRANTS")
    except pymysql.err.MySQLError as e:
        return [f"unknown (SHOW GRANTS: {e.args[-1] if e.args else e})"]
    return [w for (line,) in rows for w in grant_writes(str(line))]


def described(writes: list[str]) -> str:
    """The account as a run stores it."""
    if not writes:
        return "reads only (checked with SHOW GRANTS)"
    return (f"may write ({'; '.join(writes)}): read-only work runs in READ ONLY sessions "
            "whose SQL the guard read")


def grant_writes(line: str) -> list[str]:
    """What one line of SHOW GRANTS allows beyond reading."""
    words = line.split(None, 1)
    if not words or words[0].upper() != "GRANT":
        return []  # REVOKE (a partial revoke: not subtracted), SET DEFAULT ROLE
    privileges, on = _split_on(words[1])
    if on is None:  # GRANT `role`@`%` TO ...: a role, not expanded
        return [f"role {privileges.split(' TO ', 1)[0].strip()} (its privileges are not "
                "read; grant them to the account itself)"]
    target = on.split(" TO ", 1)[0].strip()
    names = [_privilege(p) for p in _top_level_commas(privileges)]
    out = [f"{', '.join(n for n in names if n not in READING)} ON {target}"] \
        if any(n not in READING for n in names) else []
    if "WITH GRANT OPTION" in on.upper():
        out.append(f"GRANT OPTION ON {target}")
    return out


def _split_on(text: str) -> tuple[str, str | None]:
    """(privileges, the rest after the top-level ' ON '), or (text, None) without one:
    quoted names and column lists may hold ' ON ' themselves."""
    depth, quote, upper = 0, "", text.upper()
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "`'\"":
            quote = ch
        elif ch in "()":
            depth += 1 if ch == "(" else -1
        elif depth == 0 and upper.startswith(" ON ", i):
            return text[:i], text[i + 4:]
    return text, None


def _top_level_commas(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "()":
            depth += 1 if ch == "(" else -1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return [*parts, text[start:]]


def _privilege(item: str) -> str:
    """``SELECT (`a`, `b`)`` -> ``SELECT``: the privilege, without its columns."""
    return " ".join(item.split("(", 1)[0].split()).upper()
