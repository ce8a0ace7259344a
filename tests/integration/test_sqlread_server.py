"""The guard's reading of SQL held against the servers' own: generated texts with
comments, quotes, backslashes and newlines in every position around a write, each run
on a real server (multi-statements on, as sysbench's client sends them) under every
sql_mode that changes how quotes and comments read. Whenever the server wrote, the
guard must have refused the text."""
from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pymysql
import pytest
from pymysql.constants import CLIENT

from harness.inputs.sqlread import first_write
from harness.server.mysql import quoted

from ..conftest import sandbox

pytestmark = pytest.mark.integration

# What goes between a read and a write: each piece is whitespace, a comment or a string
# in at least one reading (so that many texts run), and many are something else in
# another (so that the readings disagree where a guard could be led astray).
SPACES = [" ", "\n", "\t", "\r\n", "\x0b", "\x0c", "\r", "\xa0"]
COMMENTS = ["-- x\n", "--\n", "--\t\n", "--\x0b\n", "#x\n", "#\n", "/* x */", "/**/",
            "/*/ */", "--x\n", "--'\n", '--"\n', "-- '\n", "# '\n", "/* ' */", '/* " */',
            "/*+ x */", "--\xa0\n", "--\r;", "-- \\\n"]
STRINGS = ["'a'", "'a\\''", "'a\\'", '"a"', '"a\\""', '"a\\"', "'it''s'", "`a`",
           "'\\\\'", "'--'", "'#'", "'/*'", "'*/'", "'\n'", '"\\"" --"']
HEADS = ["SELECT 1", "SELECT 1,", "SELECT", "SET @a = 1", "SET @a =", "DO", "SET",
         "SET SESSION", "SHOW STATUS LIKE", "SELECT 1 FROM DUAL WHERE 1 ="]
WRITES = ["; SET GLOBAL max_connections = {n}", ";SET GLOBAL max_connections={n}",
          "GLOBAL max_connections = {n}", ", GLOBAL max_connections = {n}",
          "@@GLOBAL.max_connections = {n}", "; SET @@global.max_connections = {n}",
          "; SET STATEMENT sort_buffer_size=65536 FOR SET GLOBAL max_connections = {n}"]
TAILS = ["", "", "-- '", "# '", '-- "', "/* x */", "'", '"', "; -- '", ";"]


# the issue's own bypasses, and their neighbours
FIXED = ["SET --\nGLOBAL max_connections={n}", "SELECT 1 --\n; SET GLOBAL max_connections={n}",
         "SELECT 1 --'\n; SET GLOBAL max_connections={n}; -- '",
         "SELECT 'a\\'; SET GLOBAL max_connections={n}; -- '",
         'SELECT "a\\"; SET GLOBAL max_connections={n}; -- "',
         "SELECT 1 /*!; SET GLOBAL max_connections={n}*/",
         "SET STATEMENT max_statement_time=100 FOR SET GLOBAL max_connections={n}"]
MODES = {"mariadb-10.11": ["", "NO_BACKSLASH_ESCAPES", "ANSI_QUOTES", "ORACLE",
                           "ANSI_QUOTES,NO_BACKSLASH_ESCAPES"],
         "mysql-5.7.29": ["", "NO_BACKSLASH_ESCAPES", "ANSI_QUOTES"],
         "mysql-9.7": ["", "NO_BACKSLASH_ESCAPES", "ANSI_QUOTES"]}


def _corpus(seed: int, n: int) -> list[str]:
    rnd = random.Random(seed)
    texts = []
    for _ in range(n):
        parts = [rnd.choice(HEADS)]
        for _ in range(rnd.randint(1, 3)):
            parts.append(rnd.choice(rnd.choice([SPACES, COMMENTS, STRINGS])))
        parts += [rnd.choice(SPACES), rnd.choice(WRITES), rnd.choice(TAILS)]
        texts.append("".join(parts))
    return texts + FIXED


@pytest.fixture(scope="module", params=list(MODES))
def server(request) -> Iterator[tuple[str, Any]]:
    with sandbox(request.param) as box:
        yield request.param, box


def _connect(box: Any) -> pymysql.connections.Connection:
    ep = box.endpoint
    return pymysql.connect(user=ep.user, password=ep.password, unix_socket=ep.socket,
                           autocommit=True, charset="utf8mb4",
                           client_flag=CLIENT.MULTI_STATEMENTS)


def _global(conn: pymysql.connections.Connection) -> int:
    with conn.cursor() as cur:
        cur.execute("SELECT @@GLOBAL.max_connections")
        return int(cur.fetchone()[0])


class Sessions:
    """One multi-statement session per sql_mode, opened again when one breaks."""

    def __init__(self, box: Any, modes: list[str]):
        self.box = box
        self.conns = {m: self._open(m) for m in modes}

    def _open(self, mode: str) -> pymysql.connections.Connection:
        conn = _connect(self.box)
        with conn.cursor() as cur:
            cur.execute("SET SESSION sql_mode = %s", (mode,))
        return conn

    def run(self, mode: str, text: str) -> bool:
        """Run ``text`` in the session of ``mode`` (its sql_mode set again first, in
        case an earlier text changed it); did it run without an error?"""
        conn = self.conns[mode]
        try:
            with conn.cursor() as cur:
                cur.execute("SET SESSION sql_mode = %s", (mode,))
                cur.execute(text)
                while cur.nextset():
                    pass
            return True
        except pymysql.err.MySQLError:
            if not conn.open:  # the text broke the session: a new one
                self.conns[mode] = self._open(mode)
            return False

    def close(self) -> None:
        for c in self.conns.values():
            c.close()


def test_every_text_the_server_wrote_with_is_refused(server):
    name, box = server
    admin = _connect(box)
    base = _global(admin)
    sessions = Sessions(box, MODES[name])
    texts = _corpus(seed=36, n=1200)
    missed, wrote, clean_reads, refused_reads = [], 0, 0, 0
    try:
        for i, template in enumerate(texts):
            n = 1000 + i
            text = template.format(n=n)
            writes_in, ran_clean = [], False
            for mode in MODES[name]:
                ok = sessions.run(mode, text)
                ran_clean = ran_clean or (ok and mode == "")
                if _global(admin) == n:
                    writes_in.append(mode or "default")
                    with admin.cursor() as cur:
                        cur.execute("SET GLOBAL max_connections = %s", (base,))
            judged = first_write(text, several=False)
            if writes_in:
                wrote += 1
                missed += [(text, writes_in)] if judged is None else []
            elif ran_clean:
                clean_reads += 1
                refused_reads += judged is not None
    finally:
        sessions.close()
        admin.close()
    assert not missed, f"{name}: the server wrote, the guard let it pass: {missed[:10]}"
    # the corpus has teeth: a good share of it writes on the server
    assert wrote >= len(texts) // 8, (name, wrote, len(texts))
    print(f"{name}: {len(texts)} texts, {wrote} wrote (all refused); of {clean_reads} that "
          f"ran without an error and wrote nothing, {refused_reads} refused")


# Texts the harness puts in a literal it builds (a value SHOW VARIABLES gave, set back;
# a my.cnf value; the init file's names): quotes, backslashes, comment starters and a
# write after each, in a multi-statement session.
LITERALS = ["it's", "a\\", "a\\'", "\\'; SET GLOBAL max_connections = {n}; -- ",
            "'; SET GLOBAL max_connections = {n}; -- ", '"; SET GLOBAL max_connections = {n} #',
            "-- x\n", "/* x", "\\\\", "''", "\\", "a\nb", "O_DIRECT", ""]


def test_a_literal_the_harness_builds_reads_as_its_text_under_every_sql_mode(server):
    name, box = server
    admin = _connect(box)
    base = _global(admin)
    sessions = Sessions(box, MODES[name])
    try:
        for i, template in enumerate(LITERALS):
            text = template.format(n=2000 + i)
            for mode in MODES[name]:
                conn = sessions.conns[mode]
                with conn.cursor() as cur:
                    cur.execute("SET SESSION sql_mode = %s", (mode,))
                    cur.execute(f"SELECT {quoted(text)}")
                    got = [row[0] for row in cur.fetchall()]
                    assert not cur.nextset(), (name, mode, text)  # one statement
                # the default reading is the text; NO_BACKSLASH_ESCAPES reads each
                # backslash twice, and still ends the literal where it should
                want = text.replace("\\", "\\\\") if "NO_BACKSLASH" in mode else text
                assert got == [want], (name, mode, text, got)
                assert _global(admin) == base, (name, mode, text)
    finally:
        sessions.close()
        admin.close()


# Bytes a session's character set reads otherwise than UTF-8 does: 0xA0 is a space in
# latin1, latin2, latin5, latin7 and cp1250; in gbk, sjis and big5 a character's second
# byte can be 0x5C, a backslash to a reader of single bytes, so a string ends elsewhere.
CHARSET_PIECES = [b"\xa0", b" \xa0", b"'\x95\\' ", b"'\x95\\'; ", b"'\x81\\' -- \n",
                  b"\xa0-- x\n", b"'\xa4\\'\xa0"]
CHARSET_HEADS = [b"SELECT 1", b"SELECT 1,", b"SET", b"SELECT", b"DO 1;"]
CHARSET_WRITES = [b"SET GLOBAL max_connections = {n}", b"GLOBAL max_connections = {n}",
                  b"; SET GLOBAL max_connections = {n}", b"SET\xa0GLOBAL max_connections = {n}"]
CHARSETS = ["latin1", "latin2", "latin5", "latin7", "cp1250", "gbk", "sjis", "big5"]


# The attacks themselves: a write that only a reader of that character set sees (a
# byte reader takes the first for one word, the others for one string)
CHARSET_ATTACKS = [b"SET\xa0GLOBAL max_connections = {n}",
                   b"SELECT '\x95\\'; SET GLOBAL max_connections = {n}; -- '",
                   b"SELECT '\xa4\\'; SET GLOBAL max_connections = {n}; -- '"]


def _charset_corpus(seed: int, n: int) -> list[str]:
    """Texts as the guard receives a captured log's bytes: decoded as UTF-8, a byte that
    is not kept as a surrogate (surrogateescape), so the server gets the bytes back."""
    rnd = random.Random(seed)
    out = list(CHARSET_ATTACKS)
    for _ in range(n):
        out.append(rnd.choice(CHARSET_HEADS) + rnd.choice(CHARSET_PIECES) +
                   rnd.choice(CHARSET_WRITES) + rnd.choice([b"", b" -- '", b"'", b";"]))
    return [raw.decode("utf-8", "surrogateescape") for raw in out]


def test_the_guard_keeps_the_session_in_utf8mb4_and_refuses_what_other_sets_read(server):
    """Under each character set the server offers among those whose bytes it reads
    otherwise (a session the attacker switched with SET NAMES): every text with which
    the server wrote is refused by the guard; and every statement that would switch the
    guarded session away from utf8mb4 (DEFAULT included) is refused itself."""
    name, box = server
    admin = _connect(box)
    base = _global(admin)
    with admin.cursor() as cur:
        cur.execute("SHOW CHARACTER SET")
        offered = {r[0] for r in cur.fetchall()}
    wrote: dict[str, int] = {}
    missed = []
    for cs in [c for c in CHARSETS if c in offered]:
        assert first_write(f"SET NAMES {cs}"), cs
        assert first_write(f"SET character_set_client = '{cs}'"), cs
        for i, template in enumerate(_charset_corpus(seed=sum(map(ord, cs)), n=12)):
            text = template.replace("{n}", str(2000 + i))
            conn = _connect(box)  # a fresh session each: a result it cannot decode breaks one
            try:
                with conn.cursor() as cur:
                    cur.execute(f"SET NAMES {cs}")
                    cur.execute(text.encode("utf-8", "surrogateescape"))  # the log's bytes
                    while cur.nextset():
                        pass
            except (pymysql.err.MySQLError, UnicodeError):
                pass  # a syntax error, or a result in a set the client does not decode
            finally:
                conn.close()
            if _global(admin) != base:
                wrote[cs] = wrote.get(cs, 0) + 1
                with admin.cursor() as cur:
                    cur.execute("SET GLOBAL max_connections = %s", (base,))
                if first_write(text, several=False) is None:
                    missed.append((cs, text))
    assert not missed, missed[:5]
    # the attacks are real: the server wrote with these bytes in a byte-space set and in
    # one whose characters can end in a backslash
    assert wrote.get("latin1") and (wrote.get("gbk") or wrote.get("sjis")), wrote
    for ok in ("SET NAMES utf8mb4", "SET NAMES utf8mb4 COLLATE utf8mb4_general_ci",
               "SET character_set_results = utf8mb4"):
        assert first_write(ok) is None, ok
    for refused in ("SET NAMES DEFAULT", "SET character_set_client = DEFAULT",
                    "SET CHARACTER SET DEFAULT", "SET collation_connection = latin1_bin",
                    "SET NAMES utf8", "SET character_set_results = latin1"):
        assert first_write(refused), refused
