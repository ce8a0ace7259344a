"""Dataset snapshots and host profiles on real servers."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from harness import catalog, snapshot
from harness.hostprofile import CgroupProfile, ProfileError
from harness.mysql import connection, query, scalar
from harness.providers.local import LocalProvider
from harness.scenario import HostProfile, SysbenchDataset
from harness.workloads.base import RunContext
from harness.workloads.sysbench import prepare_dataset

pytestmark = pytest.mark.integration


def _ctx(box, art: Path) -> RunContext:
    art.mkdir(parents=True, exist_ok=True)
    return RunContext(endpoint=box.endpoint, artifacts=art, clock=time.monotonic,
                      sample=lambda *a: None, event=lambda *a: None)


def _state(box, db: str, tables: int) -> dict[str, tuple]:
    with connection(box.endpoint, database=db) as c:
        return {f"sbtest{i}": (scalar(c, f"SELECT COUNT(*) FROM sbtest{i}"),
                               query(c, f"CHECKSUM TABLE sbtest{i}")[0][1])
                for i in range(1, tables + 1)}


@pytest.mark.parametrize("name", ["mariadb-10.11", "mysql-5.7.29", "mysql-9.7", "mariadb-11.8"])
def test_snapshot_restore_gives_the_prepared_data_back(name, tmp_path):
    build = catalog.resolve(name)
    data = SysbenchDataset(database="snap", tables=2, table_size=3000)
    opts = {"innodb_buffer_pool_size": "32M"}
    key = snapshot.snapshot_key(build, [data], opts)
    first = LocalProvider().provision(build)
    try:
        first.start(opts)
        prepare_dataset(_ctx(first, tmp_path / "a"), data)
        original = _state(first, "snap", 2)
        first.stop()
        path, _secs = first.save_datadir(key, {"build": name})
        assert snapshot.find(key) == path
    finally:
        first.destroy()
    # A new sandbox from the snapshot: same rows, same checksums, a working account
    # (the snapshot holds the first sandbox's password; the new one gets its own).
    second = LocalProvider().provision(build, datadir_from=snapshot.find(key))
    try:
        second.start(opts)
        assert second.endpoint.password != first.endpoint.password
        assert _state(second, "snap", 2) == original
        # Change the data, restore in place: the change is gone.
        with connection(second.endpoint, database="snap") as c:
            query(c, "DELETE FROM sbtest1 WHERE id <= 100")
            query(c, "UPDATE sbtest2 SET k = k + 1")
        assert _state(second, "snap", 2) != original
        second.stop()
        second.replace_datadir(snapshot.find(key))
        second.start(opts)
        assert _state(second, "snap", 2) == original
    finally:
        second.destroy()
    # A different on-disk format is a different snapshot; the buffer pool is not.
    assert snapshot.snapshot_key(build, [data], {**opts, "innodb_page_size": "8k"}) != key
    assert snapshot.snapshot_key(build, [data], {"innodb_buffer_pool_size": "1G"}) == key


def _cold_scan_reads_per_s(box, profile: CgroupProfile | None) -> tuple[float, float]:
    """Restart (cold pool), then full-scan sbtest1: (page reads per second, reads)."""
    box.stop()
    box.start(OPTS)
    if profile is not None:
        profile.attach(box.pid)
    with connection(box.endpoint, database="io") as c:
        before = int(query(c, "SHOW GLOBAL STATUS LIKE 'Innodb_data_reads'")[0][1])
        t0 = time.monotonic()
        scalar(c, "SELECT SUM(LENGTH(c)) FROM sbtest1 FORCE INDEX (PRIMARY)")
        secs = time.monotonic() - t0
        reads = int(query(c, "SHOW GLOBAL STATUS LIKE 'Innodb_data_reads'")[0][1]) - before
    return reads / secs, reads


OPTS = {"innodb_buffer_pool_size": "32M", "innodb_flush_method": "O_DIRECT",
        "innodb_buffer_pool_load_at_startup": 0, "innodb_buffer_pool_dump_at_shutdown": 0}


def test_host_profile_limits_read_iops(tmp_path):
    build = catalog.resolve("mariadb-10.11")
    box = LocalProvider().provision(build)
    profile = CgroupProfile(HostProfile(read_iops=150, cpus=1, memory="1G"), box.datadir)
    try:
        in_force = profile.apply()
        made = list(profile.dirs.values())
        assert len(made) == 3  # blkio, cpuset, memory
        assert in_force["read_iops"] == 150 and in_force["cpus"] == "0"
        box.start(OPTS)
        prepare_dataset(_ctx(box, tmp_path), SysbenchDataset(database="io", tables=1,
                                                             table_size=30000))
        free_rate, free_reads = _cold_scan_reads_per_s(box, None)
        limited_rate, limited_reads = _cold_scan_reads_per_s(box, profile)
        assert free_reads > 300 and limited_reads > 300  # the table is read from disk
        # Throttled to 150 reads/s (a little slack for the throttle's time slices).
        assert limited_rate < 150 * 1.3, (limited_rate, limited_reads)
        assert free_rate > 3 * limited_rate, (free_rate, limited_rate)
        pid = box.pid
        for d in profile.dirs.values():
            assert str(pid) in (d / "cgroup.procs").read_text().split()
        assert (profile.dirs["cpuset"] / "cpuset.cpus").read_text().strip() == "0"
    finally:
        box.destroy()
        profile.close()
    assert all(not d.exists() for d in made)


def test_profile_that_cannot_be_applied_is_an_error(tmp_path):
    with pytest.raises(ProfileError, match="cpus: 4096 CPUs asked"):
        CgroupProfile(HostProfile(cpus=4096), tmp_path).apply()
    with pytest.raises(ProfileError, match="not on a block device"):
        CgroupProfile(HostProfile(read_iops=100), Path("/proc")).apply()
