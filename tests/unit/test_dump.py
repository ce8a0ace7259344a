"""A mysqldump file read as a dataset, before anything runs: what each statement is, what
is skipped and why, what is refused (naming the line), and each table's secondary
indexes held back for after its rows."""
from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from harness.errors import InputError
from harness.workloads.dump import (
    EXAMPLE_DUMP,
    kind_of,
    plan,
    statements,
    without_secondary_indexes,
)


def _dump(tmp_path: Path, text: str, name: str = "d.sql") -> Path:
    f = tmp_path / name
    f.write_bytes(gzip.compress(text.encode()) if name.endswith(".gz") else text.encode())
    return f


@pytest.mark.parametrize("name", ["d.sql", "d.sql.gz"])
def test_a_dump_is_read_statement_by_statement_with_what_is_skipped_and_why(tmp_path, name):
    p = plan(_dump(tmp_path, EXAMPLE_DUMP, name), "prod")
    assert p.tables == ["orders"] and p.databases == {"prod"}
    assert p.skipped == {
        "SET SQL_LOG_BIN (it needs SUPER; the sandbox's binary log is not the point)": 1,
        "SET @@GLOBAL.GTID_PURGED (the source's GTID history)": 1,
        "LOCK/UNLOCK TABLES (the load is alone)": 2,
        "DISABLE/ENABLE KEYS (MyISAM's; InnoDB ignores it)": 2}
    kinds = [kind_of(st)[0] for st in statements(_dump(tmp_path, EXAMPLE_DUMP, name))]
    assert kinds.count("insert") == 1 and kinds.count("object") == 2  # a trigger, a view
    (insert,) = [st for st in statements(_dump(tmp_path, EXAMPLE_DUMP, name))
                 if kind_of(st)[0] == "insert"]
    assert insert.text.endswith("(3,9,'x')") and "'first; with a semicolon'" in insert.text


@pytest.mark.parametrize("text, needle", [
    ("CREATE DATABASE `a`;\nUSE `a`;\nCREATE DATABASE `b`;\nUSE `b`;\n",
     "holds databases a, b: one dataset entry loads one database"),
    ("CREATE TABLE t (id int);\nGRANT ALL ON *.* TO 'x'@'%';\n",
     "line 2: not loaded into a sandbox: \"GRANT ALL ON *.* TO 'x'@'%'\""),
    ("CREATE TABLE t (id int);\nINSERT INTO t VALUES (1),\n(2)",
     "line 2: the dump ends inside a statement (cut short?)"),
    ("CREATE DATABASE `shop`;\nUSE `shop`;\nCREATE TABLE t (id int);\n",
     "a dump of database shop: load it as database: shop"),
])
def test_a_dump_the_harness_will_not_load_is_refused_before_the_first_row(tmp_path, text,
                                                                           needle):
    f = _dump(tmp_path, text)
    with pytest.raises(InputError, match=f"{f}: " + needle.replace("*", r"\*")
                       .replace("(", r"\(").replace(")", r"\)").replace("?", r"\?")):
        plan(f, "a")


def test_secondary_indexes_wait_for_the_rows_unless_a_foreign_key_needs_them():
    ddl = ("CREATE TABLE `t` (\n  `id` int NOT NULL,\n  `a` int,\n  `b` text,\n"
           "  PRIMARY KEY (`id`),\n  UNIQUE KEY `ua` (`a`),\n  KEY `ab` (`a`,`id`),\n"
           "  FULLTEXT KEY `fb` (`b`)\n) ENGINE=InnoDB")
    bare, held = without_secondary_indexes(ddl)
    assert held == ["UNIQUE KEY `ua` (`a`)", "KEY `ab` (`a`,`id`)", "FULLTEXT KEY `fb` (`b`)"]
    assert bare == ("CREATE TABLE `t` (\n  `id` int NOT NULL,\n  `a` int,\n  `b` text,\n"
                    "  PRIMARY KEY (`id`)\n) ENGINE=InnoDB")
    fk = ddl.replace("  FULLTEXT KEY `fb` (`b`)\n", "  FULLTEXT KEY `fb` (`b`),\n  CONSTRAINT "
                     "`f` FOREIGN KEY (`a`) REFERENCES `p` (`id`)\n")
    assert without_secondary_indexes(fk) == (fk, [])


def test_delimiter_blocks_hold_a_routine_whole(tmp_path):
    f = _dump(tmp_path, "DELIMITER ;;\nCREATE DEFINER=`root`@`localhost` PROCEDURE `p`()\n"
                        "BEGIN\n  SELECT 1;\n  SELECT 2;\nEND ;;\nDELIMITER ;\nSELECT 3;\n")
    (proc, last) = list(statements(f))
    assert proc.line == 2 and proc.text.endswith("SELECT 2;\nEND ")
    assert kind_of(proc) == ("object", "") and last.text == "SELECT 3"
    assert kind_of(last)[0] == "refuse"


def test_another_dump_file_or_the_same_one_changed_needs_another_snapshot(tmp_path):
    import os

    from harness.server.snapshot import snapshot_key
    from harness.workloads.dump import DumpDataset

    from .test_server_lifecycle import BUILD

    f = _dump(tmp_path, EXAMPLE_DUMP)
    data = DumpDataset(kind="dump", database="shop", file=f.name).located(tmp_path)
    key = snapshot_key(BUILD, [data], {})
    assert snapshot_key(BUILD, [data], {}) == key
    os.utime(f, ns=(1, 1))  # touched: perhaps another export under the same name
    assert snapshot_key(BUILD, [data], {}) != key
    other = _dump(tmp_path, EXAMPLE_DUMP, "other.sql")
    assert snapshot_key(BUILD, [DumpDataset(kind="dump", database="shop", file=other.name)
                               .located(tmp_path)], {}) != key


def test_a_tab_directory_is_its_sql_files_each_with_its_data(tmp_path):
    from harness.server.snapshot import snapshot_key
    from harness.workloads.dump import DumpDataset, sources

    from .test_server_lifecycle import BUILD

    d = tmp_path / "tab"
    d.mkdir()
    for t in ("b", "a"):
        (d / f"{t}.sql").write_text(f"CREATE TABLE `{t}` (\n  `id` int NOT NULL,\n"
                                    f"  `v` int,\n  PRIMARY KEY (`id`),\n  KEY `v` (`v`)\n);\n")
        (d / f"{t}.txt").write_text("1\t2\n")
    assert [f.name for f in sources(d)] == ["a.sql", "b.sql"]
    assert plan(d, "shop").tables == ["a", "b"]
    data = DumpDataset(kind="dump", database="shop", file="tab").located(tmp_path)
    key = snapshot_key(BUILD, [data], {})
    (d / "b.txt").write_text("1\t2\n3\t4\n")  # another export of one table
    assert snapshot_key(BUILD, [data], {}) != key
    (d / "c.csv").write_text("1,2\n")
    with pytest.raises(InputError, match=r"tab: data files without their TABLE.sql: c.csv"):
        sources(d)
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="empty: a directory without .sql files"):
        sources(tmp_path / "empty")
