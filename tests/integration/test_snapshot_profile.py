"""Dataset snapshots and host profiles on real servers."""
from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from harness.host.profile import (
    CGROUP_ROOT,
    CgroupProfile,
    ProfileError,
    hierarchy,
    unified_root,
)
from harness.providers.local import LocalProvider
from harness.scenario import HostProfile
from harness.server import catalog, snapshot
from harness.server.mysql import connection, query, scalar
from harness.workloads.base import RunContext
from harness.workloads.sysbench import SysbenchDataset, prepare_dataset

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


def _remount(mnt: Path, controller: str, deadline_s: float = 30.0) -> None:
    """Give the v1 hierarchy mounted at ``mnt`` exactly ``controller``: what it had goes
    to the v2 hierarchy (the kernel allows it on a hierarchy without child groups; a
    group just removed may linger a moment, hence the retries)."""
    deadline = time.monotonic() + deadline_s
    while True:
        r = subprocess.run(["mount", "--options-mode", "ignore", "-o", f"remount,{controller}",
                            str(mnt)], capture_output=True, text=True)
        if r.returncode == 0:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"remount {mnt} with {controller}: {r.stderr}")
        time.sleep(0.5)


# Moving a controller to cgroup v2 needs its v1 hierarchy empty: no other test's cgroup.
MOVES_A_CONTROLLER = pytest.mark.alone


@pytest.fixture
def on_v2(request):
    """None: the host as it is. "io", "cpuset" or "cpu": that controller of this hybrid host
    moved to its (otherwise empty) cgroup v2 hierarchy for the test, then back. Its v1
    hierarchy, once empty, is remounted with a controller v2 does not use, so io.max or
    cpuset.cpus is the real v2 file on the real kernel. (Memory cannot move here: this
    machine's own processes sit in a child of the v1 memory hierarchy.)"""
    moved = request.param
    if moved is None:
        yield None
        return
    v1 = {"io": "blkio", "cpuset": "cpuset", "cpu": "cpu"}[moved]
    mnt = CGROUP_ROOT / v1
    v2 = unified_root()
    spare = [c for c in (v2 / "cgroup.controllers").read_text().split()
             if c not in ("io", "cpuset", "cpu")] if v2 else []
    if hierarchy(moved) != "v1" or not spare:
        pytest.skip(f"needs a hybrid host with {v1} on v1 and a spare v2 controller")
    for child in mnt.iterdir():  # Docker's empty parent group, made again when needed
        if child.is_dir():
            child.rmdir()
    _remount(mnt, spare[0])
    try:
        assert hierarchy(moved) == "v2"
        yield moved
    finally:
        _remount(mnt, v1)
        assert hierarchy(moved) == "v1" and moved not in (v2 / "cgroup.controllers").read_text()


# v1: its cpu_quota check counts throttled periods, which a busy machine never reaches
# (mysqld gets less than its quota from the other tests: 0 of 5 in a full run): alone.
@pytest.mark.parametrize("on_v2", [pytest.param(None, marks=pytest.mark.alone),
                                   pytest.param("io", marks=MOVES_A_CONTROLLER),
                                   pytest.param("cpuset", marks=MOVES_A_CONTROLLER)],
                         indirect=True, ids=["v1", "io-on-v2", "cpuset-on-v2"])
def test_host_profile_limits_read_iops(tmp_path, on_v2):
    build = catalog.resolve("mariadb-10.11")
    box = LocalProvider().provision(build)
    profile = CgroupProfile(HostProfile(read_iops=150, cpus=1, memory="1G",
                                        cpu_quota=0.5).limits(), box.datadir)
    try:
        in_force = profile.apply()
        made = list(profile.dirs.values())
        assert len(made) == 4  # blkio, cpuset, cpu, memory (io or cpuset: the v2 group)
        assert in_force["read_iops"] == 150 and in_force["cpus"] == "0"
        assert in_force["cpu_quota_us"] == [50_000, 100_000]
        assert {c for c, h in in_force["cgroup"].items() if h == "v2"} == (
            {on_v2} if on_v2 else set())
        cpuset = profile.dirs["unified" if on_v2 == "cpuset" else "cpuset"]
        if on_v2 == "io":  # the limit as the v2 file holds it
            (line,) = (profile.dirs["unified"] / "io.max").read_text().splitlines()
            assert "riops=150" in line and "wiops=max" in line
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
        assert (cpuset / "cpuset.cpus").read_text().strip() == "0"
        assert Path(f"/proc/{pid}/status").read_text().split("Cpus_allowed_list:")[1] \
            .split()[0] == "0"  # the kernel holds mysqld to CPU 0
        box.stop()  # started inside the groups, as the runner starts the measured part
        box.cgroups = profile.enter()
        box.start(OPTS)
        for d in profile.dirs.values():
            assert str(box.pid) in (d / "cgroup.procs").read_text().split(), d
        if on_v2 is None:  # cpu_quota: a CPU-bound query gets half a CPU, in slices
            used, wall, throttled = _busy_query(box, profile.dirs["cpu"])
            assert used / wall < 0.5 * 1.15, (used, wall)
            assert throttled >= 5
    finally:
        box.destroy()
        profile.close()
    assert all(not d.exists() for d in made)
    if on_v2:  # the v2 root as it was: the controller enabled by the profile, and off again
        assert on_v2 not in (unified_root() / "cgroup.subtree_control").read_text().split()


def _busy_query(box, group: Path) -> tuple[float, float, int]:
    """A CPU-bound query of about a second of CPU time: (mysqld's CPU seconds, wall
    seconds, periods the cgroup was throttled in)."""
    from harness import procfs

    def cpu() -> float:
        return procfs.read(box.pid).cpu_s
    before, throttled = cpu(), _throttled(group)
    t0 = time.monotonic()
    with connection(box.endpoint) as c:
        scalar(c, "SELECT BENCHMARK(2000000, MD5('a quota holds this'))")
    return cpu() - before, time.monotonic() - t0, _throttled(group) - throttled


def _thread_group(tid_file: Path) -> str:
    """The cpu cgroup of a thread (v1), or its v2 group."""
    lines = tid_file.read_text().splitlines()
    v1 = [ln.split(":", 2)[2] for ln in lines if ln.split(":")[1] == "cpu"]
    return v1[0] if v1 else next(ln.split(":", 2)[2] for ln in lines if ln.startswith("0::"))


def _throttled(group: Path) -> int:
    stat = dict(ln.split() for ln in (group / "cpu.stat").read_text().splitlines())
    return int(stat["nr_throttled"])


@pytest.mark.parametrize("on_v2", [None, pytest.param("cpu", marks=MOVES_A_CONTROLLER)],
                         indirect=True, ids=["v1", "cpu-on-v2"])
def test_background_cpu_holds_innodb_purge_threads_to_their_quota(tmp_path, on_v2):
    # MySQL 5.7 is the oldest build whose performance_schema gives the OS thread ids.
    from harness.host.background import thread_ids

    box = LocalProvider().provision(catalog.resolve("mysql-5.7.29"))
    spec = HostProfile(background_cpu={"threads": ["purge"], "cpus": 0.02, "weight": 5})
    profile = CgroupProfile(spec.limits(), box.datadir)
    try:
        in_force = profile.apply()
        assert (in_force["background_cpus"], in_force["background_weight"]) == (0.02, 5)
        assert in_force["cgroup"]["cpu"] == ("v2" if on_v2 else "v1")
        group = profile.thread_dir
        # The weight as each hierarchy takes it (v1: 1024 shares a default thread).
        weight = (group / "cpu.weight") if on_v2 else (group / "cpu.shares")
        assert weight.read_text().strip() == ("5" if on_v2 else "51")
        box.cgroups = profile.enter()
        box.start({"innodb_purge_threads": 2})
        profile.attach(box.pid)
        tids = thread_ids(box.endpoint, ["purge"], "mysql-5.7.29")["purge"]
        assert len(tids) == 2  # the coordinator and one worker
        profile.place_threads(tids)
        task = Path(f"/proc/{box.pid}/task")
        mine = {t.name: _thread_group(t / "cgroup") for t in task.iterdir()}
        where = "/" + str(group.relative_to(unified_root() if on_v2 else CGROUP_ROOT / "cpu"))
        assert {t for t, g in mine.items() if g == where} == set(map(str, tids))
        # Purge work (40,000 delete-marked rows): the purge threads run into the quota.
        before = _throttled(group)
        with connection(box.endpoint) as c:
            for sql in ("CREATE DATABASE p", "CREATE TABLE p.t (id INT AUTO_INCREMENT "
                        "PRIMARY KEY, c CHAR(200) NOT NULL DEFAULT 'x')",
                        "INSERT INTO p.t () VALUES ()" + ", ()" * 9999,
                        "INSERT INTO p.t (c) SELECT c FROM p.t", "INSERT INTO p.t (c) "
                        "SELECT c FROM p.t", "DELETE FROM p.t"):
                query(c, sql)
        deadline = time.monotonic() + 60
        while _throttled(group) - before < 5 and time.monotonic() < deadline:
            time.sleep(0.5)
        assert _throttled(group) - before >= 5, (group, before)
    finally:
        box.destroy()
        profile.close()
    assert not group.exists() and not profile.dirs


def test_profile_that_cannot_be_applied_is_an_error(tmp_path):
    with pytest.raises(ProfileError, match="cpus: 4096 CPUs asked"):
        CgroupProfile(HostProfile(cpus=4096).limits(), tmp_path).apply()
    with pytest.raises(ProfileError, match="not on a block device"):
        CgroupProfile(HostProfile(read_iops=100).limits(), Path("/proc")).apply()


def test_validate_says_up_front_whether_this_host_can_apply_a_profile(tmp_path, capsys):
    from harness.cli import main

    base = ("name: p\nservers: [mariadb-10.11]\ndataset: {tables: 1, table_size: 100}\n"
            "workload: {test: oltp_point_select, duration_s: 2}\n")
    good, bad = tmp_path / "good.yaml", tmp_path / "bad.yaml"
    good.write_text(base + "host_profile: {memory: 512M, read_iops: 100}\n")
    bad.write_text(base + "host_profile: {cpus: 4096}\n")
    assert main(["validate", str(good)]) == 0
    out = capsys.readouterr().out
    assert f"host_profile applies on this host: io on cgroup {hierarchy('io')}, memory on " \
        f"cgroup {hierarchy('memory')}\n" in out
    assert main(["validate", str(bad)]) == 2
    assert f"{bad}: host_profile.cpus: 4096 CPUs asked" in capsys.readouterr().err
    assert not list(CGROUP_ROOT.glob("**/mysql-harness-check-*"))  # the trial left nothing
    # A server whose performance_schema cannot name the threads, before it is installed.
    old = tmp_path / "old.yaml"
    old.write_text(base.replace("mariadb-10.11", "mysql-5.6.24") + "host_profile: "
                   "{background_cpu: {threads: [purge], cpus: 0.05}}\n")
    assert main(["validate", str(old)]) == 2
    assert (f"{old}: host_profile.background_cpu: not on mysql-5.6.24: performance_schema."
            "threads has THREAD_OS_ID from MySQL 5.7") in capsys.readouterr().err
