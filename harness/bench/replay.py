"""Can the replay keep up? A sysbench oltp_point_select run captured in the slow log,
then replayed as fast as possible on the same server with as many clients as sysbench
had threads, by each client (sysbench's threads running the split log, and the Python
threads): the replay's statements per second against sysbench's queries per second
(the goal: at least 0.8), the harness's own CPU per statement, and how far its memory
grew while it streamed a log of hundreds of megabytes."""
from __future__ import annotations

import resource
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..jsonvalue import JsonDict
from ..server.mysql import connection
from ..workloads.replay import Replay, ReplayWorkload
from ..workloads.sysbench import SysbenchDataset, SysbenchOLTP, SysbenchWorkload, prepare_dataset
from .sandbox import bench_server


def _rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


class _Peak:
    """This process's resident memory, sampled every 0.2 s while it runs."""

    def __init__(self) -> None:
        self.start = self.peak = _rss_kb()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self._stop.wait(0.2):
            self.peak = max(self.peak, _rss_kb())

    def __enter__(self) -> _Peak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def bench_replay(seconds: int, threads: int, log: Callable[[str], None]
                 ) -> JsonDict:
    with bench_server({"innodb_buffer_pool_size": "512M", "long_query_time": 0},
                      "bench-replay-") as (box, ctx):
        art = ctx.artifacts
        slow = art / "capture-slow.log"
        with connection(box.endpoint) as c, c.cursor() as cur:
            cur.execute(f"SET GLOBAL slow_query_log_file = '{slow}'")
        data = SysbenchDataset(tables=4, table_size=50000)
        prepare_dataset(ctx, data)
        with connection(box.endpoint) as c, c.cursor() as cur:
            cur.execute("SET GLOBAL slow_query_log = 1")
        sb = SysbenchOLTP(SysbenchWorkload(test="oltp_point_select", threads=threads,
                                           duration_s=seconds), data).run(ctx)
        with connection(box.endpoint) as c, c.cursor() as cur:
            cur.execute("SET GLOBAL slow_query_log = 0")
        res: JsonDict = {
            "seconds": seconds, "threads": threads,
            "log_mb": round(slow.stat().st_size / 2**20, 1),
            "sysbench_qps": round(sb.figure("qps_mean"), 1), "goal_ratio": 0.8}
        for client in ("sysbench", "python"):
            spec = ReplayWorkload(kind="replay", database=data.database, log=slow.name,
                                  clients=threads, client=client,
                                  duration_s=seconds).located(art)
            res[client] = _replay(spec, data, ctx, sb.figure("qps_mean"))
            log(f"replay, {client} client: {res[client]}")
    log(f"replay: {res}")
    return res


def _replay(spec: ReplayWorkload, data: SysbenchDataset, ctx: Any, qps: float
            ) -> JsonDict:
    """One replay: its rate against sysbench's, this process's CPU a statement (with
    the sysbench client: splitting the log, and reading the tallies) and its memory."""
    t = time.monotonic()
    u0, c0 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
        resource.RUSAGE_CHILDREN)
    with _Peak() as mem:
        rp = Replay(spec, data).run(ctx)
    u1, c1 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
        resource.RUSAGE_CHILDREN)
    n = max(1, int(rp.figure("statements")))

    def us(a: Any, b: Any) -> float:
        return round(((b.ru_utime + b.ru_stime) - (a.ru_utime + a.ru_stime)) / n * 1e6, 1)

    per_s = rp.figure("statements_per_s")
    return {"statements": rp.figure("statements"), "per_s": per_s,
            "ratio": round(per_s / qps, 3),
            "harness_cpu_us_per_statement": us(u0, u1),
            "sysbench_cpu_us_per_statement": us(c0, c1),
            "wall_s": round(time.monotonic() - t, 1), "replay_s": rp.figure("duration_s"),
            "rss_mb_at_start": round(mem.start / 1024, 1),
            "rss_mb_growth": round((mem.peak - mem.start) / 1024, 1)}
