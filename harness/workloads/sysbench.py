"""sysbench 1.0 OLTP: argv building, output parsing and the workload itself.

Passwords go to a 0600 ``--config-file``, never on the command line. Warmup uses
``--report-checkpoints=WARMUP``: sysbench prints a full report at the checkpoint and
resets its counters, so the final summary (and its latency percentile) covers exactly
the measured part; the per-second intervals of the warmup are kept and marked.
``warmup_s: auto`` is a sysbench run of its own before the measured one, ended once its
throughput has settled (:mod:`..stats.steady`).
"""
from __future__ import annotations

import math
import os
import re
import secrets
import statistics
import time
from array import array
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import pymysql
from pydantic import Field, field_validator, model_validator

from .. import client, proc
from ..errors import ProviderError, ToolError
from ..model import DatasetModel, Figure, Ident, Model, WorkloadModel
from ..server.mysql import Endpoint, connection
from ..stats.steady import is_steady
from ..store.prepared import Prepared
from .base import (
    SERVER_METRICS,
    CountedProbe,
    RunContext,
    Tick,
    Workload,
    WorkloadPlugin,
    WorkloadResult,
)

SYSBENCH_TESTS = ("oltp_read_only", "oltp_read_write", "oltp_write_only", "oltp_point_select",
                  "oltp_update_index", "oltp_update_non_index", "oltp_insert", "oltp_delete",
                  "select_random_points", "select_random_ranges")
READ_ONLY_TESTS = ("oltp_read_only", "oltp_point_select", "select_random_points",
                   "select_random_ranges")


class SysbenchDataset(DatasetModel):
    """sysbench tables ``sbtest1..N`` in one database."""

    kind: Literal["sysbench"] = "sysbench"
    database: Ident = "sbtest"
    tables: int = Field(1, ge=1, le=10000)
    table_size: int = Field(10000, ge=1, le=2**31 - 1)  # sysbench's int option
    prepare_threads: int | None = Field(None, ge=1, le=256)

    def scaled(self, factor: float) -> dict[str, Any]:
        return {"table_size": max(1, int(self.table_size * factor))}


class Ramp(Model):
    """Concurrency steps before the measured part: each count of ``threads`` runs for
    ``step_s`` seconds (its intervals stored with their thread count), then the
    workload's own ``threads`` run for warmup_s + duration_s (the hold)."""

    threads: list[Annotated[int, Field(ge=1, le=4096)]] = Field(min_length=1)
    step_s: int = Field(30, ge=1)


class SysbenchWorkload(WorkloadModel):
    """A sysbench 1.0 OLTP test against a sysbench dataset."""

    kind: Literal["sysbench"] = "sysbench"
    test: Literal[SYSBENCH_TESTS]  # type: ignore[valid-type]
    database: Ident = "sbtest"
    threads: int = Field(1, ge=1, le=4096)
    rand_type: Literal["uniform", "gaussian", "special", "pareto"] = "uniform"
    duration_s: int = Field(60, ge=1)
    # A number of seconds, or "auto": warm up until the throughput settles (MSER-5 on
    # its seconds, harness/stats/steady.py), at least 20 s, at most warmup_max_s.
    # (Wider than the base's int: nothing outside this plugin reads its warmup_s.)
    warmup_s: Annotated[int, Field(ge=0)] | Literal["auto"] = 0  # type: ignore[assignment]
    warmup_max_s: int = Field(300, ge=20)
    report_interval_s: int = Field(1, ge=1)
    ramp: Ramp | None = None
    options: dict[str, str | int | float | bool] = Field(default_factory=dict)
    # Where sysbench runs: on the machine of the harness, or on the server's own host
    # (a lab host: over SSH, connecting to mysqld there; elsewhere they are the same).
    client: Literal["controller", "db_host"] = "controller"

    @property
    def fixed_warmup_s(self) -> int:
        """The warmup inside the measured sysbench run (an auto warmup runs before it)."""
        return 0 if self.warmup_s == "auto" else self.warmup_s

    @model_validator(mode="after")
    def _auto_warmup_per_second(self) -> SysbenchWorkload:
        if self.warmup_s == "auto" and self.report_interval_s != 1:
            raise ValueError("warmup_s: auto reads the throughput of every second; it needs "
                             "report_interval_s: 1")
        return self

    def writes(self, base: Path) -> list[str]:
        if self.test in READ_ONLY_TESTS:
            return []
        return [f"workload.test: {self.test} writes to {self.database}.sbtest*; read-only "
                f"tests: {', '.join(READ_ONLY_TESTS)}"]

    @field_validator("options")
    @classmethod
    def _allowed(cls, v: dict[str, Any]) -> dict[str, Any]:
        managed = [k for k in v if _dashed(k) in MANAGED_OPTIONS]
        if managed:
            raise ValueError(f"set by the harness, not in options: {', '.join(managed)}")
        bad = [k for k in v if _dashed(k) not in RUN_OPTIONS]
        if bad:
            raise ValueError(f"not an option a workload passes to sysbench: "
                             f"{', '.join(bad)} (it passes "
                             f"{', '.join(sorted(RUN_OPTIONS))})")
        return v


# What the harness sets on every sysbench run itself: the connection, the data's size,
# the threads, time and reports it reads (and their deprecated aliases).
MANAGED_OPTIONS = frozenset({
    "mysql-host", "mysql-port", "mysql-user", "mysql-password", "mysql-socket", "mysql-db",
    "tables", "table-size", "threads", "time", "report-interval", "report-checkpoints",
    "rand-type", "percentile", "config-file", "histogram", "events", "num-threads",
    "max-time", "max-requests", "tx-rate"})
# The options a workload may pass to sysbench 1.0's run (its --help and the OLTP tests'
# help), an allow-list: the load's shape (transaction mix, rate, randomness, prepared
# statements, SSL, compression, errors to ignore). Not passed: another driver
# (--db-driver=pgsql with its host), a client trace (--mysql-debug, --db-debug, --debug:
# the password's calls too), a dry run, and the OLTP tests' prepare-time options
# (auto_inc, create_secondary, mysql_storage_engine, secondary), which a run ignores.
RUN_OPTIONS = frozenset({
    "rate", "forced-shutdown", "thread-stack-size", "validate", "verbosity",
    "rand-spec-iter", "rand-spec-pct", "rand-spec-res", "rand-seed", "rand-pareto-h",
    "db-ps-mode", "mysql-ssl", "mysql-ssl-cipher", "mysql-compression",
    "mysql-ignore-errors", "delete-inserts", "distinct-ranges", "index-updates",
    "non-index-updates", "order-ranges", "point-selects", "range-selects", "range-size",
    "simple-ranges", "skip-trx", "sum-ranges"})


def _dashed(name: str) -> str:
    """An option's name as sysbench reads it (``_`` and ``-`` alike)."""
    return name.replace("_", "-")


SOURCE = "sysbench"


# [ 1s ] thds: 2 tps: 3431.67 qps: 54925.76 (r/w/o: 48060.41/0.00/6865.34) lat (ms,95%): 0.89 err/s: 0.00 reconn/s: 0.00  # noqa: E501
INTERVAL_RE = re.compile(
    r"^\[ *(?P<t>\d+(?:\.\d+)?)s \] thds: (?P<thds>\d+) tps: (?P<tps>[\d.]+) "
    r"qps: (?P<qps>[\d.]+) \(r/w/o: (?P<r>[\d.]+)/(?P<w>[\d.]+)/(?P<o>[\d.]+)\) "
    r"lat \(ms,(?P<pct>\d+)%\): (?P<lat>[\d.]+) err/s: (?P<err>[\d.]+) "
    r"reconn/s: (?P<reconn>[\d.]+)$")
# [ 2s ] Checkpoint report:
CHECKPOINT_RE = re.compile(r"^\[ *\d+(?:\.\d+)?s \] Checkpoint report:$")

# Summary fields, each with a real line above its pattern. Missing ones raise.
SUMMARY_FIELDS = {
    #     transactions:                        14604  (3649.71 per sec.)
    "transactions": r"^\s+transactions:\s+(\d+)\s+\(([\d.]+) per sec\.\)",
    #     queries:                             233664 (58395.43 per sec.)
    "queries": r"^\s+queries:\s+(\d+)\s+\(([\d.]+) per sec\.\)",
    #     ignored errors:                      0      (0.00 per sec.)
    "ignored_errors": r"^\s+ignored errors:\s+(\d+)\s+\(([\d.]+) per sec\.\)",
    #     reconnects:                          0      (0.00 per sec.)
    "reconnects": r"^\s+reconnects:\s+(\d+)\s+\(([\d.]+) per sec\.\)",
    #     total time:                          4.0011s
    "total_time": r"^\s+total time:\s+([\d.]+)s",
    #          min:                                    0.51
    "lat_min": r"^\s+min:\s+([\d.]+)",
    #          avg:                                    0.55
    "lat_avg": r"^\s+avg:\s+([\d.]+)",
    #          max:                                    2.97
    "lat_max": r"^\s+max:\s+([\d.]+)",
    #          95th percentile:                        0.60
    "lat_pct": r"^\s+(\d+)th percentile:\s+([\d.]+)",
}


@dataclass(slots=True)  # one per second of a run: no per-instance __dict__
class Interval:
    t: float
    threads: int
    tps: float
    qps: float
    reads: float
    writes: float
    other: float
    latency_ms: float | None  # None for the interval sysbench spent on a checkpoint report
    percentile: int
    errors: float
    reconnects: float


class Kept:
    """What the summaries need of each interval of a run - its time, tps and latency -
    as columns of doubles (24 B a second; an :class:`Interval` object is ~300 B, which a
    long soak saw as steady growth). Every other field is streamed to the store."""

    def __init__(self) -> None:
        self.t = array("d")
        self.tps = array("d")
        self.latency_ms = array("d")  # nan: none reported (a checkpoint's interval)

    def append(self, iv: Interval) -> None:
        self.t.append(iv.t)
        self.tps.append(iv.tps)
        self.latency_ms.append(math.nan if iv.latency_ms is None else iv.latency_ms)

    def __len__(self) -> int:
        return len(self.t)

    def after(self, t0: float) -> list[tuple[float, float, float | None]]:
        """(t, tps, latency or None) of the intervals ending after ``t0`` s."""
        return [(t, tps, None if math.isnan(lat) else lat) for t, tps, lat
                in zip(self.t, self.tps, self.latency_ms, strict=True) if t > t0]


@dataclass
class Output:
    intervals: list[Interval] = field(default_factory=list)
    reports: list[dict[str, float]] = field(default_factory=list)  # checkpoint..., final


def parse_interval(line: str, after_checkpoint: bool = False) -> Interval | None:
    m = INTERVAL_RE.match(line)
    if not m:
        return None
    g = m.groupdict()
    return Interval(t=float(g["t"]), threads=int(g["thds"]), tps=float(g["tps"]),
                    qps=float(g["qps"]), reads=float(g["r"]), writes=float(g["w"]),
                    other=float(g["o"]),
                    latency_ms=None if after_checkpoint else float(g["lat"]),
                    percentile=int(g["pct"]), errors=float(g["err"]),
                    reconnects=float(g["reconn"]))


def parse_summary(block: str) -> dict[str, float]:
    """One report block ("SQL statistics:" to the end of "Latency"). Every field required."""
    out: dict[str, float] = {}
    for name, pattern in SUMMARY_FIELDS.items():
        m = re.search(pattern, block, re.M)
        if not m:
            raise ValueError(f"sysbench summary has no '{name}' line")
        if name in ("transactions", "queries", "ignored_errors", "reconnects"):
            out[name] = float(m.group(1))
            out[name + "_per_s"] = float(m.group(2))
        elif name == "lat_pct":
            out["lat_percentile"] = float(m.group(1))
            out["lat_pct"] = float(m.group(2))
        else:
            out[name] = float(m.group(1))
    return out


def parse_histogram(text: str) -> list[tuple[float, int]]:
    """(value ms, count) of the last "Latency histogram" block: sysbench prints it for
    the part after the last checkpoint, i.e. exactly the measured part."""
    blocks = re.split(r"^Latency histogram \(values are in milliseconds\)$", text,
                      flags=re.M)
    if len(blocks) < 2:
        return []
    out = []
    for line in blocks[-1].splitlines():
        m = re.match(r"^\s+([\d.]+) \|[* ]*\s(\d+)$", line)
        if m:
            out.append((float(m.group(1)), int(m.group(2))))
        elif out and not line.strip().startswith("value"):
            break
    return out


def histogram_percentile(hist: list[tuple[float, int]], q: float) -> float | None:
    """The smallest bucket value below which at least ``q`` of the events fall."""
    total = sum(n for _, n in hist)
    if not total:
        return None
    need, seen = q * total, 0
    for value, n in sorted(hist):
        seen += n
        if seen >= need:
            return value
    return hist[-1][0]


def parse_output(text: str) -> Output:
    """Parse a whole ``sysbench ... run`` output (intervals and every report block)."""
    out = Output()
    after_ckpt = False
    for line in text.splitlines():
        if CHECKPOINT_RE.match(line):
            after_ckpt = True
            continue
        iv = parse_interval(line, after_ckpt)
        if iv:
            out.intervals.append(iv)
            after_ckpt = False
    blocks = re.split(r"^SQL statistics:$", text, flags=re.M)[1:]
    out.reports = [parse_summary(b) for b in blocks]
    return out


# Inserting 10000 records into 'sbtest1'
# Creating a secondary index on 'sbtest1'...
PREPARE_DONE_RE = re.compile(r"^Creating a secondary index on '(\w+)'")


def write_config(path: Path, ep: Endpoint, database: str) -> Path:
    """sysbench options that must not appear in argv (the password), in a 0600 file of
    ``path``'s name in the client folder, readable by the client account sysbench runs
    as alone (never beside the run's artifacts, which are stored); where it was
    written."""
    return client.write_private(
        path.name, f"mysql-host={ep.host}\nmysql-port={ep.port}\nmysql-user={ep.user}\n"
                   f"mysql-password={ep.password}\nmysql-db={database}\n")


def build_args(spec: SysbenchWorkload, data: SysbenchDataset, config: Path,
               command: str = "run", step: tuple[int, int] | None = None) -> list[str]:
    """argv of a sysbench run (or prepare/cleanup with ``command``); ``step`` is a ramp
    step's (threads, seconds), run without warmup."""
    argv = [proc.which("sysbench"), f"--config-file={config}", spec.test,
            f"--tables={data.tables}", f"--table-size={data.table_size}"]
    if command == "run":
        threads, secs = step or (spec.threads, spec.fixed_warmup_s + spec.duration_s)
        argv += [f"--threads={threads}", f"--time={secs}",
                 f"--report-interval={spec.report_interval_s}", f"--rand-type={spec.rand_type}",
                 "--percentile=95", "--histogram=on", "--db-ps-mode=auto", "--events=0"]
        if spec.fixed_warmup_s and step is None:
            argv.append(f"--report-checkpoints={spec.fixed_warmup_s}")
        for k, v in sorted(spec.options.items()):
            text = "on" if v is True else "off" if v is False else v
            argv.append(f"--{k.replace('_', '-')}={text}")
    argv.append(command)
    return argv


def prepare_args(data: SysbenchDataset, config: Path) -> list[str]:
    threads = data.prepare_threads or min(data.tables, os.cpu_count() or 1)
    # oltp_common's prepare gives each thread every Nth table: parallel across tables.
    return [proc.which("sysbench"), f"--config-file={config}", "oltp_read_write",
            f"--tables={data.tables}", f"--table-size={data.table_size}",
            f"--threads={threads}", "prepare"]


def prepare_dataset(ctx: RunContext, data: SysbenchDataset) -> Prepared:
    """Create the database and load ``data`` with sysbench; return timings."""
    with connection(ctx.endpoint) as c, c.cursor() as cur:
        cur.execute(f"CREATE DATABASE IF NOT EXISTS `{data.database}`")
    cfg = write_config(ctx.artifacts / f"sysbench-{data.database}.cnf", ctx.endpoint,
                       data.database)
    done: list[str] = []
    fatal: list[str] = []

    def on_line(line: str) -> None:
        if line.startswith("FATAL:"):
            fatal.append(proc.clip(line))
        m = PREPARE_DONE_RE.match(line)
        if m:
            done.append(m.group(1))
            ctx.progress(f"prepare {data.database}: {len(done)}/{data.tables} tables of "
                         f"{data.table_size} rows")

    t0 = time.monotonic()
    argv = prepare_args(data, cfg)
    try:
        with client.stream(argv, on_line,
                           ctx.artifacts / f"sysbench-prepare-{data.database}.log",
                           what="sysbench prepare") as s:
            s.wait()
    finally:
        cfg.unlink(missing_ok=True)
    secs = time.monotonic() - t0
    # sysbench 1.0 exits 0 when a prepare thread dies (e.g. "The table is full"):
    # believe its FATAL lines and the tables, not its exit code.
    short = verify_tables(ctx.endpoint, data)
    if fatal or short:
        raise ToolError([str(a) for a in argv], 0, "\n".join(fatal[-5:] + short),
                        "sysbench prepare failed")
    rows = data.tables * data.table_size
    return Prepared.timed(data.database, rows, secs, tables=data.tables)


def verify_tables(ep: Endpoint, data: SysbenchDataset) -> list[str]:
    """Every sbtestN table exists and holds ids 1..table_size; a list of what is wrong."""
    wrong = []
    try:
        conn = ep.connect(database=data.database)
    except pymysql.err.MySQLError as e:  # most often: no such database
        return [f"database {data.database}: {e}"]
    with conn as c, c.cursor() as cur:
        for i in range(1, data.tables + 1):
            try:
                cur.execute(f"SELECT MAX(id) FROM sbtest{i}")
                top = (cur.fetchone() or (None,))[0]
            except Exception as e:  # a missing table is the finding, whatever the driver says
                wrong.append(f"table {data.database}.sbtest{i}: {e}")
                continue
            if top != data.table_size:
                wrong.append(f"table {data.database}.sbtest{i}: max id {top}, expected "
                             f"{data.table_size}")
    return wrong


class _Lines:
    """sysbench's output lines, as they come: each interval stored as samples, kept for
    the summaries and shown as progress; ``until`` (asked after each) ends the run."""

    def __init__(self, ctx: RunContext, start: float, warmup: int, total: int, what: str,
                 until: Callable[[Kept], bool] | None):
        self.ctx, self.start, self.warmup, self.total = ctx, start, warmup, total
        self.what, self.until = what, until
        self.kept = Kept()
        self.after_ckpt = False
        self.ended = False  # until() said so
        self.stream: proc.LineStream | None = None
        self.exited = 0.0  # when sysbench exited, on the run clock (set once it has)

    def __call__(self, line: str) -> None:
        if CHECKPOINT_RE.match(line):
            self.after_ckpt = True
            return
        iv = parse_interval(line, self.after_ckpt)
        if iv is None:
            return
        self.after_ckpt = False
        self.kept.append(iv)
        self._store(iv)
        if self.until is not None and not self.ended and self.until(self.kept):
            self.ended = True
            if self.stream is not None:
                self.stream.terminate()

    def _store(self, iv: Interval) -> None:
        ctx, t = self.ctx, self.start + iv.t
        for metric, value in (("tps", iv.tps), ("qps", iv.qps), ("reads_per_s", iv.reads),
                              ("writes_per_s", iv.writes), ("other_per_s", iv.other),
                              ("errors_per_s", iv.errors),
                              ("reconnects_per_s", iv.reconnects), ("threads", iv.threads)):
            ctx.sample(t, SOURCE, metric, value, None)
        if iv.latency_ms is not None:
            ctx.sample(t, SOURCE, "latency_ms", iv.latency_ms,
                       {"quantile": f"0.{iv.percentile:02d}"})
        phase = self.what or ("warmup" if iv.t <= self.warmup else "measure")
        ctx.progress(f"{phase} {iv.t:.0f}/{self.total} s  tps {iv.tps:.1f}  "
                     f"p95 {iv.latency_ms if iv.latency_ms is not None else '-'} ms")


class SysbenchOLTP(Workload[SysbenchWorkload, SysbenchDataset]):
    name = "sysbench"

    spec: SysbenchWorkload
    data: SysbenchDataset

    @property
    def label(self) -> str:
        return f"sysbench {self.spec.test}"

    @property
    def nominal_s(self) -> float:
        spec, ramp = self.spec, self.spec.ramp
        warm = spec.warmup_max_s if spec.warmup_s == "auto" else spec.warmup_s
        return warm + spec.duration_s + (len(ramp.threads) * ramp.step_s if ramp else 0)

    def _ramp(self, ctx: RunContext) -> list[dict[str, Any]]:
        """The ramp's steps, one sysbench run each; their intervals are stored (with
        the thread count) but are not the measured part."""
        spec = self.spec
        assert spec.ramp is not None
        steps = []
        for k in spec.ramp.threads:
            t = ctx.clock()
            ctx.event(t, "ramp_step", f"threads={k}", {"threads": k,
                                                        "seconds": spec.ramp.step_s})
            _, kept, _, _ = self._sysbench(ctx, (k, spec.ramp.step_s), f"ramp-{k}")
            ivs = kept.after(-math.inf)
            steps.append({"threads": k, "start_s": round(t, 3),
                          "tps_median": statistics.median(x[1] for x in ivs) if ivs else None,
                          "latency_p95_ms_median": statistics.median(
                              [x[2] for x in ivs if x[2] is not None] or [0.0])})
        return steps

    def _settle(self, ctx: RunContext) -> dict[str, Any]:
        """``warmup_s: auto``: sysbench at the workload's threads until its throughput
        is steady (:func:`..stats.steady.is_steady`, asked each second) or for
        ``warmup_max_s``; its intervals are stored, marked as the warmup."""
        spec = self.spec
        t = ctx.clock()
        ctx.event(t, "phase_start", "warmup", {"seconds": None, "auto": True,
                                               "max_s": spec.warmup_max_s})
        _, kept, _, _ = self._sysbench(ctx, (spec.threads, spec.warmup_max_s), "warmup",
                                    until=lambda k: is_steady(k.tps))
        # the second it settled at (an interval printed while sysbench ended comes after)
        seconds = next((n for n in range(1, len(kept) + 1) if is_steady(kept.tps[:n])),
                       None)
        settled = seconds is not None
        seconds = seconds or len(kept)
        ctx.event(ctx.clock(), "phase_end", "warmup", {"seconds": seconds, "settled": settled,
                                                      "max_s": spec.warmup_max_s})
        ctx.log(f"  warmup {'settled' if settled else 'did NOT settle'} after "
                f"{seconds} s (at most {spec.warmup_max_s})")
        return {"auto": True, "seconds": seconds, "settled": settled,
                "max_s": spec.warmup_max_s, "start_s": round(t, 3)}

    def _stream(self, ctx: RunContext, argv: list[str], lines: _Lines, log: Path,
                timeout: float) -> None:
        """sysbench run, its lines to ``lines`` and ``log``; stopped with the run."""
        what = f"sysbench {self.spec.test}"
        with client.stream(argv, lines, log, what=what,
                           over_ssh=ctx.remote is not None) as stream:
            lines.stream = stream
            ctx.on_stop.append(stream.stop)
            try:
                rc = stream.wait(timeout=timeout, check=False)
                # its exit, not when its last line was taken (a store that kept the
                # reader waiting must not stretch the measured window)
                lines.exited = ctx.clock() - stream.seconds_since_exit()
            finally:
                ctx.on_stop.remove(stream.stop)
            if rc != 0 and not lines.ended:  # ended by until(): the signal's code
                raise ToolError(argv, rc, "\n".join(stream.tail), what)

    def _sysbench(self, ctx: RunContext, step: tuple[int, int] | None, name: str,
                  until: Callable[[Kept], bool] | None = None
                  ) -> tuple[list[str], Kept, float, float]:
        """One sysbench run streaming its intervals as samples; (argv, what the
        summaries need of them, start and exit on the run clock). The output is kept as
        ``NAME.log``. ``until``, asked after each interval, ends the run early (a
        warmup that has settled)."""
        spec = self.spec
        ctx.threads_now(step[0] if step else spec.threads)
        cfg = write_config(ctx.artifacts / f"{name}.cnf", ctx.endpoint, spec.database)
        argv = build_args(spec, self.data, cfg, step=step)
        remote_cfg = None
        if ctx.remote is not None:  # client: db_host, on another machine
            remote_cfg = ctx.remote.put(cfg)
            argv = ctx.remote.wrap_client(["sysbench", f"--config-file={remote_cfg}",
                                           *argv[2:]])
        (ctx.artifacts / f"{name}.command").write_text(" ".join(argv) + "\n")
        warmup = 0 if step else spec.fixed_warmup_s
        total = step[1] if step else spec.fixed_warmup_s + spec.duration_s
        what = ("warmup" if until else f"ramp {step[0]} threads") if step else ""
        lines = _Lines(ctx, ctx.clock(), warmup, total, what, until)
        if not step:
            ctx.measured_from(lines.start + warmup)
        if warmup:
            ctx.event(lines.start, "phase_start", "warmup", {"seconds": warmup})
        try:
            self._stream(ctx, argv, lines, ctx.artifacts / f"{name}.log", total + 120)
        finally:
            cfg.unlink(missing_ok=True)
            if remote_cfg is not None and ctx.remote is not None:
                ctx.remote.remove(remote_cfg)
        if warmup:
            ctx.event(lines.start + warmup, "phase_end", "warmup", None)
        return argv, lines.kept, lines.start, lines.exited

    def run(self, ctx: RunContext) -> WorkloadResult:
        spec = self.spec
        ramp = self._ramp(ctx) if spec.ramp else None
        warm = self._settle(ctx) if spec.warmup_s == "auto" else None
        argv, kept, start, end = self._sysbench(ctx, None, "sysbench")
        log = ctx.artifacts / "sysbench.log"
        text = log.read_text()
        try:
            parsed = parse_output(text)
            final = parsed.reports[-1]
        except (ValueError, IndexError) as e:
            raise ToolError(argv, 0, "\n".join(text.splitlines()[-20:]),
                            f"sysbench output unreadable ({e})") from None
        measured = kept.after(spec.fixed_warmup_s)
        if not measured:
            raise ToolError(argv, 0, "\n".join(text.splitlines()[-20:]),
                            "sysbench reported no interval after warmup")
        summary = {
            "workload": f"sysbench {spec.test}",
            "threads": spec.threads,
            "duration_s": spec.duration_s,
            # from workload_start_s to the measured part (an auto warmup: to the
            # measured run's start)
            "warmup_s": round(start - warm["start_s"], 3) if warm else spec.warmup_s,
            **_figures(measured, final, text),
            "workload_start_s": warm["start_s"] if warm else round(start, 3),
            "workload_end_s": round(end, 3),
        }
        if ramp is not None:
            summary["ramp"] = ramp
        if warm is not None:
            summary["warmup"] = warm
        return WorkloadResult(summary=summary, intervals=[
            Tick(start + t, v, lat) for t, v, lat in measured])


def _figures(measured: list[tuple[float, float, float | None]], final: dict[str, Any],
             text: str) -> dict[str, Any]:
    """A run's figures: throughput over its measured intervals, latency and counts
    from sysbench's final report and histogram (``text``, its output)."""
    tps = [x[1] for x in measured]
    lat = [x[2] for x in measured if x[2] is not None]
    return {
        "intervals": len(measured),
        "tps_median": statistics.median(tps),
        "tps_mean": final["transactions_per_s"],
        "tps_min": min(tps),
        "tps_max": max(tps),
        "qps_mean": final["queries_per_s"],
        "latency_p95_ms": final["lat_pct"],
        "latency_p99_ms": histogram_percentile(parse_histogram(text), 0.99),
        "latency_avg_ms": final["lat_avg"],
        "latency_max_ms": final["lat_max"],
        "latency_p95_interval_median_ms": statistics.median(lat) if lat else None,
        "transactions": final["transactions"],
        "errors": final["ignored_errors"],
        "reconnects": final["reconnects"],
    }


@contextmanager
def probe_load(ep: Endpoint, data: SysbenchDataset, workdir: Path,
               seconds: int = 3) -> Iterator[Callable[[], float]]:
    """The CPU wake-up probe's load on this dataset: single-threaded oltp_read_only for
    ``seconds``, its last report's tps (host/noise.py measures it idle and beside a busy
    core)."""
    cfg = write_config(workdir / ".probe.cnf", ep, data.database)

    def tps() -> float:
        r = client.run([proc.which("sysbench"), f"--config-file={cfg}", "oltp_read_only",
                      f"--tables={data.tables}", f"--table-size={data.table_size}",
                      "--threads=1", f"--time={seconds}", "run"], timeout=seconds + 60,
                     what="wake-up probe")
        return parse_output(r.stdout).reports[-1]["transactions_per_s"]

    try:
        yield tps
    finally:
        cfg.unlink(missing_ok=True)


# --- under the counter (compare --measure instructions) ------------------------------

COUNTED_EVENTS = {"oltp_point_select": 10_000}  # a window's transactions; other tests: 1,000


class SysbenchCounted(CountedProbe):
    """A sysbench test's windows: ``--events`` transactions, ``--threads=1``."""

    def __init__(self, spec: SysbenchWorkload, data: SysbenchDataset) -> None:
        self.spec, self.data = spec, data
        self.name = spec.test
        self.default_events = COUNTED_EVENTS.get(spec.test, 1_000)
        self.cfg: dict[int, Path] = {}  # by the server's port

    def load(self, ep: Endpoint, progress: Callable[[str], None]) -> None:
        d = self.data
        with ep.connect() as c, c.cursor() as cur:
            cur.execute(f"CREATE DATABASE IF NOT EXISTS `{d.database}`")
        self.cfg[ep.port] = cfg = write_config(
            Path(f"counted-sysbench-{secrets.token_hex(4)}.cnf"), ep, d.database)
        progress(f"loading {d.tables} x {d.table_size} rows")
        client.run(prepare_args(d, cfg), timeout=3600, what="sysbench prepare")
        if short := verify_tables(ep, d):
            raise ProviderError(f"sysbench prepare: {'; '.join(short)}")

    def run(self, ep: Endpoint, cls: str, events: int) -> int:
        d = self.data
        argv = [proc.which("sysbench"), f"--config-file={self.cfg[ep.port]}",
                self.spec.test, f"--tables={d.tables}", f"--table-size={d.table_size}",
                "--threads=1", "--time=0", f"--events={events}", "--db-ps-mode=auto",
                f"--rand-type={self.spec.rand_type}", "run"]
        out = client.run(argv, timeout=3600, what="sysbench (a counted window)").stdout
        reports = parse_output(out).reports
        done = int(reports[-1]["transactions"]) if reports else 0
        if done != events:
            raise ToolError([str(a) for a in argv], 0, out[-2000:],
                            f"sysbench ran {done} of the window's {events} transactions")
        return done

    def close(self) -> None:
        for cfg in self.cfg.values():
            cfg.unlink(missing_ok=True)


class SysbenchPlugin(WorkloadPlugin[SysbenchWorkload, SysbenchDataset]):
    """sysbench's OLTP tests on its sbtest tables: the default kind."""

    kind = "sysbench"
    dataset = SysbenchDataset
    workload = SysbenchWorkload
    default = True
    throughput = (SOURCE, "tps", "tps")
    latency = (SOURCE, "latency_ms")
    figures = (Figure("tps_median", "tps", True, headline=True, regress="tps"),
               Figure("latency_p95_ms", "p95 ms", False, regress="p95_ms"))
    metrics = SERVER_METRICS
    example = {"dataset": {"tables": 1, "table_size": 1000},
               "workload": {"kind": "sysbench", "test": "oltp_read_write", "threads": 1,
                            "duration_s": 4, "report_interval_s": 1}}

    def runner(self, spec: SysbenchWorkload, data: SysbenchDataset) -> SysbenchOLTP:
        return SysbenchOLTP(spec, data)

    def prepare(self, ctx: RunContext, data: SysbenchDataset) -> Prepared:
        return prepare_dataset(ctx, data)

    def verify(self, ep: Endpoint, data: SysbenchDataset) -> list[str]:
        return verify_tables(ep, data)

    def tables(self, data: SysbenchDataset) -> list[str]:
        return [f"sbtest{i}" for i in range(1, data.tables + 1)]

    def wakeup_probe(self, ep: Endpoint, data: SysbenchDataset, folder: Path
                     ) -> AbstractContextManager[Callable[[], float]]:
        return probe_load(ep, data, folder)

    def counted(self, spec: SysbenchWorkload, data: SysbenchDataset) -> CountedProbe:
        return SysbenchCounted(spec, data)


PLUGIN = SysbenchPlugin()
