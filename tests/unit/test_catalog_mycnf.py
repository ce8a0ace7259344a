"""Version detection, option lists and my.cnf handling, on captured real outputs."""
from pathlib import Path

import pytest

from harness.catalog import CATALOG, parse_version_output, version_tuple
from harness.errors import CatalogError
from harness.mycnf import parse_help_options, parse_mycnf, render

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
])
def test_version_detection(text, flavor, version):
    assert parse_version_output(text) == (flavor, version)


def test_version_garbage_is_an_error():
    with pytest.raises(CatalogError):
        parse_version_output("segmentation fault")


def test_version_tuple():
    assert version_tuple("10.11.19-MariaDB") == (10, 11, 19)
    assert version_tuple("5.7.29") > version_tuple("5.7.6")


def test_help_options_of_mysql_5_6():
    names = parse_help_options((DATA / "mysqld-5.6.24-verbose-help.txt").read_text())
    assert {"innodb_old_blocks_time", "innodb_buffer_pool_size", "skip_name_resolve",
            "innodb_max_dirty_pages_pct", "innodb_change_buffer_max_size"} <= names
    assert "innodb_buffer_pool_chunk_size" not in names  # 5.7.5+
    assert len(names) > 400


def test_mycnf_render_and_parse_round_trip():
    text = render({"mysqld": {"innodb_buffer_pool_size": "1G", "skip-name-resolve": None,
                              "innodb_file_per_table": True}})
    assert "skip-name-resolve\n" in text and "innodb_file_per_table = ON" in text
    opts = parse_mycnf(text + "[client]\nuser=x\n")
    assert opts == {"innodb_buffer_pool_size": "1G", "skip-name-resolve": None,
                    "innodb_file_per_table": "ON"}


def test_every_catalog_entry_is_complete():
    for e in CATALOG.values():
        assert e.flavor in ("mysql", "percona", "mariadb")
        assert e.source in ("debian", "npm", "maven", "tarball")
        if e.source in ("npm", "maven"):
            assert e.sha256 and len(e.sha256) == 64, e.name
    flavors = {(e.flavor, e.version[:3]) for e in CATALOG.values()}
    for want in [("mysql", "5.5"), ("mysql", "5.6"), ("mysql", "5.7"), ("percona", "5.5"),
                 ("percona", "5.6"), ("percona", "5.7")]:
        assert want in flavors


@pytest.mark.parametrize("text,size", [("134217728", 134217728), ("512M", 512 << 20),
                                       ("2G", 2 << 30), ("1.5g", 3 << 29), ("64k", 65536),
                                       ("abc", None), (True, None), (None, None)])
def test_parse_size(text, size):
    from harness.mycnf import parse_size
    assert parse_size(text) == size
