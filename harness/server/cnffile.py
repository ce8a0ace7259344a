"""``harness cnf check``'s answer: a my.cnf judged on each build, the file read as that
build's mysqld reads it (:mod:`.optionfile`), each option judged there (:mod:`.cnfcheck`,
values too, by the build's mysqld reading them at once), the defaults that change
against a reference build, and the exit code the command gives."""
from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import FindingError, InputError, UnavailableError
from ..exits import Exit
from ..jsonvalue import JsonDict
from ..paths import results_dir
from . import catalog, cnfcheck, cnfvalues, debroot, manual, optionfile, refs


@dataclass
class FileCheck:
    """A my.cnf on each build: its verdicts, how each build read it, the defaults that
    differ from the reference build's for options it leaves out, and each build's
    refusal that names no option of the file."""

    path: Path
    reference: str | None
    report: dict[str, list[cnfcheck.Verdict]] = field(default_factory=dict)
    files: dict[str, optionfile.OptionFile] = field(default_factory=dict)  # by build
    moved: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)  # as given (a path...): build name
    memory: dict[str, cnfvalues.Memory] = field(default_factory=dict)  # build: its sum
    # a series no binary runs here, read from its manual (mysql-8.4)
    manual: dict[str, manual.ManualReading] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        """8 (a finding) when the file does not run unchanged on a build: an option no
        build knows, a value refused, the file refused, an option renamed or removed;
        else 0."""
        statuses = {v.status for vs in self.report.values() for v in vs}
        wrong = {cnfcheck.UNKNOWN, cnfcheck.INVALID, cnfcheck.RENAMED, *cnfcheck.DROPPED}
        if statuses & wrong or self.refused or any(m.removed for m in self.manual.values()):
            return Exit.FINDING
        return Exit.OK

    def to_json(self) -> JsonDict:
        return {"file": str(self.path), "from": self.reference,
                "servers": {n: [v.to_json() for v in vs] for n, vs in self.report.items()},
                "new_defaults": {n: [_new_default(*x) for x in m]
                                 for n, m in self.moved.items()},
                "read": {n: f.to_json() for n, f in self.files.items()},
                "refused": self.refused,
                "memory": {n: m.to_json() for n, m in self.memory.items()},
                **({"manual": {n: m.to_json() for n, m in self.manual.items()}}
                   if self.manual else {})}


def _new_default(option: str, default: str, reference: str) -> JsonDict:
    return {"option": option, "default": default, "reference_default": reference}


def check(path: Path, servers: list[str], reference: str | None,
          say: Callable[[str], None]) -> FileCheck:
    """``path`` judged on each of ``servers`` (catalog names), against the build
    ``reference`` was written for when given; ``say`` hears what is set aside."""
    if not path.is_file():
        raise UnavailableError(f"{path}: no such file")
    if not servers:
        raise InputError("cnf check: give at least one --server NAME|FILE|DIR (or --basedir "
                         "DIR)")
    ref = refs.build(reference, log=say) if reference else None
    out = FileCheck(path, ref.name if ref else None)
    for given in servers:
        if given in manual.SERIES:  # no binary: the manual's rows
            out.manual[given] = _from_manual(path, manual.SERIES[given], say)
        else:
            _on_build(out, path, given, ref, say)
    ran = [s for s in servers if s not in manual.SERIES]  # a compare runs on a build
    if ran:
        _remember(path, ran)
    return out


def _on_build(out: FileCheck, path: Path, given: str, ref: catalog.Build | None,
              say: Callable[[str], None]) -> None:
    """``path`` judged on the build ``given`` names, into ``out``."""
    build = refs.build(given, log=say)
    name = out.names[given] = build.name
    out.files[name], out.report[name], refusal = _judged(path, build, ref, say)
    if refusal is not None:
        out.refused[name] = refusal.said
    else:  # what the build will hold of each line, and the memory it asks for
        out.report[name], memory = cnfvalues.with_values(build, out.report[name])
        if memory is not None:
            out.memory[name] = memory
    if ref is not None:
        out.moved[name] = cnfcheck.new_defaults(build, ref, out.files[name].options)


# The builds each my.cnf was last checked on (by its bytes: a copy elsewhere is the same
# file), which compare runs two files on when no --server names one.
CHECKED_KEEP = 50


@dataclass(frozen=True)
class Checked:
    """The last ``cnf check`` of a file: the builds as they were named, and when."""

    path: str
    servers: list[str]
    at: str


def _checked_file() -> Path:
    return results_dir() / "cnf-checks.json"


def _remember(path: Path, servers: list[str]) -> None:
    """Keep the builds ``path`` was checked on (the newest CHECKED_KEEP files)."""
    try:
        known = json.loads(_checked_file().read_text())
    except (OSError, ValueError):
        known = {}
    known = {k: v for k, v in known.items() if isinstance(v, dict)}
    known.pop(debroot.sha256(path), None)
    known[debroot.sha256(path)] = {"path": str(path.absolute()), "servers": servers,
                                   "at": datetime.now(UTC).isoformat(timespec="seconds")}
    kept = dict(list(known.items())[-CHECKED_KEEP:])
    try:
        _checked_file().parent.mkdir(parents=True, exist_ok=True)
        tmp = _checked_file().with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(kept, indent=1))
        os.replace(tmp, _checked_file())
    except OSError:
        pass  # a cache it cannot write: compare then goes by the file's groups


def last_checked(paths: list[Path]) -> Checked | None:
    """The last ``cnf check`` of the first of ``paths`` that had one (None: none)."""
    try:
        known = json.loads(_checked_file().read_text())
    except (OSError, ValueError):
        return None
    for p in paths:
        got = known.get(debroot.sha256(p)) if p.is_file() else None
        if isinstance(got, dict) and got.get("servers"):
            return Checked(str(got.get("path", p)), [str(s) for s in got["servers"]],
                           str(got.get("at", "")))
    return None


def _from_manual(path: Path, series: manual.ManualSeries,
                 say: Callable[[str], None]) -> manual.ManualReading:
    """``path`` read as ``series.reader``'s mysqld reads it, held to the manual's rows."""
    read = optionfile.read(path, refs.build(series.reader, log=say))
    return manual.read(series, dict(read.options))


def _judged(path: Path, build: catalog.Build, reference: catalog.Build | None,
            say: Callable[[str], None]) -> tuple[Any, list[cnfcheck.Verdict], Any]:
    """The file as ``build`` reads it, each of its options judged there (values too,
    by its mysqld reading them at once), and its refusal naming no option."""
    read = optionfile.read(path, build)
    if not read.options and read.set_aside:
        say(f"{path} on {build.name}: only options the sandbox sets itself ("
            f"{', '.join(read.set_aside)}): set aside, nothing else to check")
    elif not read.options:
        raise FindingError(f"{path}: no options {build.name} reads (its groups: "
                           f"{', '.join(read.groups)})")
    verdicts = cnfcheck.judge(build, dict(read.options), cnfcheck.installed_knows(build),
                              reference=reference)
    judged, refusal = cnfcheck.values_read(build, verdicts)
    return read, judged + _host_bound_not_taken(read, build), refusal


def _host_bound_not_taken(read: optionfile.OptionFile, build: catalog.Build
                          ) -> list[cnfcheck.Verdict]:
    """The verdicts on the host's paths and listeners the sandbox leaves out, where this
    build does not take the option (a production server of that build would not
    start with the line): the sandbox's reading is not the file's only question."""
    if not read.host_bound:
        return []
    verdicts = cnfcheck.judge(build, dict(read.host_bound), cnfcheck.installed_knows(build))
    return [v for v in verdicts if v.status in cnfcheck.NOT_TAKEN]


def written_for(got: FileCheck, name: str) -> str:
    """The file build ``name`` takes: each option it reads as written kept, a renamed one
    under its new name, and every line it would not start with (or ignores) left as a
    comment saying why; the defaults that moved against ``--from`` said at the end.
    Options of the server's groups only, in one [mysqld] group."""
    lines = [f"# {got.path} as {name} takes it (harness cnf check --to {name}): each line",
             "# changed says why; only the options the server reads ([mysqld], [server],",
             "# its version groups) are here, in one group.", "[mysqld]"]
    for v in got.report[name]:
        taken, written = cnfcheck.line_read(v), cnfcheck.fmt_line(v.option, v.value)
        why = v.note or v.status
        if v.status == cnfcheck.RENAMED and taken is not None:
            lines += [f"# {written}: renamed ({why})", taken]
        elif v.status == cnfcheck.NOT_IN_BUILD:
            lines.append(f"# {written}: not in {name} ({why})")
        elif taken is None or v.status == cnfcheck.IGNORED:
            lines.append(f"# {written}: {v.status} on {name} ({why})")
        else:
            lines.append(taken)
    for option, default, reference_default in got.moved.get(name, []):
        lines.append(f"# not set here: {option} is {default} on {name}, was "
                     f"{reference_default} on {got.reference}")
    return "\n".join(lines) + "\n"
