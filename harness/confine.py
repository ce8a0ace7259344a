"""A sandbox's mysqld in a mount namespace of its own, where nothing outside its folder
is writable by its account.

mysqld's account owns only its sandbox's folders, but it can write wherever anyone can
(/tmp, /var/tmp, /dev/shm, /run/lock) and, being one account for every sandbox, into
the other sandboxes' folders. ``CREATE TABLE ... DATA DIRECTORY='/tmp/x'`` on MySQL 5.5
to 5.7 (InnoDB takes it whatever ``symbolic-links`` says) or a 5.7 general tablespace's
``ADD DATAFILE`` wrote files there that outlived the sandbox. In the namespace each of
those folders is covered by an empty tmpfs of its own (small, gone with mysqld), the
sandbox's own folder and its build (where a cover would hide them) put back where they
were, so what mysqld writes
outside its folder goes nowhere the host sees.

Set up in the child between the fork and the exec, as root, before it becomes the
account: a namespace that cannot be made fails the start (closed, not open).
"""
from __future__ import annotations

import ctypes
import os
import stat
from dataclasses import dataclass
from pathlib import Path

CLONE_NEWNS = 0x00020000
MS_NOSUID, MS_NODEV, MS_REC, MS_PRIVATE = 2, 4, 16384, 1 << 18
# open_tree(2) and move_mount(2) (Linux 5.2), x86_64's numbers
SYS_OPEN_TREE, SYS_MOVE_MOUNT = 428, 429
AT_FDCWD, AT_RECURSIVE, OPEN_TREE_CLONE, MOVE_MOUNT_F_EMPTY_PATH = -100, 0x8000, 1, 4
# The folders anyone may write on a Debian host, where they exist (and are folders,
# not links): each is covered.
SHARED = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/var/lock", "/run/shm",
          "/dev/mqueue")
COVER_SIZE = "16m"  # what mysqld may put in a covered folder (RAM), per folder


def _world_writable(path: str) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and bool(st.st_mode & stat.S_IWOTH)


@dataclass(frozen=True)
class Confinement:
    """What a mysqld's namespace covers and what it keeps: ``covered`` folders get an
    empty tmpfs each; ``kept`` ones (its sandbox, its build) stay where they are."""

    covered: tuple[str, ...]
    kept: tuple[str, ...]

    @classmethod
    def of_sandbox(cls, own: Path, sandboxes: Path, build_root: Path) -> Confinement:
        """A sandbox's: the shared folders and the other sandboxes covered (computed in
        the parent, before the fork)."""
        shared = [p for p in SHARED if _world_writable(p)]
        return cls(tuple(dict.fromkeys([*shared, str(sandboxes)])),
                   (str(own), str(build_root)))

    def enter(self) -> None:
        """In the child, as root: a private mount namespace with the covers on (and
        the kept folders under them moved back in as clones of themselves, made before
        the covers). OSError when any step fails."""
        libc = ctypes.CDLL(None, use_errno=True)
        _check(libc.unshare(CLONE_NEWNS), "unshare")
        _mount(libc, None, "/", None, MS_REC | MS_PRIVATE, None)
        trees = {k: _clone_tree(libc, k) for k in self.kept if self._under_cover(k)}
        for c in self.covered:
            if not os.path.isdir(c):  # under a cover laid already: hidden by it
                continue
            mode = "1777" if _world_writable(c) else "0755"
            _mount(libc, "tmpfs", c, "tmpfs", MS_NOSUID | MS_NODEV,
                   f"mode={mode},size={COVER_SIZE}")
        for path, tree in trees.items():
            os.makedirs(path, mode=0o755, exist_ok=True)
            _check(libc.syscall(SYS_MOVE_MOUNT, tree, b"", AT_FDCWD, path.encode(),
                                MOVE_MOUNT_F_EMPTY_PATH), f"move_mount {path}")
            os.close(tree)

    def _under_cover(self, path: str) -> bool:
        return any(path == c or path.startswith(c.rstrip("/") + "/") for c in self.covered)


def _clone_tree(libc: ctypes.CDLL, path: str) -> int:
    """A detached clone of the mounts at and under ``path`` (open_tree)."""
    fd = libc.syscall(SYS_OPEN_TREE, AT_FDCWD, path.encode(),
                      OPEN_TREE_CLONE | AT_RECURSIVE | os.O_CLOEXEC)
    _check(0 if fd >= 0 else -1, f"open_tree {path}")
    return int(fd)


def _mount(libc: ctypes.CDLL, src: str | None, target: str, fstype: str | None,
           flags: int, data: str | None) -> None:
    enc = [x.encode() if x is not None else None for x in (src, target, fstype, data)]
    _check(libc.mount(enc[0], enc[1], enc[2], ctypes.c_ulong(flags), enc[3]),
           f"mount {target}")


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
