"""The load generator as an unprivileged client.

sysbench's MySQL client library answers a server's LOAD DATA LOCAL request (sent in
reply to any statement, whatever the statement's text says) with the file the server
names, if the client can read it. Run as root, it could send ``/root/.ssh/id_rsa`` to a
sandbox's mysqld (its unprivileged account) or to a foreign server; the guard's reading
of LOCAL in a statement's text stops a replayed statement, not a server that asks. So
every sysbench the harness starts runs as the client account (``HARNESS_CLIENT_USER``,
default ``harness-client``, a system account made if missing), from a folder of this
process's that only that account (and root) can enter, holding the copies of what it
reads (its option file with the password, a replay's script and pieces): a file a
server asks for is one that account can read, nothing of root's.

Not root: the harness's own user runs it, as before.
"""
from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from . import proc
from .server import osuser

_FOLDER: list[Path] = []


def as_user() -> tuple[int, int] | None:
    """(uid, gid) of the client account, or None when the harness is not root."""
    a = osuser.client_account()
    return (a.uid, a.gid) if a is not None else None


def folder() -> Path:
    """This process's client folder (0700, the client account's; removed at exit)."""
    if not _FOLDER:
        d = Path(tempfile.mkdtemp(prefix="harness-client-"))
        atexit.register(shutil.rmtree, d, True)
        osuser.hand_over(d, osuser.client_account(), 0o700)
        _FOLDER.append(d)
    return _FOLDER[0]


def write_private(name: str, text: str) -> Path:
    """``text`` as ``name`` in the client folder, 0600, readable by the client alone."""
    path = folder() / name
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    osuser.hand_over(path, osuser.client_account())
    return path


def copy_in(src: Path) -> Path:
    """A copy of root's ``src`` (a file or a folder) in the client folder, the
    client's: what sysbench reads, never the original."""
    dest = folder() / src.name
    if src.is_dir():
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(src, dest, symlinks=False)
    else:
        shutil.copyfile(src, dest)
    osuser.hand_over(dest, osuser.client_account(), 0o700 if src.is_dir() else 0o600)
    return dest


def run(argv: list[str], *, timeout: float | None = None, what: str = "",
        check: bool = True) -> subprocess.CompletedProcess[str]:
    """:func:`proc.run` of a client program: as the client account, from its folder,
    with the allow-listed environment."""
    return proc.run(argv, as_user=as_user(), cwd=folder(), timeout=timeout, what=what,
                    check=check)


def stream(argv: list[str], on_line: Callable[[str], None], log_path: Path | None = None,
           what: str = "", over_ssh: bool = False) -> proc.LineStream:
    """A :class:`proc.LineStream` of a client program, as :func:`run` starts it.
    ``over_ssh``: ``argv`` is ssh running the program on a lab host (as that host's
    client account, :meth:`RemoteShell.wrap_client`); ssh itself runs as this process's
    user, whose key and agent it needs, with the allow-listed environment."""
    if over_ssh:
        ssh = {k: os.environ[k] for k in ("HOME", "USER", "SSH_AUTH_SOCK") if k in os.environ}
        return proc.LineStream(argv, on_line, log_path, what=what, env=ssh, private=True)
    return proc.LineStream(argv, on_line, log_path, what=what, cwd=folder(),
                           as_user=as_user())
