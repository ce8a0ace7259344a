"""Where a hot table's pages sit in the LRU while a dump scans a big table.

Investigation aid for scenarios/side_load_mysqldump.yaml: restores the experiment's
dataset snapshot into a sandbox under the experiment's IO profile, dumps big.sbtest1
once alone (the pool fills, eviction starts), then runs single-threaded sysbench
(--rate) on the small table and dumps big.sbtest1 again after --dump-after seconds.
Every 2 s it prints the small and big tables' pages in the old and young sublists
(INNODB_BUFFER_PAGE_LRU.IS_OLD) with the pool's made-young counters.

    .venv/bin/python tools/lru_probe.py mysql-5.7.29 [--old-blocks-time 1000] [--rate 50]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from harness import proc
from harness.host.profile import CgroupProfile
from harness.providers.local import LocalProvider
from harness.scenario import HostProfile, load_scenario
from harness.server import catalog, snapshot
from harness.server.mysql import connection, query
from harness.workloads.sysbench import write_config

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("server")
    p.add_argument("--old-blocks-time", type=int, default=1000)
    p.add_argument("--seconds", type=int, default=60)
    p.add_argument("--rate", type=int, default=50, help="sysbench --rate (0: unthrottled)")
    p.add_argument("--dump-after", type=int, default=40)
    a = p.parse_args()
    sc = load_scenario(ROOT / "scenarios" / "side_load_mysqldump.yaml")
    opts = dict(sc.model.mysqld, innodb_old_blocks_time=a.old_blocks_time)
    build = catalog.resolve(a.server)
    key = snapshot.snapshot_key(build, sc.model.dataset, opts)
    snap = snapshot.find(key)
    if snap is None:
        print(f"no snapshot {key}: run make exp-side-load first", file=sys.stderr)
        return 2
    box = LocalProvider().provision(build, datadir_from=snap)
    prof = CgroupProfile(HostProfile(read_iops=440, write_iops=440), box.datadir)
    tmp = Path(tempfile.mkdtemp())
    try:
        prof.apply()
        box.start(opts)
        prof.attach(box.pid)
        cnf = box.endpoint.write_defaults_file(tmp / "dump.cnf")
        print("dump of the big table alone (fills the pool; eviction starts) ...", flush=True)
        subprocess.run([proc.which("mysqldump"), f"--defaults-extra-file={cnf}", "big",
                        "sbtest1"], stdout=subprocess.DEVNULL, check=True)
        cfg = write_config(tmp / "sb.cnf", box.endpoint, "small")
        sb = subprocess.Popen([proc.which("sysbench"), f"--config-file={cfg}", "oltp_read_only",
                               "--tables=1", "--table-size=120000", "--threads=1",
                               f"--rate={a.rate}", f"--time={a.seconds + 30}",
                               "--report-interval=0", "run"], stdout=subprocess.DEVNULL)

        def dump() -> None:
            time.sleep(a.dump_after)
            subprocess.run([proc.which("mysqldump"), f"--defaults-extra-file={cnf}", "big",
                            "sbtest1"], stdout=subprocess.DEVNULL)
        threading.Thread(target=dump, daemon=True).start()
        print(f"sysbench --rate={a.rate} on the small table; the dump again at "
              f"{a.dump_after} s")
        print("  t  small_old small_young  big_old big_young  made_young not_made_young")
        with connection(box.endpoint) as c:
            for t in range(0, a.seconds, 2):
                rows = query(c, "SELECT TABLE_NAME, IS_OLD, COUNT(*) FROM "
                             "information_schema.INNODB_BUFFER_PAGE_LRU WHERE TABLE_NAME "
                             "LIKE '%sbtest1%' GROUP BY TABLE_NAME, IS_OLD")
                n = {(("small" if "small" in tn else "big"), o): k for tn, o, k in rows}
                st = query(c, "SELECT PAGES_MADE_YOUNG, PAGES_NOT_MADE_YOUNG FROM "
                           "information_schema.INNODB_BUFFER_POOL_STATS")[0]
                print(f"{t:3d}  {n.get(('small', 'YES'), 0):9d} {n.get(('small', 'NO'), 0):11d}"
                      f"  {n.get(('big', 'YES'), 0):7d} {n.get(('big', 'NO'), 0):9d}"
                      f"  {st[0]:10d} {st[1]:14d}", flush=True)
                time.sleep(2)
        sb.kill()
    finally:
        box.destroy()
        prof.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
