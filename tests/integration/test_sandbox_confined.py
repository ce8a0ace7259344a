"""A sandbox's mysqld writes only inside its folder: CREATE TABLE ... DATA DIRECTORY and
INDEX DIRECTORY (InnoDB, MyISAM, and MariaDB's Aria) and a general tablespace's ADD
DATAFILE pointing at a folder mysqld's account may write leave no file there. MariaDB's
sandboxes run without symbolic links, MySQL 8.0 and later take such a directory only
where innodb_directories names it, and MySQL 5.5 to 5.7's InnoDB, which takes it
whatever symbolic-links says, writes into a private tmpfs: every mysqld runs in a
mount namespace where the folders anyone may write, and the other sandboxes, are
covered (harness/confine.py)."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pymysql
import pytest

from harness.server.mysql import connection, query

from ..conftest import sandbox

pytestmark = pytest.mark.integration

ENGINES = {"mariadb-10.11": ("InnoDB", "MyISAM", "Aria"), "mysql-8.0.31": ("InnoDB", "MyISAM"),
           "mysql-5.7.29": ("InnoDB", "MyISAM"), "mysql-5.6.24": ("InnoDB",)}


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_a_table_directory_outside_the_sandbox_gets_no_file(name):
    elsewhere = Path(tempfile.mkdtemp(prefix="elsewhere-", dir="/tmp"))
    elsewhere.chmod(0o777)  # mysqld's account could write here
    try:
        with sandbox(name) as box, connection(box.endpoint) as c:
            query(c, "CREATE DATABASE IF NOT EXISTS confined")
            for n, engine in enumerate(ENGINES[name]):
                sql = (f"CREATE TABLE confined.t{n} (id INT PRIMARY KEY, v INT, KEY (v)) "
                       f"ENGINE={engine} DATA DIRECTORY='{elsewhere}'"
                       + ("" if engine == "InnoDB" else f" INDEX DIRECTORY='{elsewhere}'"))
                try:
                    query(c, sql)
                    query(c, f"INSERT INTO confined.t{n} VALUES (1, 1)")
                except pymysql.err.MySQLError as e:  # refused outright: as good
                    print(f"{name} {engine}: refused: {e}")
            if name.startswith("mysql-5.7"):  # a general tablespace's file, too
                try:
                    query(c, f"CREATE TABLESPACE ts ADD DATAFILE '{elsewhere}/ts.ibd'")
                except pymysql.err.MySQLError as e:
                    print(f"{name} tablespace: refused: {e}")
            # mysqld's own view: the shared folders and the other sandboxes covered
            mounts = Path(f"/proc/{box.pid}/mountinfo").read_text()
            assert " /tmp " in mounts and " /dev/shm " in mounts, mounts[-2000:]
            query(c, "DROP DATABASE confined")
        assert list(os.listdir(elsewhere)) == [], (name, os.listdir(elsewhere))
    finally:
        for p in sorted(elsewhere.rglob("*"), reverse=True):
            p.unlink() if not p.is_dir() else p.rmdir()
        elsewhere.rmdir()
