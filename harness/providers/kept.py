"""Sandboxes kept with ``harness run --keep``: listed, stopped and removed by
``harness sandboxes``. Only directories with the harness's ownership marker that say
they were kept are touched; ``make clean-sandboxes`` leaves them alone.

Each kept sandbox records who kept it (the login behind sudo, else the account): the
list shows every owner's, ``stop``/``remove --all`` touch only one's own unless asked
(``--any-owner``), and the cache's budget prunes only one's own stopped ones. A stop or
a removal holds the sandbox's lock, so two processes never remove one at once.
"""
from __future__ import annotations

import json
import os
import signal
import time
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

from .. import locks, proc
from ..errors import InputError, UnavailableError
from ..jsonvalue import JsonDict
from ..paths import first_mtime, sandbox_dir
from ..server import osuser
from ..server.cache import Entry
from .local import OWNER_FILE, STOP_TIMEOUT_S, is_owned, mysqld_pid, remove_sandbox_dir

who = osuser.login_name  # who keeps a sandbox


@dataclass(frozen=True)
class Box:
    """A sandbox ``harness sandboxes`` lists: kept with ``--keep``, or an orphan a
    killed harness left. ``connect``: how to connect (an orphan: its size and how to
    remove it)."""

    name: str
    owner: str
    build: str | None
    port: int | None
    state: str  # running, stopped; orphan, orphan with mysqld running
    pid: int | None
    since: str | None
    run_set: str | None
    connect: str
    dir: Path

    def to_json(self) -> JsonDict:
        """As ``sandboxes list`` prints it (``--json``: all of it)."""
        return {**asdict(self), "dir": str(self.dir)}


def kept_sandboxes() -> list[Box]:
    """Every kept sandbox: name, build, port, state (running or stopped), since, run set
    and how to connect."""
    root = sandbox_dir()
    out = []
    for d in sorted(root.iterdir()) if root.exists() else []:
        owner = _owner(d)
        if owner is None or "kept" not in owner:
            continue
        k = owner["kept"]
        pid = mysqld_pid(d)
        out.append(Box(d.name, k.get("by") or "?", owner.get("build"), k.get("port"),
                       "running" if pid else "stopped", pid, k.get("since"),
                       k.get("run_set"), str(d / "use"), d))
    return out


def orphans() -> list[Box]:
    """Sandboxes a killed harness left (never kept, its process gone): name, build,
    state, since, size and folder; ``remove_stale`` removes them, as the next run does."""
    root = sandbox_dir()
    out = []
    for d in sorted(root.iterdir()) if root.exists() else []:
        owner = _owner(d)
        if owner is None or "kept" in owner or proc.pid_alive(int(owner.get("pid", 0))):
            continue
        pid = mysqld_pid(d)
        out.append(Box(d.name, f"harness {owner.get('pid')}, gone", owner.get("build"), None,
                       "orphan, mysqld running" if pid else "orphan", pid,
                       owner.get("created_at"), None,
                       f"{_size(d) / 2**20:.0f} MB: 'harness sandboxes remove --orphans'",
                       d))
    return out


def _owner(d: Path) -> dict[str, Any] | None:
    if not is_owned(d):
        return None
    data = json.loads((d / OWNER_FILE).read_text())
    return data if isinstance(data, dict) else None


def find(names: list[str], every: bool, any_owner: bool = False) -> list[Box]:
    """The kept sandboxes named (or all of one's own; every owner's with ``any_owner``),
    or InputError naming the unknown and those another owner kept."""
    have = {s.name: s for s in kept_sandboxes()}
    me = who()
    if every:
        return [s for s in have.values() if any_owner or s.owner == me]
    _all_known(names, have)
    theirs = [f"{n} ({have[n].owner})" for n in names
              if have[n].owner != me and not any_owner]
    if theirs:
        raise InputError(f"kept by another owner: {', '.join(theirs)}; --any-owner to "
                         "touch them anyway")
    return [have[n] for n in names]


def _all_known(names: list[str], have: dict[str, Box]) -> None:
    """InputError naming the sandboxes of ``names`` not kept."""
    unknown = [n for n in names if n not in have]
    if unknown:
        raise UnavailableError(f"no kept sandbox {', '.join(unknown)} (kept: "
                               f"{', '.join(have) or 'none'}; see harness sandboxes list)")


def _lock(box: Box) -> Path:
    return locks.cache_lock(f"sandbox-{box.name}")


def stop(box: Box) -> bool:
    """A clean shutdown of a kept sandbox's mysqld (SIGTERM; SIGKILL after the stop
    timeout); its datadir stays. False when it was not running."""
    with locks.held(_lock(box), f"stopping sandbox {box.name}"):
        return _stop(box)


def _stop(box: Box) -> bool:
    pid = mysqld_pid(box.dir)
    if pid is None:
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while mysqld_pid(box.dir) == pid and time.monotonic() < deadline:
        time.sleep(0.2)
    if mysqld_pid(box.dir) == pid:
        os.kill(pid, signal.SIGKILL)
    return True


def remove(box: Box) -> None:
    """Stop it and remove its directory (datadir included)."""
    with locks.held(_lock(box), f"removing sandbox {box.name}"):
        _remove(box)


def _remove(box: Box) -> None:
    _stop(box)
    d = box.dir
    if _owner(d) is None:  # checked again right before the delete
        raise InputError(f"refusing to remove {d}: no harness ownership marker "
                         "(removed meanwhile?)")
    remove_sandbox_dir(d)


def _last_used(d: Path) -> float:
    """When a stopped sandbox last ran: its error log's last line, else its marker."""
    return first_mtime(d / "log" / "error.log", d / "error.log", d / OWNER_FILE)


def _size(d: Path) -> int:
    return sum(f.stat(follow_symlinks=False).st_size for f in d.rglob("*")
               if f.is_file() and not f.is_symlink())


def _remove_if_stopped(box: Box) -> bool:
    fd = locks.try_hold(_lock(box))
    if fd is None:
        return False
    try:
        if mysqld_pid(box.dir) is not None:  # started again meanwhile
            return False
        _remove(box)
        return True
    finally:
        os.close(fd)


def prunable() -> list[Entry]:
    """This owner's stopped kept sandboxes, for the cache's budget."""
    me = who()
    return [Entry("sandbox", b.name, b.dir, _size(b.dir), _last_used(b.dir),
                  partial(_remove_if_stopped, b))
            for b in kept_sandboxes() if b.state == "stopped" and b.owner == me]
