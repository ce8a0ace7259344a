"""The operating-system account mysqld runs as.

When the harness runs as root, mysqld must not: a sandbox's server runs as an
unprivileged account (``HARNESS_MYSQLD_USER``, default ``mysql``, created as a system
account when the host has none) and owns only the folders of a sandbox it writes to;
the sandbox's folder and what root reads or runs in it stay root's (``share_read``),
and what the account wrote is read through :func:`open_mysqld_file` (no link followed).
When the harness runs as anyone else, mysqld runs as that user.
"""
from __future__ import annotations

import os
import pwd
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from .. import proc
from ..errors import ProviderError
from ..inputs import inputfile

DEFAULT_USER = "mysql"


@dataclass(frozen=True)
class Account:
    name: str
    uid: int
    gid: int

    @property
    def docker_user(self) -> str:
        return f"{self.uid}:{self.gid}"


CLIENT_USER = "harness-client"


def account_name() -> str:
    """The name of mysqld's account, here and on lab hosts."""
    return os.environ.get("HARNESS_MYSQLD_USER") or DEFAULT_USER


def login_name() -> str:
    """Who runs the harness, as a person: the login behind sudo, else the account."""
    if os.geteuid() == 0 and os.environ.get("SUDO_USER"):
        return os.environ["SUDO_USER"]
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return f"uid {os.geteuid()}"


def mysqld_account() -> Account | None:
    """The account mysqld runs as, or None when the harness is not root (mysqld then
    runs as the harness's own user)."""
    return unprivileged(account_name(), "HARNESS_MYSQLD_USER", "mysqld")


def client_account() -> Account | None:
    """The account the load generator (sysbench) runs as, or None when the harness is
    not root: a server's LOAD DATA LOCAL request, which names any file the client can
    read, then reaches nothing of root's (harness/client.py)."""
    return unprivileged(client_account_name(), "HARNESS_CLIENT_USER", "the load generator")


def client_account_name() -> str:
    """The name of the load generator's account, here and on lab hosts."""
    return os.environ.get("HARNESS_CLIENT_USER") or CLIENT_USER


def unprivileged(name: str, variable: str, what: str) -> Account | None:
    """Account ``name`` (a system account made if missing), never uid 0; None when the
    harness is not root."""
    if os.geteuid() != 0:
        return None
    if name == "root":
        raise ProviderError(f"{variable}=root: {what} never runs as root; name an "
                            "unprivileged account")
    try:
        pw = pwd.getpwnam(name)
    except KeyError:
        proc.run(["useradd", "--system", "--no-create-home", "--user-group",
                  "--shell", "/usr/sbin/nologin", name], timeout=60,
                 what=f"useradd {name} (the unprivileged account {what} runs as)")
        pw = pwd.getpwnam(name)
    if pw.pw_uid == 0:
        raise ProviderError(f"{variable}={name} has uid 0: {what} never runs as root")
    return Account(name, pw.pw_uid, pw.pw_gid)


def hand_over(path: Path, account: Account | None, mode: int | None = None) -> None:
    """Give ``path`` (and everything below it) to ``account``; a no-op for None."""
    if account is None:
        if mode is not None:
            path.chmod(mode)
        return
    for p in [path, *path.rglob("*")]:
        os.lchown(p, account.uid, account.gid)
    if mode is not None:
        path.chmod(mode)


def share_read(path: Path, account: Account | None, folder: bool = False) -> None:
    """Keep ``path`` root's, readable (a folder: passable) by ``account``'s group only:
    mysqld reads it or goes through it, and cannot change, replace or plant anything
    in it. A no-op for None (no root: everything is the harness's own user's)."""
    if account is None:
        return
    os.lchown(path, 0, account.gid)
    path.chmod(0o710 if folder else 0o640)


def open_mysqld_file(path: Path) -> BinaryIO | None:
    """A file mysqld's account writes (its error log), opened without following a link
    and only when it is a regular file: never root's way to a file it should not read."""
    try:
        return inputfile.open_regular(path, follow=False)[0]
    except OSError:  # NotRegular too
        return None


def read_mysqld_file(path: Path, start: int = 0, limit: int = 1 << 20) -> str | None:
    """Its text from ``start`` (at most its last ``limit`` bytes), or None."""
    f = open_mysqld_file(path)
    if f is None:
        return None
    with f:
        size = os.fstat(f.fileno()).st_size
        f.seek(max(start, size - limit))
        return f.read(limit).decode(errors="replace")


def copy_mysqld_file(src: Path, dest: Path) -> bool:
    """Copy a file mysqld's account wrote (never through a link, only a regular file);
    whether there was one."""
    f = open_mysqld_file(src)
    if f is None:
        return False
    with f, open(dest, "wb") as out:
        shutil.copyfileobj(f, out)
    return True


def open_folder(path: Path) -> Path:
    """Make ``path`` (and its parents) if missing, passable by mysqld's account whatever
    the umask (0755); a folder that exists already is left as it is."""
    missing = [p for p in [path, *path.parents] if not p.exists()]
    path.mkdir(parents=True, exist_ok=True)
    for p in missing:
        p.chmod(0o755)
    return path


def unreachable(path: Path, account: Account | None) -> str | None:
    """Why ``account`` cannot reach ``path`` (a directory on the way it may not enter),
    or None when it can."""
    if account is None:
        return None
    for d in [*reversed(path.parents), path]:
        try:
            st = d.stat()
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode):
            continue
        if st.st_uid == account.uid:
            ok = st.st_mode & stat.S_IXUSR
        elif st.st_gid == account.gid:
            ok = st.st_mode & stat.S_IXGRP
        else:
            ok = st.st_mode & stat.S_IXOTH
        if not ok:
            return f"{d} is mode {stat.S_IMODE(st.st_mode):04o} (owner uid {st.st_uid})"
    return None


def require_reachable(path: Path, account: Account | None, what: str) -> None:
    why = unreachable(path, account)
    if why:
        assert account is not None
        raise ProviderError(
            f"mysqld runs as the unprivileged account {account.name} (the harness runs as "
            f"root) and cannot reach {what} {path}: {why}. Keep builds and sandboxes where "
            "it can (HARNESS_CACHE, HARNESS_SANDBOXES; root's default is "
            "/var/cache/mysql-harness)")
