"""Sandboxes kept with ``harness run --keep``: listed, stopped and removed by
``harness sandboxes``. Only directories with the harness's ownership marker that say
they were kept are touched; ``make clean-sandboxes`` leaves them alone."""
from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..paths import sandbox_dir
from .local import OWNER_FILE, STOP_TIMEOUT_S, is_owned, mysqld_pid, remove_sandbox_dir


def kept_sandboxes() -> list[dict[str, Any]]:
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
        out.append({"name": d.name, "build": owner.get("build"), "port": k.get("port"),
                    "state": "running" if pid else "stopped", "pid": pid,
                    "since": k.get("since"), "run_set": k.get("run_set"),
                    "connect": str(d / "use"), "dir": str(d)})
    return out


def _owner(d: Path) -> dict[str, Any] | None:
    if not is_owned(d):
        return None
    data = json.loads((d / OWNER_FILE).read_text())
    return data if isinstance(data, dict) else None


def find(names: list[str], every: bool) -> list[dict[str, Any]]:
    """The kept sandboxes named (or all of them), or InputError naming the unknown."""
    have = {s["name"]: s for s in kept_sandboxes()}
    if every:
        return list(have.values())
    unknown = [n for n in names if n not in have]
    if unknown:
        raise InputError(f"no kept sandbox {', '.join(unknown)} (kept: "
                         f"{', '.join(have) or 'none'}; see harness sandboxes list)")
    return [have[n] for n in names]


def stop(box: dict[str, Any]) -> bool:
    """A clean shutdown of a kept sandbox's mysqld (SIGTERM; SIGKILL after the stop
    timeout); its datadir stays. False when it was not running."""
    pid = mysqld_pid(Path(box["dir"]))
    if pid is None:
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while mysqld_pid(Path(box["dir"])) == pid and time.monotonic() < deadline:
        time.sleep(0.2)
    if mysqld_pid(Path(box["dir"])) == pid:
        os.kill(pid, signal.SIGKILL)
    return True


def remove(box: dict[str, Any]) -> None:
    """Stop it and remove its directory (datadir included)."""
    stop(box)
    d = Path(box["dir"])
    if _owner(d) is None:  # checked again right before the delete
        raise InputError(f"refusing to remove {d}: no harness ownership marker")
    remove_sandbox_dir(d)
