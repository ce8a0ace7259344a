"""Host tuning: a swap file, ``vm.*`` sysctls and a memory balloon (balloon.py) for
memory-pressure experiments.

Both change the whole machine, so they are applied only on a host the scenario marks
``host: {disposable: true}`` and the command line repeats it
(``--i-know-this-is-disposable``). Every original value is written to a journal
before the first change; the run set restores them when it ends, fails or is
interrupted, and a harness killed before it could (SIGKILL, a power cut) leaves the
journal behind for the next ``harness run`` (or ``make clean-sandboxes``) to restore.

``vm.dirty_ratio`` and ``vm.dirty_bytes`` (and the ``dirty_background_`` pair) are two
views of one setting: writing one zeroes the other. The journal keeps both, and
restoring writes the one that was in force. The balloon is let go first, so that the
rest is undone with the host's memory back.

One harness tunes a host at a time: the first change takes the host's tuning lock
(/run/lock/mysql-harness-host-tuning.lock, whatever the cache), held until everything is
undone, so a second one waits, naming the first, and reads the host's own values.
"""
from __future__ import annotations

import json
import os
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from .. import locks, proc
from ..errors import HarnessError, InputError
from ..paths import cache_dir, write_json
from ..server.mycnf import parse_size
from .balloon import Balloon, available_bytes, kill_orphan, size_for

SYSCTL_ROOT = Path("/proc/sys")
PAIRS = {"vm.dirty_ratio": "vm.dirty_bytes", "vm.dirty_bytes": "vm.dirty_ratio",
         "vm.dirty_background_ratio": "vm.dirty_background_bytes",
         "vm.dirty_background_bytes": "vm.dirty_background_ratio"}


class HostTuningError(HarnessError):
    """A host setting that could not be applied or restored."""


def journal_path() -> Path:
    return cache_dir() / "host-tuning.json"


def sysctl_file(name: str) -> Path:
    return SYSCTL_ROOT / name.replace(".", "/")


def read_sysctl(name: str) -> str:
    return sysctl_file(name).read_text().strip()


def write_sysctl(name: str, value: str) -> None:
    f = sysctl_file(name)
    try:
        f.write_text(f"{value}\n")
    except OSError as e:
        raise HostTuningError(f"sysctl {name}={value}: writing {f} failed: "
                              f"{e.strerror}") from None
    got = read_sysctl(name)
    if got != value:
        raise HostTuningError(f"sysctl {name}: reads {got} after writing {value}")


def sysctl_value(name: str, value: Any) -> str:
    """The value to write: sizes (``64M``) for the ``_bytes`` settings, else integers."""
    if name.endswith("_bytes") and isinstance(value, str):
        n = parse_size(value)
        if n is None:
            raise InputError(f"{name}: '{value}' is not a size")
        return str(n)
    return str(int(value))


def unknown_sysctls(names: list[str]) -> list[str]:
    return [n for n in names if not sysctl_file(n).is_file()]


def active_swaps() -> list[dict[str, Any]]:
    """/proc/swaps: each active swap area's path, type and size in bytes."""
    out = []
    for line in Path("/proc/swaps").read_text().splitlines()[1:]:
        f = line.split()
        if len(f) >= 4:
            out.append({"path": f[0], "type": f[1], "bytes": int(f[2]) * 1024,
                        "used_bytes": int(f[3]) * 1024})
    return out


class HostTuner:
    """Applies and undoes host settings; one per run set (``with HostTuner() as t``)."""

    def __init__(self, journal: Path | None = None):
        self.journal = journal or journal_path()
        self.lock: ExitStack | None = None  # the host's tuning lock, first change to close()
        self.original: dict[str, str] = {}  # sysctl -> value before the first change
        self.swap_file: str | None = None  # the file this tuner made and switched on
        self.in_force: dict[str, str] = {}
        self.balloon: Balloon | None = None
        self.balloon_pid: int | None = None  # journaled: a killed harness's balloon

    def __enter__(self) -> HostTuner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # The host's tuning lock, from before the first reading of an original value to
    # close(): a second harness that tunes this host (another run, another user's cache)
    # waits, saying for whom, rather than taking our settings for the host's own.
    def _hold(self) -> None:
        if self.lock is None:
            self.lock = ExitStack()
            self.lock.enter_context(locks.held(
                locks.host_lock_path("host-tuning"), f"tuning the host (journal {self.journal})",
                timeout_s=None, name="host tuning lock"))

    # The journal: written before each change, removed once everything is undone.
    def _save(self) -> None:
        self._hold()
        self.journal.parent.mkdir(parents=True, exist_ok=True)
        write_json(self.journal, {"pid": os.getpid(), "sysctls": self.original,
                                  "swap_file": self.swap_file,
                                  "balloon_pid": self.balloon_pid}, indent=2)

    def set_sysctls(self, wanted: dict[str, str]) -> dict[str, str]:
        """Put exactly ``wanted`` in force over the originals: a setting an earlier
        cell changed and this one does not name goes back to its original first."""
        self._hold()
        for name in [n for n in self.original if n not in wanted and
                     PAIRS.get(n) not in wanted]:
            self._restore_one(name)
        for name, value in wanted.items():
            for n in (name, PAIRS.get(name)):
                if n and n not in self.original:
                    self.original[n] = read_sysctl(n)
            self._save()
            write_sysctl(name, value)
        self.in_force = {n: read_sysctl(n) for n in sorted({*wanted, *(
            PAIRS[n] for n in wanted if n in PAIRS)})}
        return dict(self.in_force)

    def _restore_one(self, name: str) -> None:
        if name not in self.original:
            return
        partner = PAIRS.get(name)
        mine = self.original.pop(name)
        theirs = self.original.pop(partner, None) if partner else None
        # Of a pair, the non-zero one was in force; writing it zeroes the other.
        if partner and theirs is not None and mine == "0":
            name, mine = partner, theirs
        if read_sysctl(name) != mine:
            write_sysctl(name, mine)
        self._save()

    def ensure_swap(self, size: str, where: Path | None = None) -> dict[str, Any]:
        """A swap file of ``size`` when the host has no swap; what is in force."""
        self._hold()
        have = active_swaps()
        if have:
            return {"swap": "existing", "areas": have,
                    "bytes": sum(a["bytes"] for a in have)}
        n = parse_size(size)
        assert n is not None
        path = (where or cache_dir()) / "swapfile"
        path.parent.mkdir(parents=True, exist_ok=True)
        self.swap_file = str(path)
        self._save()
        try:
            _swap_file(path, n)
        except BaseException:
            self._swap_off()
            raise
        if not any(a["path"] == str(path) for a in active_swaps()):
            self._swap_off()
            raise HostTuningError(f"host.swap_file: {path} is not in /proc/swaps after "
                                  "swapon")
        return {"swap": "file", "path": str(path), "bytes": n}

    def _swap_off(self) -> None:
        if not self.swap_file:
            return
        path = Path(self.swap_file)
        if any(a["path"] == str(path) for a in active_swaps()):
            r = proc.run(["swapoff", str(path)], timeout=600, check=False)
            if r.returncode:
                raise HostTuningError(f"swapoff {path} failed: {r.stderr.strip()}; run it "
                                      "by hand, then remove the file")
        path.unlink(missing_ok=True)
        self.swap_file = None
        self._save()

    def inflate(self, size: int | None = None, leave: int | None = None) -> dict[str, Any]:
        """A balloon of ``size`` bytes, or of what leaves ``leave`` bytes of the host's
        available memory; what is in force."""
        self._hold()
        available = available_bytes()
        n = size if size is not None else size_for(leave or 0, available)
        if n > available:
            raise HostTuningError(f"host.balloon.size: {n >> 20} MB asked, and the host has "
                                  f"only {available >> 20} MB available")
        self.balloon = Balloon(n)
        self.balloon_pid = self.balloon.pid
        self._save()
        return {"bytes": n, "available_before": available, "available_after": available_bytes(),
                "locked": self.balloon.locked_bytes()}

    def _deflate(self) -> None:
        if self.balloon is not None:
            self.balloon.close()
        elif self.balloon_pid:  # a killed harness's, from its journal
            kill_orphan(self.balloon_pid)
        self.balloon, self.balloon_pid = None, None
        self._save()

    def close(self) -> None:
        """Undo everything (the balloon let go, swap off and its file removed, sysctls
        back) and drop the journal. Every step is tried; the first failure is raised at
        the end."""
        errors: list[Exception] = []
        if self.balloon is not None or self.balloon_pid:
            self._deflate()
        for name in list(self.original):
            try:
                self._restore_one(name)
            except (HostTuningError, OSError) as e:
                errors.append(e)
        try:
            self._swap_off()
        except (HostTuningError, OSError) as e:
            errors.append(e)
        if errors:
            raise HostTuningError("; ".join(str(e) for e in errors))
        self.journal.unlink(missing_ok=True)
        if self.lock is not None:
            self.lock.close()
            self.lock = None


def _swap_file(path: Path, n: int) -> None:
    """A 0600 file of ``n`` bytes at ``path``, made swap and switched on."""
    with open(path, "wb") as f:
        os.fchmod(f.fileno(), 0o600)
        try:
            os.posix_fallocate(f.fileno(), 0, n)
        except OSError:  # filesystems without fallocate: write it out
            f.truncate(0)
            chunk = b"\0" * (1 << 20)
            for _ in range(n // len(chunk)):
                f.write(chunk)
    for argv in (["mkswap", str(path)], ["swapon", str(path)]):
        r = proc.run(argv, timeout=300, check=False)
        if r.returncode:
            raise HostTuningError(f"host.swap_file: {' '.join(argv)} failed: "
                                  f"{(r.stderr or r.stdout).strip()}")


def _journal(path: Path) -> dict[str, Any] | None:
    """A host tuning journal's state (None when there is none)."""
    try:
        state = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except ValueError:
        raise HostTuningError(f"{path}: not a host tuning journal; restore the host's "
                              "sysctls and swap by hand, then remove it") from None
    if not isinstance(state, dict):
        raise HostTuningError(f"{path}: not a host tuning journal; restore the host's "
                              "sysctls and swap by hand, then remove it")
    return state


def recover(journal: Path | None = None) -> list[str]:
    """Undo what a killed harness left in force, from its journal; what was restored.
    A journal of a harness that is still running (its pid alive) is left alone."""
    path = journal or journal_path()
    state = _journal(path)
    if state is None:
        return []
    pid = int(state.get("pid") or 0)
    if pid and pid != os.getpid() and proc.pid_alive(pid):
        return []
    t = HostTuner(path)
    t.original = dict(state.get("sysctls") or {})
    t.swap_file = state.get("swap_file")
    t.balloon_pid = state.get("balloon_pid")
    done = [f"{n}={v}" for n, v in t.original.items()]
    if t.balloon_pid and kill_orphan(t.balloon_pid):
        done.append(f"balloon (pid {t.balloon_pid}) let go")
    t.balloon_pid = None
    if t.swap_file:
        done.append(f"swap file {t.swap_file} off and removed")
    t.close()
    return done


def drop_page_cache() -> str | None:
    """Drop clean pages of the OS page cache; None when done, else why it was not."""
    try:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("1\n")
        return None
    except OSError as e:
        return f"cannot write /proc/sys/vm/drop_caches: {e.strerror}"
