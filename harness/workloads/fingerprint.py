"""A statement's fingerprint and digest, as Percona Toolkit computes them.

The fingerprint is the statement with its values abstracted (numbers, strings and NULL
become ``?``, IN and VALUES lists ``(?+)``, comments and ASC dropped, whitespace
collapsed, lower case): statements that differ only in their values share one. It is
pt-query-digest's (QueryRewriter::fingerprint of Percona Toolkit 3.2.1, ported rule for
rule; tests hold the two to the same output on real logs), so a digest here is the
``ID`` a DBA sees in pt-query-digest's report: the MD5 of the fingerprint, in upper case
hex. (``pt-fingerprint`` 3.2.1 leaves TRUE and FALSE as they are; pt-query-digest 3.2.1
and 3.5 fold them, and its report is what a DBA reads.) Perl reads the log as bytes, so
its ``lc``, ``\b``, ``\\s`` and ``\\w`` are ASCII's: a non-ASCII identifier keeps its
case, and every pattern here is ASCII too.
"""
from __future__ import annotations

import hashlib
import re

__all__ = ["digest", "fingerprint"]

_MYSQLDUMP = re.compile(r"SELECT /\*!40001 SQL_NO_CACHE \*/ \* FROM `", re.A)
_TOOLKIT = re.compile(r"/\*\w+\.\w+:[0-9]/[0-9]\*/", re.A)
_CALL = re.compile(r"\s*(call\s+\S+)\(", re.I | re.A)
_MULTI_INSERT = re.compile(r"((?:INSERT|REPLACE)(?: IGNORE)?\s+INTO.+?VALUES\s*\(.*?\))\s*,\s*\(",
                           re.I | re.S | re.A)
_BLOCK_COMMENT = re.compile(r"/\*[^!].*?\*/", re.S | re.A)  # not /*!50100 versioned */ ones
_LINE_COMMENT = re.compile(r"(?:--|#)[^'\"\r\n]*(?=[\r\n]|\Z)", re.A)
_USE = re.compile(r"use \S+\n?\Z", re.I | re.A)
_ESCAPED_QUOTE = re.compile(r"\\[\"']", re.A)
_DQ_STRING = re.compile(r'".*?"', re.S | re.A)
_SQ_STRING = re.compile(r"'.*?'", re.S | re.A)
_BOOLEAN = re.compile(r"\bfalse\b|\btrue\b", re.I | re.S | re.A)
_NUMBER = re.compile(r"[0-9+-][0-9a-f.xb+-]*", re.A)
_NUMBER_PREFIX = re.compile(r"[xb.+-]\?", re.A)
_SPACE = re.compile(r"[ \n\t\r\f]+", re.A)
_NULL = re.compile(r"\bnull\b", re.A)
_LIST = re.compile(r"\b(in|values?)(?:[\s,]*\([\s?,]*\))+", re.A)
_UNION = re.compile(r"\b(select\s.*?)(?:(\sunion(?:\sall)?)\s\1)+", re.A)
_LIMIT = re.compile(r"\blimit \?(?:, ?\?| offset \?)?", re.A)
_ORDER_BY = re.compile(r"\border by ", re.I | re.A)
_ASC = re.compile(r"(.+?)\s+asc", re.I | re.A)


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


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
    q = _NUMBER_PREFIX.sub("?", _NUMBER.sub("?", _BOOLEAN.sub("?", q)))
    q = q.lstrip()
    q = _SPACE.sub(" ", q[:-1] if q.endswith("\n") else q).translate(_ASCII_LOWER)
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
    return m.group(1).translate(_ASCII_LOWER) if m else None


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
