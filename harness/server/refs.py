"""Where a command names a server build: a catalog name, the name of a build installed
from a tarball the catalog does not know, the path of a vendor's tarball, or the folder
of one unpacked. ``--server`` of run, compare and cnf check takes any of them;
``--basedir DIR`` is the last, said plainly.

A tarball given by path is trusted as ``servers install`` trusts it: the catalog's pin,
or the checksum it was installed with once by ``servers install FILE
--trust-unpinned``; anything else is refused before a byte of it is unpacked or run.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import BuildUnavailableError, InputError, UnavailableError
from . import catalog, debroot

# A vendor's tarball, or a Maven jar that carries one (MySQL 8.0.31's).
TARBALL_SUFFIXES = (".tar.gz", ".tgz", ".tar.xz", ".txz", ".jar")


@dataclass(frozen=True)
class ServerRef:
    """A build as a command named it: by ``name`` (installed, or installable from the
    catalog), or by the ``basedir`` of an unpacked build."""

    name: str | None = None
    basedir: Path | None = None

    @property
    def said(self) -> str:
        return self.name or str(self.basedir)


def parse(ref: str, log: Callable[[str], None] = print) -> ServerRef:
    """What ``ref`` names; a tarball by path is installed here (when its pin is the
    catalog's or was given once), so the rest of the harness sees a name."""
    if ref in catalog.CATALOG or ref in catalog.installed_files():
        return ServerRef(name=ref)
    path = Path(ref)
    if path.is_dir():
        return ServerRef(basedir=path.absolute())
    if path.is_file():
        return ServerRef(name=_from_file(path, log).name)
    if ref.endswith(TARBALL_SUFFIXES) or "/" in ref:
        raise BuildUnavailableError(f"--server {ref}: no such file or folder")
    return ServerRef(name=catalog.get_entry(ref).name)  # raises, naming the known ones


def _from_file(path: Path, log: Callable[[str], None]) -> catalog.CatalogEntry:
    """The build a tarball is: a catalog build it is pinned for (installed from it when
    not yet), or one installed from it before; else refused, nothing of it run."""
    checksum = _sha256(path)
    entry = catalog.entry_for_checksum(checksum)
    if entry is None:
        catalog.refuse_unpinned(str(path.absolute()), checksum,
                                f"harness servers install {path}", trusted=False)
        raise AssertionError("refuse_unpinned returns only when trusted")
    if catalog.is_installed(entry):
        return entry
    return catalog.install_file(path, log=log, checksum=checksum)


# A command may name one tarball more than once (compare reads its servers for the plan
# and for the my.cnf files): each file is read once. A file changed since is read again;
# and whatever is unpacked is checked against its checksum again as it is unpacked.
_SHA256: dict[tuple[int, int, int, int], str] = {}


def _sha256(path: Path) -> str:
    st = path.stat()
    key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    if key not in _SHA256:
        _SHA256[key] = debroot.sha256(path)
    return _SHA256[key]


def folder(d: str) -> ServerRef:
    """``--basedir DIR``: an unpacked build's folder, said plainly."""
    if not Path(d).is_dir():
        raise UnavailableError(f"--basedir {d}: not a folder")
    return ServerRef(basedir=Path(d).absolute())


def build(ref: str, log: Callable[[str], None] = print) -> catalog.Build:
    """The build ``ref`` names, installed first when it needs to be."""
    r = parse(ref, log)
    if r.name is not None:
        return catalog.resolve(r.name, log=log)
    assert r.basedir is not None
    return catalog.detect_build(r.basedir)


# [mysqld-8.4] is read by MySQL 8.4 and Percona Server 8.4, [mysqld-10.11], [mariadb-10.11]
# and [mariadbd-10.11] by MariaDB 10.11: the group names the series a file was written for.
_VERSION_GROUP = re.compile(r"^\s*\[\s*(mysqld|mariadb|mariadbd)-(\d+)\.(\d+)\s*\]", re.M)


@dataclass(frozen=True)
class NamedBy:
    """The build a my.cnf's version groups name, and the group that named it."""

    name: str
    group: str


def _version_groups(paths: list[Path]) -> dict[tuple[str, str], str]:
    """(flavor, series) -> the first group naming it, over the files."""
    groups: dict[tuple[str, str], str] = {}
    for path in paths:
        text = path.read_text(encoding="latin-1")  # the group names are ASCII
        for m in _VERSION_GROUP.finditer(text):
            major, minor = int(m.group(2)), int(m.group(3))
            flavor = "mariadb" if m.group(1) != "mysqld" or _mariadb_major(major) else "mysql"
            groups.setdefault((flavor, f"{major}.{minor}"), f"[{m.group(1)}-{major}.{minor}]")
    return groups


def _mariadb_major(major: int) -> bool:
    """Whether ``[mysqld-MAJOR.MINOR]`` names a MariaDB series: MariaDB's majors are 10
    to 19 (10.11, 11.8, 12.3); MySQL's are 5, 8 and 9, then calendar numbers from
    2026 on (26.7, 26.10: the year and the month)."""
    return 10 <= major < 20


def named_by_groups(paths: list[Path]) -> NamedBy | None:
    """The one build the files' version groups name (``[mysqld-8.4]``: MySQL or Percona
    Server 8.4, an installed one first, then Oracle's; ``[mariadb-10.11]``: MariaDB
    10.11), None when they name none. Groups of two series are a question only the user
    can answer: refused."""
    groups = _version_groups(paths)
    if not groups:
        return None
    if len(groups) > 1:
        raise InputError(f"the my.cnf files have groups of {len(groups)} server series "
                         f"({', '.join(sorted(groups.values()))}): give --server NAME|FILE|DIR")
    (flavor, series), group = next(iter(groups.items()))
    readers = ("mysql", "percona") if flavor == "mysql" else ("mariadb",)
    found = [e for e in catalog.entries() if e.flavor in readers and
             (e.version == series or e.version.startswith(series + "."))]
    if not found:
        raise InputError(f"the my.cnf files' {group} names {flavor} {series}, which no "
                         "catalog build is: give --server FILE|DIR (a tarball of it)")
    # an installed one first, then Oracle's, then the catalog's order (what runs here)
    found.sort(key=lambda e: (not catalog.is_installed(e), e.flavor != flavor))
    return NamedBy(found[0].name, group)
