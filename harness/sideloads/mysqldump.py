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
# Options that write to the server or change its state, and what they do: taken on a
# server the harness owns, refused on one it does not (runner/guard.py).
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
# What a dump may be told besides: which rows and objects it reads and how it writes
# them out. Anything else is refused on every server, for what it would do in the
# client, which the harness runs as root: --plugin-dir with --default-auth loads a
# shared object, --log-error and --debug append to any file, --where splices SQL into
# the dump's own SELECT (INTO OUTFILE), --character-sets-dir reads files, and an option
# this list does not know is not passed on unread.
_DUMP_READS = (
    "single-transaction", "quick", "opt", "compact", "lock-tables", "add-locks",
    "no-data", "no-create-info", "no-create-db", "add-drop-table", "add-drop-database",
    "add-drop-trigger", "extended-insert", "complete-insert", "insert-ignore", "replace",
    "disable-keys", "create-options", "routines", "triggers", "events", "hex-blob",
    "tz-utc", "quote-names", "comments", "dump-date", "order-by-primary", "set-charset",
    "default-character-set", "max-allowed-packet", "net-buffer-length", "no-tablespaces",
    "column-statistics", "ignore-table", "xml", "force", "verbose", "compress",
    "allow-keywords", "set-gtid-purged", "include-master-host-port", "apply-slave-statements",
    "skip-opt", "skip-comments", "skip-lock-tables", "skip-add-locks", "skip-triggers",
    "skip-extended-insert", "skip-tz-utc", "skip-quote-names", "skip-dump-date",
    "skip-set-charset", "skip-disable-keys", "skip-add-drop-table", "skip-column-statistics",
    "skip-create-options", "skip-quick", "skip-triggers", "skip-routines")
_DUMP_READS_SHORT = "qceEtdnKRfvQClX"
# Short options that take a value (the rest of the cluster is that value).
_DUMP_SHORT_WITH_VALUE = set("hPupSrwTW#")
CONNECTION, REFUSED = "connection", "refused"


def mysqldump_flag(option: str) -> tuple[str | None, str | None]:
    """What ``option`` is to mysqldump: (``"connection"`` when it picks the server or
    account, ``"refused"`` when it is none of the reading and formatting options a dump
    may take, else None; what it writes to the server, or why it is refused, or None).
    Long options may be abbreviated or carry ``loose-``, and short ones may be
    clustered (``-Fx``): mysqldump accepts all of them. A word that is no option is
    refused too (mysqldump would take it for a table)."""
    if option.startswith("--"):
        return _long_flag(option[2:].split("=", 1)[0])
    if option.startswith("-") and len(option) > 1:
        return _short_flags(option[1:])
    return REFUSED, f"{option!r} is not an option (a table is named in tables:)"


def _long_flag(name: str) -> tuple[str | None, str | None]:
    """mysqldump_flag of ``--name``: any unique prefix of a name mysqldump knows,
    ``loose-``/``enable-`` taken off."""
    name = name.lower().replace("_", "-").removeprefix("loose-").removeprefix("enable-")
    if len(name) >= 2 and any(c.startswith(name) for c in _DUMP_CONNECTION):
        return CONNECTION, None
    writes = [w for k, w in _DUMP_WRITES.items() if k.startswith(name) and len(name) >= 3]
    if writes:
        return None, writes[0]
    if _reads(name):
        return None, None
    return REFUSED, (f"--{name} is not one of the reading and formatting options a dump "
                     "side load may take (it could load code into, or write files from, "
                     "the client the harness runs): " + " ".join(
                         f"--{x}" for x in _DUMP_READS if not x.startswith("skip-")))


def _reads(name: str) -> bool:
    """A reading or formatting option, or one turning a write off (``skip-``)."""
    plain = name.removeprefix("skip-").removeprefix("disable-")
    return name in _DUMP_READS or plain in _DUMP_READS or (plain != name
                                                           and plain in _DUMP_WRITES)


def _short_flags(cluster: str) -> tuple[str | None, str | None]:
    """mysqldump_flag of ``-xyz``: each letter up to the first that takes a value (the
    rest of the cluster is that value)."""
    for ch in cluster:
        if ch in _DUMP_CONNECTION_SHORT:
            return CONNECTION, None
        if ch in _DUMP_WRITES_SHORT:
            return None, _DUMP_WRITES[_DUMP_WRITES_SHORT[ch]]
        if ch not in _DUMP_READS_SHORT:
            return REFUSED, (f"-{ch} is not one of the reading and formatting options a "
                             f"dump side load may take (short ones: -{_DUMP_READS_SHORT})")
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
        bad = [o for o in v if mysqldump_flag(o)[0] == CONNECTION]
        if bad:
            raise ValueError(f"connection options are set by the harness (and 'output' names "
                             f"where the dump goes): {', '.join(bad)}")
        refused = [why for o in v if (k := mysqldump_flag(o))[0] == REFUSED and (why := k[1])]
        if refused:
            raise ValueError(refused[0])
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
