"""Advisory file locks that say who holds them.

Two harness processes on one host (a nightly cron and a DBA's manual run, two lab jobs,
two CI pipelines) share the cache: builds, dataset snapshots, kept sandboxes, the
replay's splits, container images. Each of those takes a lock here before it reads or
changes an entry, and a process that has to wait says for whom: the kernel names the
holder (``/proc/locks``: the lock is an ``flock`` on a file, released by the kernel when
its holder dies, however it dies), and the holder's note says what it is doing.

The measurement lock (:func:`measuring`) is the host-wide one: a measured phase takes it
so that a second run waits rather than measuring on a busy machine.
"""
from __future__ import annotations

import errno
import fcntl
import json
import os
import pwd
import re
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from datetime import datetime
from pathlib import Path

from . import proc
from .errors import HarnessError
from .paths import cache_dir

POLL_S = 0.2
SAY_EVERY_S = 60.0
DEFAULT_TIMEOUT_S = 3600.0  # an install of a Debian root takes minutes, not an hour


class LockTimeout(HarnessError):
    """A lock was not had in time; the message names its holder."""


def to_stderr(msg: str) -> None:
    """Where a lock's waiting is said by default: stderr, beside the progress lines (a
    command's stdout may be JSON)."""
    print(msg, file=sys.stderr, flush=True)


def locks_dir() -> Path:
    return cache_dir() / "locks"


def cache_lock(name: str) -> Path:
    """The lock file of one cache entry (``build-mysql-5.7.29``, ``snapshot-<key>``...)."""
    return locks_dir() / f"{name}.lock"


def host_lock_path(name: str) -> Path:
    """A host-wide lock (``measure``, ``host-tuning``): in /run/lock, not in a cache, so
    that runs with different caches (two users, a test suite) still see each other."""
    base = Path("/run/lock") if Path("/run/lock").is_dir() else Path("/tmp")
    return base / f"mysql-harness-{name}.lock"


def measure_lock_path(host: str | None = None) -> Path:
    """The measurement lock of the host where the server runs (None: this one), kept on
    this host (``HARNESS_MEASURE_LOCK`` moves it)."""
    env = os.environ.get("HARNESS_MEASURE_LOCK", "")
    path = Path(env) if env and env != "off" else host_lock_path("measure")
    if host is None:
        return path
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", host)
    return path.with_name(f"{path.stem}-{safe}{path.suffix}")


def measure_lock_enabled() -> bool:
    """False where ``HARNESS_MEASURE_LOCK=off`` says to measure beside anything."""
    return os.environ.get("HARNESS_MEASURE_LOCK", "") != "off"


def _open(path: Path) -> int:
    """The lock file, opened read-only without following a link (a world-writable
    /run/lock must not let anyone point root's open at another file): flock needs no
    write access, so every account can take a lock root created."""
    path.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_RDONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        return os.open(path, flags, 0o644)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise HarnessError(f"lock file {path} is a symbolic link: refusing it") from None
        if e.errno == errno.EACCES:  # another account's file: open it as it is
            return os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        raise


def _inode(st: os.stat_result) -> str:
    return f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"


def holders(path: Path) -> list[int]:
    """The pids that hold a lock on ``path`` now. ``/proc/locks`` names the process that
    took it, which may have exited since, leaving it to a child that inherited the
    open file; so each process's open files are read (``/proc/PID/fdinfo`` lists the
    locks an open file holds), and the one that took it is the answer only where they
    cannot be read."""
    try:
        want = _inode(os.stat(path, follow_symlinks=False))
        text = Path("/proc/locks").read_text()
    except OSError:
        return []
    taken = set()
    for line in text.splitlines():
        f = line.split()
        # 1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF
        if len(f) >= 6 and f[1] == "FLOCK" and f[5] == want and f[4].isdigit():
            taken.add(int(f[4]))
    if not taken:
        return []
    return sorted(_holding(want) or taken)


def _holding(want: str) -> set[int]:
    """The processes with an open file that holds a lock on inode ``want``."""
    found = set()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            for fd in os.listdir(f"/proc/{name}/fdinfo"):
                with open(f"/proc/{name}/fdinfo/{fd}") as f:
                    if any(ln.startswith("lock:") and f" {want} " in ln for ln in f):
                        found.add(int(name))
                        break
        except OSError:
            continue
    return found


def stopped(pid: int) -> bool:
    """Whether ``pid`` is stopped by a signal (SIGSTOP, Ctrl-Z: state T), not running,
    sleeping or traced by a debugger for a moment."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] == "T"


def _note_path(path: Path, pid: int) -> Path:
    return path.with_name(f"{path.name}.{pid}")


def describe(path: Path) -> str:
    """Who holds the lock on ``path``: pid, account, command and the holder's own note
    (what it is doing, since when); "nobody" when it is free."""
    said = [who for pid in holders(path) if (who := _describe_pid(path, pid))]
    return "; ".join(said) or "nobody"


def _describe_pid(path: Path, pid: int) -> str | None:
    """None when the process is gone (its lock went with it)."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        uid = os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None
    cmd = " ".join(a.decode(errors="replace") for a in argv if a)[:160]
    who = f"pid {pid} ({_account(uid)}: {repr(cmd) if cmd else 'exiting'}"
    note = _read_note(_note_path(path, pid), uid)
    if not note:
        if pid not in holders(path):
            return None  # it let go, and dropped its note, between the two looks
        # it holds the lock again (let go and took it back between the looks): its new
        # note was written before it took it
        note = _read_note(_note_path(path, pid), uid)
    if note:
        who += f", {note.get('what', '?')} since {note.get('since', '?')}"
    return who + ")"


def _account(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def _read_note(note: Path, uid: int) -> dict[str, str] | None:
    """The holder's note, trusted only when the holder's account wrote it."""
    try:
        fd = os.open(note, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd) as f:
        if os.fstat(f.fileno()).st_uid != uid:
            return None
        try:
            data = json.loads(f.read(4096))
        except ValueError:
            return None
    if not isinstance(data, dict):
        return None
    return {k: str(v).encode("ascii", "replace").decode()[:200] for k, v in data.items()}


def _write_note(path: Path, what: str) -> Path | None:
    note = _note_path(path, os.getpid())
    with suppress(OSError):
        note.unlink()  # a note our pid left in an earlier life
    try:
        fd = os.open(note, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o644)
    except OSError:
        return None  # a lock in another account's folder: the kernel still names us
    with os.fdopen(fd, "w") as f:
        json.dump({"what": what, "since": datetime.now().strftime("%H:%M:%S")}, f)
    return note


def _drop_stale_notes(path: Path) -> None:
    """Notes of processes that are gone (killed before they removed theirs)."""
    for note in path.parent.glob(f"{path.name}.*"):
        pid = note.name.rsplit(".", 1)[-1]
        if pid.isdigit() and not proc.pid_alive(int(pid)):
            with suppress(OSError):
                if os.stat(note, follow_symlinks=False).st_uid == os.geteuid():
                    note.unlink()


@contextmanager
def held(path: Path, what: str, *, shared: bool = False,
         timeout_s: float | None = DEFAULT_TIMEOUT_S,
         say: Callable[[str], None] | None = to_stderr,
         name: str | None = None, break_stopped_s: float | None = None) -> Iterator[None]:
    """Hold the lock on ``path`` for ``what`` (exclusive, or shared with other shared
    holders). A process that has to wait says for whom, again every minute; past
    ``timeout_s`` (None: no limit) :class:`LockTimeout` names the holder.
    ``break_stopped_s``: a lock whose every holder has been stopped (SIGSTOP, Ctrl-Z)
    for that long is broken, said: its file is replaced, and the new one taken."""
    label = name or path.name.removesuffix(".lock")
    waiting = _Acquiring(path, label, shared, say, break_stopped_s)  # opens it
    # The note first: whoever waits for us once we hold the lock reads what we do.
    note = _write_note(path, what)
    try:
        waiting.take(timeout_s)
        _drop_stale_notes(path)
        yield
    finally:
        # Released first: a waiter that still sees us as the holder finds our note.
        if waiting.fd >= 0:
            os.close(waiting.fd)
        if note is not None:
            with suppress(OSError):
                note.unlink()


class _Acquiring:
    """One wait for a lock: polled, said, and (``break_stopped_s``) broken when every
    holder is stopped."""

    def __init__(self, path: Path, label: str, shared: bool,
                 say: Callable[[str], None] | None, break_stopped_s: float | None):
        self.path, self.label, self.say = path, label, say
        self.fd = _open(path)  # the lock file (made, with its folder); closed by the caller
        self.mode = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
        self.break_stopped_s = break_stopped_s
        self.t0 = time.monotonic()
        self.next_say = self.t0
        self.next_look = self.t0
        self.stopped_since: float | None = None

    def take(self, timeout_s: float | None) -> None:
        """The lock held on ``self.fd``: the file opened first, or (a lock broken, or
        its file replaced meanwhile) the one now at its path."""
        while True:
            if self._locked(self.fd):
                if _same_file(self.fd, self.path):
                    if self.say is not None and self.next_say > self.t0:
                        self.say(f"{self.label}: lock taken after "
                                 f"{time.monotonic() - self.t0:.0f} s")
                    return
                self._reopen()  # its file was replaced (a lock broken): take the new one
                continue
            now = time.monotonic()
            if self.break_stopped_s is not None and now >= self.next_look \
                    and self._broken(now):
                self._reopen()
                continue
            if timeout_s is not None and now - self.t0 >= timeout_s:
                raise LockTimeout(f"{self.label}: not free after {timeout_s:.0f} s: held by "
                                  f"{describe(self.path)} (lock file {self.path})")
            self._said(now)
            time.sleep(POLL_S)

    def _reopen(self) -> None:
        os.close(self.fd)
        self.fd = -1
        self.fd = _open(self.path)

    def _locked(self, fd: int) -> bool:
        try:
            fcntl.flock(fd, self.mode | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False

    def _said(self, now: float) -> None:
        if self.say is not None and now >= self.next_say:
            who = describe(self.path)
            if who != "nobody":  # else it was let go meanwhile: try again at once
                self.say(f"{self.label}: waiting for {who} (lock file {self.path})")
                self.next_say = now + SAY_EVERY_S

    def _broken(self, now: float) -> bool:
        """Whether the lock was broken now: every holder stopped for long enough."""
        assert self.break_stopped_s is not None
        self.next_look = now + 1.0  # reading every process's open files: once a second
        pids = holders(self.path)
        if not pids or not all(stopped(p) for p in pids):
            self.stopped_since = None
            return False
        self.stopped_since = self.stopped_since or now
        if now - self.stopped_since < self.break_stopped_s:
            return False
        who = describe(self.path)
        try:
            self.path.unlink()
        except OSError as e:
            if self.say is not None:
                self.say(f"{self.label}: its holder {who} is stopped, and the lock cannot "
                         f"be broken ({e.strerror}): waiting on")
            self.stopped_since = None
            return False
        if self.say is not None:
            self.say(f"{self.label}: its holder {who} has been stopped (SIGSTOP) for "
                     f"{now - self.stopped_since:.0f} s: the lock is broken (its file "
                     f"{self.path} made anew); if that process resumes, it measures "
                     "beside this run")
        return True


def _same_file(fd: int, path: Path) -> bool:
    try:
        a, b = os.fstat(fd), os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def try_hold(path: Path) -> int | None:
    """An exclusive lock on ``path`` if it is free now (the fd to close to release it),
    else None: for a prune that must skip what another process is using."""
    fd = _open(path)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


# A measurement lock whose holders have all been stopped this long is broken
# (HARNESS_MEASURE_LOCK_BREAK_S).
BREAK_STOPPED_S = 30.0


def break_stopped_s() -> float:
    try:
        return max(1.0, float(os.environ.get("HARNESS_MEASURE_LOCK_BREAK_S",
                                             BREAK_STOPPED_S)))
    except ValueError:
        return BREAK_STOPPED_S


def measure_wait_s(default: float | None) -> float:
    """How long a run waits for the measurement lock: HARNESS_MEASURE_LOCK_WAIT_S, else
    ``default`` (the run's own length), else an hour."""
    env = os.environ.get("HARNESS_MEASURE_LOCK_WAIT_S", "")
    try:
        return max(0.0, float(env)) if env else max(60.0, default or DEFAULT_TIMEOUT_S)
    except ValueError:
        raise HarnessError(f"HARNESS_MEASURE_LOCK_WAIT_S={env!r}: a number of seconds") \
            from None


@contextmanager
def measuring(what: str, enabled: bool = True, host: str | None = None,
              say: Callable[[str], None] | None = to_stderr,
              timeout_s: float | None = None) -> Iterator[dict[str, object]]:
    """The measurement lock of ``host`` (None: this host) around a measured phase: a
    second run waits, saying for whom, up to ``timeout_s`` (:func:`measure_wait_s`
    of None), and breaks a lock whose holders are stopped. ``enabled=False``
    (``--no-measure-lock``, ``measure_lock: false``, ``HARNESS_MEASURE_LOCK=off``)
    measures beside whatever else runs. Yields what to store with the run: the lock
    file (None: not taken) and the seconds waited for it."""
    if not enabled or not measure_lock_enabled():
        yield {"lock": None, "waited_s": 0.0}
        return
    path = measure_lock_path(host)
    t0 = time.monotonic()
    wait = timeout_s if timeout_s is not None else measure_wait_s(None)
    taken = False
    try:
        with held(path, what, timeout_s=wait, say=say, break_stopped_s=break_stopped_s(),
                  name=f"measurement lock{f' of {host}' if host else ''}"):
            taken = True
            yield {"lock": str(path), "waited_s": round(time.monotonic() - t0, 3)}
    except LockTimeout as e:
        if taken:  # another lock's, taken while measuring
            raise
        raise LockTimeout(f"{e}; HARNESS_MEASURE_LOCK_WAIT_S waits longer, "
                          "--no-measure-lock measures beside it") from None
