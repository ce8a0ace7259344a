"""Docker containers (docker-py): each server of the matrix is a container of a local
image (``harness images build``) or an official one pulled by hand.

A container server is a sandbox whose mysqld runs in a container: the same directory
with its ownership marker, datadir, error log and socket, bind-mounted into the
container at the same path (so snapshots, side-load files and error logs work as they
do for a local sandbox); the rendered my.cnf mounted read-only; mysqld's port 3306
published on 127.0.0.1 on a free port, which is what workloads, side loads and
collectors connect to. A host profile becomes the container's cgroup parent: the
profile's memory and cpuset cgroups hold its limits, the container's sit inside them, so
mysqld counts against them from its first allocation, as a local one does. Its IO limits
go on the container itself (``--device-read-iops`` and friends), since a cgroup v1 blkio
throttle does not reach child cgroups. Containers carry
labels naming them the harness's own (and the harness process), and are removed at
the end, on failure and on Ctrl-C; ``make clean-sandboxes`` removes those of a
harness that was killed.
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
from pathlib import Path
from typing import Any

from .. import proc
from ..errors import ProviderError
from ..paths import sandbox_dir
from ..server import osuser
from ..server.catalog import Build
from ..server.mycnf import Value
from ..server.mysql import Endpoint
from . import images
from .base import Provider, ProviderKind
from .dockerd import client, running_client
from .local import HARNESS_USER, Sandbox, error_log_tail

LABEL = images.LABEL
CONFIG_IN_CONTAINER = "/etc/mysql-harness/my.cnf"
STOP_TIMEOUT_S = 90


def _fill(argv: list[str], **values: str) -> list[str]:
    out = []
    for a in argv:
        for k, v in values.items():
            a = a.replace("{" + k + "}", v)
        out.append(a)
    return out


def cgroup_parent(dirs: list[Path]) -> str | None:
    """The one cgroup path (relative to each controller's root) of a host profile's
    cgroups, for ``--cgroup-parent``; None without a profile."""
    if not dirs:
        return None
    from ..host.profile import CGROUP_ROOT
    rel = {str(Path(*d.relative_to(CGROUP_ROOT).parts[1:])) for d in dirs}
    if len(rel) != 1:
        raise ProviderError("host_profile: its cgroups sit at different paths in different "
                            f"controllers ({', '.join(sorted(rel))}); Docker takes one cgroup "
                            "parent for all of them")
    return "/" + rel.pop()


class ContainerServer(Sandbox):
    """A sandbox directory whose mysqld runs in a Docker container."""

    user_hosts = ("localhost", "%")  # from the host, connections come through the bridge
    container_cgroups = True

    def __init__(self, build: Build, directory: Path, spec: images.ImageSpec):
        super().__init__(build, directory)
        self.spec = spec
        self.ctr: Any = None
        self.exit_status: dict[str, Any] | None = None
        # Workloads and collectors use the published port, never the socket.
        self.endpoint = Endpoint("127.0.0.1", self.port, HARNESS_USER, self._password, None)

    @property
    def run_as(self) -> str:
        """uid:gid the container runs as: mysqld's account (never root), which owns the
        sandbox directory mounted into it."""
        a = self.account
        return a.docker_user if a is not None else f"{os.getuid()}:{os.getgid()}"

    # --- datadir ----------------------------------------------------------------------

    def _initialise(self, tmp: Path) -> None:
        """Run the image's declared init command in a one-off container."""
        # Images made before mysqld ran unprivileged declare --user=root: the container
        # runs as mysqld's account instead, so the bootstrap has no user to switch to.
        argv = [a for a in _fill(self.spec.init, datadir=str(self.datadir), tmpdir=str(tmp))
                if not a.startswith("--user=")]
        log_dir = self.dir / "init"
        log_dir.mkdir(exist_ok=True)
        c = client().containers.run(
            self.spec.image, argv, detach=True, labels=self._labels("init"),
            volumes={str(self.dir): {"bind": str(self.dir), "mode": "rw"}},
            working_dir=self.spec.basedir, environment={**self.spec.env, "TMPDIR": str(tmp)},
            network_mode="none", user=self.run_as)
        try:
            rc = c.wait(timeout=300).get("StatusCode")
            logs = c.logs().decode(errors="replace")
        finally:
            c.remove(force=True)
        (log_dir / "init.command").write_text(" ".join(argv) + "\n")
        (log_dir / "init.log").write_text(logs)
        if rc != 0:
            tail = "\n".join("    " + ln for ln in logs.splitlines()[-12:])
            raise ProviderError(f"{self.name}: datadir initialisation in {self.spec.image} "
                                f"exited with code {rc}: {' '.join(argv)}\n{tail}")

    # --- config -----------------------------------------------------------------------

    def base_options(self) -> dict[str, Value | None]:
        opts = super().base_options()
        opts.update({"basedir": self.spec.basedir, "lc-messages-dir": self.spec.lc_messages_dir,
                     "port": 3306, "bind-address": "0.0.0.0"})
        opts.pop("user", None)  # the container itself runs as mysqld's account
        if self.build.plugin_dir is not None:  # the build's plugin folder, in the image
            opts["plugin-dir"] = str(Path(self.spec.basedir) /
                                     self.build.plugin_dir.relative_to(self.build.root))
        return opts

    @property
    def listens_on(self) -> str:
        """Every address of the container's own network, port 3306: the host reaches
        it at 127.0.0.1 and the sandbox's port alone, through docker's publish."""
        return "0.0.0.0:3306"

    # --- lifecycle --------------------------------------------------------------------

    def _labels(self, role: str) -> dict[str, str]:
        return {f"{LABEL}.owned": "true", f"{LABEL}.role": role,
                f"{LABEL}.harness-pid": str(os.getpid()),
                f"{LABEL}.sandbox": str(self.dir)}

    def keep(self, run_set: str) -> str:
        raise ProviderError(f"{self.name}: --keep keeps local sandboxes only, not containers")

    def _launch(self, outlive: bool = False) -> None:
        """The container (it lives as long as the harness lets it: no ``outlive``)."""
        self._remove_container()
        self.exit_status = None
        self.ctr = client().containers.run(
            self.spec.image, _fill(self.spec.start, config=CONFIG_IN_CONTAINER),
            detach=True, name=f"mysql-harness-{self.name}-{secrets.token_hex(2)}",
            labels=self._labels("server"),
            volumes={str(self.dir): {"bind": str(self.dir), "mode": "rw"},
                     str(self.cnf_path): {"bind": CONFIG_IN_CONTAINER, "mode": "ro"}},
            ports={"3306/tcp": ("127.0.0.1", self.port)}, environment=self.spec.env,
            cgroup_parent=cgroup_parent(self.cgroups), stop_signal="SIGTERM", user=self.run_as,
            **self._io_options())

    def _io_options(self) -> dict[str, list[dict[str, Any]]]:
        """The host profile's IO limits as the container's own (docker --device-read-iops
        and friends): cgroup v1 applies a blkio throttle only to the cgroup that has it."""
        names = {"blkio.throttle.read_iops_device": "device_read_iops",
                 "blkio.throttle.write_iops_device": "device_write_iops",
                 "blkio.throttle.read_bps_device": "device_read_bps",
                 "blkio.throttle.write_bps_device": "device_write_bps"}
        return {names[f]: [{"Path": dev, "Rate": rate}]
                for f, (dev, rate) in self.io_limits.items()}

    @property
    def notes(self) -> list[str]:
        """A published port served by docker-proxy (a daemon started with its default
        userland proxy) costs throughput: every byte goes through that process."""
        for _pid, argv in proc.processes():
            if argv[0].endswith("docker-proxy") and str(self.port) in argv:
                return [f"port {self.port} is forwarded by docker-proxy (the Docker daemon "
                        "runs with its userland proxy): throughput is lower than on a local "
                        "sandbox for that alone (measured here: 560 vs 1,756 tps, "
                        "quickstart); start dockerd with --userland-proxy=false"]
        return []

    def _state(self) -> dict[str, Any]:
        if self.ctr is None:
            return {}
        from docker.errors import NotFound
        try:
            self.ctr.reload()
        except NotFound:
            return {}
        return dict(self.ctr.attrs.get("State") or {})

    def _exited(self) -> bool:
        state = self._state()
        if state.get("Running"):
            return False
        if state:
            self.exit_status = state
        self._remove_container()
        return True

    @property
    def is_running(self) -> bool:
        return bool(self._state().get("Running"))

    @property
    def pid(self) -> int | None:
        """mysqld's pid on this host (it is the container's first process)."""
        state = self._state()
        return int(state["Pid"]) if state.get("Running") and state.get("Pid") else None

    @property
    def container(self) -> str | None:
        return self.ctr.name if self.ctr is not None else None

    def stop(self) -> None:
        if self.ctr is None:
            return
        if self.is_running:
            # docker stop: SIGTERM (mysqld's clean shutdown), SIGKILL after the timeout.
            self.ctr.stop(timeout=STOP_TIMEOUT_S)
        self._remove_container()

    def kill(self) -> None:
        if self.ctr is not None and self.is_running:
            self.ctr.kill()
            self.ctr.wait(timeout=30)

    def _remove_container(self) -> None:
        if self.ctr is None:
            return
        from docker.errors import NotFound
        try:
            self.ctr.remove(force=True)
        except NotFound:
            pass
        self.ctr = None

    def death(self) -> str | None:
        """If mysqld's container ended on its own: how, with the error log's tail."""
        if self.ctr is None:
            return None  # stopped by the harness, or never started
        state = self._state() or self.exit_status or {}
        if state.get("Running"):
            return None
        rc = state.get("ExitCode")
        how = (f"the container was killed by the OOM killer (exit code {rc})"
               if state.get("OOMKilled") else f"the container exited with code {rc}"
               + (" (SIGKILL)" if rc == 137 else ""))
        return (f"mysqld of {self.name} ({self.spec.image}): {how} during the run; error log "
                f"{self.error_log}:\n" + "\n".join(
                    "    " + ln for ln in error_log_tail(self.error_log).splitlines()))

    def _last_resort(self) -> None:
        self._remove_container()

    def collect_artifacts(self, dest: Path) -> None:
        super().collect_artifacts(dest)
        (dest / "container.json").write_text(json.dumps({
            "image": self.spec.image, "server": self.spec.server,
            "start": self.spec.start, "init": self.spec.init}, indent=2))


class DockerProvider(Provider):
    """Servers as containers on this host's Docker daemon."""

    target = "docker"

    def provision(self, build: Build, label: str = "",
                  datadir_from: Path | None = None) -> ContainerServer:
        spec = images.find_image(build.name)
        root = sandbox_dir()
        osuser.open_folder(root)
        directory = root / f"docker-{build.name}-{secrets.token_hex(3)}"
        server = ContainerServer(build, directory, spec)
        try:
            server.create(datadir_from)
        except BaseException:
            server._remove_container()
            shutil.rmtree(directory, ignore_errors=True)
            raise
        return server

    def remove_stale(self) -> list[str]:
        return remove_stale()


def remove_stale(verbose: bool = False) -> list[str]:
    """Remove the harness's containers whose harness process is gone (never starts a
    daemon to do it; containers without the harness's label are never touched)."""
    c = running_client()
    if c is None:
        return []
    removed = []
    for ct in c.containers.list(all=True, filters={"label": f"{LABEL}.owned=true"}):
        pid = int(ct.labels.get(f"{LABEL}.harness-pid", "0") or 0)
        if proc.pid_alive(pid):
            continue
        ct.remove(force=True)
        removed.append(ct.name)
        if verbose:
            print(f"removed stale container {ct.name}")
    return removed


PLUGIN = ProviderKind("docker", lambda _target: DockerProvider())
