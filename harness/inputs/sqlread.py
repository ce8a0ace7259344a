"""SQL read as MySQL and MariaDB read it, and judged: may it change the server?

Used where the harness may only read: a ``sql`` side load on a server it does not own,
a ``read_only`` replay. A guard that reads SQL differently from the server can be led
around it, so the scanner follows the servers' lexer (sql_lex.cc), not a pattern:

- whitespace is what the server calls whitespace (space, ``\\t \\n \\r \\v \\f``);
- ``--`` starts a comment only when a space or control character follows it, and a
  comment (``--``, ``#``) ends at the end of its own line: the newline is not part of it;
- ``/* */`` does not nest; ``/*!`` and MariaDB's ``/*M!`` are executable: the server
  runs what is in them, so a statement holding one is refused;
- strings and quoted names end where the server ends them. How a backslash and a double
  quote read depends on the session's ``sql_mode`` (``NO_BACKSLASH_ESCAPES``,
  ``ANSI_QUOTES``), which a text cannot be trusted to tell: every text is read all three
  ways (the default, with backslash escapes in both quote styles; no backslash escapes;
  ``"`` quoting names, without escapes), each also with MariaDB's ``sql_mode=ORACLE``,
  where ``--`` starts a comment whatever follows it; a text is read-only only when
  every reading finds the same statement boundaries and only reads;
- an unterminated string, name or comment, and a NUL byte, are unreadable: refused.

The judgement fails closed: what is not known to only read is a write. Allowed: SELECT,
WITH ... SELECT, TABLE and VALUES (none with INTO OUTFILE/DUMPFILE or a locking clause),
SHOW, HELP, USE, DO, EXPLAIN/DESCRIBE (of anything but EXPLAIN ANALYZE or MariaDB's
ANALYZE of a write), the transaction brackets that keep a session read-only (BEGIN
[WORK], START TRANSACTION [READ ONLY | WITH CONSISTENT SNAPSHOT], COMMIT, ROLLBACK,
SAVEPOINT), and SET of session variables, user variables and a safe character set.
Refused among SETs: GLOBAL and PERSIST, passwords and roles, MariaDB's ``SET STATEMENT
... FOR``, anything ``READ WRITE`` and ``tx_read_only``/``transaction_read_only`` (the
READ ONLY session is the backstop for a stored function called from a SELECT: it must
not be left), and client character sets in which a backslash can be the second byte of
a character (big5, cp932, gbk, sjis, gb18030...), which would move a string's end.
A query holds one statement: a second one is refused (the harness's clients do not
enable multi-statements either). tests/integration/test_sqlread_server.py holds this
reading against the servers' own: generated statements with comments, quotes and
newlines in every position, each run on a real server that says whether it wrote.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..errors import OwnershipError

SPACE = frozenset(" \t\n\r\v\f")  # my_isspace of the servers' character sets
WORD = re.compile(r"[A-Za-z0-9_$\x80-\U0010ffff]+")  # unquoted names and keywords
VAR = re.compile(r"@@?[A-Za-z0-9_.$\x80-\U0010ffff]*")


@dataclass(frozen=True)
class Reading:
    """How quotes and comments read under one sql_mode."""

    name: str
    single_escapes: bool  # a backslash escapes in '...'
    double_escapes: bool  # a backslash escapes in "..."
    double_names: bool  # "..." quotes a name (ANSI_QUOTES)
    dash_any: bool = False  # MariaDB's sql_mode=ORACLE: "--" starts a comment, space or not


_QUOTES = (("the default sql_mode", True, True, False),
           ("NO_BACKSLASH_ESCAPES", False, False, False),
           ("ANSI_QUOTES", True, False, True))
READINGS = tuple(Reading(name + (" and ORACLE" if dash else ""), single, double, names, dash)
                 for dash in (False, True) for name, single, double, names in _QUOTES)


class Unreadable(ValueError):
    """The text ends inside a string, a name or a comment, or holds a NUL byte."""


@dataclass(frozen=True)
class Token:
    kind: str  # word, var, string, name, exec, semi, other
    text: str
    start: int


# --- the scanner ------------------------------------------------------------------------------

def _line_end(sql: str, i: int) -> int:
    """Where a ``--`` or ``#`` comment starting at ``i`` ends: at its newline, exclusive."""
    j = sql.find("\n", i)
    return len(sql) if j < 0 else j


def _dash_comment(sql: str, i: int, any_after: bool) -> bool:
    """``--`` at ``i`` followed by a space or a control character (or the end), or by
    anything (``any_after``: MariaDB under sql_mode=ORACLE)."""
    if not sql.startswith("--", i):
        return False
    after = sql[i + 2:i + 3]
    if any_after:
        return True
    return after == "" or after in SPACE or ord(after) < 0x20 or after == "\x7f"


def _block_end(sql: str, i: int) -> int:
    j = sql.find("*/", i + 2)
    if j < 0:
        raise Unreadable(f"an unterminated /* comment at character {i}")
    return j + 2


def _quoted_end(sql: str, i: int, escapes: bool) -> int:
    """The end of the string or name opened by the quote at ``i`` (a doubled quote is
    one quote; with ``escapes``, a backslash takes the next character)."""
    q, j = sql[i], i + 1
    while j < len(sql):
        c = sql[j]
        if escapes and c == "\\":
            j += 2
        elif c == q and sql[j + 1:j + 2] == q:
            j += 2
        elif c == q:
            return j + 1
        else:
            j += 1
    what = "name" if q == "`" else "string"
    raise Unreadable(f"an unterminated {what} opened by {q} at character {i}")


def _quoted(sql: str, i: int, r: Reading) -> tuple[Token, int]:
    """The quoted string or name at ``i``, read with the server's escapes and
    ``ANSI_QUOTES``, and where the next token starts."""
    c = sql[i]
    escapes = {"'": r.single_escapes, '"': r.double_escapes, "`": False}[c]
    end = _quoted_end(sql, i, escapes)
    kind = "name" if c == "`" or (c == '"' and r.double_names) else "string"
    return Token(kind, sql[i:end], i), end


def _one_token(sql: str, i: int, r: Reading) -> tuple[Token | None, int]:
    """The token at ``i`` (None for space and comments) and where the next starts."""
    c = sql[i]
    if c in SPACE:
        return None, i + 1
    if c == "#" or _dash_comment(sql, i, r.dash_any):
        return None, _line_end(sql, i)
    if sql.startswith("/*", i):
        end = _block_end(sql, i)
        runs = sql[i + 2:i + 3] == "!" or sql[i + 2:i + 4].upper() == "M!"
        return (Token("exec", sql[i:end], i) if runs else None), end
    if c in "'\"`":
        return _quoted(sql, i, r)
    for kind, pattern in (("var", VAR), ("word", WORD)):
        m = pattern.match(sql, i)
        if m and m.end() > i:
            return Token(kind, m.group(), i), m.end()
    return Token("semi" if c == ";" else "other", c, i), i + 1


def tokenize(sql: str, reading: Reading = READINGS[0]) -> list[Token]:
    """The tokens of ``sql`` as the server reads them under ``reading`` (spaces and
    plain comments dropped); :class:`Unreadable` where the server would not read on."""
    if "\0" in sql:
        raise Unreadable(f"a NUL byte at character {sql.index(chr(0))}")
    out, i = [], 0
    while i < len(sql):
        tok, i = _one_token(sql, i, reading)
        if tok is not None:
            out.append(tok)
    return out


def statements(sql: str, reading: Reading = READINGS[0]) -> list[list[Token]]:
    """The statements of ``sql`` (split at ';' outside strings, names and comments),
    empty ones left out."""
    return _grouped(tokenize(sql, reading))


def _grouped(tokens: list[Token]) -> list[list[Token]]:
    out: list[list[Token]] = [[]]
    for tok in tokens:
        if tok.kind == "semi":
            out.append([])
        else:
            out[-1].append(tok)
    return [s for s in out if s]


def split(sql: str) -> list[str]:
    """The statements' texts under the default reading (what the guard judged under
    every reading is what runs: :func:`first_write` refuses a text whose readings
    disagree on where its statements end); an unreadable text whole."""
    try:
        tokens = tokenize(sql)
    except Unreadable:
        return [sql.strip()] if sql.strip() else []
    out, start, seen = [], 0, False  # a piece runs from one ';' to the next, comments too
    for tok in [*tokens, Token("semi", ";", len(sql))]:
        if tok.kind != "semi":
            seen = True
            continue
        if seen:
            out.append(sql[start:tok.start].strip())
        start, seen = tok.start + 1, False
    return out


def _text(sql: str, stmt: list[Token]) -> str:
    """A statement's text, from its first token to the end of its last."""
    return sql[stmt[0].start:stmt[-1].start + len(stmt[-1].text)]


# --- the judgement ----------------------------------------------------------------------------

_READ_FIRST = {"SHOW", "HELP", "USE", "COMMIT", "ROLLBACK", "SAVEPOINT"}
_QUERIES = {"SELECT", "TABLE", "VALUES", "DO"}
_VERBS = _QUERIES | {"INSERT", "UPDATE", "DELETE", "REPLACE"}
_LOCKING = {"OUTFILE", "DUMPFILE", "SHARE", "UPDATE"}  # INTO OUTFILE, FOR UPDATE/SHARE
_SET_REFUSED = {"GLOBAL", "PERSIST", "PERSIST_ONLY", "PASSWORD", "ROLE", "DEFAULT",
                "STATEMENT", "RESOURCE"}
_SET_VARS_REFUSED = {"tx_read_only": "leaves the read-only session",
                     "transaction_read_only": "leaves the read-only session",
                     "gtid_next": "makes the next COMMIT write a transaction",
                     "gtid_seq_no": "makes the next COMMIT write a transaction"}
_SET_CHARSET_VARS = {"character_set_client", "character_set_connection",
                     "character_set_results", "collation_connection"}
# The sql_mode flags whose reading of quotes and comments the guard follows (every text
# is read with and without ANSI_QUOTES and NO_BACKSLASH_ESCAPES) or that leave them as
# they are. Not here, so refused: MariaDB's MSSQL ([...] quotes a name, and '#' inside it
# is no comment), ORACLE, DB2, POSTGRESQL, MAXDB, the MYSQL323/40 modes, and any name the
# guard does not know.
SQL_MODES_READ = frozenset({
    "", "ALLOW_INVALID_DATES", "ANSI", "ANSI_QUOTES", "EMPTY_STRING_IS_NULL",
    "ERROR_FOR_DIVISION_BY_ZERO", "HIGH_NOT_PRECEDENCE", "IGNORE_BAD_TABLE_OPTIONS",
    "IGNORE_SPACE", "NO_AUTO_CREATE_USER", "NO_AUTO_VALUE_ON_ZERO", "NO_BACKSLASH_ESCAPES",
    "NO_DIR_IN_CREATE", "NO_ENGINE_SUBSTITUTION", "NO_FIELD_OPTIONS", "NO_KEY_OPTIONS",
    "NO_TABLE_OPTIONS", "NO_UNSIGNED_SUBTRACTION", "NO_ZERO_DATE", "NO_ZERO_IN_DATE",
    "ONLY_FULL_GROUP_BY", "PAD_CHAR_TO_FULL_LENGTH", "PIPES_AS_CONCAT", "REAL_AS_FLOAT",
    "SIMULTANEOUS_ASSIGNMENT", "STRICT_ALL_TABLES", "STRICT_TRANS_TABLES",
    "TIME_ROUND_FRACTIONAL", "TIME_TRUNCATE_FRACTIONAL", "TRADITIONAL"})


def unread_modes(sql_mode: str) -> list[str]:
    """The flags of a sql_mode value (``'A,B'``) that change how the server reads quotes
    and comments in a way the guard does not follow."""
    return sorted({m.strip().upper() for m in sql_mode.split(",")} - SQL_MODES_READ)
# The guarded sessions read and send utf8mb4, as the guard reads text: a statement that
# changes the session's character set is refused, whatever it changes it to. In latin1,
# latin2, latin5, latin7 or cp1250 the byte 0xA0 is a space to the server and a letter
# to a reader of UTF-8 (SET<0xA0>GLOBAL is two words to the server, one to the guard); in
# gbk, sjis or big5 a character's second byte can be a backslash or a quote, so a string
# ends elsewhere; DEFAULT is whatever the server's default is. Only utf8mb4 itself (a
# client library's SET NAMES utf8mb4 at connect) changes nothing.
PINNED_CHARSET = "utf8mb4"
SAFE_CHARSETS = {PINNED_CHARSET}


def _words(stmt: list[Token]) -> list[str]:
    return [t.text.upper() for t in stmt if t.kind == "word"]


def _is(t: Token, *texts: str) -> bool:
    return t.kind in ("word", "other") and t.text.upper() in texts


def _unquoted(t: Token) -> str:
    if t.kind in ("name", "string"):
        return t.text[1:-1].replace(t.text[0] * 2, t.text[0]).lower()
    return t.text.lower()


def _after_word(stmt: list[Token], word: str) -> list[Token]:
    """The statement after the first ``word`` (and a FORMAT = x that follows it)."""
    i = next(n for n, t in enumerate(stmt) if t.kind == "word" and t.text.upper() == word)
    rest = stmt[i + 1:]
    if rest[:1] and _is(rest[0], "FORMAT"):
        rest = rest[3:] if rest[1:2] and _is(rest[1], "=") else rest[2:]
    return rest


def _top_level(stmt: list[Token]) -> list[Token]:
    """The tokens outside parentheses."""
    out, depth = [], 0
    for t in stmt:
        if _is(t, "("):
            depth += 1
        elif _is(t, ")"):
            depth -= 1
        elif depth == 0:
            out.append(t)
    return out


def _set_items(stmt: list[Token]) -> list[list[Token]]:
    """A SET's assignments: its tokens after SET, cut at commas outside parentheses."""
    items: list[list[Token]] = [[]]
    depth = 0
    for t in stmt[1:]:
        depth += 1 if _is(t, "(") else -1 if _is(t, ")") else 0
        if depth == 0 and _is(t, ","):
            items.append([])
        else:
            items[-1].append(t)
    return items


def _set_item_reason(item: list[Token]) -> str | None:
    """Why one assignment of a SET may change the server (or leave READ ONLY)."""
    cut = next((n for n, t in enumerate(item) if _is(t, "=", ":")), len(item))
    lhs = item[:cut]
    if not lhs:
        return "an empty SET assignment"
    words = [t.text.upper() for t in lhs if t.kind == "word"]
    if _sets_beyond_the_session(lhs, words):
        return "SET of a global setting, a password, a role or a statement's variables"
    if "WRITE" in _words(item):
        return "READ WRITE leaves the read-only session"
    if (value := _charset_value(words)) is not None:
        return _charset_reason(_at(item, value))
    if words and words[-1] == "TRANSACTION":
        return None  # ISOLATION LEVEL or READ ONLY
    return _session_variable_reason(item, lhs, cut)


def _charset_value(words: list[str]) -> int | None:
    """Where the value of SET NAMES, SET CHARSET or SET CHARACTER SET sits (None for
    another SET)."""
    if words[:1] in (["NAMES"], ["CHARSET"]):
        return 1
    return 2 if words[:2] == ["CHARACTER", "SET"] else None


def _at(item: list[Token], n: int) -> Token | None:
    return item[n] if n < len(item) else None


def _sets_beyond_the_session(lhs: list[Token], words: list[str]) -> bool:
    """A SET of a global or persisted variable, a password, a role or a statement's
    variables (the words ``_SET_REFUSED`` names)."""
    return any(t.kind == "var" and t.text.lower().startswith(("@@global", "@@persist"))
               for t in lhs) or bool(_SET_REFUSED & set(words))


def _session_variable_reason(item: list[Token], lhs: list[Token], cut: int) -> str | None:
    """Why a SET of one session variable (``lhs``, its value after ``cut``) may change
    the server."""
    name = _unquoted(lhs[-1]).split(".")[-1].lstrip("@")
    if name in _SET_VARS_REFUSED:
        return f"SET {name} {_SET_VARS_REFUSED[name]}"
    user_variable = lhs[-1].kind == "var" and not lhs[-1].text.startswith("@@")
    if name == "sql_mode" and not user_variable:
        return _sql_mode_reason(item[cut + 1:])
    if name in _SET_CHARSET_VARS:
        return _charset_reason(_at(item, cut + 1))
    return _query_reason(item)  # a subquery's INTO OUTFILE or locking clause


class UnreadMode(OwnershipError):
    """A guarded session's sql_mode changes how the server reads quotes or comments in a
    way the guard does not follow."""


def read_only_session(cur: Any) -> None:
    """Make a guarded session READ ONLY (a function called from a SELECT cannot write
    either) and check that the server reads its statements as the guard does: a sql_mode
    the server gave it (its global default, init_connect) with MariaDB's MSSQL, ORACLE
    or another mode the guard does not read raises :class:`UnreadMode`."""
    cur.execute("SET SESSION TRANSACTION READ ONLY")
    cur.execute("SELECT @@SESSION.sql_mode")
    row = cur.fetchone()
    unread = unread_modes(str(row[0] if row else ""))
    if unread:
        raise UnreadMode(f"the server's sql_mode has {','.join(unread)}: it would read "
                         "statements' quotes and comments otherwise than the read-only "
                         "guard reads them, so nothing is sent to it read-only")


def _sql_mode_reason(value: list[Token]) -> str | None:
    """A session's new sql_mode: only a quoted list of flags the guard reads as the
    server will (an expression, a variable or DEFAULT could be anything)."""
    if len(value) != 1 or value[0].kind != "string":
        return ("SET sql_mode to anything but a quoted list of modes: the server would "
                "read the next statements in a way the guard cannot know")
    unread = unread_modes(_unquoted(value[0]))
    if unread:
        return (f"SET sql_mode {','.join(unread)}: the server would read the next "
                "statements' quotes and comments otherwise than the guard reads them")
    return None


def _charset_reason(value: Token | None) -> str | None:
    name = _unquoted(value) if isinstance(value, Token) else "?"
    if name in SAFE_CHARSETS or name.startswith(f"{PINNED_CHARSET}_"):  # a collation
        return None
    shown = value.text if isinstance(value, Token) else "?"
    return (f"it changes the session's character set from {PINNED_CHARSET} (to {shown}): "
            "the server would read the next statements' bytes other than the guard "
            "reads them")


def _set_reason(stmt: list[Token]) -> str | None:
    for item in _set_items(stmt):
        why = _set_item_reason(item)
        if why:
            return why
    return None


def _begin_reason(words: list[str]) -> str | None:
    if words[0] == "BEGIN":
        return None if words[1:] in ([], ["WORK"]) else "BEGIN ... (a compound statement)"
    if words[1:2] != ["TRANSACTION"]:
        return f"START {' '.join(words[1:2])} is not a read-only statement"
    mods = " ".join(words[2:])
    if mods.replace("READ ONLY", "").replace("WITH CONSISTENT SNAPSHOT", "").strip():
        return f"START TRANSACTION {mods} (only READ ONLY keeps the session read-only)"
    return None


def _query_reason(stmt: list[Token]) -> str | None:
    """INTO OUTFILE/DUMPFILE or a locking read anywhere in a query."""
    if _LOCKING & set(_words(stmt)):
        return "writes a file, or locks rows for update or share"
    return None


def _with_reason(stmt: list[Token]) -> str | None:
    """WITH ...: the statement its common table expressions lead to."""
    verb = next((w for w in _words(_top_level(stmt)) if w in _VERBS), None)
    if verb not in _QUERIES:
        return f"WITH ... {verb or '(no statement)'} is not a read-only statement"
    return _query_reason(stmt)


def _plan_reason(stmt: list[Token], words: list[str]) -> str | None:
    """EXPLAIN shows the plan only, nothing runs - but EXPLAIN ANALYZE runs the
    statement."""
    return write_reason(_after_word(stmt, "ANALYZE")) if "ANALYZE" in words else None


def _analyze_reason(stmt: list[Token]) -> str | None:
    """MariaDB's ANALYZE <statement> runs it; ANALYZE TABLE writes."""
    inner = _after_word(stmt, "ANALYZE")
    if _words(inner)[:1] in (["SELECT"], ["WITH"]):
        return write_reason(inner)
    return "ANALYZE TABLE rewrites index statistics"


def write_reason(stmt: list[Token]) -> str | None:
    """Why one tokenised statement may change the server, or None when it only reads."""
    if any(t.kind == "exec" for t in stmt):
        return "an executable /*! ... */ comment (the server runs what is in it)"
    lead = next((t for t in stmt if not _is(t, "(")), None)
    if lead is None or lead.kind != "word":
        return f"{lead.text if lead else '(empty)'} does not start a read-only statement"
    words, first = _words(stmt), lead.text.upper()
    plan = lambda: _plan_reason(stmt, words)  # noqa: E731
    handlers = {"START": lambda: _begin_reason(words), "BEGIN": lambda: _begin_reason(words),
                "SET": lambda: _set_reason(stmt), "WITH": lambda: _with_reason(stmt),
                "RELEASE": lambda: None if words[1:2] == ["SAVEPOINT"] else "RELEASE",
                "EXPLAIN": plan, "DESCRIBE": plan, "DESC": plan,
                "ANALYZE": lambda: _analyze_reason(stmt)}
    if first in handlers:
        return handlers[first]()
    if first in _QUERIES:
        return _query_reason(stmt)
    if first in _READ_FIRST:
        return None
    return f"{first} is not a read-only statement"


def _excerpt(sql: str) -> str:
    text = " ".join(sql.split())
    return text if len(text) <= 80 else text[:77] + "..."


def _judged(sql: str, stmts: list[list[Token]], several: bool) -> tuple[str, str] | None:
    if len(stmts) > 1 and not several:
        return _excerpt(sql), "more than one statement in one query"
    for stmt in stmts:
        why = write_reason(stmt)
        if why:
            return _excerpt(_text(sql, stmt)), why
    return None


def first_write(sql: str, several: bool = True) -> tuple[str, str] | None:
    """The first statement of ``sql`` that may change the server, and why; or None when
    every reading of it only reads. ``several=False``: ``sql`` is one query, and a
    second statement in it is refused. Text that was not UTF-8 (bytes kept as
    surrogates) is refused whole: the guard reads UTF-8, the server the session's
    character set."""
    if bad := _not_utf8(sql):
        return _excerpt(sql), bad
    cuts = set()
    for reading in READINGS:
        try:
            tokens = tokenize(sql, reading)
        except Unreadable as e:
            return _excerpt(sql), f"unreadable with {reading.name}: {e}"
        found = _judged(sql, _grouped(tokens), several)
        if found:
            return found
        cuts.add(tuple(t.start for t in tokens if t.kind == "semi"))
    if len(cuts) > 1:
        return _excerpt(sql), ("its statements end in different places with "
                               "NO_BACKSLASH_ESCAPES or ANSI_QUOTES on (the session's "
                               "sql_mode would decide)")
    return None


def _not_utf8(sql: str) -> str | None:
    """Why ``sql`` is not text the guard reads as the server does: a byte that was not
    UTF-8 (decoded with surrogateescape), or a lone surrogate."""
    for i, ch in enumerate(sql):
        if 0xD800 <= ord(ch) <= 0xDFFF:
            byte = f" 0x{ord(ch) - 0xDC00:02X}" if ord(ch) >= 0xDC80 else ""
            return (f"a byte{byte} at character {i} that is not UTF-8: the server would "
                    "read it in the session's character set, the guard cannot")
    return None


_LOCAL_LOAD = re.compile(r"\bLOAD\b.*\bLOCAL\b", re.I | re.S)
# LOCAL is five letters in any case in every reading: no escape, comment or character
# set makes the keyword out of other bytes (a byte over 0x7f is never ASCII in a client
# character set, and no other character's upper case is one of its letters). Most
# statements of a log have none, and the six readings cost ~150 us a statement.
_MAY_BE_LOCAL = re.compile("local", re.I)


def local_load(sql: str) -> bool:
    """Does ``sql`` hold a ``LOAD DATA|XML LOCAL`` (the client sends a file of this
    machine) in any reading? An unreadable text is judged by its words alone."""
    return _MAY_BE_LOCAL.search(sql) is not None and _read_local_load(sql)


def _read_local_load(sql: str) -> bool:
    """``local_load`` read the long way: each reading's statements, word by word, with
    what an executable comment holds read as the code the server runs (``/*!LOCAL*/``,
    ``/*!50000 LOCAL*/``, ``/*M!LOCAL*/``), a quoted name's letters as a word, and a
    character over 0x7f as the space it is in some client character set (0xA0 in
    latin1)."""
    for reading in READINGS:
        try:
            stmts = statements(sql, reading)
        except Unreadable:
            return bool(_LOCAL_LOAD.search(sql))
        for stmt in stmts:
            words = _code_words(stmt, reading)
            if "LOAD" in words and "LOCAL" in words[words.index("LOAD"):]:
                return True
    return False


_EXEC_HEAD = re.compile(r"/\*M?!\d*", re.I)
_NOT_ASCII = re.compile(r"[^\x00-\x7f]+")


def _code_words(stmt: list[Token], reading: Reading) -> list[str]:
    """The statement's words as the server may run them, upper case: an executable
    comment's body read as code (unreadable: its letters), names' letters too, each
    word cut at characters over 0x7f."""
    words: list[str] = []
    for t in stmt:
        if t.kind == "exec":
            body = _EXEC_HEAD.sub("", t.text, count=1)[:-2]
            try:
                inner = tokenize(body, reading)
            except Unreadable:
                inner = [Token("word", w, 0) for w in WORD.findall(body)]
            words += _code_words(inner, reading)
        elif t.kind in ("word", "name"):
            words += [w.upper() for w in _NOT_ASCII.split(t.text.strip("`\"")) if w]
    return words
