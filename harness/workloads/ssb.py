"""Star Schema Benchmark: schema, load, the 13 queries and the workload that times them.

The queries are the specification's, in ANSI JOIN syntax as Percona's 2014 post ran
them. One flight is the 13 queries in order on one connection; a run is a cold flight
(first queries after the server started, the OS page cache dropped where this host
allows it) and ``warm_runs`` warm flights. Every query and flight is timed, and the
buffer pool's reads, read requests and pages made young around each one are kept: the
hit ratio explains a time.
"""
from __future__ import annotations

import hashlib
import json
import os
import statistics
import time
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pymysql
from pydantic import Field, model_validator

from ..errors import HarnessError
from ..host import tuning
from ..model import DatasetModel, Figure, Ident, Metric, WorkloadModel
from ..paths import ssb_data_dir
from ..server.mysql import Endpoint, connection, query
from ..store import Finding, RunSummary
from ..store.prepared import Prepared
from . import ssb_report
from .base import RunContext, Workload, WorkloadPlugin, WorkloadResult
from .ssb_figures import Cold, Flight, QueryTime, SsbFigures

if TYPE_CHECKING:
    from ..store import RunReader, StoredRun

SSB_QUERIES = ("Q1.1", "Q1.2", "Q1.3", "Q2.1", "Q2.2", "Q2.3", "Q3.1", "Q3.2", "Q3.3", "Q3.4",
               "Q4.1", "Q4.2", "Q4.3")


class SsbDataset(DatasetModel):
    """The Star Schema Benchmark's five tables (lineorder, customer, supplier, part,
    dim_date) at ``scale`` (SF 1 is ~6M lineorder rows, ~590 MB of text), generated
    by the harness for ``seed`` and loaded with LOAD DATA LOCAL INFILE."""

    kind: Literal["ssb"] = "ssb"
    database: Ident = "ssb"
    scale: float = Field(1.0, gt=0, le=10000)
    seed: int = Field(1, ge=0)
    # Secondary indexes on the fact table's foreign keys (lo_orderdate, lo_custkey,
    # lo_suppkey, lo_partkey), built after the load.
    indexes: bool = True

    def scaled(self, factor: float) -> dict[str, Any]:
        return {"scale": self.scale * factor}


class SsbWorkload(WorkloadModel):
    """Flights of the 13 SSB queries, one connection, serially: a cold flight on a
    freshly started server (OS page cache dropped where the host allows it) followed
    by ``warm_runs`` warm flights, each timed per query."""

    kind: Literal["ssb"]
    database: Ident = "ssb"
    queries: list[Literal[SSB_QUERIES]] = Field(  # type: ignore[valid-type]
        default_factory=lambda: list(SSB_QUERIES), min_length=1)
    cold: bool = True
    drop_page_cache: bool = True  # before the cold flight, on a server of this host
    warm_runs: int = Field(3, ge=0, le=1000)
    query_timeout_s: int = Field(3600, ge=1)

    def writes(self, base: Path) -> list[str]:
        return []  # SELECTs (dropping the page cache is host tuning, gated as such)

    @model_validator(mode="after")
    def _some_flight(self) -> SsbWorkload:
        if not self.cold and not self.warm_runs:
            raise ValueError("nothing to run: cold: false and warm_runs: 0")
        if self.warmup_s:
            raise ValueError("warmup_s: SSB flights have no warmup; the cold flight "
                             "is measured, warm_runs follow it")
        return self


SOURCE = "ssb"

SCHEMA = {
    "dim_date": """CREATE TABLE dim_date (
  d_datekey INT NOT NULL PRIMARY KEY, d_date CHAR(18) NOT NULL, d_dayofweek CHAR(9) NOT NULL,
  d_month CHAR(9) NOT NULL, d_year SMALLINT NOT NULL, d_yearmonthnum INT NOT NULL,
  d_yearmonth CHAR(7) NOT NULL, d_daynuminweek TINYINT NOT NULL,
  d_daynuminmonth TINYINT NOT NULL, d_daynuminyear SMALLINT NOT NULL,
  d_monthnuminyear TINYINT NOT NULL, d_weeknuminyear TINYINT NOT NULL,
  d_sellingseason CHAR(12) NOT NULL, d_lastdayinweekfl TINYINT NOT NULL,
  d_lastdayinmonthfl TINYINT NOT NULL, d_holidayfl TINYINT NOT NULL,
  d_weekdayfl TINYINT NOT NULL)""",
    "customer": """CREATE TABLE customer (
  c_custkey INT NOT NULL PRIMARY KEY, c_name VARCHAR(25) NOT NULL,
  c_address VARCHAR(25) NOT NULL, c_city CHAR(10) NOT NULL, c_nation CHAR(15) NOT NULL,
  c_region CHAR(12) NOT NULL, c_phone CHAR(15) NOT NULL, c_mktsegment CHAR(10) NOT NULL)""",
    "supplier": """CREATE TABLE supplier (
  s_suppkey INT NOT NULL PRIMARY KEY, s_name CHAR(25) NOT NULL,
  s_address VARCHAR(25) NOT NULL, s_city CHAR(10) NOT NULL, s_nation CHAR(15) NOT NULL,
  s_region CHAR(12) NOT NULL, s_phone CHAR(15) NOT NULL)""",
    "part": """CREATE TABLE part (
  p_partkey INT NOT NULL PRIMARY KEY, p_name VARCHAR(22) NOT NULL, p_mfgr CHAR(6) NOT NULL,
  p_category CHAR(7) NOT NULL, p_brand CHAR(9) NOT NULL, p_color VARCHAR(11) NOT NULL,
  p_type VARCHAR(25) NOT NULL, p_size TINYINT NOT NULL, p_container CHAR(10) NOT NULL)""",
    "lineorder": """CREATE TABLE lineorder (
  lo_orderkey BIGINT NOT NULL, lo_linenumber TINYINT NOT NULL, lo_custkey INT NOT NULL,
  lo_partkey INT NOT NULL, lo_suppkey INT NOT NULL, lo_orderdate INT NOT NULL,
  lo_orderpriority CHAR(15) NOT NULL, lo_shippriority CHAR(1) NOT NULL,
  lo_quantity TINYINT NOT NULL, lo_extendedprice INT NOT NULL,
  lo_ordtotalprice INT NOT NULL, lo_discount TINYINT NOT NULL, lo_revenue INT NOT NULL,
  lo_supplycost INT NOT NULL, lo_tax TINYINT NOT NULL, lo_commitdate INT NOT NULL,
  lo_shipmode CHAR(10) NOT NULL,
  PRIMARY KEY (lo_orderkey, lo_linenumber))""",
}
TABLE_OPTIONS = " ENGINE=InnoDB DEFAULT CHARSET=latin1"
FILE_OF = {"dim_date": "date"}  # generator file names
FACT_INDEXES = ("ADD INDEX lo_orderdate (lo_orderdate), ADD INDEX lo_custkey (lo_custkey), "
                "ADD INDEX lo_suppkey (lo_suppkey), ADD INDEX lo_partkey (lo_partkey)")

_LD = "lineorder JOIN dim_date ON lo_orderdate = d_datekey"
_Q2 = ("SELECT SUM(lo_revenue) AS revenue, d_year, p_brand FROM " + _LD +
       " JOIN part ON lo_partkey = p_partkey JOIN supplier ON lo_suppkey = s_suppkey"
       " WHERE {} GROUP BY d_year, p_brand ORDER BY d_year, p_brand")
_Q3 = ("SELECT {0}, {1}, d_year, SUM(lo_revenue) AS revenue FROM lineorder"
       " JOIN customer ON lo_custkey = c_custkey JOIN supplier ON lo_suppkey = s_suppkey"
       " JOIN dim_date ON lo_orderdate = d_datekey"
       " WHERE {2} GROUP BY {0}, {1}, d_year ORDER BY d_year ASC, revenue DESC")
_Q4 = ("SELECT {0}, SUM(lo_revenue - lo_supplycost) AS profit FROM " + _LD +
       " JOIN customer ON lo_custkey = c_custkey JOIN supplier ON lo_suppkey = s_suppkey"
       " JOIN part ON lo_partkey = p_partkey WHERE {1} GROUP BY {0} ORDER BY {0}")
_UK = ("(c_city = 'UNITED KI1' OR c_city = 'UNITED KI5') AND "
       "(s_city = 'UNITED KI1' OR s_city = 'UNITED KI5')")
QUERIES = {
    "Q1.1": "SELECT SUM(lo_extendedprice * lo_discount) AS revenue FROM " + _LD +
            " WHERE d_year = 1993 AND lo_discount BETWEEN 1 AND 3 AND lo_quantity < 25",
    "Q1.2": "SELECT SUM(lo_extendedprice * lo_discount) AS revenue FROM " + _LD +
            " WHERE d_yearmonthnum = 199401 AND lo_discount BETWEEN 4 AND 6"
            " AND lo_quantity BETWEEN 26 AND 35",
    "Q1.3": "SELECT SUM(lo_extendedprice * lo_discount) AS revenue FROM " + _LD +
            " WHERE d_weeknuminyear = 6 AND d_year = 1994 AND lo_discount BETWEEN 5 AND 7"
            " AND lo_quantity BETWEEN 26 AND 35",
    "Q2.1": _Q2.format("p_category = 'MFGR#12' AND s_region = 'AMERICA'"),
    "Q2.2": _Q2.format("p_brand BETWEEN 'MFGR#2221' AND 'MFGR#2228' AND s_region = 'ASIA'"),
    "Q2.3": _Q2.format("p_brand = 'MFGR#2239' AND s_region = 'EUROPE'"),
    "Q3.1": _Q3.format("c_nation", "s_nation", "c_region = 'ASIA' AND s_region = 'ASIA' "
                       "AND d_year >= 1992 AND d_year <= 1997"),
    "Q3.2": _Q3.format("c_city", "s_city", "c_nation = 'UNITED STATES' AND "
                       "s_nation = 'UNITED STATES' AND d_year >= 1992 AND d_year <= 1997"),
    "Q3.3": _Q3.format("c_city", "s_city", _UK + " AND d_year >= 1992 AND d_year <= 1997"),
    "Q3.4": _Q3.format("c_city", "s_city", _UK + " AND d_yearmonth = 'Dec1997'"),
    "Q4.1": _Q4.format("d_year, c_nation", "c_region = 'AMERICA' AND s_region = 'AMERICA' "
                       "AND (p_mfgr = 'MFGR#1' OR p_mfgr = 'MFGR#2')"),
    "Q4.2": _Q4.format("d_year, s_nation, p_category",
                       "c_region = 'AMERICA' AND s_region = 'AMERICA' AND "
                       "(d_year = 1997 OR d_year = 1998) AND "
                       "(p_mfgr = 'MFGR#1' OR p_mfgr = 'MFGR#2')"),
    "Q4.3": _Q4.format("d_year, s_city, p_brand",
                       "s_nation = 'UNITED STATES' AND (d_year = 1997 OR d_year = 1998) "
                       "AND p_category = 'MFGR#14'"),
}


# --- data ---------------------------------------------------------------------------------

def data_dir(data: SsbDataset) -> Path:
    """Generated files are cached per scale and seed: every server loads the same bytes."""
    return ssb_data_dir() / f"sf{data.scale:g}-seed{data.seed}"


def generated(data: SsbDataset, progress: Any = lambda _m: None) -> dict[str, Any]:
    """The generated files (made once), with their row counts and seconds to generate."""
    d = data_dir(data)
    manifest = d / "manifest.json"
    if manifest.exists():
        m = json.loads(manifest.read_text())
        if all((d / f).exists() for fs in m["files"].values() for f in fs):
            return m
    tmp = d.with_name(d.name + f".tmp{os.getpid()}")
    t0 = time.monotonic()
    from . import ssb_gen  # pyarrow: only to generate

    files = ssb_gen.generate(data.scale, data.seed, tmp, progress)
    secs = time.monotonic() - t0
    rows = {t: sum(_lines(p) for p in ps) for t, ps in files.items()}
    m = {"scale": data.scale, "seed": data.seed, "seconds": round(secs, 3), "rows": rows,
         "bytes": sum(p.stat().st_size for ps in files.values() for p in ps),
         "files": {t: [p.name for p in ps] for t, ps in files.items()}}
    (tmp / "manifest.json").write_text(json.dumps(m, indent=2))
    if d.exists():
        import shutil
        shutil.rmtree(d)
    tmp.rename(d)  # whole or not at all: an interrupted generation leaves only a .tmp dir
    m["generated_now"] = True
    return m


def _lines(path: Path) -> int:
    n = 0
    with open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            n += chunk.count(b"\n")
    return n


def _data_files(m: dict[str, Any], d: Path) -> list[Path]:
    """The generated files in ``d`` (the only ones the loading connection may send)."""
    return [d / f for files in m["files"].values() for f in files]


def prepare_dataset(ctx: RunContext, data: SsbDataset) -> Prepared:
    """Generate (or reuse) the files, create the schema and LOAD DATA LOCAL INFILE each
    table; secondary indexes on the fact table are built after its load."""
    t0 = time.monotonic()
    m = generated(data, ctx.progress)
    gen_s = time.monotonic() - t0
    d = data_dir(data)
    db = data.database
    t1 = time.monotonic()
    try:
        conn = ctx.endpoint.connect(read_timeout=3600, local_files=_data_files(m, d))
    except pymysql.err.MySQLError as e:
        raise HarnessError(f"SSB load: cannot connect: {e.args[-1]}") from None
    with conn as c, c.cursor() as cur:
        cur.execute(f"CREATE DATABASE IF NOT EXISTS `{db}`")
        cur.execute(f"USE `{db}`")
        cur.execute("SET SESSION unique_checks = 0, foreign_key_checks = 0")
        for table, ddl in SCHEMA.items():
            cur.execute(f"DROP TABLE IF EXISTS `{table}`")
            cur.execute(ddl + TABLE_OPTIONS)
        loaded = 0
        total = sum(m["rows"].values())
        for table in SCHEMA:
            for f in m["files"][FILE_OF.get(table, table)]:
                try:
                    n = cur.execute(f"LOAD DATA LOCAL INFILE %s INTO TABLE `{table}` "
                                    "FIELDS TERMINATED BY '|'", (str(d / f),))
                except pymysql.err.MySQLError as e:
                    hint = (" (the server refuses LOCAL INFILE: set local_infile=ON)"
                            if e.args[0] in (1148, 3948) else "")
                    raise HarnessError(f"SSB load of {db}.{table} from {d / f}: "
                                       f"{e.args[-1]}{hint}") from None
                loaded += n
                ctx.progress(f"loading {db}: {loaded}/{total} rows ({table})")
        load_s = time.monotonic() - t1
        t2 = time.monotonic()
        if data.indexes:
            ctx.progress(f"loading {db}: building the lineorder indexes")
            cur.execute(f"ALTER TABLE lineorder {FACT_INDEXES}")
        for table in SCHEMA:
            cur.execute(f"ANALYZE TABLE `{table}`")
            cur.fetchall()
        index_s = time.monotonic() - t2
    short = verify_dataset(ctx.endpoint, data, m["rows"])
    if short:
        raise HarnessError("SSB load incomplete: " + "; ".join(short))
    secs = time.monotonic() - t0
    return Prepared.timed(db, loaded, secs, kind="ssb", tables=m["rows"], own={
        "scale": data.scale, "seed": data.seed,
        "generate_s": round(gen_s, 3), "generated_now": bool(m.get("generated_now")),
        "generate_rows_per_s": round(total / m["seconds"], 1) if m["seconds"] else None,
        "load_s": round(load_s, 3), "load_rows_per_s": round(loaded / load_s, 1),
        "index_s": round(index_s, 3)})


def verify_dataset(ep: Endpoint, data: SsbDataset,
                   rows: dict[str, int] | None = None) -> list[str]:
    """Every table is there with its rows (dimension counts from the specification,
    lineorder from the generator's manifest when known); a list of what is wrong."""
    from . import ssb_gen

    c = ssb_gen.counts(data.scale)
    want: dict[str, int | tuple[int, int]] = {
        "dim_date": c.date, "customer": c.customer, "supplier": c.supplier, "part": c.part,
        "lineorder": (rows or {}).get("lineorder") or (c.orders, 7 * c.orders)}
    try:
        conn = ep.connect(database=data.database)
    except pymysql.err.MySQLError as e:
        return [f"database {data.database}: {e.args[-1]}"]
    wrong = []
    with conn as cn:
        for table, expect in want.items():
            try:
                (n,), = query(cn, f"SELECT COUNT(*) FROM `{table}`")
            except pymysql.err.MySQLError as e:
                wrong.append(f"table {data.database}.{table}: {e.args[-1]}")
                continue
            ok = expect[0] <= n <= expect[1] if isinstance(expect, tuple) else n == expect
            if not ok:
                wrong.append(f"table {data.database}.{table}: {n} rows, expected {expect}")
    return wrong


# --- the workload ------------------------------------------------------------------------

def digest(rows: list[tuple]) -> str:
    """A result's fingerprint, independent of the driver's types and of tie order."""
    def norm(v: Any) -> str:
        if isinstance(v, Decimal):
            return str(v.normalize()) if v != v.to_integral_value() else str(int(v))
        if isinstance(v, float):
            return repr(round(v, 6))
        return str(v).rstrip()
    text = "\n".join(sorted("|".join(norm(v) for v in r) for r in rows))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def pool_counters(conn: Any) -> dict[str, float]:
    st = {k.lower(): v for k, v in query(
        conn, "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_buffer_pool_reads', "
        "'Innodb_buffer_pool_read_requests', 'Innodb_buffer_pool_read_ahead', "
        "'Innodb_buffer_pool_pages_data', 'Innodb_buffer_pool_pages_total', 'Uptime')")}
    out = {k.replace("innodb_buffer_pool_", ""): float(v) for k, v in st.items()}
    try:
        (young, not_young), = query(conn, "SELECT SUM(PAGES_MADE_YOUNG), "
                                    "SUM(PAGES_NOT_MADE_YOUNG) FROM "
                                    "INFORMATION_SCHEMA.INNODB_BUFFER_POOL_STATS")
        out["made_young"], out["not_made_young"] = float(young or 0), float(not_young or 0)
    except pymysql.err.MySQLError:  # a server without the table (before 5.5)
        pass
    return out


class SsbFlights(Workload[SsbWorkload, SsbDataset]):
    name = "ssb"

    spec: SsbWorkload
    data: SsbDataset

    @property
    def label(self) -> str:
        return f"ssb sf{self.data.scale:g}"

    def _cold(self, conn: Any, ctx: RunContext) -> Cold:
        """How cold the first flight really is: measured, not assumed."""
        why = None
        if not self.spec.drop_page_cache:
            why = "drop_page_cache: false in the scenario"
        elif ctx.drop_page_cache is not None:
            why = ctx.drop_page_cache()
        elif not ctx.server_local:
            why = "the server is not on this host"
        else:
            why = tuning.drop_page_cache()
        st = pool_counters(conn)
        pages, total = st.get("pages_data", 0.0), st.get("pages_total", 0.0) or 1.0
        info = Cold(page_cache_dropped=why is None, page_cache_why_not=why,
                    server_uptime_s=st.get("uptime"), pool_pages_at_start=int(pages),
                    pool_pages_total=int(total))
        if pages > 0.5 * total:
            ctx.log(f"  warning: the cold flight starts with {int(pages)} of {int(total)} "
                    "pages already in the buffer pool (a buffer pool load at startup, or a "
                    "server that was not restarted): it is not cold")
        return info

    def run(self, ctx: RunContext) -> WorkloadResult:
        spec = self.spec
        names = (["cold"] if spec.cold else []) + [f"run{i}" for i in
                                                   range(1, spec.warm_runs + 1)]
        start = ctx.clock()
        flights: list[Flight] = []
        digests: dict[str, str] = {}
        ctx.threads_now(1)  # the flights run one query at a time
        with connection(ctx.endpoint, setup=False, database=spec.database,
                        read_timeout=spec.query_timeout_s) as conn:
            cold = self._cold(conn, ctx) if spec.cold else None
            ctx.measured_from(ctx.clock())  # the flights: the cold one is measured
            mark = pool_counters(conn)  # one read per boundary between queries
            for name in names:
                f, mark = self._flight(conn, ctx, name, mark, digests)
                flights.append(f)
        warm = [f.seconds for f in flights if f.flight != "cold"]
        figures = SsbFigures(
            queries=list(spec.queries), flights=flights, cold=cold,
            cold_s=next((f.seconds for f in flights if f.flight == "cold"), None),
            warm_s=warm, warm_median_s=statistics.median(warm) if warm else None,
            digests=digests)
        return WorkloadResult(summary={
            "workload": "ssb", **figures.to_json(), "workload_start_s": round(start, 3),
            "workload_end_s": round(ctx.clock(), 3),
            "headline": "flights " + ", ".join(f"{f.flight} {f.seconds:.2f} s"
                                               for f in flights)})

    def _flight(self, conn: Any, ctx: RunContext, name: str, mark: dict[str, float],
                digests: dict[str, str]) -> tuple[Flight, dict[str, float]]:
        """One flight (every query once, in order): its record, and the pool's counters
        after it. A query whose result differs from an earlier flight's is an error."""
        before = mark
        t_flight = ctx.clock()
        ctx.event(t_flight, "flight_start", name, None)
        per_query: dict[str, QueryTime] = {}
        for q in self.spec.queries:
            per_query[q], mark = self._query(conn, ctx, name, q, mark, digests)
        f = flight_record(name, per_query, before, mark, ctx.clock() - t_flight)
        t = ctx.clock()
        ctx.event(t, "flight_end", name, f.counters())
        for metric, v in (("seconds", f.seconds), ("pages_read", f.pages_read),
                          ("hit_ratio", f.hit_ratio), ("made_young", f.made_young)):
            if v is not None:
                ctx.sample(t, SOURCE, f"flight_{metric}", v, {"flight": name})
        ctx.log(f"  flight {name}: {f.seconds:.2f} s, {int(f.pages_read or 0)} "
                f"pages read, hit ratio {f.hit_ratio}")
        return f, mark

    @staticmethod
    def _query(conn: Any, ctx: RunContext, name: str, q: str, mark: dict[str, float],
               digests: dict[str, str]) -> tuple[QueryTime, dict[str, float]]:
        """One query of flight ``name``: its seconds, rows and pages, and the pool's
        counters after it."""
        ctx.progress(f"flight {name}: {q}")
        t0 = time.perf_counter()
        with conn.cursor() as cur:
            cur.execute(QUERIES[q])
            rows = list(cur.fetchall())
        secs = time.perf_counter() - t0
        after = pool_counters(conn)
        d = digest(rows)
        if digests.setdefault(q, d) != d:
            raise HarnessError(f"SSB {q} returned a different result in flight "
                               f"{name} than before ({d} vs {digests[q]})")
        ctx.sample(ctx.clock(), SOURCE, "query_seconds", secs, {"query": q, "flight": name})
        return QueryTime(seconds=round(secs, 4), rows=len(rows),
                         pages_read=after["reads"] - mark["reads"],
                         read_requests=after["read_requests"] - mark["read_requests"]), after


def flight_record(name: str, per_query: dict[str, QueryTime],
                  before: dict[str, float], after: dict[str, float], wall_s: float
                  ) -> Flight:
    """A flight as the summary keeps it: its queries' seconds, and what it did in the
    buffer pool (the counters' growth from ``before`` to ``after``)."""
    delta = {k: after[k] - before[k] for k in ("reads", "read_requests", "read_ahead",
                                               "made_young", "not_made_young") if k in after}
    requests = delta.get("read_requests")
    return Flight(flight=name, seconds=round(sum(x.seconds for x in per_query.values()), 3),
                  wall_s=round(wall_s, 3), queries=per_query,
                  pages_read=delta.get("reads"), read_requests=requests,
                  read_ahead=delta.get("read_ahead"),
                  hit_ratio=round(1 - delta["reads"] / requests, 5) if requests else None,
                  made_young=delta.get("made_young"),
                  not_made_young=delta.get("not_made_young"))


class SsbPlugin(WorkloadPlugin[SsbWorkload, SsbDataset]):
    """Star Schema Benchmark flights, cold then warm, judged per flight and query."""

    kind = "ssb"
    dataset = SsbDataset
    workload = SsbWorkload
    figures = (Figure("cold_s", "SSB cold flight s", False),
               Figure("warm_median_s", "SSB warm flight s", False, headline=True,
                      regress="ssb_warm_s"))
    metrics = (Metric("warm_cold_ratio", "SSB flights"),
               Metric("flight_ratio", "SSB flights", needs=("variant", "baseline_variant"),
                      allows=("baseline_server",)))
    example = {"dataset": {"kind": "ssb", "scale": 0.01, "seed": 1},
               "workload": {"kind": "ssb", "warm_runs": 1, "queries": ["Q1.1", "Q2.1"]}}

    def runner(self, spec: SsbWorkload, data: SsbDataset) -> SsbFlights:
        return SsbFlights(spec, data)

    def prepare(self, ctx: RunContext, data: SsbDataset) -> Prepared:
        return prepare_dataset(ctx, data)

    def verify(self, ep: Endpoint, data: SsbDataset) -> list[str]:
        return verify_dataset(ep, data)

    def tables(self, data: SsbDataset) -> list[str]:
        return list(SCHEMA)

    def judge_run(self, expectations: Sequence[Any], summary: RunSummary, server: str,
                  variant: str) -> list[Finding]:
        return ssb_report.evaluate_run(expectations, summary, server, variant)

    def judge_run_set(self, expectations: Sequence[Any], runs: list[StoredRun]
                      ) -> dict[str, list[Finding]]:
        return ssb_report.evaluate_run_set(expectations, runs)

    def report(self, store: RunReader, runs: list[StoredRun], print_table: Any) -> None:
        ssb_report.print_report(store, runs, print_table)

    def html(self, plt: Any, store: RunReader, runs: list[StoredRun],
             colour: dict[str, str]) -> list[tuple[str, str, Any]]:
        return [("SSB: seconds of each flight (all queries), per run", "ssb_flights.png",
                 ssb_report.flights_figure(plt, runs, colour))]

    def show(self, summary: RunSummary) -> list[tuple[str, str]]:
        return ssb_report.show_lines(summary)

    def fingerprints(self, summary: RunSummary) -> dict[str, str]:
        return SsbFigures.of(summary).digests


PLUGIN = SsbPlugin()
