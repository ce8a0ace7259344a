"""The commands over this host's builds and caches: ``servers``, ``sandboxes`` (kept with
``--keep``), ``images``, ``snapshots``; and the two that read a DBA's files for them:
``capture`` (the statements that capture a workload) and ``cnf check``."""
from __future__ import annotations

import argparse
import json
import re
import sys
from datetime import datetime
from pathlib import Path

from .. import formats
from ..errors import InputError
from ..server import cache, catalog, refs
from ..table import print_table

# Each command imports what it alone uses, in its own body: `servers list` loads no
# provider, collector or report.


def cmd_servers(a: argparse.Namespace) -> int:
    if a.servers_cmd == "install":
        def log(m: str) -> None:
            print(m, file=sys.stderr)
        for name in a.names:
            if name.endswith(refs.TARBALL_SUFFIXES):  # a tarball (or a jar) by path
                entry = catalog.install_file(Path(name), log=log,
                                             trust_unpinned=a.trust_unpinned)
            else:
                entry = catalog.get_entry(name)
                catalog.install(entry, force=a.force, log=log,
                                trust_unpinned=a.trust_unpinned)
            b = catalog.detect_build(entry.install_dir, name=entry.name)
            print(f"{entry.name}: {b.flavor} {b.version} in {entry.install_dir}")
        return 0
    rows = []
    for e in catalog.entries():
        rows.append({"name": e.name, "flavor": e.flavor, "version": e.version,
                     "engine": e.engine, "source": e.source, "package": e.package,
                     "sha256": e.sha256, "installed": catalog.is_installed(e),
                     "install_dir": str(e.install_dir),
                     "from": catalog.built_from(e) if catalog.is_installed(e) else None,
                     "default": e.name == catalog.DEFAULT_SERVER, "notes": e.notes})
    if a.json:
        print(json.dumps({"format": formats.SERVERS.marker(), "servers": rows}, indent=2))
    else:
        shown = [dict(r, installed="yes" if r["installed"] else "no",
                      name=f"{r['name']}{' *' if r['default'] else ''}") for r in rows]
        print_table(shown, ["name", "flavor", "version", "engine", "source", "installed",
                            "from"])
        print("\n* the embedded default; source file: installed from a tarball the catalog "
              "does not know, named by its mysqld; from: where an installed build came from "
              "(--json: each entry's package and notes, e.g. which were built to the "
              "vendor's documentation and not run here)")
    return 0


def cmd_sandboxes(a: argparse.Namespace) -> int:
    """harness sandboxes list|stop|remove: the sandboxes 'run --keep' left running."""
    from .. import providers
    from ..providers import kept
    if a.sandboxes_cmd == "list":
        return _list_sandboxes(a)
    if getattr(a, "orphans", False):
        gone = providers.remove_stale(verbose=True)
        print(f"{len(gone)} orphan(s) removed")
        if not (a.names or a.all):
            return 0
    if not a.names and not a.all:
        raise InputError(f"sandboxes {a.sandboxes_cmd}: name the sandboxes, --all, or "
                         "--orphans")
    for box in kept.find(a.names, a.all, a.any_owner):
        if a.sandboxes_cmd == "stop":
            print(f"{box.name}: " + ("stopped" if kept.stop(box) else "was not running"))
        else:
            kept.remove(box)
            print(f"{box.name}: removed")
    return 0


def _list_sandboxes(a: argparse.Namespace) -> int:
    from ..providers import kept
    boxes = kept.kept_sandboxes() + kept.orphans()
    if a.json:
        print(json.dumps({"format": formats.SANDBOXES.marker(),
                          "sandboxes": [b.to_json() for b in boxes]}, indent=2))
    elif boxes:
        print_table([b.to_json() for b in boxes], ["name", "owner", "build", "port", "state",
                                                   "since", "run_set", "connect"])
    else:
        print("no kept sandboxes ('harness run --keep' keeps them)")
    return 0


def cmd_images(a: argparse.Namespace) -> int:
    from ..providers import images
    if a.images_cmd == "build":
        for name in a.server or list(images.DEFAULT_IMAGES):
            catalog.get_entry(name)
            spec = images.build_image(name, log=lambda m: print(m, file=sys.stderr))
            print(f"{name}: {spec.image} ({spec.flavor} {spec.version})")
        return 0
    rows = [{"image": i, "server": s, "version": v} for i, s, v in images.list_images()]
    rows += [{"image": spec.image + " (official, pull by hand)", "server": name,
              "version": spec.version} for name, spec in images.OFFICIAL.items()]
    print_table(rows, ["image", "server", "version"])
    return 0


def cmd_snapshots(a: argparse.Namespace) -> int:
    from ..providers import cache as cache_budget
    from ..server import snapshot
    if a.action == "remove":
        gone, busy = snapshot.remove(a.key)
        print(f"removed {len(gone)} snapshot(s)"
              + (f"; {len(busy)} in use now, kept: {', '.join(busy)}" if busy else ""))
        return 0
    if a.action == "prune":
        budget = cache.parse_size(a.budget, "--budget") if a.budget else None
        done = cache_budget.prune(budget, dry_run=a.dry_run, say=print)
        print(f"{'would remove' if a.dry_run else 'removed'} {len(done.removed)}; the cache's "
              f"snapshots and kept sandboxes {'would ' * a.dry_run}take "
              f"{cache.size_text(done.total)} of a budget of {cache.size_text(done.budget)}")
        return 0
    for s in snapshot.listing():
        print(f"{s['key']}  {s['bytes'] / 1e6:9.1f} MB  {s['created_at']}  "
              f"prepare {s.get('prepare_s', 0):.1f} s  last used "
              f"{datetime.fromtimestamp(s['last_used']):%Y-%m-%d %H:%M}  {s['path']}")
    return 0


def cmd_capture(a: argparse.Namespace) -> int:
    """harness capture: the statements that turn a server's slow log into a capture of
    every statement (and back), for a DBA to run on a server of theirs."""
    from ..collectors.slow_log import capture_statements
    if bool(a.server) == bool(a.version):
        raise InputError("capture: give --server NAME (a catalog server) or --flavor and "
                         "--version of yours")
    if a.server:
        entry = catalog.get_entry(a.server)
        flavor, version = entry.flavor, entry.version
    else:
        flavor, version = a.flavor, a.version
    if not re.fullmatch(r"\d+\.\d+(\.\d+)?", version):
        raise InputError(f"--version {version}: a version such as 8.0.36")
    if any(ord(c) < 32 or ord(c) == 127 for c in a.file):  # a line of SQL of its own
        raise InputError(f"--file {a.file!r}: a file name holds no newline, tab or other "
                         "control character (the SQL printed is pasted into a client)")
    on, off = capture_statements(flavor, catalog.version_tuple(version), a.file)
    print(f"-- {flavor} {version}: capture every statement into {a.file} (relative: in "
          "the datadir)\n" + "".join(s + ";\n" for s in on))
    print("-- connections opened before this keep their own long_query_time: reconnect\n"
          "-- the application (or wait for its pool to cycle), run the workload, then:\n"
          + "".join(s + ";\n" for s in off)
          + "-- and put long_query_time (and the other options) back as they were.\n"
          "-- Replay the file with a scenario's workload: {kind: replay, log: FILE}.")
    return 0


def cmd_cnf(a: argparse.Namespace) -> int:
    """harness cnf check: each option of a my.cnf on each build, the file read as that
    build's mysqld reads it (exit 3: the file does not run unchanged on one of them;
    2: an option no build knows, or bad input)."""
    from ..report.text import print_cnf_report, print_manual, print_new_defaults
    from ..server import cnffile
    servers = [*(a.server or []), *([a.to] if a.to and a.to not in (a.server or []) else [])]
    got = cnffile.check(Path(a.file), servers, a.from_server,
                        lambda m: print(m, file=sys.stderr))
    if a.json:
        print(json.dumps({"format": formats.CNF_CHECK.marker(), **got.to_json()}, indent=2))
    else:
        print_cnf_report(got.path, got.report, a.from_server, got.files, got.memory)
        for name, m in got.moved.items():
            print_new_defaults(name, a.from_server, m)
        for reading in got.manual.values():
            print_manual(got.path, reading)
    for name, said in got.refused.items():
        print(f"{got.path}: {name}'s mysqld does not start with it as judged: {said}",
              file=sys.stderr)
    if a.to in got.manual:
        print(f"no file written for {a.to}: no {a.to} mysqld runs here to take it; the "
              "rows above are the manual's", file=sys.stderr)
    elif a.to:
        _write_translation(a, cnffile.written_for(got, got.names[a.to]))
    _say_remembered(got.path, servers, set(got.manual))
    return got.exit_code


def _say_remembered(path: Path, servers: list[str], manual: set[str]) -> None:
    """What the check leaves for a later compare of the same file: its builds (not
    the manual's series, which no compare runs on)."""
    if ran := [s for s in servers if s not in manual]:
        print(f"remembered: 'harness compare' of {path} with a shipped workload runs on "
              f"{', '.join(ran)} (the builds checked here) unless --server names "
              "another", file=sys.stderr)


def _write_translation(a: argparse.Namespace, text: str) -> None:
    """--to's file: into --output, else after the report on standard output."""
    if a.output:
        Path(a.output).write_text(text)
        print(f"wrote {a.output}: the file as {a.to} takes it", file=sys.stderr)
    elif not a.json:
        print(f"\nthe file as {a.to} takes it:\n")
        print(text, end="")


