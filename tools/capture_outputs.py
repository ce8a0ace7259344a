"""Capture real outputs of every catalog server for the parser tests in tests/data/.

Run: .venv/bin/python tools/capture_outputs.py  (starts each server in a sandbox under a
small sysbench read/write load and saves SHOW ENGINE INNODB STATUS and friends).
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import proc
from harness.providers.local import LocalProvider
from harness.server import catalog
from harness.server.mysql import connection, query
from harness.workloads.base import RunContext
from harness.workloads.sysbench import SysbenchDataset, prepare_dataset, write_config

DATA = Path(__file__).parent.parent / "tests" / "data"
SERVERS = sys.argv[1:] or ["mariadb-10.11", "mysql-5.7.29", "mysql-5.6.24", "mariadb-10.1.23",
                           "mariadb-10.2.11"]

for name in SERVERS:
    build = catalog.resolve(name)
    box = LocalProvider().provision(build)
    try:
        box.start({"innodb_buffer_pool_size": "64M"})
        art = Path(tempfile.mkdtemp())
        ctx = RunContext(box.endpoint, art, time.monotonic, lambda *a: None, lambda *a: None)
        data = SysbenchDataset(tables=2, table_size=20000)
        prepare_dataset(ctx, data)
        cfg = write_config(art / "c.cnf", box.endpoint, "sbtest")
        load = subprocess.Popen([proc.which("sysbench"), f"--config-file={cfg}", "oltp_read_write",
                                 "--tables=2", "--table-size=20000", "--threads=2", "--time=8",
                                 "run"], stdout=subprocess.DEVNULL)
        time.sleep(5)
        with connection(box.endpoint) as c:
            status = query(c, "SHOW ENGINE INNODB STATUS")[0][2]
        load.wait()
        (DATA / f"innodb-status-{name}.txt").write_text(status)
        print(f"{name}: {len(status)} bytes")
    finally:
        box.destroy()
