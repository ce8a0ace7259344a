"""Dataset snapshots: a pristine datadir kept after the first prepare.

Keyed by the server build, the dataset specs and the options that shape files on disk
(page size, system tablespace, file-per-table, row format, character set ...): any
later run with the same key starts from a copy of it instead of preparing again, the
"freshly restored from a zero-state backup" state. The copy is taken after a clean
shutdown, so it needs no crash recovery. Snapshots live under
``$HARNESS_CACHE/snapshots/<key>/`` and are written to a temporary name and renamed,
so two harness processes saving the same key at once both end with one good copy.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .catalog import Build
from .mycnf import norm
from .paths import cache_dir

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
    digest = hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:16]
    return f"{build.name}-{digest}"


def _identity(path: Path) -> list[Any]:
    """Which file it is, and which version of it (as make tells: size and mtime); a
    directory (a --tab dump), the same of each file in it."""
    try:
        if path.is_dir():
            return [str(path.resolve()), *[[f.name, f.stat().st_size, f.stat().st_mtime_ns]
                                           for f in sorted(path.iterdir()) if f.is_file()]]
        st = path.stat()
    except OSError:
        return [str(path)]
    return [str(path.resolve()), st.st_size, st.st_mtime_ns]


def find(key: str) -> Path | None:
    """The snapshot's datadir copy, or None."""
    d = snapshot_root() / key
    return d / "data" if (d / "meta.json").is_file() and (d / "data").is_dir() else None


def save(key: str, datadir: Path, meta: dict[str, Any]) -> tuple[Path, float]:
    """Copy a cleanly shut down ``datadir`` as snapshot ``key``; (its path, seconds)."""
    t0 = time.monotonic()
    root = snapshot_root()
    root.mkdir(parents=True, exist_ok=True)
    final = root / key
    tmp = root / f".{key}.{os.getpid()}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        copy_datadir(datadir, tmp / "data")
        size = sum(f.stat().st_size for f in (tmp / "data").rglob("*") if f.is_file())
        (tmp / "meta.json").write_text(json.dumps(
            {**meta, "key": key, "bytes": size,
             "created_at": datetime.now(UTC).isoformat(timespec="seconds")}, indent=2))
        try:
            os.rename(tmp, final)
        except OSError:  # another process saved the same key first: keep theirs
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final / "data", time.monotonic() - t0


def copy_datadir(src: Path, dst: Path) -> None:
    """Copy a datadir (sparse files and all); skip pid files and sockets."""
    def ignore(_d: str, names: list[str]) -> list[str]:
        return [n for n in names if n.endswith((".pid", ".sock", ".sock.lock"))]
    shutil.copytree(src, dst, ignore=ignore, symlinks=True)


def listing() -> list[dict[str, Any]]:
    out = []
    root = snapshot_root()
    for d in sorted(root.iterdir()) if root.exists() else []:
        if (d / "meta.json").is_file():
            out.append(json.loads((d / "meta.json").read_text()) | {"path": str(d)})
    return out


def remove(key: str | None = None) -> list[str]:
    """Remove one snapshot (or every one); the keys removed."""
    gone = []
    for s in listing():
        if key is None or s["key"] == key:
            shutil.rmtree(s["path"], ignore_errors=True)
            gone.append(s["key"])
    return gone
