"""Lab hosts managed by Ansible: ``--target ansible:INVENTORY``.

Every step on a host is one of the playbooks in ``ansible/`` (provision, configure,
start, stop, collect-facts, teardown), run with ``ansible-playbook`` against one host of
the inventory's ``mysql_servers`` group; its output is streamed as progress and kept in
the run's folder (``ansible/NN-<playbook>.log``). The harness gives the role what it
knows: an archive of the catalog build, the init command of the build's version, the
variant's my.cnf options and a password for its account (in a 0600 vars file that is
removed after each call). Workloads, side loads and collectors run on the controller
against the host's address; the /proc collectors only where the host is this machine.

A matrix over several hosts runs in parallel, one harness process per host (see
:func:`split_servers`); ``ansible:INVENTORY@HOST`` pins one host.
"""
from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import secrets
import shlex
import shutil
import socket
import sys
import tarfile
import tempfile
import threading
import zlib
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pymysql
import yaml

from .. import proc
from ..errors import FindingError, InputError, ProviderError, ToolError, UnavailableError
from ..host import profile
from ..host.profile import CgroupProfile, Limits, ProfileError
from ..paths import CHECKOUT, cache_dir, sandbox_dir
from ..proc import RemoteShell
from ..server import accounts, hostpaths, osuser, snapshot
from ..server.catalog import Build
from ..server.mycnf import Value, fmt_value, printed_defaults
from ..server.mysql import Endpoint, new_password
from ..server.mysql import connection as mysql_connection
from .base import Provider, ProviderKind, Server
from .local import HARNESS_USER, error_log_tail, free_port, replace_owned_datadir

# Where the harness's account may connect from: the controller comes over the network.
ACCOUNT_HOSTS = ("localhost", "127.0.0.1", "%")

ANSIBLE_DIR = CHECKOUT / "ansible"
GROUP = "mysql_servers"
DEFAULT_ROOT = "/var/tmp/mysql-harness"
# In a lab sandbox, as in a local one: what mysqld writes is in its account's folders.
ERROR_LOG = "log/error.log"
PLAYBOOK_TIMEOUT_S = 900.0


@dataclass
class Host:
    """One host of the inventory, with the variables the harness reads."""

    name: str
    vars: dict[str, Any] = field(default_factory=dict)

    @property
    def local(self) -> bool:
        """True when the host is this machine (local connection): its /proc, files and
        datadir are the controller's."""
        return self.vars.get("ansible_connection") == "local"

    @property
    def address(self) -> str:
        return str(self.vars.get("mysql_harness_bind") or self.vars.get("ansible_host")
                   or ("127.0.0.1" if self.local else self.name))

    @property
    def address_ssh(self) -> str:
        return str(self.vars.get("ansible_host") or self.name)

    @property
    def root(self) -> str:
        return str(self.vars.get("mysql_harness_root") or DEFAULT_ROOT)


def _ansible_bin(name: str) -> str:
    """An Ansible program from the harness's own virtualenv, else from the PATH."""
    here = Path(sys.executable).parent / name
    if here.exists():
        return str(here)
    return proc.which(name, "ansible-core is a dependency of the harness (make setup)")


def _env() -> dict[str, str]:
    return {"ANSIBLE_CONFIG": str(ANSIBLE_DIR / "ansible.cfg"),
            "ANSIBLE_ROLES_PATH": str(ANSIBLE_DIR / "roles"),
            "ANSIBLE_FORCE_COLOR": "0", "ANSIBLE_NOCOLOR": "1",
            "ANSIBLE_LOCAL_TEMP": str(cache_dir() / "ansible" / "tmp")}


def parse_target(target: str) -> tuple[Path, str | None]:
    """``ansible:INVENTORY[@HOST]`` -> (inventory, host or None)."""
    spec = target.split(":", 1)[1] if ":" in target else ""
    inv, _, host = spec.partition("@")
    if not inv:
        raise InputError("--target ansible:INVENTORY needs an inventory file, e.g. "
                         "--target ansible:ansible/inventories/local.yml")
    path = Path(inv)
    if not path.exists():
        raise UnavailableError(f"--target {target}: inventory {inv} does not exist")
    return path.resolve(), host or None


def inventory_hosts(inventory: Path) -> list[Host]:
    """The hosts of the inventory's mysql_servers group (all hosts if it has none)."""
    r = proc.run([_ansible_bin("ansible-inventory"), "-i", str(inventory), "--list"],
                 env=_env(), timeout=120, what=f"ansible-inventory -i {inventory}")
    data = json.loads(r.stdout)
    hostvars = data.get("_meta", {}).get("hostvars", {})

    def members(group: str) -> list[str]:
        g = data.get(group, {})
        out = list(g.get("hosts", []))
        for child in g.get("children", []):
            out += [h for h in members(child) if h not in out]
        return out

    names = members(GROUP) or members("all")
    if not names:
        raise FindingError(f"inventory {inventory}: no hosts (put them in a '{GROUP}' group)")
    return [Host(n, dict(hostvars.get(n, {}))) for n in names]


def split_servers(servers: list[str], hosts: list[Host]) -> dict[str, list[str]]:
    """Servers of a matrix spread over hosts, round robin: host -> its servers."""
    out: dict[str, list[str]] = {}
    for i, s in enumerate(servers):
        out.setdefault(hosts[i % len(hosts)].name, []).append(s)
    return out


class Playbooks:
    """Runs the harness's playbooks on one host and keeps every call's output."""

    def __init__(self, inventory: Path, host: Host, progress: Callable[[str], None]):
        self.inventory = inventory
        self.host = host
        self.progress = progress
        self.logs: list[Path] = []
        self.log_dir = Path(tempfile.mkdtemp(prefix="ansible-", dir=_tmp_root()))

    def run(self, playbook: str, extra: Mapping[str, Any]) -> None:
        """``ansible-playbook -i INVENTORY --limit HOST playbook.yml -e @vars``; raises
        ProviderError with the failed task and its message."""
        n = len(self.logs) + 1
        log = self.log_dir / f"{n:02d}-{playbook}.log"
        self.logs.append(log)
        fd, varfile = tempfile.mkstemp(prefix="vars-", suffix=".yml", dir=_tmp_root())
        try:
            with os.fdopen(fd, "w") as f:  # 0600 from mkstemp: it may hold a password
                f.write(unsafe_yaml({"mysql_harness_hosts": self.host.name, **extra}))
            argv = [_ansible_bin("ansible-playbook"), "-i", str(self.inventory), "--limit",
                    self.host.name, str(ANSIBLE_DIR / f"{playbook}.yml"), "-e", f"@{varfile}"]
            self._stream(argv, log, playbook)
        finally:
            os.unlink(varfile)

    def _stream(self, argv: list[str], log: Path, playbook: str) -> None:
        task = ""
        failed: list[str] = []

        def on_line(line: str) -> None:
            nonlocal task
            m = re.match(r"TASK \[(.*?)\]", line)
            if m:
                task = m.group(1).split(" : ")[-1]
                self.progress(f"{self.host.name}: {playbook}: {task}")
            elif line.startswith(("fatal:", "failed:")) or "UNREACHABLE!" in line:
                failed.append(f"{task}: {_message(line)}")

        with proc.LineStream(argv, on_line, log_path=log, env=_env(), cwd=ANSIBLE_DIR,
                             what=f"ansible-playbook {playbook}.yml") as p:
            try:
                rc = p.wait(PLAYBOOK_TIMEOUT_S, check=False)
            except ToolError:
                rc, failed = -1, [*failed, f"timed out after {PLAYBOOK_TIMEOUT_S:.0f} s"]
        if rc != 0:
            why = "; ".join(failed) or f"exit code {rc}"
            if rc == 4 or any("UNREACHABLE" in f for f in failed):
                why = f"host unreachable: {why}"
            raise ProviderError(f"ansible {playbook}.yml on {self.host.name} failed: {why} "
                                f"(log {log})")

    @classmethod
    def once(cls, inventory: Path, host: Host, progress: Callable[[str], None],
             playbook: str, extra: Mapping[str, Any]) -> None:
        """Run one playbook outside a server's life (facts, host tuning); its log goes
        with it."""
        books = cls(inventory, host, progress)
        try:
            books.run(playbook, extra)
        finally:
            shutil.rmtree(books.log_dir, ignore_errors=True)


class _UnsafeDumper(yaml.SafeDumper):
    """Every string tagged !unsafe: Ansible never templates what the harness passes
    (a my.cnf value '{{ lookup("pipe", "id") }}' stays those characters).

    ansible-core 2.19 reads an ``!unsafe`` scalar as if it were plain, quotes or not:
    ``!unsafe 'ON'`` arrives as true and ``!unsafe '007'`` as 7. A string that YAML
    would read as something else (a number, a boolean, null, a date) has no template
    in it, so it goes quoted and untagged, and arrives as the same string."""


def _unsafe_str(d: yaml.SafeDumper, v: str) -> yaml.ScalarNode:
    if d.resolve(yaml.ScalarNode, v, (True, False)) != "tag:yaml.org,2002:str":
        return d.represent_scalar("tag:yaml.org,2002:str", v, style="'")
    return d.represent_scalar("!unsafe", v, style='"' if "\n" in v else None)


_UnsafeDumper.add_representer(str, _unsafe_str)


def unsafe_yaml(extra: Mapping[str, Any]) -> str:
    # In the given order: the role renders my.cnf in it, and reads it back in it.
    return yaml.dump(dict(extra), Dumper=_UnsafeDumper, default_flow_style=False,
                     sort_keys=False)


def _message(line: str) -> str:
    """The msg of a fatal/failed line (`fatal: [h]: FAILED! => {...}`)."""
    _, _, rest = line.partition("=>")
    try:
        data = json.loads(rest)
        return str(data.get("msg") or data.get("stderr") or data)[:600]
    except ValueError:
        return line.strip()[:600]


def _tmp_root() -> Path:
    d = cache_dir() / "ansible" / "tmp"
    d.mkdir(parents=True, exist_ok=True)
    return d


def build_archive(build: Build) -> Path:
    """A .tar.gz of the catalog build for the role to unpack: symlinks followed (the
    Debian build's point into /usr), except in a build with its own root, whose links
    stay inside it."""
    out = cache_dir() / "ansible" / f"{build.name}.tar.gz"
    stamp = out.with_suffix(".source")
    if out.exists() and stamp.exists() and stamp.read_text() == build.version_string:
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    with tarfile.open(tmp, "w:gz", dereference=not build.own_root) as tar:
        for child in sorted(build.root.iterdir()):
            tar.add(child, arcname=child.name)
    tmp.rename(out)
    stamp.write_text(build.version_string)
    return out


class SSHShell(RemoteShell):
    """Programs on a lab host over SSH, with the inventory's connection variables.

    A client program's folder there (``tmp``) is root's, 0711, its files the client
    account's, 0600: the account reads what it is given and can plant nothing in the
    folder root writes to. The playbooks make the account (``mysql_server_client_user``).
    Connected as another user than root, the programs run as that user."""

    def __init__(self, host: Host, tmp: str, client_user: str):
        v = host.vars
        self.where = host.name
        self.tmp = tmp
        self.client_user = client_user
        self.prefix = ["ssh", "-o", "BatchMode=yes", "-p", str(v.get("ansible_port", 22))]
        if v.get("ansible_ssh_private_key_file"):
            self.prefix += ["-i", str(v["ansible_ssh_private_key_file"])]
        self.prefix += shlex.split(str(v.get("ansible_ssh_common_args", "")))
        user = v.get("ansible_user")
        self.prefix.append(f"{user}@{host.address_ssh}" if user else host.address_ssh)

    def wrap(self, argv: list[str]) -> list[str]:
        # -tt is not used: sysbench's output is line-buffered into the pipe anyway, and
        # the remote process gets SIGHUP when the connection closes.
        return [*self.prefix, shlex.join(argv)]

    def wrap_client(self, argv: list[str]) -> list[str]:
        # setpriv execs the program itself (no parent left to pass SIGHUP on), with
        # the account's groups alone.
        u, cmd = shlex.quote(self.client_user), shlex.join(argv)
        return [*self.prefix,
                f"cd {shlex.quote(self.tmp)} || exit 1; if [ \"$(id -u)\" = 0 ]; then "
                f"exec setpriv --reuid={u} --regid={u} --init-groups -- {cmd}; "
                f"else exec {cmd}; fi"]

    def put(self, local: Path) -> str:
        remote = f"{self.tmp}/{local.name}"
        d, f, u = shlex.quote(self.tmp), shlex.quote(remote), shlex.quote(self.client_user)
        r = proc.run([*self.prefix,
                      f"umask 022 && mkdir -p {d} && chown root: {d} 2>/dev/null; "
                      f"chmod 0711 {d} && umask 077 && rm -f {f} && cat > {f} && "
                      f"if [ \"$(id -u)\" = 0 ]; then chown {u}: {f}; fi"],
                     input=local.read_text(), timeout=60, check=False,
                     what=f"copying {local.name} to {self.where}")
        if r.returncode != 0:
            raise ProviderError(f"copying {local.name} to {self.where} failed: "
                                f"{r.stderr.strip()}")
        return remote

    def remove(self, path: str) -> None:
        # The folder goes with its last file (a server's runs put and remove one each).
        proc.run([*self.prefix, f"rm -f {shlex.quote(path)}; "
                  f"rmdir {shlex.quote(self.tmp)} 2>/dev/null; true"], timeout=60,
                 check=False, what=f"removing {path} on {self.where}")


class AnsibleServer(Server):
    """A sandbox on a lab host, made and run by the playbooks."""

    def __init__(self, build: Build, host: Host, books: Playbooks):
        self.build = build
        self.host_ = host
        self.books = books
        self.name = f"{build.name}-{secrets.token_hex(3)}"
        self.owned = True
        self.remote_dir = Path(host.root) / "sandboxes" / self.name
        self.datadir = self.remote_dir / "data"
        # One folder per build as it is today: a catalog entry that changed (another
        # version, another layout) never unpacks over what an older one left there.
        stamp = hashlib.sha256(build.version_string.encode()).hexdigest()[:8]
        self.basedir = Path(host.root) / "builds" / f"{build.name}-{stamp}"
        # Programs on the host (sysbench with client: db_host, OS collectors) go over SSH.
        # A client program's files go to a folder of root's beside the sandboxes (not
        # in one: only mysqld's group passes a sandbox), never to one mysqld's account
        # could plant a link in.
        self._shell = None if host.local else SSHShell(
            host, str(Path(host.root) / "clients" / self.name), osuser.client_account_name())
        # Not probed remotely: a port derived from the name, away from common services.
        self.port = free_port() if host.local else 20000 + zlib.crc32(self.name.encode()) % 20000
        self._password = os.environ.get("HARNESS_SANDBOX_PASSWORD") or new_password()
        self.endpoint = Endpoint(host.address, self.port, HARNESS_USER, self._password, None)
        self._pid: int | None = None
        self.host_pid: int | None = None  # mysqld's pid on the host, wherever that is
        self._running = False
        self._stopped_by_us = False
        self._scratch: Path | None = None
        self._probe: pymysql.connections.Connection | None = None  # is_running's
        self._probe_lock = threading.Lock()

    # --- the role's variables ------------------------------------------------------------

    def _vars(self, **more: Any) -> dict[str, Any]:
        inside = self.build.relocated(self.basedir)
        return {"mysql_server_name": self.build.name,
                "mysql_server_sandbox": str(self.remote_dir),
                "mysql_server_basedir": str(self.basedir),
                "mysql_server_mysqld": str(inside.mysqld),
                "mysql_server_env": ({"LD_LIBRARY_PATH": str(inside.lib_dir)}
                                     if inside.lib_dir else {}),
                "mysql_server_port": self.port, "mysql_server_bind": self.host_.address,
                "mysql_server_os_user": osuser.account_name(),
                "mysql_server_client_user": osuser.client_account_name(), **more}

    def _sandbox_options(self) -> dict[str, Value | None]:
        """The sandbox's own [mysqld] options on the host, first in its my.cnf."""
        d = self.remote_dir
        return {"basedir": str(self.basedir), "datadir": str(d / "data"),
                # its messages (5.7 logs blank lines without its errmsg.sys)
                "lc-messages-dir": str(self.build.relocated(self.basedir).share_dir),
                "socket": str(d / "run" / "mysqld.sock"), "port": self.port,
                "bind-address": self.host_.address, "pid-file": str(d / "run" / "mysqld.pid"),
                "log-error": str(d / ERROR_LOG), "tmpdir": str(d / "tmp"),
                "secure-file-priv": str(d / "files"), "init-file": str(d / "run" / "init.sql"),
                "skip-name-resolve": None, "user": osuser.account_name()}

    def create(self, datadir_from: Path | None) -> None:
        inside = self.build.relocated(self.basedir)
        if datadir_from is None:
            init = inside.init_argv(str(self.datadir), str(self.remote_dir / "tmp"),
                                    user=osuser.account_name())
            self._provision(init)
            return
        with snapshot.restoring(datadir_from) as held:  # on this machine (local hosts)
            self._provision(["cp", "-a", f"{held}/.", str(self.datadir)])

    def _provision(self, init: list[str]) -> None:
        self.books.run("provision", self._vars(
            mysql_server_build_archive=str(build_archive(self.build)),
            mysql_server_init_argv=init))

    # --- lifecycle --------------------------------------------------------------------

    def start(self, options: Mapping[str, Value | None] | None = None) -> None:
        if self._running:
            raise ProviderError(f"{self.name}: already running")
        state = _tmp_root() / f"state-{self.name}.json"
        # The build's own options (its plugin folder, as unpacked on the host; mysqlx off).
        own = self.build.relocated(self.basedir).server_options()
        sandbox = self._sandbox_options()
        for k, v in (options or {}).items():
            if why := hostpaths.sandbox_refusal(self.build, [*own, *sandbox], k, v):
                raise ProviderError(f"{self.name}: {why}; not started")
        wanted = {**own, **(options or {})}
        opts = {k: (None if v is None else fmt_value(v)) for k, v in wanted.items()}
        try:
            self.books.run("start", self._vars(
                mysql_server_options=opts, mysql_server_sandbox_options=sandbox,
                # the role's template writes the sandbox's options, then the variant's
                mysql_server_print_defaults=printed_defaults({**sandbox, **wanted}.items()),
                mysql_server_state_out=str(state),
                mysql_server_cgroups=[str(d) for d in self.cgroups],
                mysql_server_init_sql=accounts.init_sql(
                    self.build, HARNESS_USER, self._password, ACCOUNT_HOSTS)))
            info = json.loads(state.read_text())
        finally:
            state.unlink(missing_ok=True)
        self.host_pid = int(info["pid"])
        self._pid = self.host_pid if self.host_.local else None
        self._running = True
        self._stopped_by_us = False
        with mysql_connection(self.endpoint, via_socket=False) as conn:
            accounts.lock_down(conn, HARNESS_USER)
        # The running server's own word against the option names judged above.
        if why := accounts.open_without_password(host=self.endpoint.host,
                                                 port=self.endpoint.port):
            self.stop()
            raise ProviderError(f"{self.name}: {why}; stopped, not used")

    def stop(self) -> None:
        if not self._running:
            return
        self._close_probe()
        self._stopped_by_us = True
        self.books.run("stop", self._vars())
        self._running = False
        self._pid = None

    def destroy(self) -> None:
        self._close_probe()
        try:
            if not (self.host_.local or self._ssh_greets()):  # not minutes of ansible retries
                raise ProviderError(f"{self.host_.name} is unreachable: its SSH port "
                                    f"({self.host_.address}) does not answer")
            self.books.run("teardown", self._vars())
        except ProviderError as e:
            raise ProviderError(
                f"{e}\n  left on {self.host_.name}: sandbox {self.remote_dir}; once the host "
                f"is back: ansible-playbook -i {self.books.inventory} "
                f"{ANSIBLE_DIR / 'teardown.yml'} --limit {self.host_.name} "
                f"-e mysql_server_sandbox={self.remote_dir}") from None
        finally:
            self._running = False
            if self._scratch is not None:
                shutil.rmtree(self._scratch, ignore_errors=True)
            shutil.rmtree(self.books.log_dir, ignore_errors=True)

    @property
    def is_running(self) -> bool:
        if not self._running:
            return False
        if self._pid is not None:
            return proc.pid_alive(self._pid)
        return self._pings()

    def _pings(self) -> bool:
        """mysqld answers a COM_PING on a connection of the harness's own, opened once. A
        TCP connect proves little (a proxy may accept any connection), and a connection
        a check would mean a Connections counter and an error log that go up with it."""
        with self._probe_lock:  # the run's watchdog and the runner both ask
            try:
                if self._probe is None:
                    self._probe = self.endpoint.connect(timeout=2, read_timeout=2,
                                                        write_timeout=2, via_socket=False)
                self._probe.ping(reconnect=False)
                return True
            except (pymysql.err.MySQLError, OSError):
                self._close_probe()
                return False

    def _close_probe(self) -> None:
        if self._probe is not None:
            try:
                self._probe.close()
            except Exception:  # noqa: BLE001 - the link is already broken; best effort
                pass
            self._probe = None

    @property
    def pid(self) -> int | None:
        return self._pid if self._pid is not None and proc.pid_alive(self._pid) else None

    @property
    def remote_host(self) -> str | None:
        return None if self.host_.local else f"{self.host_.name} ({self.host_.address})"

    @property
    def remote_shell(self) -> RemoteShell | None:
        return self._shell

    def drop_page_cache(self, disposable: bool) -> str | None:
        """On the lab host itself (over SSH), never this machine's; only a host the
        scenario marks disposable and the command line repeats it."""
        if not disposable:
            return (f"{self.host_.name} is a lab host not marked disposable (host: "
                    "{disposable: true} and --i-know-this-is-disposable)")
        if self._shell is None:  # the lab host is this machine
            return super().drop_page_cache(disposable)
        argv = self._shell.wrap(["sh", "-c", "sync && echo 1 > /proc/sys/vm/drop_caches"])
        r = proc.run(argv, timeout=120, check=False, what=f"drop caches on {self.host_.name}")
        if r.returncode != 0:
            return f"cannot drop the page cache on {self.host_.name}: {r.stderr.strip()[-200:]}"
        return None

    def death(self) -> str | None:
        """If mysqld stopped answering on its own: how, with what the host says."""
        if not self._running or self._stopped_by_us or self.is_running:
            return None
        where = f"mysqld of {self.name} on {self.host_.name}"
        if self.host_.local:
            return (f"{where} exited during the run; error log "
                    f"{self.remote_dir / ERROR_LOG}:\n" + "\n".join(
                        "    " + ln for ln in error_log_tail(
                            self.remote_dir / ERROR_LOG).splitlines()))
        if not self._ssh_greets():
            return (f"{where}: the host is unreachable ({self.host_.address} answers "
                    "neither mysqld's port nor SSH)")
        return f"{where} stopped answering on {self.host_.address}:{self.port}"

    def _ssh_greets(self) -> bool:
        return _greets(self.host_.address, int(self.host_.vars.get("ansible_port", 22)))

    def host_profile(self, limits: Limits) -> CgroupProfile:
        """The profile's cgroups on the lab host, made there by the host_profile role."""
        return LabProfile(self, limits)

    # --- files --------------------------------------------------------------------------

    @property
    def scratch(self) -> Path:
        """Side loads run on the controller: their files go here (on the host itself
        when the host is this machine)."""
        if self._scratch is None:
            base = self.remote_dir if self.host_.local else sandbox_dir()
            self._scratch = Path(tempfile.mkdtemp(prefix="scratch-", dir=_mk(base)))
        return self._scratch

    def _local_only(self, what: str) -> None:
        if not self.host_.local:
            raise ProviderError(f"{self.name} on {self.host_.name}: {what} needs the datadir "
                                "on this machine (dataset snapshots are for local hosts)")

    def replace_datadir(self, src: Path) -> None:
        self._local_only("restoring a snapshot")
        replace_owned_datadir(self.name, self._running, self.remote_dir, self.datadir, src)
        osuser.hand_over(self.datadir, osuser.mysqld_account(), 0o700)  # this machine

    def save_datadir(self, key: str, meta: dict[str, object]) -> tuple[Path, float]:
        self._local_only("saving a snapshot")
        return snapshot.save(key, self.datadir, meta)

    def collect_artifacts(self, dest: Path) -> None:
        """The playbooks' output so far, and my.cnf and the error log of the host."""
        d = dest / "ansible"
        d.mkdir(parents=True, exist_ok=True)
        for log in self.books.logs:
            if log.exists():
                shutil.copyfile(log, d / log.name)
        if self.host_.local:  # (mysqld's account writes the log: no link followed)
            for name in ("my.cnf", ERROR_LOG):
                osuser.copy_mysqld_file(self.remote_dir / name, dest / Path(name).name)
        elif self._ssh_greets():  # or each fetch waits 2 min
            # The error log is read there as mysqld's account, into a file of root's.
            copy = self.remote_dir / "error.log.copy"
            self._adhoc("ansible.builtin.shell",
                        f"runuser -u {shlex.quote(osuser.account_name())} -- cat "
                        f"{shlex.quote(str(self.remote_dir / ERROR_LOG))} > "
                        f"{shlex.quote(str(copy))}")
            for src, to in ((self.remote_dir / "my.cnf", "my.cnf"), (copy, "error.log")):
                self._adhoc("ansible.builtin.fetch", f"src={src} dest={dest / to} "
                            "flat=true fail_on_missing=false")

    def _adhoc(self, module: str, args: str) -> None:
        proc.run([_ansible_bin("ansible"), "-i", str(self.books.inventory), self.host_.name,
                  "-m", module, "-a", args], env=_env(), timeout=120, check=False,
                 what=f"{module} on {self.host_.name}")


class LabProfile(CgroupProfile):
    """A host profile's cgroups on a lab host. harness/host/profile.py itself runs there
    (profile.yml, the host_profile role) for each step; this object keeps what it made.
    mysqld starts inside them through the start playbook (``mysql_server_cgroups``)."""

    def __init__(self, server: AnsibleServer, limits: Limits):
        super().__init__(limits, server.datadir, server.name)
        self.server = server

    def apply(self) -> dict[str, Any]:
        self._adopt(profile_step(self.server.books, "apply", {
            "limits": asdict(self.spec), "datadir": str(self.datadir),
            "label": self.server.name}))
        return dict(self.in_force)

    def enter(self) -> list[Path]:
        return list(self.dirs.values())  # the swappiness was set on the host by apply

    def attach(self, pid: int | None = None) -> dict[str, Any]:
        """Moves mysqld (its pid on the host, not ``pid``) into the cgroups there."""
        if self.server.host_pid is None:
            raise ProviderError(f"{self.server.name}: no mysqld pid from "
                                f"{self.server.host_.name} to put in its host profile")
        self.in_force = profile_step(self.server.books, "attach",
                                     {"state": self.state(), "pid": self.server.host_pid})
        return dict(self.in_force)

    def place_threads(self, tids: list[int]) -> dict[str, Any]:
        """mysqld's threads (by their ids on the host) into the thread group there."""
        self.in_force = profile_step(self.server.books, "threads",
                                     {"state": self.state(), "tids": tids})
        return dict(self.in_force)

    def close(self) -> None:
        if not self.dirs and self.thread_dir is None:
            return
        try:
            profile_step(self.server.books, "close", {"state": self.state()})
        except ProviderError as e:  # a teardown goes on; what is left is named
            self.server.books.progress(f"warning: host profile cgroups "
                                       f"{', '.join(map(str, self.dirs.values()))} left on "
                                       f"{self.server.host_.name}: {e}")
        self.dirs.clear()
        self.thread_dir = None


def profile_step(books: Playbooks, action: str, args: Mapping[str, Any]) -> Any:
    """One step of harness/host/profile.py on ``books``' host; ProfileError (naming the
    host) for a profile the host cannot apply."""
    out = _tmp_root() / f"profile-{secrets.token_hex(4)}.json"
    try:
        books.run("profile", {"host_profile_action": action, "host_profile_args": dict(args),
                              "host_profile_script": profile.__file__,
                              "host_profile_out": str(out)})
        got = json.loads(base64.b64decode(out.read_text()))
    finally:
        out.unlink(missing_ok=True)
    if "error" in got:
        raise ProfileError(f"on lab host {books.host.name}: {got['error']}")
    return got["ok"]


def try_profile(inventory: Path, host: Host, limits: Limits,
                progress: Callable[[str], None]) -> dict[str, Any]:
    """Apply ``limits`` once on ``host`` (a cgroup of its own for the filesystem of its
    sandboxes) and take them away: what would be in force, or ProfileError."""
    books = Playbooks(inventory, host, progress)
    try:
        return dict(profile_step(books, "try", {"limits": asdict(limits),
                                                "datadir": f"{host.root}/sandboxes"}))
    finally:
        shutil.rmtree(books.log_dir, ignore_errors=True)


def _mk(d: Path) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    return d


def _greets(host: str, port: int, timeout: float = 2.0) -> bool:
    """The service at host:port speaks first within ``timeout`` (sshd sends its banner at
    once). A bare connect is not enough: a proxy on the way may accept any connection."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as s:
            return bool(s.recv(1))
    except OSError:
        return False


class AnsibleProvider(Provider):
    """Servers on the hosts of an Ansible inventory (one host per harness process)."""

    target = "ansible"
    tunes_host = True

    def __init__(self, target: str):
        self.inventory, pinned = parse_target(target)
        hosts = inventory_hosts(self.inventory)
        if pinned is not None:
            hosts = [h for h in hosts if h.name == pinned]
            if not hosts:
                raise InputError(f"--target {target}: no host {pinned} in {self.inventory}")
        self.host = hosts[0]
        self.host_name = self.host.name
        self.snapshots = self.host.local  # dataset snapshots need the datadir here
        self.tuned = False
        self.progress: Callable[[str], None] = lambda _msg: None
        self._facts: dict[str, Any] | None = None

    def provision(self, build: Build, label: str = "",
                  datadir_from: Path | None = None) -> AnsibleServer:
        books = Playbooks(self.inventory, self.host, self.progress)
        server = AnsibleServer(build, self.host, books)
        try:
            server.create(datadir_from)
        except BaseException:
            try:
                books.run("teardown", server._vars())
            except ProviderError:
                pass
            raise
        return server

    def host_facts(self) -> dict[str, Any]:
        """What collect-facts.yml says about the host (asked once)."""
        if self._facts is None:
            try:
                self._facts = self._collect_facts()
            except ProviderError as e:  # the run that follows fails and says why
                return {"host": self.host.name, "error": str(e)}
        return self._facts

    def _collect_facts(self) -> dict[str, Any]:
        out = _tmp_root() / f"facts-{secrets.token_hex(3)}.json"
        try:
            self._playbook("collect-facts", {"mysql_harness_facts_out": str(out)})
            return dict(json.loads(out.read_text()))
        finally:
            out.unlink(missing_ok=True)

    def _playbook(self, playbook: str, extra: Mapping[str, Any]) -> None:
        Playbooks.once(self.inventory, self.host, self.progress, playbook, extra)

    def tune(self, sysctls: Mapping[str, str], disposable: bool) -> dict[str, str]:
        """Set a run's vm.* sysctls on the host with the os_tuning role (which refuses
        unless the host is disposable); the first values are recorded there and put
        back by :meth:`untune` or any teardown."""
        self._playbook("tune", {"os_tuning_sysctls": dict(sysctls),
                                "os_tuning_disposable": disposable})
        self.tuned = True
        return dict(sysctls)

    def untune(self) -> None:
        if not getattr(self, "tuned", False):
            return
        self._playbook("tune", {"os_tuning_revert": True})
        self.tuned = False


PLUGIN = ProviderKind("ansible", AnsibleProvider, argument="INVENTORY")
