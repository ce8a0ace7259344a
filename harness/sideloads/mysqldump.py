"""``kind: mysqldump``: a logical backup of a database next to the main workload (the
first published experiment's side load), to /dev/null or a file kept with the run."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator

from ..model import Ident, SideLoadModel

# mysqldump's options that pick the server or the account: the harness's own.
_DUMP_CONNECTION = ("host", "port", "user", "password", "socket", "protocol", "login-path",
                    "defaults-file", "defaults-extra-file", "defaults-group-suffix",
                    "no-defaults", "result-file", "pipe", "shared-memory-base-name")
_DUMP_CONNECTION_SHORT = "hPupSrW"
# Options that write to the server or change its state, and what they do.
_DUMP_WRITES = {
    "delete-master-logs": "purges the server's binary logs",
    "delete-source-logs": "purges the server's binary logs",
    "flush-logs": "rotates the server's logs (FLUSH LOGS)",
    "flush-privileges": "runs FLUSH PRIVILEGES",
    "lock-all-tables": "blocks every writer of the server (FLUSH TABLES WITH READ LOCK)",
    "dump-slave": "stops and restarts replication (STOP SLAVE SQL_THREAD)",
    "dump-replica": "stops and restarts replication (STOP REPLICA SQL_THREAD)",
    "tab": "makes the server write files (SELECT ... INTO OUTFILE)",
    "master-data": "blocks every writer of the server for the binary log position "
                   "(FLUSH TABLES WITH READ LOCK)",
    "source-data": "blocks every writer of the server for the binary log position "
                   "(FLUSH TABLES WITH READ LOCK)",
}
_DUMP_WRITES_SHORT = {"F": "flush-logs", "x": "lock-all-tables", "T": "tab"}
# Short options that take a value (the rest of the cluster is that value).
_DUMP_SHORT_WITH_VALUE = set("hPupSrwTW#")


def mysqldump_flag(option: str) -> tuple[str | None, str | None]:
    """(``"connection"`` when ``option`` picks the server or account, what it writes to
    the server or None). Long options may be abbreviated or carry ``loose-``, and short
    ones may be clustered (``-Fx``): mysqldump accepts all of them."""
    if option.startswith("--"):
        return _long_flag(option[2:].split("=", 1)[0])
    if option.startswith("-"):
        return _short_flags(option[1:])
    return None, None


def _long_flag(name: str) -> tuple[str | None, str | None]:
    """mysqldump_flag of ``--name``: any unique prefix, ``loose-``/``enable-`` taken
    off, ``skip-``/``disable-`` turning something off."""
    name = name.lower().replace("_", "-").removeprefix("loose-")
    if name.startswith(("skip-", "disable-")):
        return None, None  # turns something off
    name = name.removeprefix("enable-")
    if len(name) >= 2 and any(c.startswith(name) for c in _DUMP_CONNECTION):
        return "connection", None
    writes = [w for k, w in _DUMP_WRITES.items() if k.startswith(name) and len(name) >= 3]
    return None, writes[0] if writes else None


def _short_flags(cluster: str) -> tuple[str | None, str | None]:
    """mysqldump_flag of ``-xyz``: each letter up to the first that takes a value (the
    rest of the cluster is that value)."""
    for ch in cluster:
        if ch in _DUMP_CONNECTION_SHORT:
            return "connection", None
        if ch in _DUMP_WRITES_SHORT:
            return None, _DUMP_WRITES[_DUMP_WRITES_SHORT[ch]]
        if ch in _DUMP_SHORT_WITH_VALUE:
            break
    return None, None


class MysqldumpLoad(SideLoadModel):
    """``mysqldump DATABASE [TABLES]``: to /dev/null (the default) or a file."""

    kind: Literal["mysqldump"] = "mysqldump"
    runs_programs: ClassVar[bool] = True
    example: ClassVar[dict[str, Any]] = {"database": "sbtest", "start": 1}
    database: Ident
    tables: list[Ident] = Field(default_factory=list)
    output: str = "/dev/null"  # or a file name (kept under the run's artifacts)
    options: list[str] = Field(default_factory=list)  # extra mysqldump flags

    @field_validator("options")
    @classmethod
    def _no_secrets(cls, v: list[str]) -> list[str]:
        bad = [o for o in v if mysqldump_flag(o)[0] == "connection"]
        if bad:
            raise ValueError(f"connection options are set by the harness (and 'output' names "
                             f"where the dump goes): {', '.join(bad)}")
        return v

    def writes(self, base: Path) -> list[str]:
        return [f"options: {o} - {what}" for o in self.options
                if (what := mysqldump_flag(o)[1])]

    def dataset_database(self) -> str | None:
        return self.database

    def programs(self) -> list[tuple[str, str]]:
        return [("mysqldump", "")]

    def run_pass(self, load: Any, p: Any) -> None:
        cnf = load.defaults_file()
        argv = load.dump_argv(self.database, self.tables, self.options, cnf)
        # One file however many passes: each pass writes beside it and replaces it
        # once complete (a load looping until the main workload ends must not fill
        # the disk with dumps).
        out_path = None if self.output == "/dev/null" else \
            load.ctx.artifacts / f"{self.name}-{Path(self.output).name}"
        partial = None if out_path is None else out_path.with_name(out_path.name + ".partial")
        try:
            with open(partial or os.devnull, "wb") as sink:
                load.stream(p, [argv], sink.write, count_rows=True)
            if out_path is not None and partial is not None:
                os.replace(partial, out_path)
                p.extra["file"] = str(out_path)
        finally:
            cnf.unlink(missing_ok=True)
            if partial is not None:
                partial.unlink(missing_ok=True)


PLUGIN = MysqldumpLoad
