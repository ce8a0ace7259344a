"""Dataset snapshots: a pristine datadir kept after the first prepare (and each build's
freshly initialised datadir, kept after its first sandbox's initialisation).

Keyed by the server build, the dataset specs and the options that shape files on disk
(page size, system tablespace, file-per-table, row format, character set ...): any
later run with the same key starts from a copy of it instead of preparing again, the
"freshly restored from a zero-state backup" state. The copy is taken after a clean
shutdown, so it needs no crash recovery. Snapshots live under
``$HARNESS_CACHE/snapshots/<key>/`` and are written to a temporary name and renamed
under the key's lock (:mod:`harness.locks`): two harness processes saving the same key
at once end with one good copy, and a save killed half way leaves a temporary folder
that the next save of that key removes. A restore holds the key's lock shared, so a
prune or ``snapshots remove`` never deletes a snapshot while it is being copied.

The cache has a size budget (:mod:`harness.server.cache`): past it, snapshots and the
stopped sandboxes one kept with ``--keep`` are pruned least recently used first.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from .. import locks
from ..errors import InputError
from ..paths import cache_dir, first_mtime
from . import datadir
from .cache import Entry
from .catalog import Build
from .mycnf import norm

USED = "used"  # touched at each restore: its mtime is the snapshot's last use

# Options that change what prepare writes to disk; a snapshot is only reused when they
# match. Everything else (buffer pool, flushing, old_blocks_time ...) may differ.
FORMAT_OPTIONS = frozenset({
    "innodb_page_size", "innodb_data_file_path", "innodb_file_per_table",
    "innodb_file_format", "innodb_default_row_format", "innodb_undo_tablespaces",
    "innodb_checksum_algorithm", "lower_case_table_names", "character_set_server",
    "collation_server", "innodb_large_prefix", "default_storage_engine",
    "innodb_compression_default",
})


def snapshot_root() -> Path:
    return Path(os.environ.get("HARNESS_SNAPSHOTS", cache_dir() / "snapshots"))


def snapshot_key(build: Build, datasets: Iterable[Any], options: Mapping[str, Any],
                 prepare_options: Mapping[str, Any] | None = None) -> str:
    fmt = {norm(k): str(v) for k, v in options.items() if norm(k) in FORMAT_OPTIONS}
    doc: dict[str, Any] = {"build": build.name, "version": build.version_string,
                           "mysqld": str(build.mysqld),
                           "datasets": [d.model_dump() for d in datasets],
                           "format_options": dict(sorted(fmt.items()))}
    files = {f"{d.database}.{field}": _identity(d.path_of(name))
             for d in datasets for field, name in d.files().items()}
    if files:  # a dump read from a file: another file (or the same, changed) is another
        doc["files"] = files
    if prepare_options:  # they shape what prepare leaves on disk (page fill, buffers)
        doc["prepare_mysqld"] = {norm(k): str(v) for k, v in sorted(prepare_options.items())}
    return f"{build.name}-{_digest(doc)}"


def init_key(build: Build) -> str:
    """The key of ``build``'s freshly initialised datadir (its init command run with
    ``--no-defaults``: no option of a scenario shapes it), which later sandboxes of the
    build copy instead of initialising again (MySQL 8.0 and later spend seconds of CPU on
    ``--initialize``)."""
    doc = {"build": build.name, "version": build.version_string, "mysqld": str(build.mysqld),
           "init": build.init_argv("<datadir>", "<tmpdir>", user="<user>")}
    return f"{build.name}-init-{_digest(doc)}"


def _digest(doc: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:16]


def _identity(path: Path) -> list[Any]:
    """Which file it is, and which version of it (as make tells: size and mtime); a
    directory (a --tab dump, a datadir), the same of each file under it."""
    try:
        if path.is_dir():
            return [str(path.resolve()), *[[str(f.relative_to(path)), st.st_size,
                                            st.st_mtime_ns]
                                           for f in sorted(path.rglob("*"))
                                           if f.is_file() and (st := f.stat())]]
        st = path.stat()
    except OSError:
        return [str(path)]
    return [str(path.resolve()), st.st_size, st.st_mtime_ns]


def find(key: str) -> Path | None:
    """The snapshot's datadir copy, or None."""
    d = snapshot_root() / key
    return d / "data" if (d / "meta.json").is_file() and (d / "data").is_dir() else None


def _lock(key: str) -> Path:
    return locks.cache_lock(f"snapshot-{key}")


def save(key: str, datadir: Path, meta: dict[str, Any],
         say: Callable[[str], None] | None = locks.to_stderr) -> tuple[Path, float]:
    """Copy a cleanly shut down ``datadir`` as snapshot ``key``; (its path, seconds).
    A key another process saved meanwhile is kept as it is. (The caller prunes the cache
    to its budget: :func:`harness.providers.cache.prune`.)"""
    t0 = time.monotonic()
    root = snapshot_root()
    root.mkdir(parents=True, exist_ok=True)
    final = root / key
    with locks.held(_lock(key), f"saving snapshot {key}", say=say):
        for stale in root.glob(f".{key}.*.tmp"):  # a save killed half way
            shutil.rmtree(stale, ignore_errors=True)
        if find(key) is None:
            shutil.rmtree(final, ignore_errors=True)  # half removed: no meta.json
            _save_as(key, datadir, meta, root / f".{key}.{os.getpid()}.tmp", final)
    return final / "data", time.monotonic() - t0


def _save_as(key: str, datadir: Path, meta: dict[str, Any], tmp: Path, final: Path) -> None:
    try:
        copy_datadir(datadir, tmp / "data")
        size = sum(f.stat().st_size for f in (tmp / "data").rglob("*") if f.is_file())
        # meta.json last: a folder without it is not a snapshot
        (tmp / "meta.json").write_text(json.dumps(
            {**meta, "key": key, "bytes": size,
             "created_at": datetime.now(UTC).isoformat(timespec="seconds")}, indent=2))
        os.rename(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def key_of(path: Path) -> str | None:
    """The key of a snapshot's datadir copy (``<root>/<key>/data``), or None for any
    other folder."""
    if path.name == "data" and path.parent.parent == snapshot_root():
        return path.parent.name
    return None


@contextmanager
def restoring(src: Path,
              say: Callable[[str], None] | None = locks.to_stderr) -> Iterator[Path]:
    """Hold snapshot ``src`` (a datadir copy :func:`find` gave) against a prune or a
    remove while it is copied, and mark it used; any other folder passes as it is."""
    key = key_of(src)
    if key is None:
        yield src
        return
    with locks.held(_lock(key), f"restoring snapshot {key}", shared=True, say=say):
        if find(key) is None:
            raise InputError(f"snapshot {key} was removed from {snapshot_root()} before "
                             "it could be restored")
        (src.parent / USED).touch()
        yield src


def copy_in(src: Path, dst: Path) -> None:
    """A datadir into a new sandbox: a snapshot as it was saved; any other folder (a
    datadir the harness did not make) file by file, refusing links (datadir.copy)."""
    if key_of(src) is None:
        datadir.copy(src, dst)
    else:
        copy_datadir(src, dst)


def copy_datadir(src: Path, dst: Path) -> None:
    """Copy a datadir (sparse files and all); skip pid files and sockets."""
    def ignore(_d: str, names: list[str]) -> list[str]:
        return [n for n in names if n.endswith((".pid", ".sock", ".sock.lock"))]
    shutil.copytree(src, dst, ignore=ignore, symlinks=True)


def listing() -> list[dict[str, Any]]:
    """Every snapshot's meta.json, with its path and when it was last used."""
    out = []
    root = snapshot_root()
    for d in sorted(root.iterdir()) if root.exists() else []:
        if (d / "meta.json").is_file():
            out.append(json.loads((d / "meta.json").read_text())
                       | {"path": str(d), "last_used": _last_used(d)})
    return out


def _last_used(d: Path) -> float:
    return first_mtime(d / USED, d / "meta.json")


def _remove_unused(path: Path, key: str) -> bool:
    """Remove snapshot ``key`` unless a process is restoring or saving it now."""
    fd = locks.try_hold(_lock(key))
    if fd is None:
        return False
    try:
        (path / "meta.json").unlink(missing_ok=True)  # no longer a snapshot, then gone
        shutil.rmtree(path, ignore_errors=True)
    finally:
        os.close(fd)
    return True


def remove(key: str | None = None) -> tuple[list[str], list[str]]:
    """Remove one snapshot (or every one); (the keys removed, those in use and kept)."""
    gone: list[str] = []
    busy: list[str] = []
    for s in listing():
        if key is None or s["key"] == key:
            (gone if _remove_unused(Path(s["path"]), s["key"]) else busy).append(s["key"])
    return gone, busy


def cache_entries() -> list[Entry]:
    """The snapshots as the cache's budget counts them (:mod:`harness.server.cache`)."""
    return [Entry("snapshot", s["key"], Path(s["path"]), int(s.get("bytes", 0)),
                  s["last_used"], partial(_remove_unused, Path(s["path"]), s["key"]))
            for s in listing()]
