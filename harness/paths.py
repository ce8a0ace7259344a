"""Where the harness keeps things on disk. Every location can be moved by environment."""
from __future__ import annotations

import errno
import json
import os
import shutil
from pathlib import Path
from typing import Any

# The folder that holds the harness package: a git checkout when it runs from source.
CHECKOUT = Path(__file__).resolve().parent.parent


# The workloads 'compare --baseline A.cnf --candidate B.cnf' runs without a scenario: a
# scenario file each, named by its workload (``--workload``).
AB_DIR = CHECKOUT / "scenarios" / "ab"


def ab_workloads() -> tuple[str, ...]:
    """compare's shipped workloads, the default first: the scenario files in AB_DIR."""
    names = sorted(p.stem for p in AB_DIR.glob("*.yaml"))
    return tuple(sorted(names, key=lambda n: n != "oltp_read_write"))


def cache_dir() -> Path:
    """Server builds, downloads and cached option lists (``HARNESS_CACHE``).

    Root's default is /var/cache/mysql-harness, not ~/.cache: mysqld then runs as an
    unprivileged account, which must reach the builds and sandboxes (/root is 0700).
    """
    default = (Path("/var/cache/mysql-harness") if os.geteuid() == 0
               else Path.home() / ".cache" / "mysql-harness")
    return Path(os.environ.get("HARNESS_CACHE", default))


_SECRETS: list[Path] = []


def secrets_dir() -> Path:
    """A folder of this process's own, 0700, for the client option files that hold a
    password (sysbench's, Percona Toolkit's): never the run's folder, which is kept and
    stored as artifacts, even when the harness is killed before it removes them. Removed
    when the process exits."""
    if not _SECRETS:
        import atexit
        import tempfile
        d = Path(tempfile.mkdtemp(prefix="harness-secrets-"))
        atexit.register(shutil.rmtree, d, True)
        _SECRETS.append(d)
    return _SECRETS[0]


def sandbox_dir() -> Path:
    """Parent of every sandbox the harness creates (``HARNESS_SANDBOXES``).

    Kept short on purpose: a unix socket path must stay under 108 bytes.
    """
    return Path(os.environ.get("HARNESS_SANDBOXES", cache_dir() / "sandboxes"))


def results_dir() -> Path:
    """The embedded results store and run artifacts (``HARNESS_RESULTS``), wherever the
    command runs from: the checkout's ``results/`` when the harness runs from one, else
    /var/lib/mysql-harness/results for root and ~/.local/share/mysql-harness/results
    for others."""
    if "HARNESS_RESULTS" in os.environ:
        return Path(os.environ["HARNESS_RESULTS"]).absolute()
    if (CHECKOUT / "pyproject.toml").is_file() and (CHECKOUT / "results").is_dir():
        return CHECKOUT / "results"
    if os.geteuid() == 0:
        return Path("/var/lib/mysql-harness/results")
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "mysql-harness" / "results"


def ssb_data_dir() -> Path:
    """Generated SSB files, one folder per scale and seed (``HARNESS_SSB_DATA``)."""
    return Path(os.environ.get("HARNESS_SSB_DATA", cache_dir() / "ssb"))


def writable_folder(folder: Path) -> None:
    """Make ``folder`` (and its parents) and prove a file can be written in it; the
    OSError that says why not otherwise."""
    folder.mkdir(parents=True, exist_ok=True)
    probe = folder / f".harness-write-test-{os.getpid()}"
    probe.write_bytes(b"")
    probe.unlink()


def first_mtime(*files: Path) -> float:
    """The mtime of the first of ``files`` that exists (links not followed), else 0:
    when a cache entry was last used, by the files that say so."""
    for f in files:
        try:
            return f.lstat().st_mtime
        except OSError:
            continue
    return 0.0


def private_folder(folder: Path) -> None:
    """Make ``folder`` and its missing parents readable by their owner alone (0700): a
    results store and its run folders hold a server's variables, error log and captured
    SQL. Folders that exist keep the modes their owner gave them."""
    missing = [p for p in (folder, *folder.parents) if not p.exists()]
    folder.mkdir(parents=True, exist_ok=True)
    for p in missing:
        p.chmod(0o700)


def private_file(path: Path) -> None:
    """Create ``path`` empty and readable by its owner alone (0600) unless it exists
    (SQLite takes an empty file as a new database, and gives its journal and WAL files
    the database file's mode)."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))
    except FileExistsError:
        pass


def free_mb(folder: Path) -> int | None:
    """The MB free on ``folder``'s filesystem (None: it cannot be told)."""
    try:
        return shutil.disk_usage(folder).free >> 20
    except OSError:
        return None


def disk_full(folder: Path) -> str:
    """A full disk as every message of the harness says it: how much is left, where."""
    return f"disk full: {free_mb(folder) or 0} MB free on {folder}"


def describe_os_error(e: OSError, path: Path | str | None) -> str:
    """An OS error in a DBA's words: a full disk says how full, and where."""
    if e.errno == errno.ENOSPC and path is not None:
        return disk_full(Path(path).parent)
    return e.strerror or str(e)


def write_json(path: Path, data: Any, indent: int | None = None) -> None:
    """``data`` as JSON at ``path``, whole or not at all (a reader, or a harness killed
    mid-write, never sees half a file): written beside it, then renamed over it."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=indent))
    os.replace(tmp, path)
