"""Connections to a server and small query helpers."""
from __future__ import annotations

import os
import re
import secrets
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pymysql
import pymysql.connections
import pymysql.cursors
from pymysql.constants import ER

from .mycnf import Value, norm, parse_size, render

# Where TLS protects nothing (a socket too): see Endpoint.connect.
LOOPBACK = ("127.0.0.1", "localhost", "::1")

# LOAD DATA LOCAL: the server names the file, and PyMySQL sends whichever it names. The
# harness runs as root and a sandbox's mysqld as its own account, so a mysqld made to ask
# for /root/.ssh/id_rsa in answer to any statement would get it. A connection sends only
# the files its caller named (Endpoint.connect's local_files); PyMySQL has no hook for
# that, so its one function that sends a file is wrapped. Were it gone (another PyMySQL),
# no connection is opened with the LOCAL capability: no file is sent at all.
_SEND_LOCAL = getattr(pymysql.connections, "_send_local_file", None)
LOCAL_FILES_ATTR = "_harness_local_files"


def _send_named_only(filename: bytes | str, conn: Any) -> None:
    """Send ``filename`` only if the connection's caller named it; else nothing (the
    server gets an empty file) and the statement fails saying which file was asked."""
    allowed: frozenset[bytes] = getattr(conn, LOCAL_FILES_ATTR, frozenset())
    if _SEND_LOCAL is None or os.fsencode(filename) not in allowed:
        raise pymysql.err.OperationalError(
            ER.FILE_NOT_FOUND, f"the server asked for {os.fsdecode(filename)!r} (LOAD DATA "
            "LOCAL), a file this connection was not opened to send: not sent")
    _SEND_LOCAL(filename, conn)


if _SEND_LOCAL is not None:
    pymysql.connections._send_local_file = _send_named_only  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Endpoint:
    """How to reach a server. The password never goes on a command line."""

    host: str
    port: int
    user: str
    password: str
    socket: str | None = None

    def __repr__(self) -> str:  # keep the password out of logs and tracebacks
        return f"Endpoint({self.user}@{self.host}:{self.port}, socket={self.socket})"

    def connect(self, database: str | None = None, timeout: float = 10.0,
                read_timeout: float | None = None, write_timeout: float | None = None,
                via_socket: bool = True, local_files: Collection[Path] = ()
                ) -> pymysql.connections.Connection:
        """A connection (autocommit, utf8mb4). ``local_files``: the only files LOAD DATA
        LOCAL may send on it (none by default: the client capability is off)."""
        kw: dict[str, Any] = dict(user=self.user, password=self.password, database=database,
                                  connect_timeout=timeout, read_timeout=read_timeout,
                                  write_timeout=write_timeout, autocommit=True,
                                  charset="utf8mb4",
                                  local_infile=bool(local_files) and _SEND_LOCAL is not None)
        if via_socket and self.socket:
            kw["unix_socket"] = self.socket
        else:
            kw.update(host=self.host, port=self.port)
        # pymysql 1.2 tries TLS on every connection (PREFERRED), loading the system's CA
        # store each time: ~50 ms of CPU a connection, a fifth of a short run's, and a
        # handshake for mysqld. On a socket or the loopback it protects nothing.
        kw["ssl_disabled"] = "unix_socket" in kw or self.host in LOOPBACK
        try:
            conn = pymysql.connect(**kw)
        except pymysql.err.OperationalError as e:
            if not (e.args and e.args[0] == 1115):  # utf8mb4 unknown before 5.5.3
                raise
            kw["charset"] = "utf8"
            conn = pymysql.connect(**kw)
        setattr(conn, LOCAL_FILES_ATTR, frozenset(os.fsencode(str(f)) for f in local_files))
        return conn

    def write_defaults_file(self, path: Path, section: str = "client",
                            socket: str | None = None) -> Path:
        """A 0600 defaults-extra-file for mysql, mysqldump and friends (over TCP, or
        the unix ``socket`` when given), each value quoted as the option file parser
        reads it back: a '#' in a password stays in it."""
        options: dict[str, Value | None] = {"user": self.user, "password": self.password}
        options |= ({"socket": socket, "protocol": "SOCKET"} if socket else
                    {"host": self.host, "port": self.port, "protocol": "TCP"})
        path.parent.mkdir(parents=True, exist_ok=True)
        text = render({section: options})  # refuses a control character in any value
        path.unlink(missing_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        return path


def new_password() -> str:
    return secrets.token_urlsafe(18)


# The harness's own statements (setup, checks, SET GLOBAL, DROP of a dataset) never
# wait forever: on a read, or on a lock another session holds.
SETUP_READ_TIMEOUT_S = 300.0
SETUP_LOCK_WAIT_S = 60


@contextmanager
def connection(ep: Endpoint, setup: bool = True,
               **kw: Any) -> Iterator[pymysql.connections.Connection]:
    """A connection; ``setup`` (the default) bounds its reads and lock waits, which
    a workload's own long statements pass ``setup=False`` to skip."""
    if setup:
        kw.setdefault("read_timeout", SETUP_READ_TIMEOUT_S)
    conn = ep.connect(**kw)
    try:
        if setup:
            with conn.cursor() as cur:
                try:
                    cur.execute(f"SET SESSION lock_wait_timeout = {SETUP_LOCK_WAIT_S}, "
                                f"SESSION innodb_lock_wait_timeout = {SETUP_LOCK_WAIT_S}")
                except pymysql.err.MySQLError:  # a server without either: the read bound
                    pass
        yield conn
    finally:
        conn.close()


def query(conn: pymysql.connections.Connection, sql: str, args: Any = None) -> list[tuple]:
    with conn.cursor() as cur:
        cur.execute(sql, args)
        return list(cur.fetchall())


def scalar(conn: pymysql.connections.Connection, sql: str, args: Any = None) -> Any:
    rows = query(conn, sql, args)
    return rows[0][0] if rows else None


def variables(conn: pymysql.connections.Connection) -> dict[str, str]:
    return {k.lower(): v for k, v in query(conn, "SHOW GLOBAL VARIABLES")}


def set_global(cur: Any, option: str, v: Value | None) -> None:
    """``SET GLOBAL`` one my.cnf option to its value (as the variable and literal)."""
    cur.execute(f"SET GLOBAL {norm(option)} = {sql_value(v)}")


def sql_value(v: Value | None) -> str:
    """A my.cnf value as a SET GLOBAL literal: sizes in bytes, booleans ON/OFF, a bare
    flag (no value) ON."""
    if v is None:
        return "ON"
    if isinstance(v, bool):
        return "ON" if v else "OFF"
    if isinstance(v, int | float):
        return str(v)
    size = parse_size(v)
    if size is not None:
        return str(size)
    return quoted(str(v))


def shown_literal(shown: str) -> str:
    """A value as SHOW VARIABLES gave it, as a SET GLOBAL literal: numbers bare (a
    numeric variable refuses a string), anything else quoted."""
    return shown if re.fullmatch(r"-?\d+(\.\d+)?", shown) else quoted(shown)


def quoted(text: str) -> str:
    """A SQL string literal that ends where it should whatever the session's sql_mode: a
    quote doubled (never ``\\'``, which NO_BACKSLASH_ESCAPES would read as the end), a
    backslash escaped (read as one by the default sql_mode, as two under that one)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"
