"""The operating-system account mysqld runs as.

When the harness runs as root, mysqld must not: a sandbox's server runs as an
unprivileged account (``HARNESS_MYSQLD_USER``, default ``mysql``, created as a system
account when the host has none), owns its sandbox directory (mode 0700) and nothing
else. When the harness runs as anyone else, mysqld runs as that user.
"""
from __future__ import annotations

import os
import pwd
import stat
from dataclasses import dataclass
from pathlib import Path

from . import proc
from .errors import ProviderError

DEFAULT_USER = "mysql"


@dataclass(frozen=True)
class Account:
    name: str
    uid: int
    gid: int

    @property
    def docker_user(self) -> str:
        return f"{self.uid}:{self.gid}"


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
    if os.geteuid() != 0:
        return None
    name = account_name()
    if name == "root":
        raise ProviderError("HARNESS_MYSQLD_USER=root: mysqld never runs as root; name an "
                            "unprivileged account (default: mysql)")
    try:
        pw = pwd.getpwnam(name)
    except KeyError:
        proc.run(["useradd", "--system", "--no-create-home", "--user-group",
                  "--shell", "/usr/sbin/nologin", name], timeout=60,
                 what=f"useradd {name} (the unprivileged account mysqld runs as)")
        pw = pwd.getpwnam(name)
    if pw.pw_uid == 0:
        raise ProviderError(f"HARNESS_MYSQLD_USER={name} has uid 0: mysqld never runs as root")
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
