"""The insert benchmark, in the style of Mark Callaghan's iibench: batches of rows into
a table with an auto-increment primary key and three secondary indexes on random
columns, from N connections, optionally rate-limited, optionally next to point and
range queries. The finding is the insert rate over time: it falls when secondary index
maintenance (the change buffer and its merges) can no longer keep up.

Rows carry random values from a seeded generator per thread; the primary key is the
server's auto-increment, so threads never collide.
"""
from __future__ import annotations

import random
import statistics
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pymysql
from pydantic import Field, model_validator

from ..errors import HarnessError
from ..model import DatasetModel, Figure, Ident, WorkloadModel
from ..server.mysql import Endpoint, connection, query
from ..stats.quantile import nearest_rank as _pct
from ..store.prepared import Prepared
from .base import RunContext, Tick, Workload, WorkloadPlugin, WorkloadResult

if TYPE_CHECKING:
    from ..store import RunReader, StoredRun


class IibenchDataset(DatasetModel):
    """The insert benchmark's table (iibench's ``purchases_index``: an auto-increment
    primary key and three secondary indexes on random columns), empty or preloaded
    with ``initial_rows`` rows."""

    kind: Literal["iibench"]
    database: Ident = "iibench"
    table: Ident = "purchases_index"
    initial_rows: int = Field(0, ge=0, le=10**12)
    seed: int = Field(1, ge=0)

    def scaled(self, factor: float) -> dict[str, Any]:
        return {"initial_rows": max(1, int(self.initial_rows * factor))}


class IibenchWorkload(WorkloadModel):
    """The insert benchmark: ``threads`` connections insert batches of
    ``rows_per_commit`` rows (one transaction each) until ``max_rows`` rows or
    ``duration_s`` seconds, optionally capped at ``rate_rows_per_s`` in all, while
    ``query_threads`` connections run point and range queries on the secondary indexes.
    Rows/s and batch latency are sampled every ``report_interval_s``."""

    kind: Literal["iibench"]
    database: Ident = "iibench"
    threads: int = Field(1, ge=1, le=256)
    rows_per_commit: int = Field(1000, ge=1, le=100_000)
    max_rows: int | None = Field(None, ge=1, le=10**12)
    duration_s: int | None = Field(None, ge=1)
    rate_rows_per_s: float | None = Field(None, gt=0)
    query_threads: int = Field(0, ge=0, le=256)
    report_interval_s: float = Field(1, gt=0, le=3600)
    data_length: int = Field(10, ge=0, le=4000)  # bytes of the varchar column per row

    def writes(self, base: Path) -> list[str]:
        return [f"workload: the insert benchmark inserts into {self.database}; read-only "
                "workloads: sysbench's read-only tests, ssb"]

    @model_validator(mode="after")
    def _an_end(self) -> IibenchWorkload:
        if self.max_rows is None and self.duration_s is None:
            raise ValueError("give max_rows, duration_s or both: when does inserting stop?")
        if self.warmup_s:
            raise ValueError("warmup_s: the insert benchmark measures every row from the "
                             "first (its rate over time is the finding)")
        return self


SOURCE = "iibench"
MAX_CUSTOMER = 100_000
MAX_PRODUCT = 10_000
MAX_REGISTER = 1_000
MAX_PRICE = 500.0


def create_sql(table: str) -> str:
    return (f"CREATE TABLE `{table}` (\n"
            "  transactionid BIGINT NOT NULL AUTO_INCREMENT,\n"
            "  dateandtime DATETIME NOT NULL,\n"
            "  cashregisterid INT NOT NULL,\n"
            "  customerid INT NOT NULL,\n"
            "  productid INT NOT NULL,\n"
            "  price FLOAT NOT NULL,\n"
            "  data VARCHAR(4000) NOT NULL,\n"
            "  PRIMARY KEY (transactionid),\n"
            "  KEY marketsegment (price, customerid),\n"
            "  KEY registersegment (cashregisterid, price, customerid),\n"
            "  KEY pdc (price, dateandtime, customerid)\n"
            ") ENGINE=InnoDB DEFAULT CHARSET=latin1")


class Batches:
    """Multi-row INSERT statements of random rows (one generator per thread)."""

    def __init__(self, table: str, seed: int, data_length: int):
        self.table = table
        self.rng = random.Random(seed)
        self.data_length = data_length

    def statement(self, rows: int) -> str:
        r = self.rng
        now = time.strftime("%Y-%m-%d %H:%M:%S")
        pad = "x" * self.data_length
        values = ",".join(
            f"('{now}',{r.randrange(MAX_REGISTER)},{r.randrange(MAX_CUSTOMER)},"
            f"{r.randrange(MAX_PRODUCT)},{r.random() * MAX_PRICE:.2f},'{pad}')"
            for _ in range(rows))
        return (f"INSERT INTO `{self.table}` (dateandtime, cashregisterid, customerid, "
                f"productid, price, data) VALUES {values}")


def prepare_dataset(ctx: RunContext, data: IibenchDataset) -> Prepared:
    """Create the table and preload ``initial_rows`` (batches of 1,000, one connection)."""
    t0 = time.monotonic()
    with connection(ctx.endpoint) as c, c.cursor() as cur:
        cur.execute(f"CREATE DATABASE IF NOT EXISTS `{data.database}`")
        cur.execute(f"USE `{data.database}`")
        cur.execute(f"DROP TABLE IF EXISTS `{data.table}`")
        cur.execute(create_sql(data.table))
        b = Batches(data.table, data.seed, 10)
        done = 0
        while done < data.initial_rows:
            n = min(1000, data.initial_rows - done)
            cur.execute(b.statement(n))
            done += n
            if done % 100_000 < n:
                ctx.progress(f"prepare {data.database}.{data.table}: {done}/"
                             f"{data.initial_rows} rows")
    secs = time.monotonic() - t0
    return Prepared.timed(data.database, data.initial_rows, secs, kind="iibench")


def verify_dataset(ep: Endpoint, data: IibenchDataset) -> list[str]:
    """The table is there with its three secondary indexes."""
    try:
        conn = ep.connect(database=data.database)
    except pymysql.err.MySQLError as e:
        return [f"database {data.database}: {e.args[-1]}"]
    with conn as c:
        try:
            keys = {r[2] for r in query(c, f"SHOW INDEX FROM `{data.table}`")}
        except pymysql.err.MySQLError as e:
            return [f"table {data.database}.{data.table}: {e.args[-1]}"]
    missing = {"PRIMARY", "marketsegment", "registersegment", "pdc"} - keys
    return [f"table {data.database}.{data.table}: no index {', '.join(sorted(missing))}"] \
        if missing else []


class _Counters:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.rows = 0  # reserved by inserters (max_rows and the rate limit count these)
        self.committed = 0  # rows whose INSERT returned
        self.batches: list[float] = []  # latencies (ms) since the last report
        self.queries = 0
        self.query_ms: list[float] = []
        self.errors: list[str] = []


@dataclass
class _Reports:
    """The intervals reported so far: the rows and time at the last, every batch's
    latency."""
    last: float
    rows: int = 0
    intervals: list[Tick] = field(default_factory=list)
    all_ms: list[float] = field(default_factory=list)


class InsertBenchmark(Workload[IibenchWorkload, IibenchDataset]):
    name = "iibench"

    spec: IibenchWorkload
    data: IibenchDataset

    @property
    def label(self) -> str:
        return f"iibench {self.spec.threads} thread(s) x {self.spec.rows_per_commit} rows"

    def _inserter(self, ctx: RunContext, n: int, c: _Counters, stop: threading.Event,
                  t0: float) -> None:
        spec = self.spec
        b = Batches(self.data.table, self.data.seed * 1000 + n + 1, spec.data_length)
        try:
            with connection(ctx.endpoint, setup=False, database=spec.database,
                            read_timeout=600) as conn, \
                    conn.cursor() as cur:
                while not stop.is_set():
                    with c.lock:
                        if spec.max_rows is not None and c.rows >= spec.max_rows:
                            stop.set()
                            return
                        rows = spec.rows_per_commit if spec.max_rows is None else \
                            min(spec.rows_per_commit, spec.max_rows - c.rows)
                        due = c.rows / spec.rate_rows_per_s if spec.rate_rows_per_s else 0.0
                        if spec.duration_s is not None and due >= spec.duration_s:
                            return  # its turn comes after the end: the cap holds to the row
                        c.rows += rows  # reserved; given back if the insert fails
                    wait = t0 + due - time.monotonic()
                    if wait > 0 and stop.wait(wait):
                        with c.lock:
                            c.rows -= rows
                        return
                    sql = b.statement(rows)
                    s = time.perf_counter()
                    try:
                        cur.execute(sql)
                    except BaseException:
                        with c.lock:
                            c.rows -= rows
                        raise
                    with c.lock:
                        c.committed += rows
                        c.batches.append((time.perf_counter() - s) * 1000)
        except pymysql.err.MySQLError as e:
            with c.lock:
                c.errors.append(f"inserter {n}: {e.args[-1]}")
            stop.set()

    def _querier(self, ctx: RunContext, n: int, c: _Counters, stop: threading.Event) -> None:
        rng = random.Random(self.data.seed * 7919 + n)
        t = self.data.table
        try:
            with connection(ctx.endpoint, setup=False, database=self.spec.database,
                            read_timeout=600) as conn, conn.cursor() as cur:
                while not stop.is_set():
                    p = rng.random() * MAX_PRICE
                    sql = rng.choice([
                        f"SELECT price, customerid FROM `{t}` FORCE INDEX (marketsegment) "
                        f"WHERE price >= {p:.2f} ORDER BY price, customerid LIMIT 10",
                        f"SELECT cashregisterid, price, customerid FROM `{t}` FORCE INDEX "
                        f"(registersegment) WHERE cashregisterid >= {rng.randrange(MAX_REGISTER)}"
                        f" ORDER BY cashregisterid, price, customerid LIMIT 10",
                        f"SELECT price, dateandtime, customerid FROM `{t}` FORCE INDEX (pdc) "
                        f"WHERE price >= {p:.2f} ORDER BY price, dateandtime, customerid "
                        "LIMIT 10"])
                    s = time.perf_counter()
                    cur.execute(sql)
                    cur.fetchall()
                    with c.lock:
                        c.queries += 1
                        c.query_ms.append((time.perf_counter() - s) * 1000)
        except pymysql.err.MySQLError as e:
            with c.lock:
                c.errors.append(f"query thread {n}: {e.args[-1]}")

    def _next_wait(self, t0: float) -> float:
        """Seconds to the next report, never past the end: a report loop that drifts
        (each report takes time) must not stretch the run, nor a capped run's rows."""
        if self.spec.duration_s is None:
            return self.spec.report_interval_s
        left = t0 + self.spec.duration_s - time.monotonic()
        return max(0.0, min(self.spec.report_interval_s, left))

    def run(self, ctx: RunContext) -> WorkloadResult:
        spec = self.spec
        c = _Counters()
        stop = threading.Event()
        ctx.threads_now(spec.threads + spec.query_threads)
        start = ctx.clock()
        ctx.measured_from(start)  # every insert counts: no warmup
        t0 = time.monotonic()
        threads = [threading.Thread(target=self._inserter, args=(ctx, i, c, stop, t0),
                                    name=f"iibench-insert-{i}", daemon=True)
                   for i in range(spec.threads)]
        threads += [threading.Thread(target=self._querier, args=(ctx, i, c, stop),
                                     name=f"iibench-query-{i}", daemon=True)
                    for i in range(spec.query_threads)]
        for th in threads:
            th.start()
        rep = _Reports(last=time.monotonic())
        try:
            while True:
                ended = stop.wait(self._next_wait(t0)) or (
                    spec.duration_s is not None and time.monotonic() - t0 >= spec.duration_s)
                if ended:
                    stop.set()
                    for th in threads[:spec.threads]:
                        th.join(600)
                self._report(ctx, c, rep)
                if ended:
                    break
        finally:
            stop.set()
            for th in threads:
                th.join(60)
        if c.errors:
            raise HarnessError("insert benchmark: " + "; ".join(c.errors[:3]))
        return WorkloadResult(summary=self._summary(ctx, c, rep, start, time.monotonic() - t0),
                              intervals=rep.intervals)

    def _report(self, ctx: RunContext, c: _Counters, rep: _Reports) -> None:
        """One interval: the rows committed since the last, the batches' and queries'
        latency, sampled and said."""
        now = time.monotonic()
        with c.lock:
            lat, c.batches = c.batches, []
            qms, c.query_ms = c.query_ms, []
            committed = c.committed
        dt = max(now - rep.last, 1e-6)
        rate = (committed - rep.rows) / dt
        p95 = _pct(lat, 0.95)
        rep.all_ms += lat
        t = ctx.clock()
        ctx.sample(t, SOURCE, "rows_per_s", rate, None)
        ctx.sample(t, SOURCE, "rows_total", float(committed), None)
        ctx.sample(t, SOURCE, "threads", float(self.spec.threads), None)
        if p95 is not None:
            ctx.sample(t, SOURCE, "latency_ms", p95, {"quantile": "0.95"})
        if self.spec.query_threads:
            ctx.sample(t, SOURCE, "queries_per_s", len(qms) / dt, None)
            if (qp := _pct(qms, 0.95)) is not None:
                ctx.sample(t, SOURCE, "query_latency_ms", qp, {"quantile": "0.95"})
        rep.intervals.append(Tick(t, rate, p95))
        ctx.progress(f"{committed} rows, {rate:.0f} rows/s, batch p95 "
                     f"{p95 if p95 is None else round(p95, 1)} ms")
        rep.rows, rep.last = committed, now

    def _summary(self, ctx: RunContext, c: _Counters, rep: _Reports, start: float,
                 secs: float) -> dict[str, Any]:
        spec, rows = self.spec, rep.rows
        rates = [iv.tps for iv in rep.intervals]
        median = statistics.median(rates) if rates else 0.0
        return {
            "workload": "iibench", "threads": spec.threads,
            "rows_per_commit": spec.rows_per_commit, "rows": rows,
            "seconds": round(secs, 3), "rows_per_s_mean": round(rows / secs, 1),
            "rows_per_s_median": median,
            "batch_p95_ms": _pct(rep.all_ms, 0.95), "batches": len(rep.all_ms),
            "intervals": len(rep.intervals), "queries": c.queries,
            "workload_start_s": round(start, 3), "workload_end_s": round(ctx.clock(), 3),
            "headline": f"{rows} rows in {secs:.1f} s, {rows / secs:.0f} rows/s "
                        f"(median interval {median:.0f})"}


def inserts_figure(plt: Any, store: RunReader, runs: list[StoredRun], colour: dict[str, str],
                   smooth: int = 5) -> Any:
    """Per server: each run's insert rate (a rolling mean of ``smooth`` intervals) and
    its change buffer size on a second axis."""
    import numpy as np

    servers = sorted({r.server for r in runs})
    fig, axes = plt.subplots(len(servers), 1, figsize=(11, 3.6 * len(servers)),
                             sharex=True, squeeze=False)
    for ax, server in zip(axes[:, 0], servers, strict=True):
        ibuf = ax.twinx()
        for r in [r for r in runs if r.server == server]:
            c, t0 = colour[r.run_id], r.summary.start_s
            rate = store.series(r.run_id, source=SOURCE, metric="rows_per_s")
            if rate and len(rate[0].v) >= smooth:
                v = np.convolve(rate[0].v, np.ones(smooth) / smooth, mode="valid")
                ax.plot(rate[0].t[smooth - 1:] - t0, v, color=c, lw=1.0,
                        label=f"{r.variant} #{r.repetition}")
            size = store.series(r.run_id, source="innodb_status",
                                metric="mysql_engine_innodb_ibuf_size_pages")
            if size:
                ibuf.plot(size[0].t - t0, size[0].v, color=c, lw=0.9, ls="--")
        ax.set_title(server, loc="left")
        ax.set_ylabel(f"rows/s ({smooth}-interval mean)")
        ibuf.set_ylabel("change buffer (pages, dashed)")
        ibuf.grid(False)
        if ax.get_legend_handles_labels()[0]:  # a run too short to smooth draws no line
            ax.legend(loc="upper right", ncol=2)
    axes[-1][0].set_xlabel("seconds since the insert benchmark started")
    return fig


class IibenchPlugin(WorkloadPlugin[IibenchWorkload, IibenchDataset]):
    """The insert benchmark: inserts in batches beside query threads."""

    kind = "iibench"
    dataset = IibenchDataset
    workload = IibenchWorkload
    throughput = (SOURCE, "rows_per_s", "rows/s")
    latency = (SOURCE, "latency_ms")
    figures = (Figure("rows_per_s_median", "rows/s", True, headline=True,
                      regress="rows_per_s"),
               Figure("batch_p95_ms", "batch p95 ms", False))
    example = {"dataset": {"kind": "iibench"},
               "workload": {"kind": "iibench", "duration_s": 3, "rows_per_commit": 100,
                            "query_threads": 1}}

    def runner(self, spec: IibenchWorkload, data: IibenchDataset) -> InsertBenchmark:
        return InsertBenchmark(spec, data)

    def prepare(self, ctx: RunContext, data: IibenchDataset) -> Prepared:
        return prepare_dataset(ctx, data)

    def verify(self, ep: Endpoint, data: IibenchDataset) -> list[str]:
        return verify_dataset(ep, data)

    def tables(self, data: IibenchDataset) -> list[str]:
        return [data.table]

    def html(self, plt: Any, store: RunReader, runs: list[StoredRun],
             colour: dict[str, str]) -> list[tuple[str, str, Any]]:
        return [("Insert benchmark: rows/s (solid, left) and change buffer size (dashed, "
                 "right), per server", "inserts.png",
                 inserts_figure(plt, store, runs, colour))]


PLUGIN = IibenchPlugin()
