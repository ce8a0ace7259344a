"""Version detection, option lists and my.cnf handling, on captured real outputs."""
from pathlib import Path

import pytest

from harness.errors import CatalogError
from harness.server import hostpaths, optionfile
from harness.server.catalog import CATALOG, parse_version_output, version_tuple
from harness.server.mycnf import MAX_LINE, option_problem, parse_help_options, render

DATA = Path(__file__).parent.parent / "data"


@pytest.mark.parametrize("text,flavor,version", [
    ("/x/mysqld  Ver 5.7.29 for Linux on x86_64 (MySQL Community Server (GPL))", "mysql",
     "5.7.29"),
    ("/x/mysqld  Ver 5.6.24 for linux-glibc2.5 on x86_64 (MySQL Community Server (GPL))",
     "mysql", "5.6.24"),
    ("/usr/sbin/mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 "
     "(Debian 12)", "mariadb", "10.11.19"),
    ("/x/mysqld  Ver 10.1.23-MariaDB for Linux on x86_64 (MariaDB Server)", "mariadb",
     "10.1.23"),
    ("/x/mysqld  Ver 5.6.51-91.0 for Linux on x86_64 (Percona Server (GPL), Release 91.0, "
     "Revision b59139e)", "percona", "5.6.51"),
    # The sid builds, run through their loader wrappers: the path names neither flavor
    # nor version that counts (a MySQL build cached under a folder named mariadb-...).
    ("/c/servers/mariadb-11.8/root/usr/sbin/mysqld  Ver 9.7.4-2 for Linux on x86_64 "
     "((Debian))", "mysql", "9.7.4"),
    ("/c/servers/mysql-9.7/root/usr/sbin/mariadbd  Ver 11.8.9-MariaDB-4 from Debian for "
     "debian-linux-gnu on x86_64 (-- Please help get to 10k stars)", "mariadb", "11.8.9"),
    # after 9.7, calendar numbers: the year and the month (MySQL 26.7, 26.10)
    ("/x/mysqld  Ver 26.10.0 for Linux on x86_64 (MySQL Community Server - GPL)", "mysql",
     "26.10.0"),
    ("/x/mysqld  Ver 26.7 for Linux on x86_64 (MySQL Community Server - GPL)", "mysql",
     "26.7.0"),
    ("/x/mysqld  Ver 26.10.1-1 for Linux on x86_64 (Percona Server (GPL), Release 1)",
     "percona", "26.10.1"),
])
def test_version_detection(text, flavor, version):
    assert parse_version_output(text) == (flavor, version)


def test_version_garbage_is_an_error():
    with pytest.raises(CatalogError):
        parse_version_output("segmentation fault")


def test_version_tuple():
    assert version_tuple("10.11.19-MariaDB") == (10, 11, 19)
    assert version_tuple("5.7.29") > version_tuple("5.7.6")
    # calendar versions come after 9.x and order by year, then month
    assert version_tuple("26.7.0") > version_tuple("9.7.4") > version_tuple("8.4.11")
    assert version_tuple("26.10.0") > version_tuple("26.7.3")


def test_a_calendar_version_is_a_current_mysql_build(tmp_path):
    """What a build of MySQL 26.10 is asked for: --initialize-insecure, no X Protocol
    listener, the accounts of 5.7.6+; its option groups [mysqld-26.10] are MySQL's."""
    from harness.server import refs
    from harness.server.catalog import Build
    b = Build(root=tmp_path, flavor="mysql", version="26.10.0", version_string="",
              mysqld=tmp_path / "bin/mysqld", share_dir=tmp_path, lib_dir=None,
              init_method="initialize-insecure", install_db=None, pristine_data=None,
              name="mysql-26.10.0")
    assert b.server_options()["mysqlx"] == "OFF" and b.modern_accounts
    f = tmp_path / "my.cnf"
    f.write_text("[mysqld-26.10]\ninnodb_redo_log_capacity = 1G\n")
    assert refs._version_groups([f]) == {("mysql", "26.10"): "[mysqld-26.10]"}
    f.write_text("[mysqld-12.3]\n")  # MariaDB 12.3
    assert refs._version_groups([f]) == {("mariadb", "12.3"): "[mysqld-12.3]"}


def test_help_options_of_mysql_5_6():
    names = parse_help_options((DATA / "mysqld-5.6.24-verbose-help.txt").read_text())
    assert {"innodb_old_blocks_time", "innodb_buffer_pool_size", "skip_name_resolve",
            "innodb_max_dirty_pages_pct", "innodb_change_buffer_max_size"} <= names
    assert "innodb_buffer_pool_chunk_size" not in names  # 5.7.5+
    assert len(names) > 400
    # "-u, --user=name": no row in the variables table; a prefix of it (userstat on
    # MariaDB 10.1) must not be taken for it
    assert {"user", "port", "datadir"} <= names


def test_mycnf_render_and_read_round_trip(tmp_path):
    """What render writes, my_print_defaults reads back as it was given (the [mysqld]
    group alone)."""
    text = render({"mysqld": {"innodb_buffer_pool_size": "1G", "skip-name-resolve": None,
                              "innodb_file_per_table": True}})
    assert "skip-name-resolve\n" in text and "innodb_file_per_table = ON" in text
    (tmp_path / "my.cnf").write_text(text + "[client]\nuser=x\n")
    opts = optionfile.mysqld_group(tmp_path / "my.cnf")
    assert opts == {"innodb_buffer_pool_size": "1G", "skip-name-resolve": None,
                    "innodb_file_per_table": "ON"}


def test_every_catalog_entry_is_complete():
    for e in CATALOG.values():
        assert e.flavor in ("mysql", "percona", "mariadb")
        assert e.source in ("debian", "debian-root", "npm", "maven", "tarball")
        if e.source in ("npm", "maven"):
            assert e.sha256 and len(e.sha256) == 64, e.name
        if e.source == "debian-root":  # every package of its root pinned
            assert e.suite and e.package in e.pins, e.name
            assert all(len(digest) == 64 for _, digest in e.pins.values()), e.name
    flavors = {(e.flavor, e.version[:3]) for e in CATALOG.values()}
    for want in [("mysql", "5.5"), ("mysql", "5.6"), ("mysql", "5.7"), ("percona", "5.5"),
                 ("percona", "5.6"), ("percona", "5.7")]:
        assert want in flavors


@pytest.mark.parametrize("text,size", [("134217728", 134217728), ("512M", 512 << 20),
                                       ("2G", 2 << 30), ("1.5g", 3 << 29), ("64k", 65536),
                                       ("abc", None), (True, None), (None, None)])
def test_parse_size(text, size):
    from harness.server.mycnf import parse_size
    assert parse_size(text) == size


def test_help_defaults_of_mysql_5_6():
    from harness.server.mycnf import parse_help_defaults
    d = parse_help_defaults((DATA / "mysqld-5.6.24-verbose-help.txt").read_text())
    assert d["innodb_old_blocks_time"] == "1000"
    assert d["innodb_io_capacity"] == "200"
    assert d["innodb_flush_method"] is None  # "(No default value)"
    assert len(d) > 400


def _fake_root(tmp_path: Path, version: str, deb: bytes) -> Path:
    root = tmp_path / "root"
    (root / "var/lib/dpkg").mkdir(parents=True)
    (root / "var/lib/dpkg/status").write_text(
        f"Package: mysql-server-core\nStatus: install ok installed\nVersion: {version}\n\n"
        "Package: gone\nStatus: deinstall ok config-files\nVersion: 1\n")
    (root / "var/cache/apt/archives").mkdir(parents=True)
    (root / f"var/cache/apt/archives/mysql-server-core_{version.replace(':', '%3a')}"
            "_amd64.deb").write_bytes(deb)
    return root


def test_pins_hold_or_name_what_the_mirror_served(tmp_path):
    import hashlib

    from harness.server.debroot import check_pins, installed_packages
    root = _fake_root(tmp_path, "1:9.7.4-2", b"the deb")
    digest = hashlib.sha256(b"the deb").hexdigest()
    assert installed_packages(root) == {"mysql-server-core": "1:9.7.4-2"}
    check_pins(root, {"mysql-server-core": ("1:9.7.4-2", digest)}, "mysql-9.7")
    assert check_pins(root, {"mysql-server-core": ("1:9.7.4-2", digest)}, "mysql-9.7") == []
    # The archive moved on to a point release of the pinned series: taken, with a note.
    (note,) = check_pins(root, {"mysql-server-core": ("1:9.7.3-1", digest)}, "mysql-9.7")
    assert note.startswith("mysql-9.7: the Debian mirror served mysql-server-core 1:9.7.4-2, "
                           "newer than the pinned 1:9.7.3-1 in its 9.7 series")
    assert digest in note
    # Older than the pin, or another series: refused, naming both.
    for pinned in ("1:9.7.5-1", "1:9.6.1-1", "2:9.7.1-1"):
        with pytest.raises(CatalogError, match=f"served mysql-server-core 1:9.7.4-2, the "
                                               f"catalog pins {pinned}"):
            check_pins(root, {"mysql-server-core": (pinned, digest)}, "mysql-9.7")
    with pytest.raises(CatalogError, match="checksum mismatch"):
        check_pins(root, {"mysql-server-core": ("1:9.7.4-2", "0" * 64)}, "mysql-9.7")


def test_wrapper_runs_the_program_through_the_roots_loader_under_its_own_name():
    from harness.server.debroot import wrapper_text
    text = wrapper_text("/usr/sbin/mariadbd")
    assert text.startswith("#!/bin/sh\n")
    assert 'exe="$root/usr/sbin/mariadbd"' in text
    assert ('exec "$build/libexec/mariadbd" --library-path '
            '"$root/lib/x86_64-linux-gnu:$root/usr/lib/x86_64-linux-gnu" --argv0 "$exe" '
            '"$exe" "$@"') in text


@pytest.mark.parametrize("value, refused", [
    ("a" * 1000, False), ("a" * (MAX_LINE - 20), False),
    ("a" * 4075 + "   skip-grant-tables", True),
    ("é" * (MAX_LINE // 2), True),  # counted in bytes, as the reader's buffer is
    ('"' * 1100, True),  # each quote escaped: the rendered line is what counts
])
def test_an_option_line_stays_well_under_the_readers_buffer(value, refused):
    why = option_problem("init_connect", value)
    assert (why is not None) == refused, why
    if refused:
        assert "more than the 2048" in why
        with pytest.raises(ValueError):
            render({"mysqld": {"init_connect": value}})


# Values as production files write them; whether each names a path out of the folder
# the server reads relative paths from (its datadir).
@pytest.mark.parametrize("value, out", [
    ("/var/log/mysql/mysql-bin.log", True), ("mysql-bin", False),
    ("../../var/lib/mysql/ibdata1", True), ("logs/../../x", True), ("a..b", False),
    ("ibdata1:12M;/data/ibdata2:1G:autoextend", True), ("ibdata1:12M:autoextend", False),
    ("Europe/Berlin", False), ("SET NAMES utf8mb4", False), (128 << 20, False), (True, False),
    # a Galera cluster address is a URL, not a path (percona-docker's node.cnf)
    ("gcomm://", False), ("gcomm://10.0.0.1,10.0.0.2", False), ("x:/data/y", True),
])
def test_a_value_names_a_host_path(value, out):
    assert hostpaths.outside(value) is out


@pytest.mark.parametrize("name, value, placed", [
    # written files: into the datadir under their own name, what they do kept
    ("log-bin", "/var/log/mysql/mysql-bin.log", ("mysql-bin.log", False, False)),
    ("loose-slow_query_log_file", "/var/log/mysql/slow.log", ("slow.log", False, False)),
    # the host's folders and files it reads: the sandbox's own
    ("innodb_log_group_home_dir", "/data/redo", ("/data/redo", True, False)),
    ("ssl-key", "/etc/mysql/server-key.pem", ("/etc/mysql/server-key.pem", True, False)),
    ("wsrep_provider", "/usr/lib/galera/libgalera_smm.so",
     ("/usr/lib/galera/libgalera_smm.so", True, False)),
    # no rule places it: refused
    ("ft_stopword_file", "/etc/mysql/stopwords", ("/etc/mysql/stopwords", False, True)),
    ("log_bin", "/var/log/mysql/..", ("/var/log/mysql/..", False, True)),
    ("innodb_buffer_pool_size", "1G", ("1G", False, False)),
    # a statement the server runs, not a path: taken as written
    ("init_connect", "SET @x = 10 / 2", ("SET @x = 10 / 2", False, False)),
    ("loose-init-replica", "SET @y = 1 /* ../x */", ("SET @y = 1 /* ../x */", False, False)),
])
def test_a_production_files_host_path_is_placed_in_the_sandbox(name, value, placed):
    got = hostpaths.place(name, value)
    assert (got.value, got.set_aside, got.refused is not None) == placed
    assert (got.note is None) == (got.value == value and not got.set_aside)


def test_an_inline_host_path_is_refused_naming_the_option():
    assert "option general_log_file = '/tmp/g.log' names a path outside the sandbox" in (
        hostpaths.refusal("general_log_file", "/tmp/g.log") or "")
    assert hostpaths.refusal("general_log_file", "g.log") is None
    assert hostpaths.refusal("init_connect", "SET @x = 10 / 2") is None


KNOWN = {"bind_address", "port", "port_open_timeout", "skip_grant_tables", "log_bin",
         "slow_query_log_file", "thread_cache_size", "extra_port", "extra_max_connections"}


@pytest.mark.parametrize("flavor,version,raw,key", [
    ("mariadb", (10, 11), "bind_addr", "bind_address"),
    ("mariadb", (10, 11), "loose-bind-a", "bind_address"),
    ("mariadb", (10, 11), "enable-skip-grant", "skip_grant_tables"),
    ("mariadb", (10, 11), "skip-grant", "skip_grant_tables"),
    ("mariadb", (10, 11), "skip-log-bin", "log_bin"),
    ("mariadb", (10, 11), "por", "por"),  # ambiguous (port, port_open_timeout): refused
    ("mariadb", (10, 11), "extra-p", "extra_port"),
    ("mysql", (5, 6, 24), "bind_addr", "bind_address"),
    ("mysql", (5, 7, 29), "bind_addr", "bind_addr"),  # no prefixes: refused at start
    ("mysql", (5, 7, 29), "enable-skip-grant-tables", "skip_grant_tables"),
])
def test_a_name_is_judged_as_the_option_the_build_takes_it_for(monkeypatch, flavor,
                                                               version, raw, key):
    from harness.server import mycnf

    class FakeBuild:
        name = f"{flavor}-x"
        init_method = "mysqld"

    b = FakeBuild()
    b.flavor, b.version_tuple = flavor, version  # type: ignore[attr-defined]
    monkeypatch.setattr(mycnf, "known_options", lambda build: KNOWN)
    assert mycnf.taken_as(b, raw) == key  # type: ignore[arg-type]
    why = hostpaths.sandbox_refusal(b, ["port"], raw, "1")  # type: ignore[arg-type]
    if key in mycnf.OFF_LIMITS | hostpaths.LISTENERS | {"port"}:
        assert why is not None and raw in why and (key == raw or key in why), why
    else:
        assert why is None


def test_a_message_names_the_option_only_where_the_build_reads_another(monkeypatch):
    from harness.server import mycnf

    class FakeBuild:
        name, flavor, version_tuple, init_method = "mariadb-x", "mariadb", (10, 11), "mysqld"

    monkeypatch.setattr(mycnf, "known_options", lambda build: KNOWN)
    b = FakeBuild()
    assert mycnf.read_as(b, "loose-Bind-Address") == ("bind_address", "")  # type: ignore[arg-type]
    assert mycnf.read_as(b, "loose-bind-a") == (  # type: ignore[arg-type]
        "bind_address", " (bind_address, as mariadb-x reads it)")
    assert mycnf.never_why("skip_grant_tables") == (
        "a sandbox never starts with it: it turns password checks off (every login would "
        "succeed)")
    assert mycnf.never_why("bind_address") is None
