"""Callgrind as the counter: mysqld runs under valgrind's callgrind, and each client
connection is one window.

``--zero-before=acl_authenticate*`` zeroes the costs when a connection logs in and
``--dump-before=end_connection*`` writes them when it ends; with
``--separate-threads=yes`` a dump holds the thread that triggered it, so a window is
exactly one connection's instructions, whatever the server's other threads do (the
wall time under callgrind swings; the count does not). ``callgrind_control``/vgdb is
not used: it froze mysqld for minutes with threads blocked in syscalls.

valgrind runs one thread at a time and ~8-30x slower: only the counts mean anything.
It counts user-space instructions: not kernel time, cache misses or waits.

The dumps are written by mysqld's account in the sandbox's log folder; the harness
reads them without following a link and copies one into its own folder before
``callgrind_annotate`` (the field's own reader of the format) reads functions from it.
"""
from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from .. import proc
from ..errors import ProviderError
from ..server import mycnf, osuser
from ..server.catalog import Build
from ..server.mycnf import Value


class Runnable(Protocol):
    """What a counter needs of a sandbox: to run mysqld under a launcher, its pid."""

    def run_under(self, launcher: Callable[[Path], list[str]]) -> Path: ...

    @property
    def pid(self) -> int | None: ...


NAME = "callgrind"
FOLDER = "callgrind"  # in the sandbox's log folder (mysqld's account writes it)
DUMP_RE = re.compile(r"^callgrind\.out\.(\d+)\.(\d+)-(\d+)$")
WAIT_S = 120.0


def launcher(out: Path) -> list[str]:
    """valgrind's argv before mysqld's: a dump per client connection, in ``out``."""
    return [proc.which("valgrind"), "--tool=callgrind", "--vgdb=no", "--trace-children=yes",
            "--separate-threads=yes", "--zero-before=acl_authenticate*",
            "--dump-before=end_connection*", "--dump-instr=no", "--compress-strings=no",
            "--compress-pos=no", f"--callgrind-out-file={out}/callgrind.out.%p"]


def version() -> str:
    """valgrind's own version line (valgrind-3.19.0)."""
    return proc.run([proc.which("valgrind"), "--version"], timeout=30,
                    what="valgrind --version").stdout.strip()


def server_options(build: Build, pools: list[Value | None]) -> dict[str, Value]:
    """What mysqld needs to run under valgrind, where the build has the option:
    io_uring off (valgrind 3.19 does not follow it: MariaDB 10.11 hung at startup),
    and the buffer pool's reserved address space cut to the largest pool the sides
    use (MariaDB 10.11.12+ reserves innodb_buffer_pool_size_max, 8 TB by default,
    which valgrind cannot map)."""
    known = mycnf.known_options(build)
    out: dict[str, Value] = {}
    if build.flavor == "mariadb" and build.version_tuple >= (10, 6) and \
            "innodb_use_native_aio" in known:
        out["innodb_use_native_aio"] = "OFF"
    if "innodb_buffer_pool_size_max" in known:
        sizes = [mycnf_size(p) for p in pools if p is not None]
        out["innodb_buffer_pool_size_max"] = max([128 << 20, *sizes])
    return out


def mycnf_size(v: Value) -> int:
    """A size as my.cnf writes it (128M, 1G, 134217728)."""
    text = str(v).strip().upper()
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}.get(text[-1:], 1)
    return int(float(text[:-1] if scale > 1 else text) * scale)


@dataclass(frozen=True)
class Dump:
    """One dump: a connection's instructions (part: callgrind's dump number)."""

    path: Path
    part: int
    thread: int
    instructions: int


def dumps(folder: Path) -> dict[Path, int]:
    """The dump files in ``folder`` by path, with their part numbers."""
    found = {}
    for p in folder.iterdir():
        m = DUMP_RE.match(p.name)
        if m:
            found[p] = int(m.group(2))
    return found


def read_dump(path: Path) -> Dump | None:
    """A whole dump's count: its ``summary:``, the part's cost, which callgrind_annotate
    calls the program's totals (None while callgrind still writes it: its ``totals:``
    line, the file's last, not there yet)."""
    text = osuser.read_mysqld_file(path, limit=64 << 20)
    if text is None:
        return None
    head: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key in ("part", "thread", "summary", "totals"):
            head[key] = value.strip()
    if "totals" not in head or "summary" not in head:
        return None
    return Dump(path, int(head.get("part", "0")), int(head.get("thread", "0")),
                int(head["summary"]))


def next_dump(folder: Path, seen: set[Path], alive: object = None,
              timeout: float = WAIT_S) -> Dump:
    """The next whole dump not in ``seen`` (added to it): the one a connection that just
    ended left. ProviderError when none comes in ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for p in sorted(set(dumps(folder)) - seen, key=lambda q: dumps(folder)[q]):
            d = read_dump(p)
            if d is not None:
                seen.add(p)
                return d
        time.sleep(0.1)
    raise ProviderError(f"callgrind wrote no dump in {folder} within {timeout:.0f} s of a "
                        "connection's end (is mysqld still running under valgrind?)")


FUNCTION_RE = re.compile(r"^\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)$")


def functions(dump: Path, into: Path) -> dict[str, int]:
    """Inclusive instructions by function of one dump, as callgrind_annotate
    --inclusive=yes counts them, read from a copy in ``into`` (root's folder)."""
    copy = into / dump.name
    if not osuser.copy_mysqld_file(dump, copy):
        return {}
    out = proc.run([proc.which("callgrind_annotate"), "--inclusive=yes", "--threshold=100",
                    str(copy)], timeout=120, what="callgrind_annotate").stdout
    return parse_annotate(out)


def parse_annotate(text: str) -> dict[str, int]:
    """callgrind_annotate's function lines: ``405,661,196 (100.0%)  file:fn [object]``
    (the file left out: ``???`` where the build has no line tables)."""
    found: dict[str, int] = {}
    for line in text.splitlines():
        m = FUNCTION_RE.match(line)
        if not m or m.group(2) == "PROGRAM TOTALS":
            continue
        name = re.sub(r" \[[^\]]*\]$", "", m.group(2))
        name = name.split(":", 1)[1] if ":" in name.split("(", 1)[0] else name
        found[name] = found.get(name, 0) + int(m.group(1).replace(",", ""))
    return found


@dataclass(frozen=True)
class Counted:
    """One connection's count: its instructions and transactions (``dump``: the file
    callgrind left, for its functions; None from a counter that does not attribute)."""

    instructions: int
    transactions: int
    dump: Path | None = None


class Callgrind:
    """The counter a counted comparison drives: mysqld under callgrind from its next
    start, each connection's dump read as it ends, the harness's own set aside."""

    name = NAME
    threads = "the connection thread"

    def __init__(self) -> None:
        self.dirs: dict[str, Path] = {}  # each side's dump folder (one sandbox: the same)
        self.seen: set[Path] = set()
        self.current: Path | None = None

    def version(self) -> str:
        return version()

    def server_options(self, build: Build, pools: list[Value | None]) -> dict[str, Value]:
        return server_options(build, pools)

    def attach(self, side: str, box: Runnable) -> None:
        """From its next start, ``box``'s mysqld runs under callgrind."""
        self.dirs[side] = box.run_under(launcher)

    def share(self, side: str, other: str) -> None:
        """``side`` runs on ``other``'s sandbox (two option sets on one)."""
        self.dirs[side] = self.dirs[other]

    def started(self, side: str, box: Runnable) -> None:
        """After a start: the dumps of the harness's own connections (the ping, the
        lock-down, a read of the values) read and set aside."""
        self.current = self.dirs[side]
        time.sleep(0.5)
        while set(dumps(self.current)) - self.seen:
            next_dump(self.current, self.seen)

    def after_connection(self) -> None:
        """A connection of the harness's own ended (a switch): its dump set aside."""
        assert self.current is not None
        next_dump(self.current, self.seen)

    def count(self, run: Callable[[], int]) -> Counted:
        """``run`` (one client connection; it returns its transactions), counted."""
        assert self.current is not None
        done = run()
        d = next_dump(self.current, self.seen)
        return Counted(d.instructions, done, d.path)

    def functions(self, c: Counted, into: Path) -> dict[str, int]:
        if c.dump is None:
            return {}
        try:
            return functions(c.dump, into)
        finally:
            (into / c.dump.name).unlink(missing_ok=True)
