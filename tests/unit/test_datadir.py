"""A datadir the harness did not make: what wrote it (its redo log's header as the
servers here wrote it: MariaDB 10.11's 10.8-format ib_logfile0, MySQL 9.7's
#innodb_redo/#ib_redoN beside its spare _tmp files, 5.7's ib_logfile0; else the upgrade
files), which builds may start it, and the copy that refuses links, devices and FIFOs.
The real mariadb-backup round trip is tests/integration/test_datadir_dataset.py."""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from harness.errors import InputError
from harness.server import datadir


def _folder(tmp_path, name="d"):
    d = tmp_path / name
    (d / "mysql").mkdir(parents=True)
    return d


def _header(path, creator: bytes, fmt: bytes = b"Phys\0\0\0\0"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(fmt.ljust(16, b"\0") + creator.ljust(32, b"\0") + b"\0" * 464)


def test_the_redo_logs_creator_names_the_writer(tmp_path):
    d = _folder(tmp_path)
    _header(d / "ib_logfile0", b"MariaDB 10.11.18")
    w = datadir.writer(d)
    assert (w.family, w.version, w.series) == ("mariadb", "10.11.18", "10.11")
    assert w.said_by == "ib_logfile0's header (MariaDB 10.11.18)"


def test_mysql_8_redo_files_are_read_and_their_spares_are_not(tmp_path):
    d = _folder(tmp_path)
    _header(d / "#innodb_redo" / "#ib_redo10_tmp", b"")
    _header(d / "#innodb_redo" / "#ib_redo5", b"MySQL 9.7.4", b"\0\0\0\x06")
    assert datadir.writer(d).title == "MySQL 9.7.4"


def test_without_a_creator_the_upgrade_files_say_it(tmp_path):
    d = _folder(tmp_path)
    _header(d / "ib_logfile0", b"    ", b"\0")  # 5.6 and MariaDB 10.1 leave it blank
    assert datadir.writer(d) is None
    (d / "mysql_upgrade_info").write_text("10.1.23-MariaDB")
    assert datadir.writer(d).title == "MariaDB 10.1.23"
    (d / "mysql_upgrade_history").write_text(
        '{"file_format":"1","upgrade_history":[{"version":"8.0.40"},{"version":"8.4.3"}]}')
    assert datadir.writer(d).title == "MySQL 8.4.3"  # the last server that ran on it


def test_a_backup_prepared_by_mariadb_backup_is_mariadbs(tmp_path):
    d = _folder(tmp_path)
    _header(d / "ib_logfile0", b"Backup 10.11.19")
    assert datadir.writer(d).family == "mariadb"


@pytest.mark.parametrize(("flavor", "version", "ok"), [
    ("mariadb", "10.11.19", True), ("mariadb", "11.8.3", False), ("mysql", "9.7.4", False)])
def test_a_datadir_starts_only_on_the_series_that_wrote_it(tmp_path, flavor, version, ok):
    d = _folder(tmp_path)
    _header(d / "ib_logfile0", b"MariaDB 10.11.18")
    why = datadir.build_problem(d, flavor, version, f"{flavor}-{version}")
    assert (why is None) == ok, why
    if not ok:
        assert why.startswith(f"{d} was written by MariaDB 10.11.18 (its ib_logfile0's header")
        assert f"{flavor}-{version} is {flavor} {version}" in why


def test_percona_server_reads_what_mysql_wrote(tmp_path):
    d = _folder(tmp_path)
    _header(d / "ib_logfile0", b"MySQL 5.7.29", b"\0\0\0\x01")
    assert datadir.build_problem(d, "percona", "5.7.44", "percona-5.7.44") is None


def test_what_cannot_be_started_from_is_said(tmp_path):
    assert datadir.problems(tmp_path / "nope") == [f"{tmp_path / 'nope'}: not a folder"]
    assert "no mysql schema folder" in datadir.problems(tmp_path)[0]
    d = _folder(tmp_path)
    assert "nothing in it says which server wrote it" in datadir.problems(d)[0]
    _header(d / "ib_logfile0", b"MariaDB 10.11.18")
    (d / "xtrabackup_checkpoints").write_text("backup_type = full-backuped\nfrom_lsn = 0\n")
    (why,) = datadir.problems(d)
    assert "not prepared" in why and f"mariadb-backup --prepare --target-dir {d}" in why
    (d / "xtrabackup_checkpoints").write_text("backup_type = log-applied\n")  # 10.11's
    (d / "mysqld.pid").write_text(str(os.getpid()))  # a stale number: this python's
    assert datadir.problems(d) == []
    shutil.copy("/bin/sleep", tmp_path / "mysqld")  # a process that runs as a server
    server = subprocess.Popen([tmp_path / "mysqld", "30"])
    comm = Path(f"/proc/{server.pid}/comm")
    for _ in range(200):  # the kernel names the process a moment after Popen returns
        if comm.read_text().strip() == "mysqld":
            break
        time.sleep(0.01)
    try:
        (d / "mysqld.pid").write_text(str(server.pid))
        (why,) = datadir.problems(d)
        assert f"in use by a running server (mysqld.pid: pid {server.pid})" in why
    finally:
        server.kill()
        server.wait()


def test_the_copy_leaves_the_servers_identity_and_runtime_files_out(tmp_path):
    d = _folder(tmp_path)
    (d / "mysql" / "user.MYD").write_bytes(b"x" * 5000)
    for name in ("auto.cnf", "host.pid", "mysqld.sock"):
        (d / name).write_text("x")
    assert datadir.copy(d, tmp_path / "copy") == 5000
    assert sorted(str(p.relative_to(tmp_path / "copy"))
                  for p in (tmp_path / "copy").rglob("*")) == ["mysql", "mysql/user.MYD"]


@pytest.mark.parametrize("plant", ["symlink", "hard link", "fifo"])
def test_the_copy_and_the_check_refuse_a_link_or_a_fifo(tmp_path, plant):
    d = _folder(tmp_path)
    _header(d / "ib_logfile0", b"MariaDB 10.11.18")
    target = tmp_path / "secret"
    target.write_text("root's")
    p = d / "mysql" / "db.opt"
    if plant == "symlink":
        p.symlink_to(target)
    elif plant == "hard link":
        os.link(target, p)
    else:
        os.mkfifo(p)
    what = "a hard link" if plant == "hard link" else "not a regular file"
    assert datadir.problems(d) == [f"{p}: {what}; a datadir is copied only when it holds "
                                   "folders and regular files"]
    with pytest.raises(InputError, match=f"{p}: {what}"):
        datadir.copy(d, tmp_path / "copy")


def test_a_copy_that_would_not_fit_is_refused_before_a_byte(tmp_path, monkeypatch):
    d = _folder(tmp_path)
    (d / "ibdata1").write_bytes(b"\0" * 8192)
    free = os.statvfs(tmp_path)
    monkeypatch.setattr(os, "statvfs", lambda _p: type(free)(
        (free.f_bsize, 4096, free.f_blocks, 1, 1, free.f_files, free.f_ffree,
         free.f_favail, free.f_flag, free.f_namemax)))
    with pytest.raises(InputError, match="0.0 GiB to copy, and .* has 0.0 GiB free"):
        datadir.copy(d, tmp_path / "copy")
    assert not (tmp_path / "copy").exists()


def test_a_datadir_dataset_is_refused_at_plan_on_a_target_that_cannot_start_on_it(tmp_path):
    """A DBA's datadir starts a local sandbox on a copy of it: with --target docker, a
    lab host or an external server the plan says so before any build or server starts
    (it was said at the first run's start), naming the file, the dataset and the way."""
    from harness.runner.plan import _fits_target
    from harness.scenario import parse_scenario

    _header(_folder(tmp_path, "backup") / "ib_logfile0", b"MariaDB 10.11.18")
    (tmp_path / "slow.log").write_text(
        "# Time: 2026-11-30T10:00:00.000000Z\n# User@Host: app[app] @ localhost []  Id: 8\n"
        "# Query_time: 0.000100  Lock_time: 0.000000 Rows_sent: 1  Rows_examined: 1\n"
        "SET timestamp=1764496800;\nSELECT 1;\n")
    sc = parse_scenario(tmp_path / "dba.yaml", "name: dba\ndataset: [{kind: datadir, "
                        "path: backup, database: shop}]\nworkload: {kind: replay, database: "
                        "shop, log: slow.log}\n")
    _fits_target(sc, "local", False)
    for target, external, where in (("docker", False, "--target docker"),
                                    ("ansible:lab.yml", False, "--target ansible:lab.yml"),
                                    ("local", True, "external servers")):
        with pytest.raises(InputError, match=f"dataset shop: a datadir dataset starts a "
                                             f"local sandbox .*not on {where}"):
            _fits_target(sc, target, external)
