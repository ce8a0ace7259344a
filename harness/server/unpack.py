"""Unpacking a server archive that root installs: every member is read before anything is
written, and the archive is refused, naming the member, unless each one is plain.

A member is refused when it:
- names a path that leaves the folder (absolute, ``..``), or repeats an earlier member's
  name (a second member of one name writes through whatever the first made);
- is a hard link (the attack on Python's ``filter="tar"``: a link to a file outside, then
  a regular member of the same name, rewrites that file's owner, mode and bytes);
- is a symbolic link whose target leaves the folder (absolute, or ``..`` past its top);
- is a device, a FIFO or anything else but a file, a folder or such a symbolic link;
- is larger than :data:`MAX_FILE` bytes, or brings the whole past :data:`MAX_TOTAL`
  (from the headers, before a byte is written: a small archive that unpacks to
  gigabytes is refused, not unpacked until the disk fills), or the archive has more than
  :data:`MAX_MEMBERS` members.

What passes is unpacked with Python's ``filter="data"`` as well (modes without setuid or
group and world write bits, no owners taken from the archive). A zip (Maven's jars)
holds no links; its names and sizes are checked the same way.

Two more rules close what a member-by-member reading cannot see:
- The archive is read from one open file (:class:`Opened`: opened once, without
  following a link in its last step, hashed from that handle): the bytes checked against
  a pin are the bytes unpacked, however the file's name is renamed over meanwhile.
- After unpacking, every link is resolved on disk and must stay inside the folder: a
  chain of links (``h/l -> up/../..`` written before ``h/up -> ../..``) that each read
  alone stays inside is refused, and what was unpacked is removed.

A build may declare links it is known to carry out of its archive (a repacker's links
into its own /tmp): those are dropped, never written, and said; any other is refused.
"""
from __future__ import annotations

import hashlib
import os
import posixpath
import shutil
import stat
import tarfile
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ..errors import BuildRefusedError

MAX_FILE = 2 << 30  # a vendor's largest file (mysqld-debug) is well under this
MAX_TOTAL = 8 << 30  # MySQL 8.0's full tarball unpacks to about 3 GB
MAX_MEMBERS = 100_000


@dataclass(frozen=True)
class Member:
    """One archive member as it would be written."""

    name: str
    kind: str  # "file", "dir", "symlink", or what else the archive says it is
    size: int
    target: str = ""  # a link's


class Opened:
    """One archive file, opened once and never again by its name: its sha256 is read
    from this handle, and :func:`unpack` reads the same handle. A link in the last step
    of the path is refused (``O_NOFOLLOW``), and so is anything but a regular file."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError as e:
            raise BuildRefusedError(f"{self.path}: cannot be opened as a plain file: "
                                    f"{e.strerror}") from None
        self.file: BinaryIO = os.fdopen(fd, "rb")
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            self.file.close()
            raise BuildRefusedError(f"{self.path}: not a regular file")
        h = hashlib.sha256()
        for chunk in iter(lambda: self.file.read(1 << 20), b""):
            h.update(chunk)
        self.sha256 = h.hexdigest()

    def rewound(self) -> BinaryIO:
        self.file.seek(0)
        return self.file

    def close(self) -> None:
        self.file.close()

    def __enter__(self) -> Opened:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def unpack(archive: Path | Opened, into: Path, drop_links: Iterable[str] = (),
           say: Callable[[str], object] | None = None) -> None:
    """``archive`` (tar of any compression, zip or jar; a path, or an :class:`Opened`
    file to read the very bytes that were hashed) unpacked into ``into``, or a
    CatalogError naming the archive and the member at fault; nothing is written until
    every member has passed. ``drop_links``: members the build is known to carry as links
    out of the archive, dropped (``say`` is told each) instead of refused."""
    if isinstance(archive, Opened):
        _unpack_opened(archive, into, frozenset(drop_links), say or (lambda _: None))
        return
    with Opened(archive) as opened:
        _unpack_opened(opened, into, frozenset(drop_links), say or (lambda _: None))


def _unpack_opened(archive: Opened, into: Path, drop: frozenset[str],
                   say: Callable[[str], object]) -> None:
    path, f = archive.path, archive.rewound()
    try:
        if path.suffix in (".jar", ".zip"):
            with zipfile.ZipFile(f) as z:
                check(path, (_zip_member(i) for i in z.infolist()))
                _unzip(z, into)
        else:
            with tarfile.open(fileobj=f, mode="r:*") as t:
                members = t.getmembers()
                kept = _dropped(path, members, drop, say)
                check(path, (_tar_member(m) for m in kept))
                t.extractall(into, members=kept, filter="data")
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError) as e:
        raise BuildRefusedError(f"{path}: does not unpack: {e}") from None
    _links_stay_inside(path, into)


def _dropped(path: Path, members: list[tarfile.TarInfo], drop: frozenset[str],
             say: Callable[[str], object]) -> list[tarfile.TarInfo]:
    """The members less the declared outward links (each said); a declared name that is
    not a link out of the folder is kept, and checked like any other."""
    kept = []
    for m in members:
        if m.name in drop and m.issym() and _leaves(posixpath.normpath(m.name), m.linkname):
            say(f"{path.name}: dropped {m.name}: a link out of the archive (to "
                f"{m.linkname}), never written or followed")
            continue
        kept.append(m)
    return kept


def _links_stay_inside(path: Path, into: Path) -> None:
    """Every link under ``into``, resolved on disk, stays inside it; else all that was
    unpacked is removed and a CatalogError names the link."""
    top = into.resolve()
    for dirpath, dirnames, filenames in os.walk(into):
        for name in (*dirnames, *filenames):
            p = Path(dirpath) / name
            if not p.is_symlink():
                continue
            real = Path(os.path.realpath(p))
            if real != top and top not in real.parents:
                _emptied(into)
                raise BuildRefusedError(
                    f"{path}: refused: member {str(p.relative_to(into))!r}: a link that "
                    f"resolves outside the folder through other links (to {real}); "
                    "nothing was kept")


def _emptied(into: Path) -> None:
    for child in into.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            child.unlink(missing_ok=True)


def check(archive: Path, members: Iterable[Member]) -> None:
    """Every member plain (the module's rules), else a CatalogError naming it."""
    seen: set[str] = set()
    total = 0
    for n, m in enumerate(members, 1):
        name = posixpath.normpath(m.name.rstrip("/"))
        why = _refusal(m, name, seen)
        total += m.size
        if why is None and n > MAX_MEMBERS:
            why = f"more than {MAX_MEMBERS:,} members"
        if why is None and total > MAX_TOTAL:
            why = f"the archive unpacks to more than {MAX_TOTAL >> 30} GiB"
        if why is not None:
            raise BuildRefusedError(f"{archive}: refused: member {m.name!r}: {why}; nothing was "
                                    "unpacked")
        seen.add(name)


def _refusal(m: Member, name: str, seen: set[str]) -> str | None:
    """Why one member is not plain (None: it is)."""
    if m.name.startswith("/") or name == ".." or name.startswith("../"):
        return "its path leaves the folder"
    if name in seen and m.kind != "dir":
        return "a second member of that name"
    if m.kind == "hardlink":
        return f"a hard link (to {m.target!r})"
    if m.kind == "symlink" and _leaves(name, m.target):
        return f"a symbolic link that leaves the folder (to {m.target!r})"
    if m.kind not in ("file", "dir", "symlink"):
        return f"a {m.kind}, not a file, folder or link"
    if m.size > MAX_FILE:
        return f"{m.size:,} bytes, over the {MAX_FILE >> 30} GiB a file may have"
    return None


def _leaves(name: str, target: str) -> bool:
    """Whether a link at ``name`` pointing at ``target`` resolves outside the folder."""
    if target.startswith("/"):
        return True
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(name), target))
    return resolved == ".." or resolved.startswith("../")


def _tar_member(m: tarfile.TarInfo) -> Member:
    kind = ("file" if m.isreg() else "dir" if m.isdir() else "symlink" if m.issym()
            else "hardlink" if m.islnk() else "FIFO" if m.isfifo() else
            "device" if m.isdev() else "special member")
    return Member(m.name, kind, m.size if m.isreg() else 0, m.linkname)


def _zip_member(i: zipfile.ZipInfo) -> Member:
    mode = i.external_attr >> 16
    kind = "dir" if i.is_dir() else "symlink" if stat.S_ISLNK(mode) else "file"
    return Member(i.filename, kind, i.file_size)


def _unzip(z: zipfile.ZipFile, into: Path) -> None:
    """Each member (checked) written with its permission bits, less setuid and group and
    world write (as tar's data filter keeps them)."""
    for info in z.infolist():
        z.extract(info, into)
        mode = (info.external_attr >> 16) & 0o755
        if mode and not info.is_dir():
            os.chmod(into / info.filename, mode)
