"""Host profiles: make a fast machine behave like the one an experiment ran on.

A profile limits the server process with cgroup controllers: IO (read/write IOPS and
bandwidth on the block device under the datadir; they act on direct IO, so InnoDB must
use ``innodb_flush_method=O_DIRECT`` for reads to be throttled), ``cpuset`` (the first N
CPUs) and ``memory`` (a hard limit); and some of its threads (InnoDB's purge or page
cleaner, by their OS thread ids) with ``cpu`` (a CFS quota for them together): on v1 a
cpu group of their own, which takes single threads; on v2 a threaded child of mysqld's
group. Each controller is used where the host has it: a
cgroup v1 hierarchy (``blkio.throttle.*``, ``memory.limit_in_bytes``, ``cpuset.cpus``)
or the unified v2 hierarchy (``io.max``, ``memory.max``, ``cpuset.cpus``), so a pure v2
host, a v1 host and a hybrid one all work. Each limit is written and read back; one that
cannot be applied raises :class:`ProfileError`, never a warning. The Docker provider
maps the same fields to its container's limits (v1 hosts).

The module needs nothing but Python's standard library: lab hosts run this very file
(``python3 profile.py apply|try|attach|threads|close JSON``, see :func:`main`), shipped by
the ``host_profile`` Ansible role, so a profile is one piece of code wherever it applies.
"""
from __future__ import annotations

import json
import os
import secrets
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # this file also runs alone on a lab host: nothing of the package then
    from ..jsonvalue import JsonDict

try:
    from ..errors import InputError as _Refused
except ImportError:  # run alone on a lab host, where the harness is not installed
    _Refused = Exception  # type: ignore[assignment,misc]

CGROUP_ROOT = Path("/sys/fs/cgroup")


class ProfileError(_Refused):
    """A host profile that cannot be applied on this host."""


@dataclass(frozen=True)
class Limits:
    """A profile's limits in the units cgroups take (``HostProfile.limits()``)."""

    read_iops: int | None = None
    write_iops: int | None = None
    read_mbps: float | None = None
    write_mbps: float | None = None
    cpus: int | None = None
    memory_bytes: int | None = None
    thread_cpus: float | None = None  # the CPU time chosen threads get together
    thread_weight: int | None = None  # or their weight against mysqld's other threads
    cpu_quota: float | None = None  # CPU time for all of mysqld, in CPUs (a CFS quota)


PERIOD_US = 100_000  # the CFS period of a thread group's quota
MIN_QUOTA_US, MAX_PERIOD_US = 1_000, 1_000_000  # the kernel's bounds


def v1_shares(weight: int) -> int:
    """cgroup v2's cpu.weight (1-10000, 100 a default thread) as v1 cpu.shares (1024)."""
    return max(2, round(weight * 1024 / 100))


def cfs_quota(cpus: float) -> tuple[int, int]:
    """(quota, period) in microseconds for ``cpus`` CPUs: a 100 ms period, or a longer
    one (at most 1 s) where the quota would be under the kernel's 1 ms."""
    period = PERIOD_US
    if cpus * period < MIN_QUOTA_US:
        period = min(MAX_PERIOD_US, round(MIN_QUOTA_US / cpus))
    return max(MIN_QUOTA_US, round(cpus * period)), period


def cgroups_of(pid: int) -> dict[str, str]:
    """controller -> cgroup path of ``pid`` ("" for the v2 hierarchy; empty when gone)."""
    out: dict[str, str] = {}
    try:
        for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
            _, ctrls, path = line.split(":", 2)
            for c in ctrls.split(","):
                out[c] = path
    except OSError:
        pass
    return out


def _own_cgroup(controller: str) -> str:
    """This process's cgroup path in ``controller``'s v1 hierarchy."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, ctrls, path = line.split(":", 2)
        if controller in ctrls.split(","):
            return path
    raise ProfileError(f"host_profile: no cgroup v1 '{controller}' hierarchy on this host "
                       "(cgroup v2 only?); the profile cannot be applied")


# A profile's controllers, by their v2 name, and the v1 hierarchy each has there.
V1_NAME = {"io": "blkio", "memory": "memory", "cpuset": "cpuset", "cpu": "cpu"}


def unified_root() -> Path | None:
    """The cgroup v2 hierarchy: /sys/fs/cgroup itself on a v2 host, its ``unified``
    folder on a hybrid one, None on a v1-only host."""
    for d in (CGROUP_ROOT, CGROUP_ROOT / "unified"):
        if (d / "cgroup.controllers").exists():
            return d
    return None


def _v1_mounted(controller: str) -> bool:
    """``controller``'s v1 hierarchy is mounted at /sys/fs/cgroup/<its v1 name>."""
    where = str(CGROUP_ROOT / V1_NAME[controller])
    for line in Path("/proc/self/mounts").read_text().splitlines():
        f = line.split()
        if len(f) > 3 and f[1] == where and f[2] == "cgroup":
            return V1_NAME[controller] in f[3].split(",")
    return False


def hierarchy(controller: str) -> str | None:
    """Where this host has ``controller`` (a v2 name): "v1", "v2", or None."""
    if _v1_mounted(controller):
        return "v1"
    v2 = unified_root()
    if v2 is not None and controller in (v2 / "cgroup.controllers").read_text().split():
        return "v2"
    return None


def _within(cgroups: dict[str, str], d: Path) -> bool:
    """True when the process whose ``cgroups`` these are sits in ``d`` or below it."""
    v2 = unified_root()
    if v2 is not None and d.is_relative_to(v2):  # v2: the "0::/path" line
        controller, rel = "", list(d.relative_to(v2).parts)
    else:
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


# Profile field -> the v1 throttle file, and the v2 io.max key.
V1_IO = {"read_iops": "blkio.throttle.read_iops_device",
         "write_iops": "blkio.throttle.write_iops_device",
         "read_mbps": "blkio.throttle.read_bps_device",
         "write_mbps": "blkio.throttle.write_bps_device"}
V2_IO = {"read_iops": "riops", "write_iops": "wiops", "read_mbps": "rbps", "write_mbps": "wbps"}


def _made(d: Path) -> Path:
    try:
        d.mkdir()
    except OSError as e:
        raise ProfileError(f"host_profile: cannot create cgroup {d}: {e.strerror} "
                           "(the harness needs root for host profiles)") from None
    return d


def _enable_below(group: Path, controller: str) -> bool:
    """``controller`` on for a v2 ``group``'s children; False when it already was."""
    ctl = group / "cgroup.subtree_control"
    if controller in ctl.read_text().split():
        return False
    try:
        ctl.write_text(f"+{controller}\n")
    except OSError as e:
        raise ProfileError(f"host_profile: cannot enable the {controller} controller in "
                           f"{ctl}: {e.strerror}") from None
    return True


def _write_checked(f: Path, value: str, check: str | None = None) -> None:
    """``value`` into the cgroup file ``f``, read back (``check``: what it must then hold)."""
    try:
        f.write_text(value + "\n")
        got = f.read_text()
    except OSError as e:
        raise ProfileError(f"host_profile: writing '{value}' to {f} failed: "
                           f"{e.strerror}") from None
    if (check or value) not in got:
        raise ProfileError(f"host_profile: {f} reads '{got.strip()}' after writing "
                           f"'{value}'; the limit is not in force")


class CgroupProfile:
    """The cgroups of one server; ``attach(pid)`` after every (re)start, ``close()``."""

    def __init__(self, spec: Limits, datadir: Path, label: str = "server",
                 at_root: bool = False):
        self.spec = spec
        self.datadir = datadir
        # at_root: right under each controller's root, so the path is the same in every
        # controller (a container's --cgroup-parent); else under the harness's own. A v2
        # cgroup is always right under the v2 root (the only place a process may sit
        # beside child groups that have controllers).
        self.at_root = at_root
        self.name = f"mysql-harness-{label}-{secrets.token_hex(3)}"
        self.dirs: dict[str, Path] = {}  # v1 hierarchy name, or "unified" -> directory
        self.in_force: JsonDict = {}
        self.hierarchies: dict[str, str] = {}  # controller: v1 or v2 (in_force["cgroup"])
        # blkio.throttle file -> (device path, limit per second). A v1 blkio throttle is
        # not hierarchical: a container below these cgroups needs them on its own.
        self.io_limits: dict[str, tuple[str, int]] = {}
        self._enabled_v2: list[str] = []  # controllers this profile enabled at the v2 root
        self.thread_dir: Path | None = None  # the group of chosen threads (place_threads)

    def _where(self, controller: str) -> str:
        """"v1" or "v2" for ``controller`` on this host (recorded in what is in force)."""
        where = hierarchy(controller)
        if where is None:
            raise ProfileError(f"host_profile: this host has no {controller} cgroup "
                               f"controller: no v1 hierarchy at {CGROUP_ROOT / V1_NAME[controller]}"
                               f" and none in the v2 hierarchy ({unified_root() or 'not mounted'})")
        if where == "v2" and self.at_root:
            raise ProfileError(f"host_profile: {controller} is on cgroup v2 here, and containers "
                               "get host profiles through cgroup v1 hierarchies only; run the "
                               "profile on local sandboxes")
        self.hierarchies[controller] = where
        self.in_force["cgroup"] = dict(self.hierarchies)
        return where

    def _dir(self, controller: str) -> Path:
        """The profile's cgroup for ``controller`` (a v2 name), made on first use."""
        v1 = self._where(controller) == "v1"
        key = V1_NAME[controller] if v1 else "unified"
        if key not in self.dirs:
            if v1:
                own = "" if self.at_root else _own_cgroup(key).lstrip("/")
                d = CGROUP_ROOT / key / own / self.name
            else:
                d = (unified_root() or CGROUP_ROOT) / self.name
            self.dirs[key] = _made(d)
        if not v1:
            self._enable_v2(controller)
        return self.dirs[key]

    def _enable_v2(self, controller: str) -> None:
        """``controller`` on for the v2 root's children (our group among them)."""
        if _enable_below(unified_root() or CGROUP_ROOT, controller):
            self._enabled_v2.append(controller)

    def _write(self, controller: str, file: str, value: str, check: str | None = None) -> None:
        _write_checked(self._dir(controller) / file, value, check)

    def apply(self) -> JsonDict:
        """Create the cgroups and set every limit; what is in force (stored with runs)."""
        try:
            self._apply_io()
            self._apply_cpus()
            self._apply_cpu_quota()
            self._apply_memory()
            self._apply_thread_cpu()
        except BaseException:
            self.close()
            raise
        return dict(self.in_force)

    def _apply_io(self) -> None:
        s = self.spec
        wanted = {k: v for k, v in (("read_iops", s.read_iops), ("write_iops", s.write_iops),
                                    ("read_mbps", s.read_mbps), ("write_mbps", s.write_mbps))
                  if v}
        if not wanted:
            return
        major, minor, dev = block_device(self.datadir)
        self.in_force["device"] = f"{dev} ({major}:{minor})"
        v1 = self._where("io") == "v1"
        for key, v in wanted.items():
            n = int(v * 1_000_000) if key.endswith("mbps") else int(v)
            if v1:
                self._write("io", V1_IO[key], f"{major}:{minor} {n}")
                self.io_limits[V1_IO[key]] = (f"/dev/{dev}", n)
            else:
                self._write("io", "io.max", f"{major}:{minor} {V2_IO[key]}={n}",
                            check=f"{V2_IO[key]}={n}")
            self.in_force[key] = v

    def _apply_cpus(self) -> None:
        if not self.spec.cpus:
            return
        have = os.cpu_count() or 1
        if self.spec.cpus > have:
            raise ProfileError(f"host_profile.cpus: {self.spec.cpus} CPUs asked, this host "
                               f"has {have}")
        cpus = "0" if self.spec.cpus == 1 else f"0-{self.spec.cpus - 1}"
        if self._where("cpuset") == "v1":  # a v1 cpuset starts with no memory nodes
            parent = self._dir("cpuset").parent
            self._write("cpuset", "cpuset.mems", (parent / "cpuset.mems").read_text().strip())
        self._write("cpuset", "cpuset.cpus", cpus)
        self.in_force["cpus"] = cpus

    def _apply_cpu_quota(self) -> None:
        """All of mysqld held to ``cpu_quota`` CPUs: a CFS quota on its cpu group."""
        q = self.spec.cpu_quota
        if not q:
            return
        if self.spec.thread_cpus or self.spec.thread_weight:
            raise ProfileError("host_profile: cpu_quota and background_cpu cannot be "
                               "combined (on cgroup v1 the background threads' group is "
                               "beside mysqld's, outside its quota)")
        quota, period = cfs_quota(q)
        if self._where("cpu") == "v1":
            self._write("cpu", "cpu.cfs_period_us", str(period))
            self._write("cpu", "cpu.cfs_quota_us", str(quota))
        else:
            self._write("cpu", "cpu.max", f"{quota} {period}")
        self.in_force["cpu_quota"] = q
        self.in_force["cpu_quota_us"] = [quota, period]

    def _apply_memory(self) -> None:
        if not self.spec.memory_bytes:
            return
        limit = self.spec.memory_bytes
        page = str(limit - limit % 4096)
        if self._where("memory") == "v1":
            self._write("memory", "memory.limit_in_bytes", str(limit), check=page)
        else:
            self._write("memory", "memory.max", str(limit), check=page)
        self.in_force["memory_bytes"] = limit
        # Memory a process touched before attach() stays charged where it was (kernels
        # 6.x refuse memory.move_charge_at_immigrate): the runner starts mysqld inside the
        # cgroups (enter()) for the measured part.

    def _apply_thread_cpu(self) -> None:
        """The group :meth:`place_threads` puts threads in, held to ``thread_cpus`` CPUs
        or weighed ``thread_weight`` against mysqld's other threads: on v1 a cpu group
        of its own beside mysqld's; on v2 a threaded child of mysqld's group (where the
        cpu controller is enabled for it alone)."""
        cpus, weight = self.spec.thread_cpus, self.spec.thread_weight
        if not cpus and not weight:
            return
        if self.at_root:
            raise ProfileError("host_profile.background_cpu: for local sandboxes and lab "
                               "hosts (in a container, performance_schema's thread ids are "
                               "the container's own)")
        if self._where("cpu") == "v1":
            own = _own_cgroup("cpu").lstrip("/")
            d = self.thread_dir = _made(CGROUP_ROOT / "cpu" / own / f"{self.name}-threads")
        else:
            domain = self._dir("cpu")  # mysqld's v2 group: attach() moves it there
            d = self.thread_dir = _made(domain / "threads")
            _write_checked(d / "cgroup.type", "threaded")
            _enable_below(domain, "cpu")
        v1 = (d / "tasks").exists()
        if cpus:
            quota, period = cfs_quota(cpus)
            if v1:
                _write_checked(d / "cpu.cfs_period_us", str(period))
                _write_checked(d / "cpu.cfs_quota_us", str(quota))
            else:
                _write_checked(d / "cpu.max", f"{quota} {period}")
            self.in_force["background_cpus"] = cpus
            self.in_force["background_quota_us"] = [quota, period]
        if weight:
            _write_checked(*((d / "cpu.shares", str(v1_shares(weight))) if v1 else
                             (d / "cpu.weight", str(weight))))
            self.in_force["background_weight"] = weight

    def place_threads(self, tids: list[int]) -> JsonDict:
        """mysqld's threads ``tids`` (after :meth:`attach`) into the thread group, under
        its CPU limit; what is in force."""
        d = self.thread_dir
        if d is None:
            raise ProfileError("host_profile: no background_cpu group to put threads in")
        target = d / ("tasks" if (d / "tasks").exists() else "cgroup.threads")
        for tid in tids:
            try:
                target.write_text(f"{tid}\n")
            except OSError as e:
                raise ProfileError(f"host_profile.background_cpu: cannot move thread {tid} "
                                   f"into {d}: {e.strerror}") from None
        missing = sorted(set(map(str, tids)) - set(target.read_text().split()))
        if missing:
            raise ProfileError(f"host_profile.background_cpu: threads {', '.join(missing)} "
                               f"are not in {target} after moving them")
        self.in_force["background_tids"] = sorted(tids)
        return dict(self.in_force)

    def enter(self) -> list[Path]:
        """The cgroup directories for a process to start in, brought up to date."""
        if "memory" in self.dirs:  # v1 only: v2 has no per-group swappiness
            # A v1 memory cgroup keeps the swappiness of its parent at creation; the
            # host's vm.swappiness (which host tuning may have set) governs it here as
            # it governs a mysqld in the root cgroup of a lab host.
            swappiness = Path("/proc/sys/vm/swappiness").read_text().strip()
            self._write("memory", "memory.swappiness", swappiness)
            self.in_force["swappiness"] = int(swappiness)
        return list(self.dirs.values())

    def attach(self, pid: int | None) -> JsonDict:
        """Move ``pid`` (every thread of it) into each of the profile's cgroups (a no-op
        for a process started in them or below them: a container whose cgroup parent is
        the profile); what is in force, with where ``pid`` sits now (``mysqld_in``)."""
        if pid is None:
            raise ProfileError("host_profile: mysqld has no pid (it is not running) to "
                               "put in the profile's cgroups")
        inside = cgroups_of(pid)
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
        now = cgroups_of(pid)
        self.in_force["mysqld_in"] = {key: now.get("" if key == "unified" else key)
                                      for key in sorted(self.dirs)}
        return dict(self.in_force)

    def _close_thread_dir(self) -> None:
        """The thread group's threads back to its parent (v1: mysqld's own cpu group; v2:
        mysqld's group), and the group removed."""
        d, self.thread_dir = self.thread_dir, None
        if d is None:
            return
        file = "tasks" if (d / "tasks").exists() else "cgroup.threads"
        try:
            for tid in (d / file).read_text().split():
                try:
                    (d.parent / file).write_text(tid + "\n")
                except OSError:
                    pass
            d.rmdir()
        except OSError:
            pass

    def state(self) -> JsonDict:
        """What another process needs to go on with these cgroups (:meth:`resume`)."""
        return {"name": self.name, "dirs": {k: str(d) for k, d in self.dirs.items()},
                "enabled_v2": list(self._enabled_v2), "in_force": self.in_force,
                "thread_dir": str(self.thread_dir) if self.thread_dir else None}

    @classmethod
    def resume(cls, state: dict[str, Any]) -> CgroupProfile:
        """The profile a :meth:`state` describes (its limits are already in force)."""
        p = cls(Limits(), Path("/"))
        p._adopt(state)
        return p

    def _adopt(self, state: dict[str, Any]) -> None:
        self.name = str(state["name"])
        self.dirs = {k: Path(d) for k, d in state["dirs"].items()}
        self._enabled_v2 = list(state["enabled_v2"])
        self.in_force = dict(state["in_force"])
        self.hierarchies = dict(state["in_force"].get("cgroup") or {})
        self.thread_dir = Path(state["thread_dir"]) if state.get("thread_dir") else None

    def close(self) -> None:
        """Move any process left back to the parent and remove the cgroups."""
        self._close_thread_dir()
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
        root = unified_root()
        for controller in self._enabled_v2:  # as the host had it, unless others use it
            try:
                (root or CGROUP_ROOT).joinpath("cgroup.subtree_control").write_text(
                    f"-{controller}\n")
            except OSError:
                pass
        self._enabled_v2.clear()
        if self.at_root:  # a container's runtime made the same name in every hierarchy
            for d in CGROUP_ROOT.glob(f"*/{self.name}"):
                try:
                    d.rmdir()  # only when empty: the container is gone
                except OSError:
                    pass


def try_on_host(spec: Limits, folder: Path) -> JsonDict:
    """Apply ``spec`` once to a cgroup of its own for ``folder``'s filesystem and take it
    away again: what would be in force, or :class:`ProfileError` saying why it cannot."""
    folder.mkdir(parents=True, exist_ok=True)
    trial = CgroupProfile(spec, folder, "check")
    try:
        return trial.apply()
    finally:
        trial.close()


def _act(action: str, args: dict[str, Any]) -> JsonDict:
    """One step of a profile on this host, for a controller elsewhere (:func:`main`)."""
    if action == "try":
        return try_on_host(Limits(**args["limits"]), Path(args["datadir"]))
    if action == "apply":  # and the swappiness the server will start with
        p = CgroupProfile(Limits(**args["limits"]), Path(args["datadir"]), args["label"])
        p.apply()
        p.enter()
        return p.state()
    p = CgroupProfile.resume(args["state"])
    if action == "attach":
        return p.attach(int(args["pid"]))
    if action == "threads":
        return p.place_threads([int(t) for t in args["tids"]])
    if action == "close":
        p.close()
        return {}
    raise ValueError(f"unknown action {action!r}")


def main(argv: list[str]) -> int:
    """``profile.py ACTION JSON`` on a lab host (the ``host_profile`` role): prints
    ``{"ok": result}``, or ``{"error": why}`` for a profile this host cannot apply."""
    action, args = argv[0], json.loads(argv[1])
    try:
        out: JsonDict = {"ok": _act(action, args)}
    except ProfileError as e:
        out = {"error": str(e)}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
