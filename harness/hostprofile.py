"""Host profiles: make a fast machine behave like the one an experiment ran on.

A profile limits the server process with cgroup v1 controllers: ``blkio`` throttles
(read/write IOPS and bandwidth on the block device under the datadir; they act on
direct IO, so InnoDB must use ``innodb_flush_method=O_DIRECT`` for reads to be
throttled), ``cpuset`` (the first N CPUs) and ``memory`` (a hard limit). Each limit is
written and read back; one that cannot be applied raises :class:`ProfileError`, never
a warning. The Docker provider maps the same fields to its container's limits.
"""
from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

from . import proc
from .errors import InputError
from .mycnf import parse_size
from .scenario import HostProfile

CGROUP_ROOT = Path("/sys/fs/cgroup")


class ProfileError(InputError):
    """A host profile that cannot be applied on this host."""


def _own_cgroup(controller: str) -> str:
    """This process's cgroup path in ``controller``'s v1 hierarchy."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, ctrls, path = line.split(":", 2)
        if controller in ctrls.split(","):
            return path
    raise ProfileError(f"host_profile: no cgroup v1 '{controller}' hierarchy on this host "
                       "(cgroup v2 only?); the profile cannot be applied")


def _within(cgroups: dict[str, str], d: Path) -> bool:
    """True when the process whose ``cgroups`` these are sits in ``d`` or below it."""
    controller, *rel = d.relative_to(CGROUP_ROOT).parts
    path = cgroups.get(controller)
    want = "/" + "/".join(rel)
    return path is not None and (path == want or path.startswith(want + "/"))


def block_device(path: Path) -> tuple[int, int, str]:
    """(major, minor, name) of the whole disk holding ``path`` (partitions resolved)."""
    st = os.stat(path)
    major, minor = os.major(st.st_dev), os.minor(st.st_dev)
    sysdev = Path(f"/sys/dev/block/{major}:{minor}")
    if major == 0 or not sysdev.exists():
        raise ProfileError(f"host_profile: {path} is not on a block device (device "
                           f"{major}:{minor}: overlay, tmpfs or a network filesystem); "
                           "IO limits cannot be applied there; put the sandboxes on a disk "
                           "with HARNESS_SANDBOXES")
    real = sysdev.resolve()
    if (real / "partition").exists():  # throttles live on the disk, not the partition
        real = real.parent
        major, minor = (int(x) for x in (real / "dev").read_text().split(":"))
    return major, minor, real.name


class CgroupProfile:
    """The cgroups of one server; ``attach(pid)`` after every (re)start, ``close()``."""

    def __init__(self, spec: HostProfile, datadir: Path, label: str = "server",
                 at_root: bool = False):
        self.spec = spec
        self.datadir = datadir
        # at_root: right under each controller's root, so the path is the same in every
        # controller (a container's --cgroup-parent); else under the harness's own.
        self.at_root = at_root
        self.name = f"mysql-harness-{label}-{secrets.token_hex(3)}"
        self.dirs: dict[str, Path] = {}
        self.in_force: dict[str, Any] = {}
        # blkio.throttle file -> (device path, limit per second). A v1 blkio throttle is
        # not hierarchical: a container below these cgroups needs them on its own.
        self.io_limits: dict[str, tuple[str, int]] = {}

    def _dir(self, controller: str) -> Path:
        if controller not in self.dirs:
            base = CGROUP_ROOT / controller
            if not base.is_dir():
                raise ProfileError(f"host_profile: cgroup controller {controller} is not "
                                   f"mounted at {base}")
            own = "" if self.at_root else _own_cgroup(controller).lstrip("/")
            d = base / own / self.name
            try:
                d.mkdir()
            except OSError as e:
                raise ProfileError(f"host_profile: cannot create cgroup {d}: {e.strerror} "
                                   "(the harness needs root for host profiles)") from None
            self.dirs[controller] = d
        return self.dirs[controller]

    def _write(self, controller: str, file: str, value: str, check: str | None = None) -> None:
        f = self._dir(controller) / file
        try:
            f.write_text(value + "\n")
            got = f.read_text()
        except OSError as e:
            raise ProfileError(f"host_profile: writing '{value}' to {f} failed: "
                               f"{e.strerror}") from None
        if (check or value) not in got:
            raise ProfileError(f"host_profile: {f} reads '{got.strip()}' after writing "
                               f"'{value}'; the limit is not in force")

    def apply(self) -> dict[str, Any]:
        """Create the cgroups and set every limit; what is in force (stored with runs)."""
        s = self.spec
        try:
            io = {"read_iops": (s.read_iops, "blkio.throttle.read_iops_device"),
                  "write_iops": (s.write_iops, "blkio.throttle.write_iops_device"),
                  "read_mbps": (s.read_mbps, "blkio.throttle.read_bps_device"),
                  "write_mbps": (s.write_mbps, "blkio.throttle.write_bps_device")}
            if any(v for v, _ in io.values()):
                major, minor, dev = block_device(self.datadir)
                self.in_force["device"] = f"{dev} ({major}:{minor})"
                for key, (v, file) in io.items():
                    if v:
                        n = int(v * 1_000_000) if key.endswith("mbps") else int(v)
                        self._write("blkio", file, f"{major}:{minor} {n}")
                        self.in_force[key] = v
                        self.io_limits[file] = (f"/dev/{dev}", n)
            if s.cpus:
                have = os.cpu_count() or 1
                if s.cpus > have:
                    raise ProfileError(f"host_profile.cpus: {s.cpus} CPUs asked, this host "
                                       f"has {have}")
                cpus = "0" if s.cpus == 1 else f"0-{s.cpus - 1}"
                parent = self._dir("cpuset").parent
                self._write("cpuset", "cpuset.mems", (parent / "cpuset.mems").read_text()
                            .strip())
                self._write("cpuset", "cpuset.cpus", cpus)
                self.in_force["cpus"] = cpus
            if s.memory:
                limit = parse_size(s.memory)
                assert limit is not None  # validated by the scenario model
                self._write("memory", "memory.limit_in_bytes", str(limit),
                            check=str(limit - limit % 4096))
                self.in_force["memory_bytes"] = limit
                # Memory a process touched before attach() stays charged where it was
                # (kernels 6.x refuse memory.move_charge_at_immigrate): the runner
                # starts mysqld inside the cgroups (enter()) for the measured part.
        except BaseException:
            self.close()
            raise
        return dict(self.in_force)

    def enter(self) -> list[Path]:
        """The cgroup directories for a process to start in, brought up to date."""
        if "memory" in self.dirs:
            # A v1 memory cgroup keeps the swappiness of its parent at creation; the
            # host's vm.swappiness (which host tuning may have set) governs it here as
            # it governs a mysqld in the root cgroup of a lab host.
            swappiness = Path("/proc/sys/vm/swappiness").read_text().strip()
            self._write("memory", "memory.swappiness", swappiness)
            self.in_force["swappiness"] = int(swappiness)
        return list(self.dirs.values())

    def attach(self, pid: int) -> None:
        """Move ``pid`` (every thread of it) into each of the profile's cgroups; a no-op
        for a process started in them or below them (a container whose cgroup parent
        is the profile)."""
        inside = proc.cgroups_of(pid)
        moving = [d for d in self.dirs.values() if not _within(inside, d)]
        if moving:
            self.enter()
        for d in moving:
            try:
                (d / "cgroup.procs").write_text(f"{pid}\n")
            except OSError as e:
                raise ProfileError(f"host_profile: cannot move pid {pid} into {d}: "
                                   f"{e.strerror}") from None
            if str(pid) not in (d / "cgroup.procs").read_text().split():
                raise ProfileError(f"host_profile: pid {pid} is not in {d} after moving it")

    def close(self) -> None:
        """Move any process left back to the parent and remove the cgroups."""
        for d in self.dirs.values():
            try:
                for pid in (d / "cgroup.procs").read_text().split():
                    try:
                        (d.parent / "cgroup.procs").write_text(pid + "\n")
                    except OSError:
                        pass
                d.rmdir()
            except OSError:
                pass
        self.dirs.clear()
        if self.at_root:  # a container's runtime made the same name in every hierarchy
            for d in CGROUP_ROOT.glob(f"*/{self.name}"):
                try:
                    d.rmdir()  # only when empty: the container is gone
                except OSError:
                    pass
