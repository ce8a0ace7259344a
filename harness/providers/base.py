"""The provider interface: start a server from a build and options, stop it, and say
whether the harness owns it (a server the harness does not own is never re-initialised,
restarted or dropped)."""
from __future__ import annotations

import abc
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pymysql

from ..errors import ProviderError
from ..host import tuning
from ..host.profile import CgroupProfile, Limits
from ..proc import RemoteShell
from ..server.catalog import Build
from ..server.mycnf import Value
from ..server.mysql import Endpoint, connection, set_global

if TYPE_CHECKING:
    from ..scenario import DiskModel


class Server(abc.ABC):
    """A running (or stopped) server the harness can benchmark."""

    build: Build
    endpoint: Endpoint
    owned: bool
    name: str
    datadir: Path
    # cgroup directories mysqld starts in (a host profile's): its memory from the first
    # allocation counts against the profile's limit. Empty: where the harness runs.
    cgroups: list[Path] = []
    # True when those cgroups become a container's parent: one path in every controller.
    container_cgroups = False
    # The profile's IO limits (blkio.throttle file -> (device, rate)) for a container,
    # which must carry them itself: v1 blkio throttles do not apply to child cgroups.
    io_limits: dict[str, tuple[str, int]] = {}

    @abc.abstractmethod
    def start(self, options: Mapping[str, Value | None] | None = None) -> None:
        """Start with ``options`` layered on the harness's base config; wait until ready."""

    @abc.abstractmethod
    def stop(self) -> None:
        """Stop cleanly (then forcefully after a grace period)."""

    def restart(self, options: Mapping[str, Value | None] | None = None) -> None:
        self.stop()
        self.start(options)

    def run_under(self, launcher: Callable[[Path], list[str]]) -> Path:
        """From its next start, mysqld runs under ``launcher(folder)`` (a counter:
        callgrind), ``folder`` one that mysqld's account writes and the harness reads;
        returns it. Only a sandbox of this host can (ProviderError elsewhere)."""
        raise ProviderError(f"{self.name}: mysqld can run under a counter only in a "
                            "sandbox of this host (--target local)")

    @abc.abstractmethod
    def destroy(self) -> None:
        """Stop and remove everything the harness created for this server."""

    def keep(self, run_set: str) -> str:
        """Leave the server running after the harness exits (``--keep``); returns how to
        connect. Local sandboxes can; elsewhere it is refused."""
        raise ProviderError(f"{self.name}: --keep keeps local sandboxes only")

    def host_profile(self, limits: Limits) -> CgroupProfile:
        """The cgroups of a host profile for this server, not applied yet: on this
        machine (under a container's cgroup parent, for a container)."""
        return CgroupProfile(limits, self.datadir, self.name, at_root=self.container_cgroups)

    @abc.abstractmethod
    def collect_artifacts(self, dest: Path) -> None:
        """Copy the rendered config and error log into a run's artifact folder."""

    @property
    @abc.abstractmethod
    def is_running(self) -> bool: ...

    @property
    @abc.abstractmethod
    def scratch(self) -> Path:
        """A directory beside the datadir (same filesystem) for side loads' files."""

    @abc.abstractmethod
    def replace_datadir(self, src: Path) -> None:
        """Replace the stopped server's datadir with a copy of ``src``."""

    @abc.abstractmethod
    def save_datadir(self, key: str, meta: dict[str, object]) -> tuple[Path, float]:
        """Copy the stopped server's datadir as a snapshot; (its path, seconds)."""

    def set_global(self, options: Mapping[str, Value | None]) -> str | None:
        """SET GLOBAL each option, in order; None when all took, else which one did not
        and the server's words (it is not dynamic, or the value is refused)."""
        with connection(self.endpoint) as c, c.cursor() as cur:
            for k, v in options.items():
                try:
                    set_global(cur, k, v)
                except pymysql.err.MySQLError as e:
                    return f"{k} cannot be set at runtime ({e.args[-1]})"
        return None

    def remember(self, names: list[str]) -> None:
        """Note the values of ``names`` before the harness first sets them, to be set
        back when done (a server the harness does not own; one it owns is removed)."""
        return None

    def put_back(self, names: list[str] | None = None) -> list[str]:
        """SET GLOBAL what :meth:`remember` noted back (all, or ``names``); what could
        not be. Nothing to do on a server the harness owns."""
        return []

    def drop_page_cache(self, disposable: bool) -> str | None:
        """Drop the OS page cache of the host mysqld runs on; None when done, else why
        not. ``disposable``: the scenario marks that host disposable and the command line
        repeats it (a lab host is somebody's machine; this one runs the harness)."""
        return tuning.drop_page_cache()

    def seek_model(self, on: bool) -> dict[str, float] | None:
        """The model disk under the datadir charging seeks (on) or not (off): its
        counters so far; None without one (host_profile.disk)."""
        return None

    def death(self) -> str | None:
        """A description if the server died on its own, else None."""
        return None

    def disk_trouble(self) -> str | None:
        """A description if the server's datadir filesystem is full, else None."""
        return None

    @property
    def pid(self) -> int | None:
        """mysqld's pid when it runs on this host (for /proc collectors), else None."""
        return None

    @property
    def remote_shell(self) -> RemoteShell | None:
        """How to run a workload on mysqld's host when that is another machine."""
        return None

    @property
    def notes(self) -> list[str]:
        """What a reader of the results should know about how this server runs."""
        return []

    @property
    def remote_host(self) -> str | None:
        """The machine mysqld runs on when that is not this one, else None."""
        return None

    @property
    def container(self) -> str | None:
        """The name of the container mysqld runs in, if it runs in one."""
        return None


class Provider(abc.ABC):
    """Creates servers on one kind of target."""

    target: str
    # Dataset snapshots need the datadir on this machine.
    snapshots = True
    # It starts a server on a copy of a datadir it did not make (a DBA's, a physical
    # backup), copied strictly (server/datadir.copy): local sandboxes only.
    seeds = False
    # The host servers run on when it is not (necessarily) this machine.
    host_name: str | None = None
    # Where the provider reports its steps (the runner's progress line).
    progress: Callable[[str], None] = staticmethod(lambda _msg: None)
    # The datadir on a model disk (host_profile.disk): local sandboxes only, the plan
    # refuses it for other targets.
    disk: DiskModel | None = None
    # It sets a run's vm.* sysctls on its own host (tune/untune: a lab host, through its
    # playbooks); otherwise the harness tunes this machine itself.
    tunes_host = False

    @abc.abstractmethod
    def provision(self, build: Build, label: str = "",
                  datadir_from: Path | None = None) -> Server:
        """Create a new, stopped server of ``build`` that the harness owns, its datadir
        initialised (or copied from ``datadir_from``: a snapshot, or a datadir the
        harness did not make where ``seeds``)."""

    def remove_stale(self) -> list[str]:
        """Remove what a killed harness left on this target; what was removed."""
        return []

    def host_facts(self) -> dict[str, Any]:
        """What the target's host is (CPU, memory, disks, kernel), stored with runs."""
        return {}

    def tune(self, sysctls: Mapping[str, str], disposable: bool) -> dict[str, str]:
        """Set a run's vm.* sysctls on the target's host (where ``tunes_host``); what
        was set."""
        raise ProviderError(f"--target {self.target}: the harness tunes this machine "
                            "itself, not through the provider")

    def untune(self) -> None:
        """Put back what :meth:`tune` set (nothing, where it never did)."""
        return None


@dataclass(frozen=True)
class ProviderKind:
    """A target kind as its module declares it (``PLUGIN``): the word of ``--target``
    before any colon, how to make its provider from the whole target, and what follows
    the colon when it takes one (``ansible:INVENTORY``)."""

    name: str
    make: Callable[[str], Provider]
    argument: str | None = None  # None: the target is the word alone
    # Its provider starts servers on a copy of a datadir it did not make (Provider.seeds):
    # said on the kind too, so a plan can refuse a datadir dataset before any server.
    seeds: bool = False

    def usage(self) -> str:
        return f"{self.name}:{self.argument}" if self.argument else self.name
