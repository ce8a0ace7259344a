"""Paths and listeners of a production host in a my.cnf, kept out of the sandbox.

A production my.cnf names paths of its own host: ``log_bin = /var/log/mysql/mysql-bin``,
``innodb_undo_directory = /data/undo``, ``ssl_key = /etc/mysql/server-key.pem``. A
sandbox's mysqld runs as the host's mysqld account (``mysql``), the account that owns a
real server's files where one runs beside the harness: taken as written, the sandbox
would write its binary logs into that server's log folder and rewrite its index, open
its tablespaces, or read its keys. So no value naming a path outside the sandbox
(absolute, or climbing out with ``..``) reaches a sandbox:

- a file the server writes is written in the sandbox's datadir under its own name
  (``log_bin = /var/log/mysql/mysql-bin`` becomes ``log_bin = mysql-bin``): what the
  option does (binary logging on) is kept, only where it writes changes;
- a folder of the host, or a host file the server only reads (TLS keys, character
  sets), is set aside: the sandbox's own applies, as for ``datadir``;
- any other option naming such a path is refused, with its name;
- a statement the server runs (``init_connect``) is no path, whatever its slashes.

The host's other listeners (an admin interface, an extra port) are set aside the same
way: a sandbox listens on 127.0.0.1 at its own port only.

A file read with ``my_cnf:`` (and ``compare --baseline/--candidate``, ``cnf check``) is
placed this way, each change said in a note; inline ``mysqld:`` options of a scenario
(written for the harness) and the options a sandbox is started with are refused
outright when they name such a path or listener. Which options hold a written file, a
folder, a read file or a listener is said below by name; an option named in none of
the lists that names a path is refused, never passed on. A name is judged as the option
the build takes it for (a prefix, a modifier: ``mycnf.taken_as``), where the caller
knows the build: :func:`sandbox_refusal` before any sandbox starts.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath

from .catalog import Build
from .mycnf import MANAGED, Value, base_name, never_why, norm, read_as

# Files the server writes: moved into the datadir under their own name.
WRITTEN = frozenset({
    "log_bin", "log_bin_index", "relay_log", "relay_log_index", "general_log_file",
    "slow_query_log_file", "log_slow_query_file", "innodb_buffer_pool_filename", "log_tc",
    "master_info_file", "relay_log_info_file", "keyring_file_data",
    "keyring_encrypted_file_data", "audit_log_file", "server_audit_file_path", "log_isam",
})
# The host's folders and the host files the server reads: the sandbox's own apply.
HOSTS_OWN = frozenset({
    "innodb_data_home_dir", "innodb_log_group_home_dir", "innodb_undo_directory",
    "innodb_tmpdir", "innodb_temp_tablespaces_dir", "innodb_doublewrite_dir",
    "innodb_log_arch_dir", "slave_load_tmpdir", "replica_load_tmpdir", "aria_log_dir_path",
    "character_sets_dir", "ssl_ca", "ssl_capath", "ssl_cert", "ssl_key", "ssl_crl",
    "ssl_crlpath", "admin_ssl_ca", "admin_ssl_capath", "admin_ssl_cert", "admin_ssl_key",
    "admin_ssl_crl", "admin_ssl_crlpath", "mysqlx_ssl_ca", "mysqlx_ssl_capath",
    "mysqlx_ssl_cert", "mysqlx_ssl_key", "mysqlx_ssl_crl", "mysqlx_ssl_crlpath",
    "mysqlx_socket",  # the sandbox runs no X Protocol listener
    "sha256_password_private_key_path", "sha256_password_public_key_path",
    "caching_sha2_password_private_key_path", "caching_sha2_password_public_key_path",
    "wsrep_provider", "wsrep_notify_cmd",  # a library, a command: no Galera in a sandbox
})
# The production host's listeners beyond port and socket: a sandbox listens on 127.0.0.1
# at its own port only (with admin_address naming an address of this host, a sandbox
# listened there; two sandboxes from one file would take the same port).
LISTENERS = frozenset({"admin_address", "admin_port", "extra_port"})
# Statements the server runs, not paths (``init_connect = 'SET @x = 10 / 2'``): what one
# reads or writes, the sandbox's secure_file_priv bounds, and the harness's own accounts
# (ALL PRIVILEGES) never run them.
STATEMENTS = frozenset({"init_connect", "init_slave", "init_replica"})
# A path element that starts at the root, or a '..' one, anywhere in the value (a list
# such as innodb_data_file_path's 'ibdata1:12M;/data/ibdata2:1G' included); a URL's
# 'scheme://' (wsrep_cluster_address = gcomm://) is not one.
_OUTSIDE = re.compile(r"(?:^|[\s;,=])/|:/(?!/)|(?:^|[/\s;,:=])\.\.(?:$|[/\s;,:])")


def outside(value: Value | None) -> bool:
    """Whether ``value`` names a path outside the folder the server reads relative
    paths from (its datadir)."""
    return isinstance(value, str) and _OUTSIDE.search(value) is not None


@dataclass(frozen=True)
class Placed:
    """Where one option of a production file goes in a sandbox: its value there (moved
    in), set aside, or refused; and the note that says so."""

    value: Value | None
    set_aside: bool = False
    refused: str | None = None
    note: str | None = None


def place(name: str, value: Value | None, key: str | None = None) -> Placed:
    """Option ``name = value`` of a production my.cnf, as a sandbox takes it; ``key``:
    the option the build takes ``name`` for (``mycnf.taken_as``), when it knows."""
    shown = f"{name} = {value}"
    key = key or base_name(name)
    if key in LISTENERS:
        return Placed(value, set_aside=True,
                      note=f"{shown}: set aside, a listener of the host (a sandbox listens "
                           "on 127.0.0.1 at its own port only)")
    if key in STATEMENTS or not outside(value):
        return Placed(value)
    own = PurePosixPath(str(value)).name
    if key in WRITTEN and own not in ("", "..") and not outside(own):
        return Placed(own, note=f"{shown}: written in the sandbox's datadir as {own} (a "
                                "sandbox writes no path of the host)")
    if key in HOSTS_OWN:
        return Placed(value, set_aside=True,
                      note=f"{shown}: set aside, a path of the host (the sandbox's own "
                           "applies)")
    return Placed(value, refused=refusal(name, value, key))


def refusal(name: str, value: Value | None, key: str | None = None) -> str | None:
    """Why ``name = value`` may not be handed to a sandbox as written, or None;
    ``key`` as for :func:`place`."""
    key = key or base_name(name)
    if key in LISTENERS:
        return (f"option {name}: a listener a sandbox does not open (it listens on "
                "127.0.0.1 at its own port only)")
    if key in STATEMENTS or not outside(value):
        return None
    return (f"option {name} = {value!r} names a path outside the sandbox: a sandbox's "
            "mysqld runs as the host's mysqld account and would read or write it there "
            "(where a real server's files may be); give it relative to the datadir, or "
            "leave it out")


def sandbox_refusal(build: Build, own: Iterable[str], name: str, value: Value | None
                    ) -> str | None:
    """Why a sandbox of ``build`` whose own options are ``own`` may not also start with
    ``name = value``, or None: judged as the option the build takes the name for
    (``bind_addr`` is ``bind_address`` on MariaDB, ``enable-skip-grant`` is
    ``skip_grant_tables``), so no spelling gets past a check that reads names."""
    key, shown = read_as(build, name)
    if why := never_why(key):
        return f"option '{name}'{shown}: {why}"
    if key in MANAGED or key in {norm(k) for k in own}:
        return f"option '{name}'{shown} is managed by the sandbox"
    return refusal(name + shown, value, key)
