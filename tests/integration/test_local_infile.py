"""LOAD DATA LOCAL sends only the files the harness named: the server names the file
it wants, and a mysqld (another account than the harness's root) that asked for any
other would otherwise get it. Held on a real server, which asks for exactly the file
a statement names: naming another file stands in for a server that asks for it."""
from __future__ import annotations

import pymysql
import pytest

from ..conftest import sandbox

pytestmark = pytest.mark.integration

SECRET = "root-only-7d1e"


def _rows(cur) -> list[str]:
    cur.execute("SELECT v FROM t ORDER BY v")
    return [r[0] for r in cur.fetchall()]


def test_only_the_named_files_are_sent(tmp_path):
    named, other = tmp_path / "rows.txt", tmp_path / "secret.txt"
    named.write_text("a\nb\n")
    other.write_text(f"{SECRET}\n")
    other.chmod(0o600)
    with sandbox("mariadb-10.11", local_infile="ON") as box:
        with box.endpoint.connect(local_files=[named]) as c, c.cursor() as cur:
            cur.execute("CREATE DATABASE IF NOT EXISTS li")
            cur.execute("CREATE TABLE li.t (v VARCHAR(40))")
            cur.execute("USE li")
            assert cur.execute("LOAD DATA LOCAL INFILE %s INTO TABLE t", (str(named),)) == 2
            with pytest.raises(pymysql.err.OperationalError) as e:
                cur.execute("LOAD DATA LOCAL INFILE %s INTO TABLE t", (str(other),))
            assert str(other) in str(e.value) and "not sent" in str(e.value)
            assert _rows(cur) == ["a", "b"]  # nothing of the other file reached the server
        with box.endpoint.connect(database="li") as c, c.cursor() as cur:
            # no file named: the client's LOCAL capability is off, the server refuses
            with pytest.raises(pymysql.err.MySQLError) as e:
                cur.execute("LOAD DATA LOCAL INFILE %s INTO TABLE t", (str(named),))
            assert e.value.args[0] in (1148, 3948, 4166), e.value
            assert _rows(cur) == ["a", "b"]
