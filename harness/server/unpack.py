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
"""
from __future__ import annotations

import os
import posixpath
import stat
import tarfile
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..errors import CatalogError

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


def unpack(archive: Path, into: Path) -> None:
    """``archive`` (tar of any compression, zip or jar) unpacked into ``into``, or a
    CatalogError naming the archive and the member at fault; nothing is written until
    every member has passed."""
    try:
        if archive.suffix in (".jar", ".zip"):
            with zipfile.ZipFile(archive) as z:
                check(archive, (_zip_member(i) for i in z.infolist()))
                _unzip(z, into)
        else:
            with tarfile.open(archive) as t:
                check(archive, (_tar_member(m) for m in t.getmembers()))
                t.extractall(into, filter="data")
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError) as e:
        raise CatalogError(f"{archive}: does not unpack: {e}") from None


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
            raise CatalogError(f"{archive}: refused: member {m.name!r}: {why}; nothing was "
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
