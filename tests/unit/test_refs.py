"""Where a command names a build (harness/server/refs.py), and the catalog's 8.x
entries, built to the vendors' documented tarball names."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.errors import CatalogError, InputError
from harness.server import catalog, refs


def test_a_name_a_folder_and_what_is_neither(tmp_path):
    assert refs.parse("mariadb-10.11") == refs.ServerRef(name="mariadb-10.11")
    assert refs.parse(str(tmp_path)) == refs.ServerRef(basedir=tmp_path)
    with pytest.raises(CatalogError, match="no such file or folder"):
        refs.parse(str(tmp_path / "mysql-8.4.11-linux-glibc2.28-x86_64.tar.xz"))
    with pytest.raises(CatalogError, match=r"unknown server 'mysql-8\.4'.*mysql-8\.4\.11"):
        refs.parse("mysql-8.4")


def test_an_unpinned_file_is_refused_before_anything_of_it_is_read(tmp_path):
    f = tmp_path / "mysql-8.4.11-linux-glibc2.28-x86_64.tar.xz"
    f.write_bytes(b"not even a tarball")
    with pytest.raises(CatalogError, match="nobody pins this file .*nothing of it was "
                       "unpacked or run.*servers install .*--trust-unpinned"):
        refs.parse(str(f))


def _cnf(tmp_path: Path, text: str, name: str = "my.cnf") -> Path:
    f = tmp_path / name
    f.write_text(text)
    return f


@pytest.mark.parametrize("text, name, group", [
    ("[mysqld]\n[mysqld-8.4]\nmysql_native_password=ON\n", "mysql-8.4.11", "[mysqld-8.4]"),
    ("[mysqld-8.0]\n", "mysql-8.0.31", "[mysqld-8.0]"),  # Oracle's build that runs here
    ("[mariadb-10.11]\n", "mariadb-10.11", "[mariadb-10.11]"),
    ("[mysqld-10.11]\n", "mariadb-10.11", "[mysqld-10.11]"),  # MariaDB reads it too
    (" [ mariadbd-11.8 ]\n", "mariadb-11.8", "[mariadbd-11.8]"),
    ("[mysqld-5.7]\n", "mysql-5.7.29", "[mysqld-5.7]"),  # the one that runs here first
])
def test_the_build_a_files_version_group_names(tmp_path, text, name, group):
    assert refs.named_by_groups([_cnf(tmp_path, text)]) == refs.NamedBy(name, group)


def test_no_group_two_series_and_one_no_build_is(tmp_path):
    assert refs.named_by_groups([_cnf(tmp_path, "[mysqld]\n# [mysqld-8.4]\n")]) is None
    a = _cnf(tmp_path, "[mysqld-8.4]\n", "a.cnf")
    b = _cnf(tmp_path, "[mysqld-8.0]\n", "b.cnf")
    with pytest.raises(InputError, match=r"2 server series \(\[mysqld-8\.0\], \[mysqld-8\.4\]\)"):
        refs.named_by_groups([a, b])
    with pytest.raises(InputError, match=r"\[mysqld-6\.1\] names mysql 6\.1"):
        refs.named_by_groups([_cnf(tmp_path, "[mysqld-6.1]\n")])


# The vendors' documented names: Oracle's mysql-VERSION-linux-glibcX.Y-x86_64[-minimal]
# .tar.xz, Percona's Percona-Server-VERSION-REL-Linux.x86_64.glibcX.Y[-minimal].tar.gz.
ORACLE = re.compile(r"mysql-(8\.[04]\.\d+)-linux-glibc2\.(17|28)-x86_64(-minimal)?\.tar\.xz")
PERCONA = re.compile(r"Percona-Server-(8\.[04]\.\d+)-\d+-Linux\.x86_64\.glibc2\.\d\d"
                     r"(-minimal)?\.tar\.gz")


@pytest.mark.parametrize("name", ["mysql-8.0.46", "mysql-8.4.11", "percona-8.0.46",
                                  "percona-8.4.11"])
def test_the_8x_entries_are_the_vendors_tarballs(name):
    e = catalog.CATALOG[name]
    files = [e.package.rsplit("/", 1)[-1], *e.variants]
    pattern = ORACLE if e.flavor == "mysql" else PERCONA
    for f in files:
        m = pattern.fullmatch(f)
        assert m is not None and m.group(1) == e.version, f
    assert len(set(files)) == len(files)
    assert e.source == "tarball" and e.sha256 is None and not e.mirror_files
    assert "built to the vendor's documentation" in e.notes and "has not run here" in e.notes
    assert e.install_dir.name == name


def test_a_default_said_two_ways_is_not_a_new_default(monkeypatch):
    from harness.server import cnfcheck

    monkeypatch.setattr(cnfcheck.socket, "gethostname", lambda: "db7.lab")
    same = cnfcheck._says_what_it_does
    assert not same("innodb_doublewrite", "ON", "TRUE")  # a switch's two words
    assert not same("innodb_io_capacity_max", "4294967295", "18446744073709551615")
    assert not same("relay_log", "db7-relay-bin", "(no default)")  # the host's name
    assert not same("pid_file", "db7.pid", "other.pid")
    assert same("innodb_io_capacity", "10000", "200")
    assert same("innodb_adaptive_hash_index", "FALSE", "TRUE")
    assert same("log_bin_basename", "db-binlog", "binlog")  # not the host's name


def test_compare_runs_where_the_files_version_group_says_and_says_so(tmp_path, capsys):
    from harness.runner.request import CompareRequest

    a = _cnf(tmp_path, "[mysqld-5.7]\ninnodb_buffer_pool_size = 64M\n", "a.cnf")
    b = _cnf(tmp_path, "[mysqld-5.7]\ninnodb_buffer_pool_size = 128M\n", "b.cnf")
    req = CompareRequest(baseline=str(a), candidate=str(b))
    req.scenario = req.scenario_file(None)  # the shipped workload
    req.choose_servers()
    assert req.servers == ["mysql-5.7.29"]
    assert "server: mysql-5.7.29, the one the my.cnf's [mysqld-5.7] group names" in \
        capsys.readouterr().err
    # no version group: the shipped workload's own server, said as such
    plain = _cnf(tmp_path, "[mysqld]\nmax_connections = 10\n", "plain.cnf")
    req = CompareRequest(baseline=str(plain), candidate=str(plain))
    req.scenario = req.scenario_file(None)
    req.choose_servers()
    assert req.servers == [] and req.notes == [
        "server: mariadb-10.11, the shipped workload's (the my.cnf files name no version "
        "group; --server NAME|FILE|DIR picks another)"]
    # a scenario of the user's: its servers, untouched
    req = CompareRequest(scenario=str(tmp_path / "mine.yaml"), baseline=str(a),
                         candidate=str(b))
    req.choose_servers()
    assert req.servers == [] and req.notes == []


def test_a_pinned_tarball_by_path_is_its_catalog_build_without_a_reinstall():
    from tests.conftest import MIRROR

    f = MIRROR / "Percona-Server-5.5.52-rel38.3-Linux.x86_64.tar.gz"
    entry = catalog.CATALOG["percona-5.5.52"]
    if not f.is_file() or not catalog.is_installed(entry):
        pytest.skip("the seed mirror's Percona Server 5.5.52 is not here, or not installed")
    built = (entry.install_dir / "BUILD.json").stat().st_mtime_ns
    assert refs.parse(str(f)) == refs.ServerRef(name="percona-5.5.52")
    assert (entry.install_dir / "BUILD.json").stat().st_mtime_ns == built
