"""What a test run makes outside pytest's own tmp_path (sandbox and snapshot folders,
network namespaces, daemons), noted per process so that a run killed half way (Ctrl-C
twice, a CI time-out, SIGKILL) leaves nothing behind: the next run, or ``make test``'s
own exit trap, removes what a dead process noted (``python -m tests.leftovers``).

A mysqld or sysbench that a test started dies with its worker already (the harness
starts them with PR_SET_PDEATHSIG); what is noted here is what outlives a process:
folders, kept sandboxes' servers, network namespaces and their sshd.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

NOTES = Path("/tmp/harness-tests")


def _mine() -> Path:
    return NOTES / f"{os.getpid()}.json"


def _read(f: Path) -> dict[str, list]:
    try:
        data = json.loads(f.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def note(dirs: list[str] = (), pids: list[int] = (), netns: list[str] = (),
         links: list[str] = ()) -> None:
    """Note what this process made, to be removed if it dies without removing it."""
    NOTES.mkdir(parents=True, exist_ok=True)
    data = _read(_mine())
    for key, items in (("dirs", dirs), ("pids", pids), ("netns", netns), ("links", links)):
        data[key] = [*data.get(key, []), *items]
    tmp = _mine().with_suffix(".tmp")
    tmp.write_text(json.dumps(data))
    os.replace(tmp, _mine())


def clean_mine() -> list[str]:
    """At the end of this process's session: whatever it noted and a test did not
    remove (an interrupted test's kept sandbox or network namespace); what went."""
    gone = _clean_one(_read(_mine()))
    _mine().unlink(missing_ok=True)
    return gone


def _alive(pid: int) -> bool:
    """Running (a zombie, killed and not yet reaped, is not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _kill_mentioning(text: str) -> list[str]:
    killed = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid():
            continue
        try:
            argv = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in argv:
            os.kill(int(d.name), signal.SIGKILL)
            killed.append(f"pid {d.name} ({argv[:80].strip()})")
    return killed


def _clean_one(data: dict[str, list]) -> list[str]:
    gone = []
    for pid in data.get("pids", []):
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
            gone.append(f"pid {pid}")
    for d in data.get("dirs", []):
        gone += _kill_mentioning(d)  # a kept sandbox's mysqld, a lab host's sshd
    for ns in data.get("netns", []):
        if subprocess.run(["ip", "netns", "del", ns], capture_output=True).returncode == 0:
            gone.append(f"network namespace {ns}")
    for link in data.get("links", []):
        if subprocess.run(["ip", "link", "del", link], capture_output=True).returncode == 0:
            gone.append(f"link {link}")
    for d in data.get("dirs", []):
        if Path(d).exists():
            for m in _mounts_under(d):  # a model disk's FUSE mount, a loop device's
                subprocess.run(["umount", "-l", m], capture_output=True)
            shutil.rmtree(d, ignore_errors=True)
            gone.append(d)
    return gone


def _mounts_under(d: str) -> list[str]:
    try:
        lines = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return []
    return [m for line in lines if (m := line.split()[1]).startswith(d.rstrip("/") + "/")]


def _orphaned(pid: int) -> bool:
    """A test process whose parent is gone: a worker of a killed controller, which
    would only finish its test and exit."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[1] == "1"


def clean() -> list[str]:
    """Remove what processes that are gone noted and did not remove (killing first the
    workers a killed controller left); what went."""
    gone: list[str] = []
    for f in sorted(NOTES.glob("*.json")) if NOTES.is_dir() else []:
        if not f.stem.isdigit():
            continue
        pid = int(f.stem)
        if _alive(pid) and _orphaned(pid):
            os.kill(pid, signal.SIGKILL)
            gone.append(f"pid {pid} (a worker of a killed test run)")
            for _ in range(100):
                if not _alive(pid):
                    break
                time.sleep(0.05)
        if not _alive(pid):
            gone += _clean_one(_read(f))
            f.unlink(missing_ok=True)
    return gone


if __name__ == "__main__":
    for what in clean():
        print(f"removed what a killed test run left: {what}", file=sys.stderr)
