"""The accounts of a server the harness creates: exactly one way in.

A fresh datadir comes with accounts that need no password (``root`` on every version,
anonymous ones on MySQL 5.6 and MariaDB < 10.4). The harness starts every server it
owns with an init file (run by mysqld before it accepts any connection) that creates
or resets the harness's own account, with a password generated per server, and drops
the password-less accounts a client could reach over TCP; once it is up, every other
account but the server's own locked system accounts is dropped. A datadir restored
from a snapshot made before this gets the same treatment at its first start.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pymysql

from .catalog import Build
from .mysql import quoted

# The server's own accounts (locked, no login): MySQL 5.7+ and MariaDB 10.4+.
SYSTEM_PREFIXES = ("mysql.", "mariadb.")
# What init leaves that answers over TCP (and the socket) with no password.
_FRESH = [("root", "localhost"), ("root", "127.0.0.1"), ("root", "::1"), ("", "localhost"),
          ("mysql", "localhost")]


def init_sql(build: Build, user: str, password: str, hosts: Iterable[str]) -> str:
    """The init file of every start: the harness's account with this password, and
    no password-less account reachable before the harness drops the rest."""
    pw = quoted(password)
    lines = []
    for host in hosts:
        who = f"{quoted(user)}@{quoted(host)}"
        if build.modern_accounts:
            lines += [f"CREATE USER IF NOT EXISTS {who} IDENTIFIED BY {pw};",
                      f"ALTER USER {who} IDENTIFIED BY {pw};",
                      f"GRANT ALL PRIVILEGES ON *.* TO {who} WITH GRANT OPTION;"]
        else:  # MySQL 5.6, MariaDB 10.1: no CREATE USER IF NOT EXISTS, no ALTER USER
            lines.append(f"GRANT ALL PRIVILEGES ON *.* TO {who} IDENTIFIED BY {pw} "
                         "WITH GRANT OPTION;")
    if build.modern_accounts:
        lines.append("DROP USER IF EXISTS " + ", ".join(
            f"{quoted(u)}@{quoted(h)}" for u, h in _FRESH) + ";")
    else:  # no DROP USER IF EXISTS: the grant tables are MyISAM tables here
        lines += [f"DELETE FROM mysql.user WHERE user <> {quoted(user)};",
                  f"DELETE FROM mysql.db WHERE user <> {quoted(user)};",
                  f"DELETE FROM mysql.proxies_priv WHERE user <> {quoted(user)};"]
    lines.append("FLUSH PRIVILEGES;")
    return "\n".join(lines) + "\n"


def lock_down(conn: pymysql.connections.Connection, user: str) -> list[str]:
    """Drop every account but ``user``'s and the server's locked system accounts; the
    accounts dropped, as 'user'@'host'."""
    dropped = []
    with conn.cursor() as cur:
        cur.execute("SELECT user, host FROM mysql.user")
        for name, host in cur.fetchall():
            name = name.decode() if isinstance(name, bytes) else name
            host = host.decode() if isinstance(host, bytes) else host
            if name == user or name.startswith(SYSTEM_PREFIXES):
                continue
            cur.execute("DROP USER %s@%s", (name, host))
            dropped.append(f"'{name}'@'{host}'")
        if dropped:
            cur.execute("FLUSH PRIVILEGES")
    return dropped


# What a server says to a login it refuses: access denied (1045), a plugin's "no
# password" (1698), no account for the client's host at all (1130).
_REFUSED = (1045, 1698, 1130)


def open_without_password(**where: Any) -> str | None:
    """How the server at ``where`` (pymysql.connect's ``unix_socket=``, or ``host=`` and
    ``port=``) lets a login with no password in, or None when it refuses one as
    ``root``: the server's own word, whatever option turned its password checks off
    (``skip-grant-tables`` under any spelling). Fails closed: an answer that is not a
    refusal is a reason too."""
    try:
        conn = pymysql.connect(user="root", password="", connect_timeout=5,
                               read_timeout=5, ssl_disabled=True, **where)
    except pymysql.err.OperationalError as e:
        if e.args and e.args[0] in _REFUSED:
            return None
        return f"a login as root with no password was not refused but failed otherwise ({e})"
    conn.close()
    return "it let a login as root with no password in (its password checks are off)"
