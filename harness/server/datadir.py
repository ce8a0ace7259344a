"""A datadir the harness did not make: a cold copy of a DBA's server or a prepared
physical backup (mariadb-backup, XtraBackup). What server wrote it is read as InnoDB
reads it, from its redo log's header (the creator field: ``MySQL 9.7.4``, ``MariaDB
10.11.18``, ``Backup 10.11.18`` where mariadb-backup prepared it), else from what the
server's upgrade left (``mysql_upgrade_history``, ``mysql_upgrade_info``); a datadir
starts only on a build of the flavor and series that wrote it. Nothing here writes to
the folder: it is read, then copied file by file where it is used."""
from __future__ import annotations

import json
import os
import re
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..inputs import inputfile

# InnoDB's redo log header: the creator field, 32 bytes at offset 16 of the first block
# (MySQL 5.7.9+, 8.0 before and after its #innodb_redo files, MariaDB 10.2+ and 10.8's
# new format alike).
_CREATOR = slice(16, 48)
_WRITER = re.compile(r"^(MySQL|MariaDB|Backup)\s+(\d+)\.(\d+)\.(\d+)")
_BACKUP_INFO = ("mariadb_backup_checkpoints", "xtrabackup_checkpoints")
# What a prepared backup's checkpoints file says: XtraBackup's full-prepared, MariaDB
# 10.11's mariadb-backup --prepare log-applied (full-backuped before it).
_PREPARED = ("full-prepared", "log-applied")


@dataclass(frozen=True)
class Writer:
    """The server that wrote a datadir: its flavor family (mysql: Oracle's and
    Percona's; mariadb), version, and the file that said it."""

    family: str
    version: str
    said_by: str

    @property
    def series(self) -> str:
        return ".".join(self.version.split(".")[:2])

    @property
    def title(self) -> str:
        return f"{'MariaDB' if self.family == 'mariadb' else 'MySQL'} {self.version}"


def family(flavor: str) -> str:
    """A build's flavor as a datadir knows it: Percona Server writes MySQL's files."""
    return "mariadb" if flavor == "mariadb" else "mysql"


def writer(datadir: Path) -> Writer | None:
    """What wrote ``datadir``, or None when nothing in it says."""
    for log in _redo_logs(datadir):
        found = _creator(log)
        if found is not None:
            return found
    return _upgrade_history(datadir) or _upgrade_info(datadir)


def _redo_logs(datadir: Path) -> list[Path]:
    """MySQL 8.0.30+'s #innodb_redo/#ib_redoN (not the spare _tmp ones), else ib_logfile0."""
    redo = datadir / "#innodb_redo"
    found = sorted((p for p in redo.glob("#ib_redo*") if not p.name.endswith("_tmp")),
                   key=lambda p: int(re.sub(r"\D", "", p.name) or 0)) if redo.is_dir() else []
    return [*found, datadir / "ib_logfile0"]


def _creator(log: Path) -> Writer | None:
    try:
        f, _st = inputfile.open_regular(log, follow=False)
        with f:
            head = f.read(_CREATOR.stop)
    except OSError:
        return None
    text = head[_CREATOR].split(b"\0")[0].decode("ascii", "replace").strip()
    m = _WRITER.match(text)
    if m is None:  # 5.6 and older leave it empty; XtraBackup writes its own version
        return None
    family_ = "mysql" if m.group(1) == "MySQL" else "mariadb"  # Backup: mariadb-backup
    return Writer(family_, ".".join(m.group(2, 3, 4)), f"{log.name}'s header ({text})")


def _upgrade_history(datadir: Path) -> Writer | None:
    """MySQL 8.0.35+ keeps each version that ran on the datadir, the last one last."""
    try:
        data = json.loads(inputfile.read_text(datadir / "mysql_upgrade_history",
                                              "upgrade history", 1 << 20))
        version = str(data["upgrade_history"][-1]["version"])
    except (OSError, inputfile.InputFileError, ValueError, KeyError, IndexError, TypeError):
        return None
    m = re.match(r"(\d+\.\d+\.\d+)", version)
    return Writer("mysql", m.group(1), "mysql_upgrade_history") if m else None


def _upgrade_info(datadir: Path) -> Writer | None:
    """What mysql_upgrade (mariadb-upgrade) wrote: ``10.11.18-MariaDB``, ``5.7.29``."""
    try:
        text = inputfile.read_text(datadir / "mysql_upgrade_info", "upgrade info", 4096)
    except (OSError, inputfile.InputFileError):
        return None
    m = re.match(r"\s*(\d+\.\d+\.\d+)(\S*)", text)
    if m is None:
        return None
    fam = "mariadb" if "mariadb" in m.group(2).lower() else "mysql"
    return Writer(fam, m.group(1), "mysql_upgrade_info")


def problems(datadir: Path) -> list[str]:
    """Why ``datadir`` cannot be started from, whatever the build (empty: it can)."""
    if not datadir.is_dir():
        return [f"{datadir}: not a folder"]
    if not (datadir / "mysql").is_dir():
        return [f"{datadir}: no mysql schema folder: not a datadir (a physical backup "
                "is given as the folder it was prepared in)"]
    found = [why for why in (_unprepared(datadir), _in_use(datadir), _not_plain(datadir))
             if why]
    if writer(datadir) is None:
        found.append(f"{datadir}: nothing in it says which server wrote it (no creator in "
                     "its redo log's header, no mysql_upgrade_info): it cannot be matched "
                     "to a build")
    return found


def _unprepared(datadir: Path) -> str | None:
    for name in _BACKUP_INFO:
        try:
            text = inputfile.read_text(datadir / name, "backup checkpoints", 65536)
        except (OSError, inputfile.InputFileError):
            continue
        m = re.search(r"^backup_type\s*=\s*(\S+)", text, re.M)
        if m and m.group(1) not in _PREPARED:
            return (f"{datadir}: a physical backup not prepared ({name}: backup_type = "
                    f"{m.group(1)}); prepare it first (mariadb-backup --prepare "
                    f"--target-dir {datadir})")
    return None


def _not_plain(datadir: Path) -> str | None:
    """The first thing in it a copy would refuse (a link, a device, a FIFO)."""
    for folder, dirs, files in os.walk(datadir):
        for name in [*dirs, *files]:
            p = Path(folder) / name
            st = p.lstat()
            if not (stat.S_ISDIR(st.st_mode) or (stat.S_ISREG(st.st_mode) and
                                                 st.st_nlink == 1)):
                return _refusal(p, st)
    return None


def _refusal(path: Path | str, st: os.stat_result) -> str:
    what = "a hard link" if stat.S_ISREG(st.st_mode) else "not a regular file"
    return (f"{path}: {what}; a datadir is copied only when it holds folders and "
            "regular files")


def _in_use(datadir: Path) -> str | None:
    """A pid file naming a running process: the copy would be of a live server."""
    for pid_file in datadir.glob("*.pid"):
        try:
            pid = int(inputfile.read_text(pid_file, "pid file", 64).strip())
        except (OSError, inputfile.InputFileError, ValueError):
            continue
        if _is_server(pid):
            return (f"{datadir}: in use by a running server ({pid_file.name}: pid {pid}); "
                    "give a cold copy or a prepared backup")
    return None


def _is_server(pid: int) -> bool:
    """Whether ``pid`` runs a server now (a stale pid file's number may be anyone's)."""
    try:
        comm = Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return False
    return comm in ("mysqld", "mariadbd", "ld-linux-x86-64", "ld-linux-x86-64.so.2")


# The in-place upgrades MySQL's own server makes at its first start on an older datadir
# (8.0.16 and later upgrade the data dictionary and the system tables themselves):
# Oracle's documented paths, one series at a time.
UPGRADES = {("5.7", "8.0"), ("8.0", "8.4"), ("8.4", "9.7")}


def build_problem(datadir: Path, flavor: str, version: str, name: str,
                  upgrade: bool = False) -> str | None:
    """Why the build ``name`` cannot start ``datadir`` (None: it can): a datadir starts on
    the flavor and series that wrote it, never downgraded; ``upgrade``: or on the MySQL
    series after it (:data:`UPGRADES`), which upgrades it in place at its first start."""
    w = writer(datadir)
    if w is None:
        return None  # said by problems()
    series = ".".join(version.split(".")[:2])
    if (w.family, w.series) == (family(flavor), series):
        return None
    step = (w.series, series)
    if upgrade and w.family == family(flavor) == "mysql" and step in UPGRADES:
        return None
    if upgrade:
        paths = ", ".join(f"{a} -> {b}" for a, b in sorted(UPGRADES))
        return (f"{datadir} was written by {w.title} (its {w.said_by}); {name} is {flavor} "
                f"{version}: upgrade: true starts a MySQL datadir on the series after the "
                f"one that wrote it, as MySQL's server upgrades it in place ({paths})")
    return (f"{datadir} was written by {w.title} (its {w.said_by}); {name} is {flavor} "
            f"{version}: a datadir is started on the server series that wrote it "
            f"({w.family} {w.series}), never upgraded or downgraded on the way (an "
            "in-place upgrade: upgrade: true in the dataset)")


# What a copy leaves out: the source server's identity and its runtime files.
_LEFT_OUT = ("auto.cnf",)
_LEFT_OUT_SUFFIXES = (".pid", ".sock", ".sock.lock")


def copy(src: Path, dst: Path) -> int:
    """Copy ``src`` into the new folder ``dst`` file by file, reading only: folders and
    regular files, none of them a link (a symlink, a hard link to another file, a
    device or FIFO is refused, naming it; nothing is followed out of the folder), after
    checking that ``dst``'s filesystem has room for it. Bytes copied."""
    _room_for(src, dst.parent)
    return _copy(src, dst)


def _room_for(src: Path, folder: Path) -> None:
    """Refuse before a byte is copied when ``folder``'s filesystem cannot hold ``src``
    (a datadir of hundreds of gigabytes, copied into a sandbox)."""
    need = sum(p.lstat().st_size for p in src.rglob("*") if p.is_file())
    st = os.statvfs(folder)
    free = st.f_bavail * st.f_frsize
    if need > free:
        raise InputError(f"{src}: {need / (1 << 30):.1f} GiB to copy, and {folder}'s "
                         f"filesystem has {free / (1 << 30):.1f} GiB free (HARNESS_SANDBOXES "
                         "puts the sandboxes elsewhere)")


def _copy(src: Path, dst: Path) -> int:
    dst.mkdir(mode=0o700)
    total = 0
    with os.scandir(src) as entries:
        for e in sorted(entries, key=lambda x: x.name):
            if e.name in _LEFT_OUT or e.name.endswith(_LEFT_OUT_SUFFIXES):
                continue
            st = e.stat(follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                total += _copy(Path(e.path), dst / e.name)
            elif stat.S_ISREG(st.st_mode) and st.st_nlink == 1:
                total += _copy_file(Path(e.path), dst / e.name)
            else:
                raise InputError(_refusal(e.path, st))
    return total


def _copy_file(src: Path, dst: Path) -> int:
    """One regular file, opened without following a link or blocking on a FIFO and
    checked again once open (it may have changed since it was listed)."""
    try:
        f, st = inputfile.open_regular(src, follow=False)
    except OSError as e:
        st = src.lstat()
        plain = stat.S_ISREG(st.st_mode) and st.st_nlink == 1
        raise InputError(f"{src}: {e.strerror}" if plain else _refusal(src, st)) from None
    with f:
        if st.st_nlink != 1:
            raise InputError(_refusal(src, st))
        with os.fdopen(os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as out:
            shutil.copyfileobj(f, out, 1 << 20)
    return st.st_size
