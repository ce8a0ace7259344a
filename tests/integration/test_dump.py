"""A real mysqldump (MariaDB's, with routines, triggers and a view) loaded as a dump
dataset on a real server: the same rows, the secondary indexes back after the load,
the objects there and owned by the harness's account, what was skipped counted."""
from __future__ import annotations

import gzip
import subprocess
import time

import pytest

from harness import catalog, proc
from harness.mysql import connection, query
from harness.providers.local import LocalProvider
from harness.scenario import SysbenchDataset
from harness.workloads.base import RunContext
from harness.workloads.dump import DumpDataset, prepare_dataset, verify_dataset
from harness.workloads.sysbench import prepare_dataset as prepare_sysbench

pytestmark = pytest.mark.integration

OBJECTS = [
    "CREATE VIEW src.busy AS SELECT k, COUNT(*) AS n FROM src.sbtest1 GROUP BY k",
    "CREATE TRIGGER src.sbtest2_bi BEFORE INSERT ON src.sbtest2 FOR EACH ROW "
    "SET NEW.pad = CONCAT('trigger:', NEW.pad)",
    "CREATE PROCEDURE src.top_k(IN lim INT) BEGIN SELECT k FROM src.sbtest1 ORDER BY k "
    "DESC LIMIT lim; END",
]


def test_a_real_dump_loads_as_the_same_database(tmp_path):
    box = LocalProvider().provision(catalog.resolve("mariadb-10.11"))
    try:
        box.start({"innodb_buffer_pool_size": "64M"})
        ctx = RunContext(box.endpoint, tmp_path, time.monotonic, lambda *a: None,
                         lambda *a: None)
        prepare_sysbench(ctx, SysbenchDataset(database="src", tables=2, table_size=3000))
        with connection(box.endpoint) as c, c.cursor() as cur:
            for sql in OBJECTS:
                cur.execute(sql)
        cnf = box.endpoint.write_defaults_file(tmp_path / "client.cnf")
        out = subprocess.run([proc.which("mariadb-dump"), f"--defaults-extra-file={cnf}",
                              "--routines", "--triggers", "--databases", "src"],
                             check=True, capture_output=True).stdout
        (tmp_path / "src.sql.gz").write_bytes(gzip.compress(out))
        data = DumpDataset(kind="dump", database="dst", file="src.sql.gz",
                           threads=2).located(tmp_path)
        done = prepare_dataset(ctx, data)
        assert done["tables"] == {"sbtest1": 3000, "sbtest2": 3000} and done["rows"] == 6000
        assert done["deferred_indexes"] == 2 and done["objects"] >= 3  # k_1 twice
        assert done["skipped"]["LOCK/UNLOCK TABLES (the load is alone)"] == 4
        assert verify_dataset(box.endpoint, data) == []
        with connection(box.endpoint) as c:
            for t in ("sbtest1", "sbtest2"):
                (src,), (dst,) = (query(c, f"CHECKSUM TABLE {db}.{t}") for db in ("src", "dst"))
                assert src[1] == dst[1], t  # the same rows, not passed through the trigger
                assert {r[2] for r in query(c, f"SHOW INDEX FROM dst.{t}")} == \
                    {"PRIMARY", "k_1"}
            (definer,) = query(c, "SELECT DEFINER FROM information_schema.VIEWS WHERE "
                                  "TABLE_SCHEMA = 'dst'")
            assert definer[0].startswith(box.endpoint.user + "@")
            assert query(c, "SELECT n FROM dst.busy LIMIT 1")
            assert query(c, "SELECT TRIGGER_NAME FROM information_schema.TRIGGERS WHERE "
                            "TRIGGER_SCHEMA = 'dst'") == (("sbtest2_bi",),)
            c.cursor().execute("CALL dst.top_k(2)")
    finally:
        box.destroy()
