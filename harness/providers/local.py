"""Local sandboxes, the embedded default (like dbdeployer): one directory per server
with its datadir, my.cnf, socket, error log and an ownership marker."""
from __future__ import annotations

import contextlib
import json
import os
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import pymysql

from .. import proc, procfs
from ..confine import Confinement
from ..errors import OwnershipError, ProviderError
from ..host import seekdisk, tuning
from ..host.seekdisk import SeekDisk, SeekDiskError
from ..paths import sandbox_dir
from ..server import accounts, hostpaths, osuser, snapshot
from ..server.catalog import Build
from ..server.mycnf import Value, read_back, render
from ..server.mysql import Endpoint, new_password
from ..server.snapshot import copy_datadir
from .base import Provider, ProviderKind, Server

if TYPE_CHECKING:
    from ..scenario import DiskModel

DISK = "disk"  # a sandbox's model disk folder (host_profile.disk)

OWNER_FILE = "OWNER.json"
# A sandbox's folder is root's, with what root writes, reads or runs in it (OWNER.json,
# my.cnf, harness.cnf, the kept sandbox's use script, the init logs); mysqld's account
# owns only the folders it writes to, so it can never replace or plant a file that root
# then trusts.
MYSQLD_DIRS = ("tmp", "files", "run", "log")
HARNESS_USER = "harness"
START_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 180.0


PORTS = (20000, 32000)  # sandboxes' ports, when the kernel's ephemeral range spares them


def _ephemeral() -> tuple[int, int]:
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


def free_port() -> int:
    """A free port on 127.0.0.1 outside the kernel's ephemeral range: a port chosen now
    is bound by mysqld seconds later, and a client's connection (a sysbench of another
    run on this host) must not take it meanwhile, as an ephemeral port could."""
    low, high = _ephemeral()
    pool = [p for p in range(*PORTS) if not low <= p <= high]
    for port in secrets.SystemRandom().sample(pool, min(len(pool), 50)):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket() as s:  # that range is busy or inside the ephemeral one
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def error_log_tail(path: Path, lines: int = 15) -> str:
    got = osuser.read_mysqld_file(path)
    if got is None:
        return "(no error log)"
    text = got.splitlines()
    errors = [line for line in text if "[ERROR]" in line]
    picked = errors[-lines:] if errors else text[-lines:]
    return "\n".join(picked)


def is_owned(directory: Path) -> bool:
    """True when ``directory`` is a sandbox this harness created."""
    marker = directory / OWNER_FILE
    try:
        return json.loads(marker.read_text()).get("created_by") == "mysql-harness"
    except (OSError, ValueError):
        return False


def replace_owned_datadir(name: str, running: bool, directory: Path, datadir: Path,
                          src: Path) -> None:
    """Replace ``datadir`` of the stopped sandbox in ``directory`` with a copy of ``src``,
    only when the harness created that sandbox."""
    if running:
        raise ProviderError(f"{name}: stop the server before replacing its datadir")
    if not is_owned(directory):
        raise OwnershipError(f"refusing to replace the datadir of {directory}: not a "
                             "sandbox this harness created")
    shutil.rmtree(datadir, ignore_errors=True)
    with snapshot.restoring(src) as held:
        copy_datadir(held, datadir)


class Sandbox(Server):
    """A mysqld in its own directory, bound to 127.0.0.1 on a free port."""

    # Where the harness's account may connect from.
    user_hosts: tuple[str, ...] = ("localhost", "127.0.0.1")

    def __init__(self, build: Build, directory: Path, disk: DiskModel | None = None):
        self.cgroups: list[Path] = []
        self.build = build
        self.dir = directory
        self.name = directory.name
        self.datadir = directory / "data"
        self.socket = str(directory / "run" / "mysqld.sock")
        self.error_log = directory / "log" / "error.log"
        self.cnf_path = directory / "my.cnf"
        self.owned = True
        self.port = free_port()
        self._proc: subprocess.Popen[bytes] | None = None
        # HARNESS_SANDBOX_PASSWORD pins it (to connect by hand while debugging, or to plant
        # a known secret in tests); by default every sandbox gets a random one.
        self._password = os.environ.get("HARNESS_SANDBOX_PASSWORD") or new_password()
        self.endpoint = Endpoint("127.0.0.1", self.port, HARNESS_USER, self._password,
                                 self.socket)
        # Who mysqld runs as: an unprivileged account when the harness is root.
        self.account = osuser.mysqld_account()
        self.init_file = directory / "run" / "init.sql"
        # The harness's own client option file (mode 0600): the one place the password is.
        self.client_cnf = directory / "harness.cnf"
        self.disk_spec = disk  # the datadir on a model disk (host_profile.disk)
        self.disk: SeekDisk | None = None
        # What mysqld runs under, its argv before mysqld's own (a counter's: callgrind
        # for compare --measure instructions); empty: mysqld itself.
        self.launcher: list[str] = []

    # --- creation -------------------------------------------------------------------

    @property
    def scratch(self) -> Path:
        """A directory for side loads' files: on the datadir's filesystem, or beside
        the model disk (host_profile.disk), whose seeks are the server's alone."""
        d = self.dir / "scratch"
        d.mkdir(exist_ok=True)
        return d

    def replace_datadir(self, src: Path) -> None:
        """Replace the (stopped) server's datadir with a copy of ``src`` (a snapshot)."""
        replace_owned_datadir(self.name, self.is_running, self.dir, self.datadir, src)
        # The copy holds another sandbox's password: the init file of the next start
        # resets it; the copy's files become mysqld's.
        osuser.hand_over(self.datadir, self.account, 0o700)

    def save_datadir(self, key: str, meta: dict[str, object]) -> tuple[Path, float]:
        """Stop cleanly, copy the datadir as snapshot ``key``; (its path, seconds)."""
        if self.is_running:
            raise ProviderError(f"{self.name}: stop the server before copying its datadir")
        return snapshot.save(key, self.datadir, meta)

    def create(self, datadir_from: Path | None = None) -> None:
        """Make the directory, mark it as ours, and fill the datadir: a copy of
        ``datadir_from`` (a snapshot) or of the build's initialised one, else
        initialised per version."""
        osuser.require_reachable(self.build.root, self.account, "the build")
        osuser.require_reachable(self.dir.parent, self.account, "the sandboxes' folder")
        self.dir.mkdir(parents=True, mode=0o700)
        (self.dir / OWNER_FILE).write_text(json.dumps({
            "created_by": "mysql-harness", "pid": os.getpid(), "build": self.build.name,
            "created_at": datetime.now(UTC).isoformat()}, indent=2))
        for sub in MYSQLD_DIRS:
            (self.dir / sub).mkdir()
            osuser.hand_over(self.dir / sub, self.account, 0o700)
        osuser.share_read(self.dir, self.account, folder=True)
        if self.disk_spec is not None:
            self._attach_disk(self.disk_spec)
        self._fill_datadir(datadir_from)
        osuser.hand_over(self.datadir, self.account, 0o700)
        self.endpoint.write_defaults_file(self.client_cnf, socket=self.socket)
        self._require_system_schema()

    def _require_system_schema(self) -> None:
        if not (self.datadir / "mysql").is_dir():
            raise ProviderError(f"{self.name}: datadir initialisation left no mysql schema "
                                f"in {self.datadir}; see {self.dir / 'init'}")

    def _fill_datadir(self, datadir_from: Path | None) -> None:
        """A copy of ``datadir_from`` (a dataset snapshot, or a datadir the harness did
        not make, copied strictly) or of the build's initialised datadir; else
        initialised here, and kept for the build's next sandbox."""
        key = snapshot.init_key(self.build)
        src = datadir_from or snapshot.find(key)
        if src is not None:
            with snapshot.restoring(src) as held:
                snapshot.copy_in(held, self.datadir)
            if datadir_from is None:  # a server UUID of its own, as a new init makes
                (self.datadir / "auto.cnf").unlink(missing_ok=True)
            return
        # An empty datadir of mysqld's (it may not make one in root's folder), and a
        # tmpdir of its own: bootstraps of sandboxes created at the same moment must
        # not share /tmp (two concurrent MariaDB bootstraps lost a temporary table).
        self.datadir.mkdir(parents=True, exist_ok=True)
        osuser.hand_over(self.datadir.parent if self.disk else self.datadir, self.account)
        self._initialise(self.dir / "tmp")
        self._require_system_schema()  # before it is kept for other sandboxes
        try:
            snapshot.save(key, self.datadir, {"build": self.build.name, "datasets": [],
                                              "init": True}, say=None)
        except OSError:
            pass  # a cache it cannot write (full, read-only): the next sandbox inits too

    def _attach_disk(self, spec: DiskModel) -> None:
        """The datadir on a model disk of its own (side loads' files stay beside it)."""
        self.disk = SeekDisk(self.dir / DISK, spec.geometry(), spec.size_bytes())
        try:
            self.datadir = self.disk.attach() / "data"
        except SeekDiskError as e:
            raise ProviderError(f"{self.name}: host_profile.disk: {e}") from None

    def seek_model(self, on: bool) -> dict[str, float] | None:
        if self.disk is None:
            return None
        try:
            return self.disk.model(on)
        except (SeekDiskError, OSError) as e:
            raise ProviderError(f"{self.name}: host_profile.disk: {e}") from None

    def _initialise(self, tmp: Path) -> None:
        """Create the datadir with the build's init command, run on this host."""
        b = self.build
        argv = b.init_argv(str(self.datadir), str(tmp),
                           user=self.account.name if self.account else None)
        proc.run(argv, env={**b.env(), "TMPDIR": str(tmp)}, timeout=300,
                 log_dir=self.dir / "init", name="init", cwd=b.root, private=True,
                 what=f"{b.name}: {Path(argv[0]).name} (datadir initialisation)")

    # --- config ---------------------------------------------------------------------

    def base_options(self) -> dict[str, Value | None]:
        b = self.build
        opts: dict[str, Value | None] = {
            "basedir": str(b.root), "datadir": str(self.datadir), "socket": self.socket,
            "port": self.port, "bind-address": "127.0.0.1",
            "pid-file": str(self.dir / "run" / "mysqld.pid"),
            "log-error": str(self.error_log),
            "lc-messages-dir": str(b.share_dir), "tmpdir": str(self.dir / "tmp"),
            "secure-file-priv": str(self.dir / "files"), "skip-name-resolve": None,
            "init-file": str(self.init_file), **b.server_options(),
        }
        return opts  # no 'user': mysqld starts as its account (see _launch)

    def config_options(self, options: Mapping[str, Value | None] | None
                       ) -> dict[str, Value | None]:
        """The sandbox's own options, then the variant's (which may not override them,
        nor name a path of the host: :mod:`hostpaths`)."""
        merged = self.base_options()
        for k, v in (options or {}).items():
            if why := hostpaths.sandbox_refusal(self.build, merged, k, v):
                raise ProviderError(f"{self.name}: {why}; not started")
            merged[k] = v
        return merged

    def render_config(self, options: Mapping[str, Value | None] | None) -> str:
        return render({"mysqld": self.config_options(options)})

    # --- lifecycle ------------------------------------------------------------------

    @property
    def is_running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self.is_running and self._proc is not None else None

    def _ping(self) -> bool:
        try:
            conn = pymysql.connect(unix_socket=self.socket, user=HARNESS_USER,
                                   password=self._password, connect_timeout=2,
                                   ssl_disabled=True)  # a socket: no TLS (see mysql.py)
        except pymysql.err.MySQLError:
            return False
        try:
            with conn.cursor() as cur:
                cur.execute("SELECT 1")
                return cur.fetchone() == (1,)
        finally:
            conn.close()

    def start(self, options: Mapping[str, Value | None] | None = None) -> None:
        if self.is_running:
            raise ProviderError(f"{self.name}: already running")
        if not is_owned(self.dir):
            raise OwnershipError(f"refusing to start {self.dir}: not a sandbox this harness "
                                 "created")
        merged = self.config_options(options)
        self.cnf_path.write_text(render({"mysqld": merged}))
        osuser.share_read(self.cnf_path, self.account)  # mysqld reads it as its account
        # The build's own reader says what it reads: exactly these options, or no start.
        why = read_back(self.build, self.cnf_path, merged)
        if why:
            raise ProviderError(f"{self.name}: {why}; not started")
        self._boot()

    def _boot(self, outlive: bool = False) -> None:
        """Start mysqld with the my.cnf in place and wait until the harness is the only
        way in (``outlive``: it keeps running when the harness exits)."""
        self._write_init_file()
        mark = self.error_log.stat().st_size if self.error_log.exists() else 0
        self._launch(outlive)
        try:
            self._wait_ready(mark)
            self._lock_down()
            if why := self._door_left_open():
                raise ProviderError(f"{self.name}: {why}; stopped, not used")
        except BaseException:
            # A server that is not the harness's alone is not left up. Ctrl-C while it
            # starts: a mysqld that gets SIGTERM in its first moments ignores it
            # (measured on mariadb-10.11: sent 50 ms after the spawn, still running
            # 100 s later), and nothing in it is worth a clean shutdown.
            self.kill()
            self._exited()
            raise
        finally:
            self.init_file.unlink(missing_ok=True)  # it holds the password

    def _wait_ready(self, mark: int) -> None:
        """Until the harness's account answers on the socket (ProviderError, with the
        error log's words, when mysqld exits or is not ready in time)."""
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._exited():
                raise ProviderError(self._start_failure(mark, "exited during startup"))
            if self._ping():
                return
            time.sleep(0.2)
        self.stop()
        raise ProviderError(self._start_failure(
            mark, f"not ready after {START_TIMEOUT_S:.0f} s"))

    def _door_left_open(self) -> str | None:
        """The running server's own word against every check made on option names
        before it started: it listens on 127.0.0.1 at its port alone, and refuses a
        login with no password; else how it does not."""
        pid = self.pid
        heard = procfs.listening(pid) if pid is not None else []
        if heard != [self.listens_on]:
            return (f"it listens on {', '.join(heard) or 'no TCP address'}, where this "
                    f"sandbox listens on {self.listens_on} alone")
        return accounts.open_without_password(unix_socket=self.socket)

    @property
    def listens_on(self) -> str:
        """The one TCP address its mysqld listens on, in its own network namespace."""
        return f"127.0.0.1:{self.port}"

    def run_under(self, launcher: Callable[[Path], list[str]]) -> Path:
        out = self.dir / "log" / "counter"
        out.mkdir(exist_ok=True)
        osuser.hand_over(out, self.account, 0o700)
        self.launcher = launcher(out)
        return out

    def _launch(self, outlive: bool = False) -> None:
        """Start mysqld with the rendered my.cnf (in the profile's cgroups, if any)."""
        b = self.build
        a = self.account
        # Nothing outside its folder writable by its account: harness/confine.py.
        confine = Confinement.of_sandbox(self.dir, sandbox_dir(), b.root) if a else None
        self._proc = proc.spawn_daemon([*self.launcher, b.mysqld,
                                        f"--defaults-file={self.cnf_path}"],
                                       self.dir / "mysqld.out", env=b.env(),
                                       cgroups=self.cgroups,
                                       as_user=(a.uid, a.gid) if a is not None else None,
                                       outlive=outlive, private=True, confine=confine)

    def keep(self, run_set: str) -> str:
        """Leave this sandbox running after the harness exits (``--keep``): mysqld
        restarted outside the harness's lifetime and any profile's cgroups, with a
        ``use`` script beside it. Returns how to connect."""
        if not is_owned(self.dir):
            raise OwnershipError(f"refusing to keep {self.dir}: not a sandbox this harness "
                                 "created")
        self.stop()
        self.cgroups = []
        self._boot(outlive=True)
        client = self.build.client()
        use = self.dir / "use"
        use.write_text(f"#!/bin/sh\n# {self.build.name}, kept by mysql-harness (harness "
                       f"sandboxes list|stop|remove)\nexec {shlex.quote(client)} "
                       f"--defaults-file={shlex.quote(str(self.client_cnf))} \"$@\"\n")
        use.chmod(0o700)
        owner = json.loads((self.dir / OWNER_FILE).read_text())
        owner["kept"] = {"since": datetime.now(UTC).isoformat(), "run_set": run_set,
                         "port": self.port, "socket": self.socket, "by": osuser.login_name()}
        (self.dir / OWNER_FILE).write_text(json.dumps(owner, indent=2))
        self._proc = None  # no longer the harness's to stop
        return f"{use}   (or: {client} --defaults-file={self.client_cnf})"

    def _exited(self) -> bool:
        """True (and forget the process) when the mysqld launched has exited."""
        if self._proc is not None and self._proc.poll() is None:
            return False
        self._proc = None
        return True

    def _start_failure(self, mark: int, what: str) -> str:
        text = osuser.read_mysqld_file(self.error_log, start=mark) or ""
        errors = [line for line in text.splitlines() if "ERROR" in line] or text.splitlines()
        tail = "\n".join("    " + line for line in errors[-12:])
        return (f"{self.name} ({self.build.version_string.split(' (')[0]}) {what}; "
                f"error log {self.error_log}:\n{tail}")

    def _write_init_file(self) -> None:
        """The statements mysqld runs before it accepts a connection: the harness's
        account with this sandbox's password, no password-less account (mode 0600,
        readable by mysqld's account only; removed once the server is up)."""
        self.init_file.unlink(missing_ok=True)
        fd = os.open(self.init_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(accounts.init_sql(self.build, HARNESS_USER, self._password,
                                      self.user_hosts))
        osuser.hand_over(self.init_file, self.account)

    def _lock_down(self) -> None:
        """Exactly one way in: every account but the harness's (and the server's locked
        system accounts) dropped."""
        self.init_file.unlink(missing_ok=True)
        conn = pymysql.connect(unix_socket=self.socket, user=HARNESS_USER,
                               password=self._password, autocommit=True, connect_timeout=5,
                               read_timeout=60, ssl_disabled=True)
        try:
            accounts.lock_down(conn, HARNESS_USER)
        finally:
            conn.close()

    def stop(self) -> None:
        p = self._proc
        if p is None:
            return
        if p.poll() is None:
            # A stopped mysqld (SIGSTOP, or stopped by a debugger) holds a SIGTERM pending
            # until it runs again: it is let run first, so its shutdown takes seconds.
            with contextlib.suppress(ProcessLookupError):
                os.kill(p.pid, signal.SIGCONT)
            # SIGTERM is mysqld's clean shutdown on every version (5.6 has no SHUTDOWN statement).
            proc.stop_process(p, grace_s=STOP_TIMEOUT_S / 2, first=15)
        self._proc = None

    def death(self) -> str | None:
        """If mysqld died on its own (not stopped by us): how, with its error log's tail."""
        if self._proc is None or self._proc.poll() is None:
            return None
        rc = self._proc.returncode
        how = f"killed by signal {-rc}" if rc < 0 else f"exited with code {rc}"
        oom = _oom_kills(self.cgroups) if rc == -9 else None
        if oom:
            how += f" - {oom}"
        return (f"mysqld of {self.name} {how} during the run; error log {self.error_log}:\n"
                + "\n".join("    " + line for line in error_log_tail(self.error_log).splitlines()))

    def disk_trouble(self) -> str | None:
        """If the datadir's filesystem is (nearly) full: how full, else None."""
        try:
            du = shutil.disk_usage(self.datadir if self.datadir.exists() else self.dir)
        except OSError:
            return None
        if du.free < max(32 << 20, du.total // 50):
            return (f"the datadir's filesystem is full: {du.free >> 20} MB free of "
                    f"{du.total >> 20} MB ({self.datadir})")
        return None

    def kill(self) -> None:
        """SIGKILL mysqld (fault injection and last-resort cleanup)."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()

    def destroy(self) -> None:
        if not is_owned(self.dir):
            raise OwnershipError(f"refusing to remove {self.dir}: it has no harness "
                                 f"ownership marker ({OWNER_FILE})")
        try:
            self.stop()
        finally:
            self._last_resort()
            remove_sandbox_dir(self.dir)

    def _last_resort(self) -> None:
        """Whatever a failed stop left running: gone before the directory goes."""
        if self._proc is not None:
            self.kill()

    def collect_artifacts(self, dest: Path) -> None:
        dest.mkdir(parents=True, exist_ok=True)
        if self.cnf_path.exists():  # root's own
            shutil.copyfile(self.cnf_path, dest / "my.cnf")
        osuser.copy_mysqld_file(self.error_log, dest / "error.log")  # no link followed


class LocalProvider(Provider):
    """Sandboxes under ``HARNESS_SANDBOXES`` on this host."""

    target = "local"
    seeds = True

    def provision(self, build: Build, label: str = "",
                  datadir_from: Path | None = None) -> Sandbox:
        root = sandbox_dir()
        osuser.open_folder(root)
        directory = root / f"{build.name}-{secrets.token_hex(3)}"
        box = Sandbox(build, directory, self.disk)
        try:
            box.create(datadir_from)
        except BaseException:
            box.kill()
            remove_sandbox_dir(directory)
            raise
        return box

    def remove_stale(self) -> list[str]:
        """The sandboxes killed harnesses left here (never a kept one, nor one whose
        harness still runs): each run set starts by removing them."""
        return [str(d) for d in remove_stale()]


def remove_sandbox_dir(d: Path) -> list[str]:
    """A sandbox's directory gone, its model disk taken down first (mysqld stopped);
    what was taken down."""
    done = seekdisk.teardown(d / DISK)
    shutil.rmtree(d, ignore_errors=True)
    return done



def _oom_kills(cgroups: list[Path]) -> str | None:
    """What the memory cgroup among ``cgroups`` says when its OOM killer struck."""
    for d in cgroups:
        try:
            ctl = dict(ln.split() for ln in (d / "memory.oom_control").read_text().splitlines())
            limit, peak, with_swap = (int((d / f).read_text()) for f in (
                "memory.limit_in_bytes", "memory.max_usage_in_bytes",
                "memory.memsw.max_usage_in_bytes"))
        except (OSError, ValueError):
            continue
        if int(ctl.get("oom_kill", 0)):
            return (f"by the memory cgroup's OOM killer (host_profile.memory: limit "
                    f"{limit >> 20} MB; peak {peak >> 20} MB in memory, "
                    f"{with_swap >> 20} MB with swap)")
    for d in cgroups:  # cgroup v2
        try:
            events = dict(ln.split() for ln in (d / "memory.events").read_text().splitlines())
            limit = int((d / "memory.max").read_text())
        except (OSError, ValueError):
            continue
        if int(events.get("oom_kill", 0)):
            return (f"by the memory cgroup's OOM killer (host_profile.memory: memory.max "
                    f"{limit >> 20} MB)")
    return None


def _wait_gone(pid: int, timeout_s: float = 10.0) -> None:
    """Until a killed process has let go of its files."""
    proc.wait_until(lambda: not Path(f"/proc/{pid}").exists(), timeout_s)


def mysqld_pid(d: Path) -> int | None:
    """The running mysqld of sandbox ``d``: only one started with its my.cnf, never a
    process that reused the pid."""
    for pid_file in (d / "run" / "mysqld.pid", d / "mysqld.pid"):  # (before 2026-11-26)
        try:
            pid = int(pid_file.read_text().strip())
        except (ValueError, OSError):
            continue
        return pid if proc.runs(pid, str(d)) else None
    return None


def remove_stale(verbose: bool = False) -> list[Path]:
    """Remove sandboxes whose harness process is gone (only directories we own, and
    none kept with ``--keep``); :func:`harness.providers.remove_stale` removes their
    containers first."""
    removed = []
    root = sandbox_dir()
    for d in sorted(root.iterdir()) if root.exists() else []:
        if not is_owned(d):
            continue
        owner = json.loads((d / OWNER_FILE).read_text())
        if proc.pid_alive(int(owner.get("pid", 0))) or "kept" in owner:
            continue
        pid = mysqld_pid(d)
        if pid is not None:
            os.kill(pid, 9)
            _wait_gone(pid)
        disk = remove_sandbox_dir(d)
        removed.append(d)
        if verbose:
            print(f"removed stale sandbox {d}" + (f" ({', '.join(disk)})" if disk else ""))
    for what in tuning.recover():
        if verbose:
            print(f"restored host setting left by a killed harness: {what}")
    return removed


PLUGIN = ProviderKind("local", lambda _target: LocalProvider(), seeds=LocalProvider.seeds)
