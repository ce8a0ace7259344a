"""A statement's fingerprint and digest, as Percona Toolkit computes them.

The fingerprint is the statement with its values abstracted (numbers, strings and NULL
become ``?``, IN and VALUES lists ``(?+)``, comments and ASC dropped, whitespace
collapsed, lower case): statements that differ only in their values share one. It is
``pt-fingerprint``'s and ``pt-query-digest``'s (QueryRewriter::fingerprint, ported rule
for rule; tests hold the two to the same output), so a digest here is the ``ID`` a DBA
sees in pt-query-digest's report: the MD5 of the fingerprint, in upper case hex.
"""
from __future__ import annotations

import hashlib
import re

__all__ = ["digest", "fingerprint"]

_MYSQLDUMP = re.compile(r"SELECT /\*!40001 SQL_NO_CACHE \*/ \* FROM `")
_TOOLKIT = re.compile(r"/\*\w+\.\w+:[0-9]/[0-9]\*/")
_CALL = re.compile(r"\s*(call\s+\S+)\(", re.I)
_MULTI_INSERT = re.compile(r"((?:INSERT|REPLACE)(?: IGNORE)?\s+INTO.+?VALUES\s*\(.*?\))\s*,\s*\(",
                           re.I | re.S)
_BLOCK_COMMENT = re.compile(r"/\*[^!].*?\*/", re.S)  # not /*!50100 versioned */ ones
_LINE_COMMENT = re.compile(r"(?:--|#)[^'\"\r\n]*(?=[\r\n]|\Z)")
_USE = re.compile(r"use \S+\n?\Z", re.I)
_ESCAPED_QUOTE = re.compile(r"\\[\"']")
_DQ_STRING = re.compile(r'".*?"', re.S)
_SQ_STRING = re.compile(r"'.*?'", re.S)
_NUMBER = re.compile(r"[0-9+-][0-9a-f.xb+-]*")
_NUMBER_PREFIX = re.compile(r"[xb.+-]\?")
_SPACE = re.compile(r"[ \n\t\r\f]+")
_NULL = re.compile(r"\bnull\b")
_LIST = re.compile(r"\b(in|values?)(?:[\s,]*\([\s?,]*\))+")
_UNION = re.compile(r"\b(select\s.*?)(?:(\sunion(?:\sall)?)\s\1)+")
_LIMIT = re.compile(r"\blimit \?(?:, ?\?| offset \?)?")
_ORDER_BY = re.compile(r"\border by ", re.I)
_ASC = re.compile(r"(.+?)\s+asc", re.I)


def fingerprint(sql: str) -> str:
    """The statement with its values abstracted (pt-fingerprint's rules)."""
    special = _special(sql)
    if special is not None:
        return special
    m = _MULTI_INSERT.match(sql)
    q = m.group(1) if m else sql  # a multi-row INSERT: its first row stands for all
    q = _LINE_COMMENT.sub("", _BLOCK_COMMENT.sub("", q))
    if _USE.match(q):
        return "use ?"
    q = _SQ_STRING.sub("?", _DQ_STRING.sub("?", _ESCAPED_QUOTE.sub("", q)))
    q = _NUMBER_PREFIX.sub("?", _NUMBER.sub("?", q))
    q = q.lstrip()
    q = _SPACE.sub(" ", q[:-1] if q.endswith("\n") else q).lower()
    q = _LIST.sub(r"\1(?+)", _NULL.sub("?", q))
    q = _LIMIT.sub("limit ?", _UNION.sub(r"\1 /*repeat\2*/", q), count=1)
    return _without_asc(q)


def _special(sql: str) -> str | None:
    """What pt-fingerprint names rather than abstracts (mysqldump's and the toolkit's
    own queries, administrator commands, CALL)."""
    if _MYSQLDUMP.match(sql):
        return "mysqldump"
    if _TOOLKIT.search(sql):
        return "percona-toolkit"
    if sql.startswith("administrator command: "):
        return sql
    m = _CALL.match(sql)
    return m.group(1).lower() if m else None


def _without_asc(q: str) -> str:
    """ASC dropped after ORDER BY (it is the default)."""
    m = _ORDER_BY.search(q)
    if not m:
        return q
    return q[:m.end()] + _ASC.sub(r"\1", q[m.end():])


def digest(fp: str) -> str:
    """The fingerprint's ID as pt-query-digest reports it (without its 0x)."""
    return hashlib.md5(fp.encode("utf-8", "surrogateescape"), usedforsecurity=False
                       ).hexdigest().upper()
