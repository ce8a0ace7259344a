"""A DBA's my.cnf, read exactly as the target build's mysqld reads it.

A distribution's my.cnf is more than one ``[mysqld]`` section: ``!include`` and
``!includedir`` pull in other files, and mysqld reads several groups (``[server]``,
``[mysqld-5.7]``, MariaDB's ``[mariadb]``, ``[mariadbd-10.11]``, ``[client-server]``
...), which ones depending on the build. Rather than imitate that, the build is asked:
``my_print_defaults`` prints the options of the build's groups one per line, and
``mysqld --print-defaults`` (the server's own reading, on one line) must agree with it,
or the file is refused with both readings. Includes are resolved from the file's folder,
as a DBA who passes ``conf/my.cnf`` expects.

What the reading keeps and what it sets aside is said in notes that are stored with the
run: options the sandbox manages (datadir, socket, port ...), paths of the production
host (moved into the sandbox or set aside: :mod:`hostpaths`), options set twice (the
last counts, as in mysqld), includes that do not exist (mysqld skips them quietly) and
every file an include pulled in.
"""
from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from .. import proc
from ..errors import FindingError, MissingToolError, UnavailableError
from ..inputs import inputfile
from ..jsonvalue import JsonDict
from . import hostpaths
from .catalog import Build
from .mycnf import (
    MANAGED,
    NEVER,
    Value,
    norm,
    option_problem,
    print_defaults,
    printed_defaults,
    taken_as,
)

_INCLUDE = re.compile(r"^\s*!(include|includedir)\s+(.+?)\s*$")
_GROUP = re.compile(r"^\s*\[\s*([^\]]+?)\s*\]")
MAX_FILES = 64  # files the includes of one my.cnf may read, repeats counted
MAX_BYTES = inputfile.MiB  # and their size in all


@dataclass
class OptionFile:
    """What one build's mysqld takes from a my.cnf."""

    path: Path
    build: str
    groups: list[str]
    options: dict[str, Value | None]
    set_aside: dict[str, Value | None] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)  # every file read, the given one first
    notes: list[str] = field(default_factory=list)

    @property
    def host_bound(self) -> dict[str, Value | None]:
        """Of set_aside, the host's paths and listeners (:mod:`hostpaths`; the rest are
        the options the sandbox sets): a sandbox leaves them out, but whether a build
        takes them is still the file's question (cnf check)."""
        return {k: v for k, v in self.set_aside.items() if norm(k) not in MANAGED}

    def to_json(self) -> JsonDict:
        return {"file": str(self.path), "build": self.build, "groups": self.groups,
                "files": self.files, "set_aside": self.set_aside, "notes": self.notes}


def server_groups(build: Build) -> list[str]:
    """The option groups this build's mysqld reads (its ``load_default_groups``)."""
    base = ".".join(build.version.split(".")[:2])
    groups = ["mysqld", "server", f"mysqld-{base}"]
    if build.flavor == "mariadb":
        groups += ["mariadb", f"mariadb-{base}", "client-server", "galera"]
        if build.version_tuple >= (10, 4, 6):
            groups += ["mariadbd", f"mariadbd-{base}"]
    return groups


def _print_defaults_tool(build: Build) -> Path:
    own = build.root / "bin" / "my_print_defaults"
    if build.init_method != "external" and own.exists():
        return own
    found = shutil.which("my_print_defaults")
    if found is None:
        raise MissingToolError(f"my_print_defaults (to read a my.cnf as {build.name} does): "
                               "install mariadb-client-core or a MySQL client package")
    return Path(found)


def read(path: Path, build: Build) -> OptionFile:
    """The options ``build`` takes from ``path``, or InputError naming the file and why.
    For an external server (no binary to ask) my_print_defaults reads the groups of
    its flavor and version alone."""
    path = path.absolute()
    notes: list[str] = []
    files = _files_read(path, notes, _Budget(path))  # before any tool reads the fan-out
    groups = server_groups(build)
    argv: list[str | Path] = [_print_defaults_tool(build), f"--defaults-file={path}", *groups]
    out = proc.run(argv, env=build.env(), cwd=path.parent, timeout=30, check=False,
                   what=f"my_print_defaults for {build.name}")
    if out.returncode != 0:
        raise FindingError(f"{path}: not a my.cnf {build.name} can read: "
                           f"{_said(out.stderr or out.stdout)}")
    pairs = [_pair(line) for line in out.stdout.splitlines() if line.startswith("--")]
    if build.init_method != "external":
        _agree_with_mysqld(path, build, pairs)
    result = OptionFile(path, build.name, groups, {}, files=files, notes=notes)
    _take(result, pairs, build)
    unread = sorted({g for f in result.files for g in _groups_in(Path(f))} - set(groups))
    if unread:
        result.notes.append(f"groups {build.name}'s mysqld does not read: "
                            + ", ".join(f"[{g}]" for g in unread))
    return result


def mysqld_group(path: Path) -> dict[str, Value | None]:
    """The ``[mysqld]`` options of ``path`` before a build is chosen, as the host's
    my_print_defaults reads them (includes followed, within the same budget): what a
    scenario's check and the guard look at. A build's own reading is :func:`read`."""
    path = path.absolute()
    _files_read(path, [], _Budget(path))
    tool = shutil.which("my_print_defaults")
    if tool is None:
        raise MissingToolError("my_print_defaults (to read a my.cnf): install "
                               "mariadb-client-core or a MySQL client package")
    out = proc.run([tool, f"--defaults-file={path}", "mysqld"], cwd=path.parent, timeout=30,
                   check=False, what="my_print_defaults")
    if out.returncode != 0:
        raise FindingError(f"{path}: not a my.cnf: {_said(out.stderr or out.stdout)}")
    return dict(_pair(line) for line in out.stdout.splitlines() if line.startswith("--"))


def _groups_in(path: Path) -> set[str]:
    return {m.group(1) for line in _text(path).splitlines() if (m := _GROUP.match(line))}


def _text(path: Path) -> str:
    """One file of a my.cnf: a regular file under the my.cnf size limit."""
    return inputfile.read_text(path, "my.cnf", errors="replace")


def _pair(line: str) -> tuple[str, Value | None]:
    name, eq, value = line[2:].partition("=")
    return name, value if eq else None


def _agree_with_mysqld(path: Path, build: Build, pairs: list[tuple[str, Value | None]]
                       ) -> None:
    """mysqld's own reading must be the same options in the same order."""
    code, said, err = print_defaults(build, path, cwd=path.parent)
    if code != 0:
        raise FindingError(f"{path}: {build.name}'s mysqld cannot read it: {_said(err)}")
    ours = printed_defaults(pairs)
    if said != ours:
        raise FindingError(f"{path}: my_print_defaults and {build.name}'s mysqld read it "
                           f"differently; mysqld: {said[:300]!r}; my_print_defaults: "
                           f"{ours[:300]!r}")


def _take(result: OptionFile, pairs: list[tuple[str, Value | None]], build: Build) -> None:
    """Options in file order, the last of a repeated one counting; managed ones aside.
    Each is judged as the option the build takes its name for (a prefix, ``enable-``:
    :func:`mycnf.taken_as`), so no spelling gets past what the sandbox manages."""
    seen: dict[str, tuple[str, Value | None]] = {}
    for name, value in pairs:
        why = option_problem(name, value)
        if why:
            raise FindingError(f"{_holding(result, name)}: {why}")
        key = taken_as(build, name)
        if key in seen and seen[key][1] != value:
            result.notes.append(f"{name} is set more than once; the last ({value}) counts, "
                                f"as in mysqld (before: {seen[key][0]} = {seen[key][1]})")
        seen[key] = (name, value)
    for key, (name, value) in seen.items():
        if key in MANAGED or key in NEVER:
            result.set_aside[name] = value
            shown = name if value is None else f"{name} = {value}"
            result.notes.append(f"{shown}: set aside, " + (
                f"never given to a sandbox: {NEVER[key]}" if key in NEVER
                else "the sandbox sets it" + ("" if key == norm(name) else f" ({key})")))
        else:
            _place(result, name, value, key)
    result.notes += [f"read {f} (included)" for f in result.files[1:]]


def _place(result: OptionFile, name: str, value: Value | None, key: str) -> None:
    """One option kept, its host path moved into the sandbox or set aside, or the file
    refused (:mod:`hostpaths`)."""
    placed = hostpaths.place(name, value, key)
    if placed.refused:
        raise FindingError(f"{_holding(result, name)}: {placed.refused}")
    if placed.note:
        result.notes.append(placed.note)
    if placed.set_aside:
        result.set_aside[name] = value
    else:
        result.options[name] = placed.value


def _holding(result: OptionFile, name: str) -> str:
    """The file of the my.cnf that sets ``name`` (an included one, named as well), for
    a message; the given file when none says it plainly."""
    line = re.compile(rf"\s*{re.escape(name)}\s*(=|$)")
    for f in result.files:
        if any(line.match(ln) for ln in _text(Path(f)).splitlines()):
            return f if f == str(result.path) else f"{f} (included by {result.path})"
    return str(result.path)


@dataclass
class _Budget:
    """How much a my.cnf's includes may pull in: mysqld would read a folder that includes
    itself (or a fan-out of a few files per level, ten levels deep) thousands of times
    over, and so would my_print_defaults; the reading stops first and says why."""

    top: Path
    files: int = 0
    bytes: int = 0

    def take(self, path: Path, size: int) -> None:
        self.files += 1
        self.bytes += size
        if self.files > MAX_FILES:
            raise FindingError(f"{self.top}: the includes read more than {MAX_FILES} files "
                               f"(a fan-out of includes; the last: {path})")
        if self.bytes > MAX_BYTES:
            raise FindingError(f"{self.top}: the includes read more than "
                               f"{MAX_BYTES >> 20} MiB in all (the last: {path})")


def _files_read(path: Path, notes: list[str], budget: _Budget, base: Path | None = None,
                depth: int = 0) -> list[str]:
    """``path`` and every file its includes pull in, in reading order; a relative
    include is relative to ``base``, the folder mysqld runs in (the given file's). An
    include that does not exist is skipped by mysqld without a word; here it is an
    error, because a my.cnf copied from another machine would then run without part of
    itself. Each file is read once per include, as mysqld does, within ``budget``."""
    base = base or path.parent
    if depth > 10:
        raise FindingError(f"{path}: includes nest deeper than 10 files")
    text = _text(path)
    budget.take(path, len(text))
    files = [str(path)]
    for n, line in enumerate(text.splitlines(), 1):
        m = _INCLUDE.match(line)
        if not m:
            continue
        target = base / m.group(2)  # an absolute target replaces the folder
        if m.group(1) == "include":
            if not target.exists():
                raise UnavailableError(f"{path}, line {n}: !include {m.group(2)}: no such file "
                                       "(mysqld would skip it quietly; remove the line or copy "
                                       "the file)")
            files += _files_read(target, notes, budget, base, depth + 1)
            continue
        if not target.is_dir():
            raise UnavailableError(f"{path}, line {n}: !includedir {m.group(2)}: no such folder")
        # !includedir: mysqld reads *.cnf there, in name order, and nothing else
        for f in sorted(target.iterdir()):
            if f.suffix == ".cnf":  # a FIFO or a folder so named: refused, as a file
                files += _files_read(f, notes, budget, base, depth + 1)
            else:
                notes.append(f"not read: {f} (mysqld reads only *.cnf files of "
                             f"!includedir {m.group(2)})")
    return files


def _said(text: str) -> str:
    """What a tool said about a file it could not read, on one line."""
    lines = [x.strip() for x in text.strip().splitlines() if x.strip()]
    return " / ".join(lines)[:400] if lines else "(no message)"
