"""A vendor's tarball, wherever a build is named: MySQL 9.7's own files repacked in the
layout of Oracle's generic Linux tarballs (tools/vendor_tarball.py: bin/, lib/private,
lib/plugin, share/english, .tar.xz) stand for the MySQL 8.0/8.4 and Percona Server 8.x
tarballs no machine here can reach. Through a lab's mirror under a catalog entry made
as the 8.x ones are; by path with `servers install FILE`, then `--server FILE` of run,
compare and cnf check, and `--basedir DIR`. Its flavor and version are what its mysqld
says, never the file's name: the same file under the name of MySQL 8.4.11's tarball is
refused as 9.7.4."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from harness.paths import cache_dir
from harness.server import catalog

from ..conftest import QUIET_COLLECTORS, ROOT, harness
from ..schemas import conform

sys.path.insert(0, str(ROOT / "tools"))
import vendor_tarball  # noqa: E402

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(os.geteuid() != 0, reason="sandboxes run as mysqld's "
                                 "account, which exists under root only")]

TINY = """\
name: vendor-tiny
servers: [mariadb-10.11]
mysqld: {innodb_buffer_pool_size: 64M}
dataset: {tables: 1, table_size: 5000}
workload: {test: oltp_read_only, threads: 1, warmup_s: 1, duration_s: 4, options: {rate: 50}}
wakeup_probe: false
""" + QUIET_COLLECTORS


@pytest.fixture(scope="module")
def tarball() -> Path:
    """The repacked tarball, made once per machine from the installed catalog 9.7."""
    return vendor_tarball.repack(cache_dir() / "test-fixtures")


@pytest.fixture
def world(open_tmp) -> Path:
    """A cache of the test's own, which mysqld's account can reach."""
    return open_tmp


def _env(world: Path, **more: str) -> dict[str, str]:
    return {"HARNESS_CACHE": str(world / "cache"), "HARNESS_RESULTS": str(world / "results"),
            **more}


def test_through_a_mirror_as_the_8x_entries_install(tarball, world, monkeypatch):
    mirror = world / "mirror"
    mirror.mkdir()
    lying = catalog.CATALOG["mysql-8.4.11"].package.rsplit("/", 1)[-1]
    os.link(tarball, mirror / lying)  # 9.7.4's files under 8.4.11's vendor name
    env = _env(world, HARNESS_MIRROR=str(mirror))
    p = harness("servers", "install", "mysql-8.4.11", env=env)
    assert p.returncode == 8 and "nobody pins this file" in p.stderr, p.stderr
    assert "nothing of it was unpacked or run" in p.stderr
    p = harness("servers", "install", "mysql-8.4.11", "--trust-unpinned", env=env)
    assert p.returncode == 8, p.stderr
    assert "reports mysql 9.7.4, the catalog expects mysql 8.4.11" in p.stderr, p.stderr
    assert not (world / "cache/servers/mysql-8.4.11").exists()
    # An entry made as the 8.x ones are (the vendor's URL, no pin), the file under its
    # own vendor name: installed from the mirror, laid out as a vendor's build.
    os.link(tarball, mirror / tarball.name)
    entry = replace(catalog.CATALOG["mysql-8.4.11"], name="mysql-9.7.4", version="9.7.4",
                    package="https://dev.mysql.com/get/Downloads/MySQL-9.7/" + tarball.name,
                    variants=())
    monkeypatch.setenv("HARNESS_CACHE", str(world / "cache"))
    monkeypatch.setenv("HARNESS_MIRROR", f"{world / 'empty'},{mirror}")
    said: list[str] = []
    catalog.install(entry, log=said.append, trust_unpinned=True)
    b = catalog.detect_build(entry.install_dir, name=entry.name)
    assert (b.flavor, b.version, b.init_method) == ("mysql", "9.7.4", "initialize-insecure")
    assert b.plugin_dir == entry.install_dir / "lib/plugin"
    assert b.share_dir == entry.install_dir / "share" and b.lib_dir == entry.install_dir / "lib"
    built = json.loads((entry.install_dir / "BUILD.json").read_text())
    assert built["from"] == (f"mirror {mirror}: {tarball.name} (pinned by nobody); "
                             "installed with --trust-unpinned"), built["from"]
    assert any("nobody pins" in m and built["sha256"] in m for m in said), said


def test_by_path_in_every_command(tarball, world, tmp_path):
    env = _env(world)
    scenario = tmp_path / "tiny.yaml"
    scenario.write_text(TINY)
    p = harness("run", str(scenario), "--server", str(tarball), env=env)
    assert p.returncode == 8 and "nobody pins this file" in p.stderr, p.stderr
    assert not (world / "cache/servers").exists()  # refused before anything was unpacked
    p = harness("servers", "install", str(tarball), "--trust-unpinned", env=env)
    assert p.returncode == 0, p.stderr
    assert "installed as mysql-9.7.4, the build its mysqld says it is" in p.stderr
    listed = {e["name"]: e for e in json.loads(
        harness("servers", "list", "--json", env=env, check=True).stdout)["servers"]}
    assert listed["mysql-9.7.4"]["source"] == "file" and listed["mysql-9.7.4"]["installed"]
    assert "built to the vendor's documentation" in listed["mysql-8.0.46"]["notes"]
    assert not listed["mysql-8.0.46"]["installed"]

    # cnf check by the tarball's path and by an unpacked folder: the same verdicts
    cnf = tmp_path / "my.cnf"
    cnf.write_text("[mysqld]\ninnodb_buffer_pool_size = 64M\nquery_cache_size = 0\n")
    unpacked = world / "unpacked"
    unpacked.mkdir()
    subprocess.run(["tar", "xJf", tarball, "-C", unpacked], check=True)
    basedir = unpacked / tarball.name.removesuffix(".tar.xz")
    checked = []
    for how in (["--server", str(tarball)], ["--basedir", str(basedir)]):
        p = harness("cnf", "check", str(cnf), *how, "--json", env=env)
        assert p.returncode == 8, p.stdout + p.stderr  # the query cache is gone since 8.0
        conform("cnf-check", json.loads(p.stdout))
        (name, verdicts), = json.loads(p.stdout)["servers"].items()
        assert name == "mysql-9.7.4"
        checked.append({v["option"]: v["status"] for v in verdicts})
    assert checked[0] == checked[1] == {"innodb_buffer_pool_size": "accepted",
                                        "query_cache_size": "removed"}, checked

    # a run on it by path, stored as the build its mysqld is
    p = harness("run", str(scenario), "--server", str(tarball), "--json", env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    (run,) = json.loads(p.stdout)["runs"]
    assert run["server"] == "mysql-9.7.4" and run["status"] == "ok", run
    shown = json.loads(harness("show", run["run_id"], "--json", env=env, check=True).stdout)
    assert shown["version"].startswith("9.7.4"), shown["version"]

    # and a comparison on the unpacked folder
    a, b = tmp_path / "a.cnf", tmp_path / "b.cnf"
    a.write_text("[mysqld]\ninnodb_flush_log_at_trx_commit = 1\n")
    b.write_text("[mysqld]\ninnodb_flush_log_at_trx_commit = 2\n")
    p = harness("compare", str(scenario), "--baseline", str(a), "--candidate", str(b),
                "--basedir", str(basedir), "--windows", "24", "--window-s", "1", "--json",
                env=env)
    assert p.returncode in (0, 3, 4), p.stderr[-3000:]
    out = json.loads(p.stdout)
    assert [c["server"] for c in out["comparisons"]] == ["mysql-9.7.4"], out["comparisons"]
