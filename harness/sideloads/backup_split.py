"""``kind: backup_split``: a backup stream cut into chunk files, as an S3 multipart
upload stages one (the second published experiment's side load)."""
from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from .. import proc
from ..inputs import inputfile
from ..model import Ident, SideLoadModel


class BackupSplitLoad(SideLoadModel):
    """A dump (or a file) streamed through ``split -b SIZE`` into chunk files, the way an
    S3 multipart upload stages a backup: writes go through the page cache."""

    kind: Literal["backup_split"] = "backup_split"
    runs_programs: ClassVar[bool] = True
    example: ClassVar[dict[str, Any]] = {"database": "sbtest", "chunk_size": "64K",
                                         "start": 1}
    database: Ident | None = None
    tables: list[Ident] = Field(default_factory=list)
    file: str | None = None
    size: str | None = None  # read at most this much of the source (file: /dev/zero)
    chunk_size: str = "64M"
    keep_chunks: bool = False

    def writes(self, base: Path) -> list[str]:
        return []  # a plain mysqldump of the database, or a file on this machine

    @model_validator(mode="after")
    def _source(self) -> BackupSplitLoad:
        if (self.database is None) == (self.file is None):
            raise ValueError("give exactly one source: 'database' (a mysqldump) or 'file'")
        for f in ("chunk_size", "size"):
            v = getattr(self, f)
            if v is not None and not re.fullmatch(r"[1-9][0-9]*[KMG]?", v):
                raise ValueError(f"{f} '{v}': a size like 64M")
        return self

    def dataset_database(self) -> str | None:
        return self.database

    def file_problems(self, base: Path) -> list[str]:
        """A regular file, or a character device (/dev/zero) read up to ``size``."""
        if not self.file:
            return []
        path = base / self.file
        if self.size and path.is_char_device():
            return []
        why = inputfile.problem(path, "backup file")
        hint = " (a device is read only up to a 'size')" if path.is_char_device() else ""
        return [why + hint] if why else []

    def programs(self) -> list[tuple[str, str]]:
        return [("mysqldump", "")] * bool(self.database) + [("split",
                                                              "apt-get install coreutils")]

    def run_pass(self, load: Any, p: Any) -> None:
        staging = load.scratch / f"staging-{self.name}-{p.n}"
        staging.mkdir(parents=True, exist_ok=True)
        # The chunks are a copy of the backup file (root's, 0600 it may be): no other
        # account, mysqld's included, enters the folder that holds them.
        staging.chmod(0o700)
        split = [proc.which("split"), "-b", self.chunk_size, "-d", "-a", "5", "-",
                 str(staging / "part-")]
        cnf = load.defaults_file()
        if self.database:
            src = load.dump_argv(self.database, self.tables, [], cnf)
        elif self.size:
            src = [proc.which("head"), "-c", self.size, str(load.base_dir / str(self.file))]
        else:
            src = [proc.which("cat"), str(load.base_dir / str(self.file))]
        try:
            load.stream(p, [src, split], None, count_rows=bool(self.database))
            chunks = sorted(staging.iterdir())
            p.extra.update(chunks=len(chunks), staging=str(staging))
        finally:
            cnf.unlink(missing_ok=True)
            if not self.keep_chunks:
                shutil.rmtree(staging, ignore_errors=True)


PLUGIN = BackupSplitLoad
