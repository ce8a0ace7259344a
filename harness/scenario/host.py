"""What a scenario asks of the host: sysctls, swap, a memory balloon, a host profile
(memory, CPU, disk model) and CPU placement."""
from __future__ import annotations

import os
import re
from typing import Any, Literal

from pydantic import (
    Field,
    field_validator,
    model_validator,
)

from ..host.placement import parse_cpus
from ..host.profile import Limits
from ..host.seekdisk import PROFILES, Geometry
from ..model import (
    Model,
)
from ..server.mycnf import parse_size


def _size(v: str | None) -> str | None:
    if v is not None and not re.fullmatch(r"[1-9][0-9]*[KMGT]?", str(v)):
        raise ValueError(f"'{v}': a size like 4G")
    return v


SYSCTL_PAIRS = (("vm.dirty_ratio", "vm.dirty_bytes"),
                ("vm.dirty_background_ratio", "vm.dirty_background_bytes"))


def _sysctl_value_ok(name: str, x: int | str) -> bool:
    """A non-negative integer, or for a *_bytes setting a size like 64M."""
    if isinstance(x, str):
        return name.endswith("_bytes") and re.fullmatch(r"[1-9][0-9]*[KMGT]?", x) is not None
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def checked_sysctls(v: dict[str, int | str]) -> dict[str, int | str]:
    for k, x in v.items():
        if not re.fullmatch(r"vm\.[a-z_]+", k):
            raise ValueError(f"'{k}': only vm.* settings (vm.swappiness, vm.dirty_ratio, "
                             "vm.dirty_bytes, ...)")
        if not _sysctl_value_ok(k, x):
            raise ValueError(f"{k}: '{x}' is not a non-negative integer"
                             + (" or a size like 64M" if k.endswith("_bytes") else ""))
    for a, b in SYSCTL_PAIRS:
        if a in v and b in v:
            raise ValueError(f"{a} and {b} are one setting (writing one zeroes the other): "
                             "give one")
    return v


class BalloonModel(Model):
    """Host memory locked away by a balloon process for the run set: ``size``, or all
    of the host's available memory but ``leave`` (sized when the run set starts)."""

    size: str | None = None
    leave: str | None = None

    _sizes = field_validator("size", "leave")(classmethod(lambda cls, v: _size(v)))

    @model_validator(mode="after")
    def _one(self) -> BalloonModel:
        if (self.size is None) == (self.leave is None):
            raise ValueError("give one of size (the balloon's) or leave (what it leaves)")
        return self

    def sizes(self) -> dict[str, int | None]:
        """``inflate``'s arguments, in bytes."""
        return {"size": parse_size(self.size) if self.size else None,
                "leave": parse_size(self.leave) if self.leave else None}


class HostTuning(Model):
    """Settings of the whole host for memory-pressure experiments: a swap file (made
    only when the host has no swap), vm.* sysctls and a memory balloon, applied only
    when the host is marked disposable here and on the command line, and undone
    afterwards."""

    disposable: bool = False
    swap_file: str | None = None  # a size, like 4G
    sysctls: dict[str, int | str] = Field(default_factory=dict)
    balloon: BalloonModel | None = None

    _sysctls = field_validator("sysctls")(classmethod(lambda cls, v: checked_sysctls(v)))

    _swap_file = field_validator("swap_file")(classmethod(lambda cls, v: _size(v)))


class BackgroundCpu(Model):
    """InnoDB's background ``threads`` (purge: the coordinator and its workers;
    page_cleaner; master) held together to ``cpus`` CPUs (a CFS quota: 0.05 is 5% of one
    CPU, 0.001 the least) and/or weighed ``weight`` against mysqld's other threads (1 to
    10000, a thread's default 100: they get the CPU the others leave), found by their OS
    thread ids in performance_schema (MySQL 5.7 and later)."""

    threads: list[Literal["purge", "page_cleaner", "master"]] = Field(min_length=1)
    cpus: float | None = Field(None, ge=0.001, le=64)  # the kernel's least: 1 ms a second
    weight: int | None = Field(None, ge=1, le=10000)

    @model_validator(mode="after")
    def _some(self) -> BackgroundCpu:
        if self.cpus is None and self.weight is None:
            raise ValueError("give cpus (a quota), weight (a share against mysqld's other "
                             "threads), or both")
        return self


class DiskModel(Model):
    """The datadir on a disk that charges seeks (harness/host/seekdisk.py): ``model``
    names a drive (sata-7200, sas-15k, laptop-5400); ``seek_ms`` and ``mbps`` give or
    override its numbers; ``size`` is its file system's (sparse: only what is written
    takes space)."""

    model: Literal["sata-7200", "sas-15k", "laptop-5400"] | None = None
    seek_ms: float | None = Field(None, gt=0, le=1000)
    mbps: float | None = Field(None, gt=0, le=100_000)
    size: str = "8G"

    _size = field_validator("size")(classmethod(lambda cls, v: _size(v)))

    @model_validator(mode="after")
    def _known(self) -> DiskModel:
        if self.model is None and (self.seek_ms is None or self.mbps is None):
            raise ValueError("name a model (sata-7200, sas-15k, laptop-5400) or give both "
                             "seek_ms and mbps")
        return self

    def geometry(self) -> Geometry:
        seek, mbps = PROFILES[self.model] if self.model else (0.0, 0.0)
        return Geometry(self.seek_ms or seek, self.mbps or mbps)

    def size_bytes(self) -> int:
        n = parse_size(self.size)
        assert n is not None
        return n


class HostProfile(Model):
    """Limits on the server, applied with cgroups: IO on the datadir's device, CPUs,
    memory, and CPU for InnoDB's background threads. A limit that cannot be applied is
    an error, never silently ignored."""

    read_iops: int | None = Field(None, ge=1)
    write_iops: int | None = Field(None, ge=1)
    read_mbps: float | None = Field(None, gt=0)
    write_mbps: float | None = Field(None, gt=0)
    cpus: int | None = Field(None, ge=1)
    # CPU time for all of mysqld, in CPUs: a CFS quota on its cgroup (0.5 is half of one
    # CPU), where ``cpus`` pins it to whole CPUs
    cpu_quota: float | None = Field(None, ge=0.01, le=1024)
    memory: str | None = None
    background_cpu: BackgroundCpu | None = None
    disk: DiskModel | None = None
    description: str = ""

    _memory = field_validator("memory")(classmethod(lambda cls, v: _size(v)))

    @model_validator(mode="after")
    def _one_cpu_quota(self) -> HostProfile:
        if self.cpu_quota and self.background_cpu:
            raise ValueError("cpu_quota and background_cpu cannot be combined: one CPU "
                             "limit on mysqld's cgroup, or one on its background threads")
        return self

    def limits(self) -> Limits:
        """The limits in the units cgroups take."""
        return Limits(self.read_iops, self.write_iops, self.read_mbps, self.write_mbps,
                      self.cpus, parse_size(self.memory) if self.memory else None,
                      *((self.background_cpu.cpus, self.background_cpu.weight)
                        if self.background_cpu else (None, None)),
                      cpu_quota=self.cpu_quota)


class CpuPlacement(Model):
    """mysqld's threads on ``server``'s CPUs, the harness and the clients it starts on
    ``client``'s (lists like ``1`` or ``0-1,3``; harness/host/placement.py)."""

    server: str
    client: str

    @field_validator("server", "client", mode="before")
    @classmethod
    def _cpus(cls, v: Any) -> str:
        cpus = parse_cpus(str(v))
        have = os.cpu_count() or 1
        if max(cpus) >= have:
            raise ValueError(f"CPU {max(cpus)} is not on this host (CPUs 0-{have - 1})")
        return str(v)

    def cpus(self) -> tuple[set[int], set[int]]:
        return parse_cpus(self.server), parse_cpus(self.client)


