"""TPC-C: the nine tables loaded by warehouses, the five transactions in the standard
mix, tpmC as the headline, and the database's consistency checked after the run.

Clauses follow the TPC-C standard 5.11. The transactions are stored procedures
(tpcc_sql.py), one ``CALL`` each, as HammerDB's TPROC-C runs them on MySQL: the client
picks the inputs (terminal's warehouse, NURand customers and names, the 1% rolled-back
New-Orders) and times each call, so its own CPU per transaction is a fraction of the
server's. No keying or think time by default: like every TPC-C derived tool's "no
wait" mode, the figure is not a TPC-C result and is not comparable with published ones.

Throughput over time is ``tpcc/tps`` (all five transactions), the headline ``tpmc``
(New-Orders committed per minute over the measured part); ``nopm`` is the same count
read from the database (sum of D_NEXT_O_ID before and after), a cross-check that must
match to the order: the terminals pause between calls while the first count is read, and
the last is read once they have stopped, so no transaction is in flight at either end.
"""
from __future__ import annotations

import random
import statistics
import threading
import time
from array import array
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pymysql
from pydantic import Field, model_validator

from ..errors import HarnessError
from ..jsonvalue import JsonDict
from ..model import DatasetModel, Figure, Ident, Model, WorkloadModel
from ..server.mysql import Endpoint, connection, query, scalar
from ..stats.quantile import nearest_rank
from ..store import RunSummary
from ..store.prepared import Prepared
from . import tpcc_sql as sql
from .base import (
    SERVER_METRICS,
    CountedProbe,
    RunContext,
    Tick,
    Workload,
    WorkloadPlugin,
    WorkloadResult,
)
from .tpcc_figures import TpccFigures, Transaction

if TYPE_CHECKING:
    from ..store import RunReader, StoredRun

SOURCE = "tpcc"
TRANSACTIONS = ("new_order", "payment", "order_status", "delivery", "stock_level")
RETRYABLE = (1205, 1213)  # lock wait timeout, deadlock: the call is run again
RETRIES = 10
CALL_TIMEOUT_S = 600  # a call that long means a hung server, not a slow transaction


class TpccDataset(DatasetModel):
    """TPC-C's nine tables for ``warehouses`` warehouses (about 100 MB each)."""

    kind: Literal["tpcc"]
    database: Ident = "tpcc"
    warehouses: int = Field(1, ge=1, le=10_000)

    def scaled(self, factor: float) -> dict[str, Any]:
        return {"warehouses": max(1, round(self.warehouses * factor))}


# Clause 5.2.3: the least share of each transaction over a measurement interval.
MINIMUM = {"payment": 0.43, "order_status": 0.04, "delivery": 0.04, "stock_level": 0.04}


class Mix(Model):
    """The deck each terminal draws its transactions from (clause 5.2.4.2): so many cards
    of each, shuffled, drawn without replacement, shuffled again when the deck is used
    up, so every deck's worth of transactions holds the mix exactly. The default is the
    specification's own example deck, 10 New-Order, 10 Payment and 1 of each of the
    others (43.5%, 43.5%, 4.35% each), whose margin over the minimums (43% Payment, 4%
    each of the last three: clause 5.2.3) keeps every measured interval above them. Any
    proportion is taken (45/43/4/4/4 is a 100-card deck); one below a minimum is refused,
    for its throughput would not be tpmC."""

    new_order: int = Field(10, ge=0, le=10_000)
    payment: int = Field(10, ge=0, le=10_000)
    order_status: int = Field(1, ge=0, le=10_000)
    delivery: int = Field(1, ge=0, le=10_000)
    stock_level: int = Field(1, ge=0, le=10_000)

    @model_validator(mode="after")
    def _at_least_the_minimums(self) -> Mix:
        total = sum(getattr(self, t) for t in TRANSACTIONS)
        if total == 0:
            raise ValueError("the mix has no card: give each transaction's share")
        short = [f"{t} {getattr(self, t) / total:.2%} (at least {m:.0%})"
                 for t, m in MINIMUM.items() if getattr(self, t) / total < m - 1e-12]
        if short:
            raise ValueError("below TPC-C's minimum mix (clause 5.2.3), so not tpmC: "
                             + ", ".join(short))
        return self

    def deck(self) -> list[str]:
        return [t for t in TRANSACTIONS for _ in range(getattr(self, t))]

    def shares(self) -> dict[str, float]:
        total = sum(getattr(self, t) for t in TRANSACTIONS)
        return {t: getattr(self, t) / total for t in TRANSACTIONS}


class TpccWorkload(WorkloadModel):
    """``threads`` terminals, each bound to a home warehouse (terminal k to warehouse
    k mod W + 1), run the mix for ``duration_s`` seconds, the first ``warmup_s`` not
    counted; throughput and latency are sampled every ``report_interval_s``."""

    kind: Literal["tpcc"]
    database: Ident = "tpcc"
    threads: int = Field(4, ge=1, le=1024)
    duration_s: int = Field(60, ge=1)
    report_interval_s: float = Field(1, gt=0, le=3600)
    mix: Mix = Field(default_factory=Mix)
    # The terminals' random inputs: a new seed each run (stored with it) unless given,
    # to replay one run's stream.
    seed: int | None = Field(None, ge=0)
    # The consistency conditions after the run (clause 3.3.2): a failing one fails it.
    check_consistency: bool = True

    def writes(self, base: Path) -> list[str]:
        return [f"workload: TPC-C's New-Order, Payment and Delivery write to "
                f"{self.database}; read-only workloads: sysbench's read-only tests, ssb"]


# --- the dataset ---------------------------------------------------------------------------

def prepare_dataset(ctx: RunContext, data: TpccDataset) -> Prepared:
    """Create the tables and procedures and load every warehouse, generated by the
    server (INSERT ... SELECT over a sequence): no rows cross the network."""
    t0 = time.monotonic()
    with connection(ctx.endpoint, setup=False) as c, c.cursor() as cur:
        cur.execute(f"CREATE DATABASE IF NOT EXISTS `{data.database}`")
        cur.execute(f"USE `{data.database}`")
        for name, ddl in sql.TABLES.items():
            cur.execute(f"DROP TABLE IF EXISTS `{name}`")
            cur.execute(ddl + sql.TABLE_OPTIONS)
        for name, body in sql.PROCEDURES.items():
            cur.execute(f"DROP PROCEDURE IF EXISTS `{name}`")
            cur.execute(body)
        cur.execute(sql.SEQ)
        cur.execute(sql.load_items())
        for w in range(1, data.warehouses + 1):
            ctx.progress(f"prepare {data.database}: warehouse {w}/{data.warehouses}")
            for statement in sql.load_warehouse(w):
                cur.execute(statement)
        rows = sum(int(r[0] or 0) for r in query(
            c, "SELECT TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s",
            (data.database,)))
    secs = time.monotonic() - t0
    return Prepared.timed(data.database, rows, secs, kind="tpcc",  # rows: InnoDB's estimate
                          own={"warehouses": data.warehouses})


def verify_dataset(ep: Endpoint, data: TpccDataset) -> list[str]:
    """The tables and procedures are there, with ``warehouses`` warehouses."""
    try:
        conn = ep.connect(database=data.database)
    except pymysql.err.MySQLError as e:
        return [f"database {data.database}: {e.args[-1]}"]
    with conn as c:
        tables = {r[0] for r in query(c, "SELECT TABLE_NAME FROM information_schema.TABLES "
                                         "WHERE TABLE_SCHEMA = %s", (data.database,))}
        procs = {r[0] for r in query(c, "SELECT ROUTINE_NAME FROM information_schema.ROUTINES"
                                        " WHERE ROUTINE_SCHEMA = %s", (data.database,))}
        wrong = [f"{data.database}: no table {t}" for t in sql.TABLES if t not in tables]
        wrong += [f"{data.database}: no procedure {p}" for p in sql.PROCEDURES
                  if p not in procs]
        if not wrong:
            n = scalar(c, "SELECT COUNT(*) FROM warehouse")
            if n != data.warehouses:
                wrong.append(f"{data.database}: {n} warehouses, expected {data.warehouses}")
    return wrong


def check_consistency(ep: Endpoint, database: str) -> dict[str, int]:
    """Clause 3.3.2's conditions: how many warehouses or districts break each (0: held)."""
    with connection(ep, setup=False, database=database) as c:
        return {name: int(scalar(c, q)) for name, q in sql.CONSISTENCY.items()}


def new_orders(ep: Endpoint, database: str) -> int:
    """Orders taken so far, from the database (the sum of D_NEXT_O_ID)."""
    with connection(ep, database=database) as c:
        return int(scalar(c, "SELECT SUM(d_next_o_id) FROM district"))


# --- the terminals ----------------------------------------------------------------------------

class Inputs:
    """One terminal's random inputs (clause 2.1.6's NURand and each transaction's)."""

    def __init__(self, seed: int, home: int, warehouses: int, mix: Mix):
        self.rng = random.Random(seed)
        self.home, self.warehouses = home, warehouses
        self.cards = mix.deck()
        self.drawn = len(self.cards)  # the deck is shuffled before the first draw

    def nurand(self, a: int, x: int, y: int, c: int) -> int:
        r = self.rng
        return (((r.randint(0, a) | r.randint(x, y)) + c) % (y - x + 1)) + x

    def pick(self) -> str:
        """The next card of the terminal's deck, shuffled again once it is used up."""
        if self.drawn == len(self.cards):
            self.rng.shuffle(self.cards)
            self.drawn = 0
        self.drawn += 1
        return self.cards[self.drawn - 1]

    def customer(self) -> tuple[int, str]:
        """By last name 60% of the time (id 0), else by NURand id."""
        if self.rng.random() < 0.6:
            n = self.nurand(255, 0, 999, sql.C_LAST_RUN)
            return 0, "".join(sql.SYLLABLES[int(d)] for d in f"{n:03d}")
        return self.nurand(1023, 1, sql.CUSTOMERS, sql.C_ID), ""

    def other_warehouse(self) -> int:
        w = self.rng.randint(1, self.warehouses - 1)
        return w if w < self.home else w + 1

    def args(self, kind: str) -> tuple[Any, ...]:
        """The CALL's arguments for one transaction of ``kind``."""
        r, w = self.rng, self.home
        if kind == "new_order":
            return (w, r.randint(1, 10), self.nurand(1023, 1, sql.CUSTOMERS, sql.C_ID),
                    r.randint(5, 15), int(r.random() < 0.01), self.warehouses)
        if kind == "payment":
            d = r.randint(1, 10)
            remote = self.warehouses > 1 and r.random() < 0.15
            c_w, c_d = (self.other_warehouse(), r.randint(1, 10)) if remote else (w, d)
            return (w, d, c_w, c_d, *self.customer(), round(r.uniform(1, 5000), 2))
        if kind == "order_status":
            return (w, r.randint(1, 10), *self.customer())
        if kind == "delivery":
            return (w, r.randint(1, 10))
        return (w, r.randint(1, 10), r.randint(10, 20))


CALLS = {t: f"CALL tpcc_{t}({', '.join(['%s'] * n)})" for t, n in
         (("new_order", 6), ("payment", 7), ("order_status", 4), ("delivery", 2),
          ("stock_level", 3))}


class Tally:
    """What the terminals did, under one lock: since the last report and in all; and
    which calls are in flight, so that the count can be read with none."""

    def __init__(self) -> None:
        self.lock = threading.Condition()
        self.recent: dict[str, list[float]] = {t: [] for t in TRANSACTIONS}
        self.measured: dict[str, array] = {t: array("d") for t in TRANSACTIONS}
        self.rolled_back = 0
        self.retries = 0
        self.errors: list[str] = []
        self.measuring = False
        self.paused = False
        self.in_flight = 0

    def begin(self) -> None:
        """A terminal is about to call: it waits while the terminals are paused."""
        with self.lock:
            self.lock.wait_for(lambda: not self.paused)
            self.in_flight += 1

    def end(self) -> None:
        with self.lock:
            self.in_flight -= 1
            self.lock.notify_all()

    def add(self, kind: str, ms: float, rolled_back: bool) -> None:
        with self.lock:
            self.recent[kind].append(ms)
            if self.measuring:
                self.measured[kind].append(ms)
                self.rolled_back += rolled_back

    @contextmanager
    def quiet(self) -> Iterator[None]:
        """No call in flight while the body runs: new ones wait, running ones finish."""
        with self.lock:
            self.paused = True
            self.lock.wait_for(lambda: self.in_flight == 0, CALL_TIMEOUT_S)
        try:
            yield
        finally:
            with self.lock:
                self.paused = False
                self.lock.notify_all()

    def take(self) -> dict[str, list[float]]:
        with self.lock:
            out, self.recent = self.recent, {t: [] for t in TRANSACTIONS}
            return out


def _call(cur: Any, kind: str, args: tuple[Any, ...], tally: Tally) -> None:
    """One transaction, run again on a deadlock or lock wait timeout."""
    for attempt in range(RETRIES):
        try:
            cur.execute(CALLS[kind], args)
            return
        except pymysql.err.OperationalError as e:
            if e.args[0] not in RETRYABLE or attempt == RETRIES - 1:
                raise
            with tally.lock:
                tally.retries += 1


def _pct(xs: Any, q: float) -> float | None:
    v = nearest_rank(xs, q)
    return None if v is None else round(v, 3)


def _below_minimum(counts: dict[str, int]) -> list[str]:
    """The transactions whose share of the measured part fell below clause 5.2.3's."""
    total = sum(counts.values())
    return [f"{t} {counts[t] / total:.2%}" for t, m in MINIMUM.items()
            if total and counts[t] / total < m]


def _per_transaction(ms: array, total: int) -> Transaction:
    return Transaction(count=len(ms), share=round(len(ms) / max(1, total), 5),
                       p50_ms=_pct(ms, 0.5), p90_ms=_pct(ms, 0.9), p95_ms=_pct(ms, 0.95),
                       p99_ms=_pct(ms, 0.99), max_ms=_pct(ms, 1.0))


class Tpcc(Workload[TpccWorkload, TpccDataset]):
    name = "tpcc"

    spec: TpccWorkload
    data: TpccDataset
    seed = 0  # the run's: the spec's, or drawn when the run starts

    @property
    def label(self) -> str:
        return f"TPC-C {self.data.warehouses} warehouse(s), {self.spec.threads} terminals"

    @property
    def nominal_s(self) -> float:
        return float(self.spec.duration_s)

    def _terminal(self, ctx: RunContext, k: int, tally: Tally, stop: threading.Event) -> None:
        spec, w = self.spec, self.data.warehouses
        inputs = Inputs(self.seed * 100_003 + k, k % w + 1, w, spec.mix)
        try:
            with connection(ctx.endpoint, setup=False, database=self.data.database,
                            read_timeout=CALL_TIMEOUT_S) as c, c.cursor() as cur:
                while not stop.is_set():
                    kind = inputs.pick()
                    args = inputs.args(kind)
                    tally.begin()
                    try:
                        t = time.perf_counter()
                        _call(cur, kind, args, tally)
                        tally.add(kind, (time.perf_counter() - t) * 1000,
                                  kind == "new_order" and bool(args[4]))
                    finally:
                        tally.end()
        except Exception as e:  # reported, and it fails the run
            with tally.lock:
                tally.errors.append(f"terminal {k}: {e}")
            stop.set()

    def _report(self, ctx: RunContext, tally: Tally, dt: float, warm: bool) -> Tick:
        """One interval's samples: tps, tpmC, p95 latency (all and per transaction)."""
        recent = tally.take()
        t = ctx.clock()
        done = sum(len(v) for v in recent.values())
        tps, tpmc = done / dt, len(recent["new_order"]) * 60 / dt
        p95 = _pct([x for v in recent.values() for x in v], 0.95)
        ctx.sample(t, SOURCE, "tps", tps, None)
        ctx.sample(t, SOURCE, "tpmc", tpmc, None)
        ctx.sample(t, SOURCE, "threads", float(self.spec.threads), None)
        if p95 is not None:
            ctx.sample(t, SOURCE, "latency_ms", p95, {"quantile": "0.95"})
        for kind, xs in recent.items():
            if xs:
                ctx.sample(t, SOURCE, "txn_latency_ms", _pct(xs, 0.95) or 0.0,
                           {"txn": kind, "quantile": "0.95"})
        ctx.progress(f"{'measure' if warm else 'warmup'}  tps {tps:.0f}  tpmC {tpmc:.0f}  "
                     f"p95 {p95} ms")
        return Tick(t, tps, p95)

    def run(self, ctx: RunContext) -> WorkloadResult:
        spec, tally, stop = self.spec, Tally(), threading.Event()
        self.seed = spec.seed if spec.seed is not None else \
            random.SystemRandom().randrange(1 << 31)
        self.orders_before = self.orders_after = 0  # D_NEXT_O_ID sums around the window
        ctx.on_stop.append(stop.set)
        ctx.threads_now(spec.threads)
        start = ctx.clock()
        threads = [threading.Thread(target=self._terminal, args=(ctx, k, tally, stop),
                                    name=f"tpcc-{k}", daemon=True)
                   for k in range(spec.threads)]
        if spec.warmup_s:
            ctx.event(start, "phase_start", "warmup", {"seconds": spec.warmup_s})
        else:
            start = self._measure_from(ctx, tally)
        for th in threads:
            th.start()
        try:
            intervals, window = self._loop(ctx, tally, stop, start)
            lost = stop.is_set()  # a terminal failed, or the server is gone
        finally:
            stop.set()
            for th in threads:
                th.join(120)
            ctx.on_stop.remove(stop.set)
        if tally.errors:
            raise HarnessError("TPC-C: " + "; ".join(tally.errors[:3]))
        if not lost:  # every call has returned: the count matches the tally's
            self.orders_after = new_orders(ctx.endpoint, self.data.database)
        return self._result(ctx, tally, intervals, window, start)

    def _measure_from(self, ctx: RunContext, tally: Tally) -> float:
        """Read the first count with no call in flight; measure from when they resume."""
        with tally.quiet():
            self.orders_before = new_orders(ctx.endpoint, self.data.database)
            tally.measuring = True
            t = ctx.clock()
        ctx.measured_from(t)
        return t

    def _loop(self, ctx: RunContext, tally: Tally, stop: threading.Event, start: float
              ) -> tuple[list[Tick], tuple[float, float]]:
        """Report every interval until the duration is up; the measured window."""
        spec, t0 = self.spec, time.monotonic()
        warm_at, intervals, last = t0 + spec.warmup_s, [], t0
        measured_at = start if not spec.warmup_s else None
        while not stop.wait(spec.report_interval_s):
            now = time.monotonic()
            warm = now >= warm_at
            iv = self._report(ctx, tally, max(now - last, 1e-6), warm)
            last = now
            if warm and measured_at is None:
                measured_at = self._measure_from(ctx, tally)
                ctx.event(measured_at, "phase_end", "warmup", None)
            elif warm:
                intervals.append(iv)
            if now - t0 >= spec.warmup_s + spec.duration_s:
                break
        # the calls in flight now are counted (they started in the window): the terminals
        # stop at their next one and the last count is read once all have returned
        return intervals, (measured_at if measured_at is not None else start, ctx.clock())

    def _result(self, ctx: RunContext, tally: Tally, intervals: list[Tick],
                window: tuple[float, float], start: float) -> WorkloadResult:
        spec = self.spec
        minutes = max(window[1] - window[0], 1e-6) / 60
        n = {t: len(tally.measured[t]) for t in TRANSACTIONS}
        committed_no = n["new_order"] - tally.rolled_back
        nopm = (self.orders_after - self.orders_before) / minutes
        consistency = (check_consistency(ctx.endpoint, self.data.database)
                       if spec.check_consistency else {})
        everything = [x for t in TRANSACTIONS for x in tally.measured[t]]
        tps = [iv.tps for iv in intervals]
        figures = TpccFigures(
            tpmc=round(committed_no / minutes, 1), nopm=round(nopm, 1),
            tps_median=statistics.median(tps) if tps else None,
            latency_p95_ms=_pct(everything, 0.95),
            transactions={t: _per_transaction(tally.measured[t], len(everything))
                          for t in TRANSACTIONS}, consistency=consistency)
        summary: JsonDict = {
            "workload": "tpcc", "warehouses": self.data.warehouses, "threads": spec.threads,
            "duration_s": spec.duration_s, "warmup_s": spec.warmup_s,
            **figures.model_dump(mode="json", exclude={"consistency"}),
            "latency_p99_ms": _pct(everything, 0.99),
            "new_order_rollbacks": tally.rolled_back, "retries": tally.retries,
            "consistency": consistency, "intervals": len(intervals),
            "workload_start_s": round(start, 3), "workload_end_s": round(ctx.clock(), 3)}
        short = _below_minimum(n)
        summary.update(seed=self.seed, mix_below_minimum=short)
        summary["headline"] = _headline(figures, short)
        return WorkloadResult(summary=summary, intervals=intervals,
                              failure=_inconsistent(consistency))


def _headline(f: TpccFigures, short: list[str]) -> str:
    return (f"tpmC {f.tpmc or 0:.0f} (NOPM from the database {f.nopm or 0:.0f}), "
            f"tps {f.tps_median or 0:.0f}, p95 {f.latency_p95_ms} ms"
            + (f"; mix below the minimum ({', '.join(short)}): not tpmC" if short else ""))


def _inconsistent(consistency: dict[str, int]) -> str | None:
    """The run's failure when a consistency condition (clause 3.3.2) does not hold."""
    broken = [name for name, bad in consistency.items() if bad]
    return ("TPC-C: the database is inconsistent after the run: condition "
            + ", ".join(broken) + " (clause 3.3.2)") if broken else None


# --- report -------------------------------------------------------------------------------

def print_report(store: RunReader, runs: list[StoredRun], table: Any) -> None:
    """Per run: tpmC, NOPM and each transaction's share and latency percentiles."""
    rows = []
    for r in runs:
        f = TpccFigures.of(r.summary)
        for t, x in f.transactions.items():
            rows.append({"server": r.server, "variant": r.variant,
                         "rep": r.repetition, "tpmC": f.tpmc, "txn": t,
                         "share": x.share, "p50_ms": x.p50_ms, "p95_ms": x.p95_ms,
                         "p99_ms": x.p99_ms})
    if rows:
        print("\nTPC-C per transaction (measured part):")
        table(rows, ["server", "variant", "rep", "tpmC", "txn", "share", "p50_ms", "p95_ms",
                     "p99_ms"])


def show_lines(summary: RunSummary) -> list[tuple[str, str]]:
    """``harness show``: each transaction's count, share and latency, then the
    consistency conditions checked after the run."""
    f = TpccFigures.of(summary)
    lines = [(f"txn {t}", f"{x.count} ({x.share:.1%}), p50 {x.p50_ms} ms, "
                          f"p95 {x.p95_ms} ms, p99 {x.p99_ms} ms")
             for t, x in f.transactions.items()]
    if f.consistency:
        broken = f.broken
        lines.append(("consistency", f"{len(f.consistency)} condition(s) checked, "
                      + (f"broken: {', '.join(broken)}" if broken else "all hold")))
    return lines


# --- under the counter (compare --measure instructions) ------------------------------

class TpccCounted(CountedProbe):
    """TPC-C's windows by transaction type: each type in a connection of its own (one
    terminal, home warehouse 1), ``n`` New-Orders and the other types in proportion to
    the mix; every window draws the same inputs (one seed), so two windows differ only
    by what the earlier ones left in the database."""

    name = "tpcc"
    default_events = 100  # New-Orders a window (under the counter, ~50x slower)

    def __init__(self, spec: TpccWorkload, data: TpccDataset) -> None:
        self.spec, self.data = spec, data
        shares = spec.mix.shares()
        self.classes = tuple(t for t in TRANSACTIONS if shares[t] > 0)
        self.seed = spec.seed if spec.seed is not None else random.SystemRandom().randrange(
            1 << 31)

    def weights(self) -> dict[str, float]:
        shares = self.spec.mix.shares()
        return {t: shares[t] for t in self.classes}

    def load(self, ep: Endpoint, progress: Callable[[str], None]) -> None:
        ctx = RunContext(ep, Path("."), time.monotonic, lambda *_: None, lambda *_: None,
                         progress=progress)
        prepare_dataset(ctx, self.data)
        if wrong := verify_dataset(ep, self.data):
            raise HarnessError(f"TPC-C prepare: {'; '.join(wrong)}")

    def run(self, ep: Endpoint, cls: str, events: int) -> int:
        inputs, tally = Inputs(self.seed, 1, self.data.warehouses, self.spec.mix), Tally()
        with connection(ep, setup=False, database=self.data.database,
                        read_timeout=CALL_TIMEOUT_S) as c, c.cursor() as cur:
            for _ in range(events):
                _call(cur, cls, inputs.args(cls), tally)
        return events


class TpccPlugin(WorkloadPlugin[TpccWorkload, TpccDataset]):
    """TPC-C's five transactions on its warehouses, reported as tpmC and NOPM."""

    kind = "tpcc"
    dataset = TpccDataset
    workload = TpccWorkload
    throughput = (SOURCE, "tps", "tps")
    latency = (SOURCE, "latency_ms")
    figures = (Figure("tpmc", "tpmC", True, headline=True, regress="tpmc"),
               Figure("nopm", "NOPM", True))
    metrics = SERVER_METRICS
    example = {"dataset": {"kind": "tpcc", "warehouses": 1},
               "workload": {"kind": "tpcc", "threads": 2, "duration_s": 3}}

    def runner(self, spec: TpccWorkload, data: TpccDataset) -> Tpcc:
        return Tpcc(spec, data)

    def prepare(self, ctx: RunContext, data: TpccDataset) -> Prepared:
        return prepare_dataset(ctx, data)

    def verify(self, ep: Endpoint, data: TpccDataset) -> list[str]:
        return verify_dataset(ep, data)

    def tables(self, data: TpccDataset) -> list[str]:
        return list(sql.TABLES)

    def report(self, store: RunReader, runs: list[StoredRun], print_table: Any) -> None:
        print_report(store, runs, print_table)

    def show(self, summary: RunSummary) -> list[tuple[str, str]]:
        return show_lines(summary)

    def counted(self, spec: TpccWorkload, data: TpccDataset) -> TpccCounted:
        return TpccCounted(spec, data)


PLUGIN = TpccPlugin()
