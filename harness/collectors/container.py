"""A container's cgroups (container_*, as cAdvisor names them): the memory its limit
counts, and its CPU."""
from __future__ import annotations

from collections.abc import Iterable

from ..host.profile import CGROUP_ROOT, cgroups_of
from .base import Point, PolledCollector, Unsupported


class Container(PolledCollector):
    """Memory and CPU of mysqld's container, from its cgroups: the container's view of
    memory (what its limit counts), where meminfo and vmstat show the host's. Series
    are labelled view="container" and the container's name (cAdvisor's metric names)."""

    name = "container"
    server_access = "reads"
    default_interval_s = 1.0

    def setup(self) -> None:
        if not self.ctx.container or not self.ctx.mysqld_pid:
            raise Unsupported("the server is not a container")
        cg = cgroups_of(self.ctx.mysqld_pid)
        if "memory" not in cg or "cpuacct" not in cg:
            raise Unsupported("no cgroup v1 memory/cpuacct hierarchy for the container")
        self.mem = CGROUP_ROOT / "memory" / cg["memory"].lstrip("/")
        self.cpu = CGROUP_ROOT / "cpuacct" / cg["cpuacct"].lstrip("/")
        self.labels = {"view": "container", "container": self.ctx.container}

    def collect(self) -> Iterable[Point]:
        stat = dict(line.split() for line in (self.mem / "memory.stat").read_text()
                    .splitlines())
        lb = self.labels
        out: list[Point] = [
            ("container_memory_usage_bytes",
             float((self.mem / "memory.usage_in_bytes").read_text()), lb),
            # The limit in force: the lowest of the container's and its parents' (a
            # host profile is the container's cgroup parent).
            ("container_spec_memory_limit_bytes", float(stat["hierarchical_memory_limit"]),
             lb),
            ("container_cpu_usage_seconds_total",
             float((self.cpu / "cpuacct.usage").read_text()) / 1e9, lb)]
        for key, metric in (("total_rss", "rss"), ("total_cache", "cache"),
                            ("total_swap", "swap"), ("total_dirty", "dirty"),
                            ("total_writeback", "writeback")):
            if key in stat:
                out.append((f"container_memory_{metric}", float(stat[key]), lb))
        return out


PLUGIN = Container
