"""``make bench``: the harness's own speed and size goals, measured, written to JSON.

* sandbox create+start seconds per catalog server;
* harness prepare rows/s vs a bare ``sysbench prepare`` of the same tables (ratio);
* SSB: generation rows/s (into a private folder, SF 1 by default) and LOAD DATA
  rows/s into mariadb-10.11 and mysql-5.7.29 (secondary indexes built after the load);
* dataset snapshots: a new sandbox + prepare vs a new sandbox from the snapshot, for
  the side-load experiment's dataset (goal: restore >= 10x faster);
* store write samples/s, bytes per sample and read-back seconds for a 1 h run sampled
  every second over 2,500 series (goal: <= 50 MB, read back in seconds);
* seek_disk: the model disk's reads against its model, and the requests a second its
  daemon serves with the model off (:mod:`.disk`);
* verdict_power: the variance of quickstart-sized runs, the smallest change a comparison
  sees per budget of machine time, and the false-positive and detection rates of
  ``harness compare --budget 15m --effect 3%`` (:mod:`.power`);
* warmup: runs with a fixed 5 s warmup against ``warmup_s: auto``, alternating: the
  run-to-run noise of each, and the warmups auto chose (:mod:`.power`);
* state: the same runs with each ``between_runs`` (restore, restart, warmup: kept
  running), in turn: the noise of each (:mod:`.power`);
* switchback: one A/A switchback run of compare's windows (6 s) in 800 s on compare's
  default workload (or ``--switchback-workload``), its verdict and the trials that re-cut
  it, also at other window lengths in compare's default time; one entry a workload
  (:mod:`.power`);
* observer_windows: perf at 99 Hz, the wait_events collector's sampling, and the
  collector with its wait instruments against the build's default ones, each switched
  on and off in windows of one sysbench stream on one server, judged as a switchback:
  their cost in tps and in mysqld's CPU per transaction; and performance_schema on
  against off, window by window on two sandboxes side by side, with an A/A of that
  design (:mod:`.observers`);
* injected_effect: a change of known size (one more point select a transaction), in
  rounds of a run without and one with it, balanced order: its size, the host's drift
  from run to run, and whether that rule finds it, paired and not (:mod:`.power`).

Numbers, not assertions: the file is the record; compare it across commits.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .. import proc, procfs
from ..errors import HarnessError
from ..host.facts import host_facts
from ..jsonvalue import Json, JsonDict
from ..paths import CHECKOUT
from ..providers import cache as cache_budget
from ..providers import get_provider
from ..server import catalog, snapshot
from ..server.mysql import connection
from ..store import RunRecord, RunSummary, open_store
from ..workloads.base import RunContext, Workload
from ..workloads.sysbench import SysbenchDataset, prepare_dataset, write_config
from .power import DEFAULT_WORKLOAD, GOAL_WINDOWS, SWITCHBACK_WORKLOADS
from .sandbox import bench_server

SERVERS = ["mariadb-10.11", "mysql-5.7.29", "mysql-5.6.24", "mariadb-10.1.23", "mariadb-10.2.11",
           "mysql-9.7", "mariadb-11.8"]


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def bench_sandboxes(repeats: int) -> JsonDict:
    out: JsonDict = {}
    for name in SERVERS:
        build = catalog.resolve(name, log=log)
        times = []
        for _ in range(repeats):
            t0 = time.monotonic()
            box = get_provider("local").provision(build)
            try:
                box.start()
                times.append(time.monotonic() - t0)
            finally:
                box.destroy()
        median = round(statistics.median(times), 3)
        out[name] = {"create_start_s_median": median,
                     "samples_s": [round(t, 3) for t in times]}
        log(f"sandbox {name}: {median} s")
    return out


def bench_targets(repeats: int, servers: list[str]) -> JsonDict:
    """Seconds from nothing to a server that answers, per target: a local sandbox, a
    container (datadir initialised in a one-off container, then started), a sandbox
    made by the Ansible playbooks on this machine (provision + start)."""
    from ..providers import images

    inventory = CHECKOUT / "ansible/inventories/local.yml"
    makers = {"local": lambda: get_provider("local"), "docker": lambda: get_provider("docker"),
              "ansible": lambda: get_provider(f"ansible:{inventory}")}
    out: JsonDict = {}
    for name in servers:
        build = catalog.resolve(name, log=log)
        try:
            images.find_image(name)
        except HarnessError:
            images.build_image(name, log=log)
        row: JsonDict = {}
        for target, make in makers.items():
            times = []
            for _ in range(repeats):
                provider = make()
                t0 = time.monotonic()
                box = provider.provision(build, "bench")
                try:
                    box.start()
                    times.append(time.monotonic() - t0)
                finally:
                    box.destroy()
            row[f"{target}_to_ready_s_median"] = round(statistics.median(times), 3)
            row[f"{target}_samples_s"] = [round(t, 3) for t in times]
        out[name] = row
        log(f"to ready, {name}: " + ", ".join(f"{t} {row[f'{t}_to_ready_s_median']} s"
                                              for t in makers))
    return out


def bench_prepare(tables: int, rows: int, pairs: int) -> JsonDict:
    build = catalog.resolve("mariadb-10.11", log=log)
    box = get_provider("local").provision(build)
    data = SysbenchDataset(tables=tables, table_size=rows)
    harness_s, bare_s = [], []
    try:
        box.start({"innodb_buffer_pool_size": "512M", "innodb_log_file_size": "256M"})
        art = Path(tempfile.mkdtemp(prefix="bench-"))
        ctx = RunContext(endpoint=box.endpoint, artifacts=art, clock=time.monotonic,
                         sample=lambda *a: None, event=lambda *a: None)
        for _ in range(pairs):
            with connection(box.endpoint) as c, c.cursor() as cur:
                cur.execute("DROP DATABASE IF EXISTS sbtest")
            harness_s.append(prepare_dataset(ctx, data).seconds)
            with connection(box.endpoint) as c, c.cursor() as cur:
                cur.execute("DROP DATABASE IF EXISTS sbtest")
                cur.execute("CREATE DATABASE sbtest")
            cfg = write_config(art / "bare.cnf", box.endpoint, "sbtest")
            t0 = time.monotonic()
            # What a user types by hand: sysbench's defaults (one thread).
            proc.run([proc.which("sysbench"), f"--config-file={cfg}", "oltp_read_write",
                      f"--tables={tables}", f"--table-size={rows}", "prepare"], timeout=1800)
            bare_s.append(time.monotonic() - t0)
        shutil.rmtree(art, ignore_errors=True)
    finally:
        box.destroy()
    total = tables * rows
    h, b = statistics.median(harness_s), statistics.median(bare_s)
    res: JsonDict = {"tables": tables, "rows_per_table": rows, "pairs": pairs,
           "harness_rows_per_s": round(total / h), "bare_sysbench_rows_per_s": round(total / b),
           "ratio_harness_to_bare": round(b / h, 3),
           "harness_s": harness_s, "bare_s": [round(x, 3) for x in bare_s]}
    log(f"prepare: harness {res['harness_rows_per_s']} rows/s, bare sysbench "
        f"{res['bare_sysbench_rows_per_s']} rows/s, ratio {res['ratio_harness_to_bare']}")
    return res


def bench_ssb(scale: float, servers: list[str]) -> JsonDict:
    """SSB data: generate at ``scale`` (never from the cache), then load it per server."""
    from ..workloads import ssb, ssb_gen
    from ..workloads.ssb import SsbDataset

    out: JsonDict = {"scale": scale}
    tmp = Path(tempfile.mkdtemp(prefix="bench-ssb-"))
    old = os.environ.get("HARNESS_SSB_DATA")
    try:
        t0 = time.monotonic()
        files = ssb_gen.generate(scale, 1, tmp / "gen")
        secs = time.monotonic() - t0
        rows = sum(ssb._lines(p) for ps in files.values() for p in ps)
        out["generate"] = {"rows": rows, "seconds": round(secs, 3),
                           "rows_per_s": round(rows / secs),
                           "mb": round(sum(p.stat().st_size for ps in files.values()
                                           for p in ps) / 1048576, 1)}
        log(f"ssb: generated {rows} rows (SF {scale}) in {secs:.1f} s "
            f"({round(rows / secs)} rows/s)")
        shutil.rmtree(tmp / "gen")
        os.environ["HARNESS_SSB_DATA"] = str(tmp / "cache")  # generated once more there
        for name in servers:
            build = catalog.resolve(name, log=log)
            box = get_provider("local").provision(build)
            try:
                box.start({"innodb_buffer_pool_size": "512M", "innodb_log_file_size": "256M"})
                ctx = RunContext(endpoint=box.endpoint, artifacts=tmp, clock=time.monotonic,
                                 sample=lambda *a: None, event=lambda *a: None)
                p = ssb.prepare_dataset(ctx, SsbDataset(scale=scale))
            finally:
                box.destroy()
            own = p.own
            out[name] = {"rows": p.rows, "seconds": p.seconds, "rows_per_s": p.rows_per_s,
                         **{k: own[k] for k in ("load_s", "load_rows_per_s", "index_s")}}
            log(f"ssb: {name} loaded {p.rows} rows in {own['load_s']} s "
                f"({own['load_rows_per_s']} rows/s), indexes {own['index_s']} s")
    finally:
        if old is None:
            os.environ.pop("HARNESS_SSB_DATA", None)
        else:
            os.environ["HARNESS_SSB_DATA"] = old
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def bench_snapshot(datasets: list[SysbenchDataset], servers: list[str]) -> JsonDict:
    """A ready server holding ``datasets``: new sandbox + prepare, versus a new sandbox
    from the dataset snapshot (copy + start); plus an in-place restore (stop, copy,
    start) as done between runs."""
    out: JsonDict = {"datasets": [d.model_dump() for d in datasets]}
    opts = {"innodb_buffer_pool_size": "256M", "innodb_log_file_size": "128M"}
    saved = os.environ.get("HARNESS_SNAPSHOTS")
    tmp = tempfile.mkdtemp(prefix="bench-snap-")
    os.environ["HARNESS_SNAPSHOTS"] = tmp
    try:
        for name in servers:
            build = catalog.resolve(name, log=log)
            key = snapshot.snapshot_key(build, datasets, opts)
            art = Path(tempfile.mkdtemp(prefix="bench-"))
            t0 = time.monotonic()
            box = get_provider("local").provision(build)
            try:
                box.start(opts)
                ctx = RunContext(endpoint=box.endpoint, artifacts=art, clock=time.monotonic,
                                 sample=lambda *a: None, event=lambda *a: None)
                for d in datasets:
                    prepare_dataset(ctx, d)
                prepare_s = time.monotonic() - t0
                box.stop()
                _path, save_s = box.save_datadir(key, {"build": name})
                cache_budget.prune(keep={key})
            finally:
                box.destroy()
                shutil.rmtree(art, ignore_errors=True)
            t0 = time.monotonic()
            box = get_provider("local").provision(build, datadir_from=snapshot.find(key))
            try:
                box.start(opts)
                restore_s = time.monotonic() - t0
                t1 = time.monotonic()
                box.stop()
                box.replace_datadir(snapshot.find(key) or Path())
                box.start(opts)
                in_place_s = time.monotonic() - t1
            finally:
                box.destroy()
            out[name] = {"new_sandbox_and_prepare_s": round(prepare_s, 3),
                         "snapshot_save_s": round(save_s, 3),
                         "new_sandbox_from_snapshot_s": round(restore_s, 3),
                         "restore_in_place_s": round(in_place_s, 3),
                         "speedup": round(prepare_s / restore_s, 1)}
            log(f"snapshot {name}: prepare {prepare_s:.1f} s, from snapshot {restore_s:.1f} s "
                f"(x{prepare_s / restore_s:.1f}), in place {in_place_s:.1f} s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if saved is None:
            os.environ.pop("HARNESS_SNAPSHOTS", None)
        else:
            os.environ["HARNESS_SNAPSHOTS"] = saved
    return out


# bench_collectors' arms, in this order each round (rotated): no collectors at all, and
# two `collectors:` settings over the defaults (see _collector_rounds).
COLLECTOR_ARMS = ("none", "defaults_without_buffer_pool_index", "defaults")


@dataclass
class _CollectorRounds:
    """bench_collectors' readings: each arm's tps a round, and the default collectors'
    sample durations and lateness (their arm only)."""
    tps: dict[str, list[float]]
    durations: dict[str, list[float]]
    lateness: list[float]
    keepalive: str | None = None


def bench_collectors(pairs: int, seconds: int) -> JsonDict:
    """sysbench tps with collectors vs without, alternating on one sandbox.

    Three arms per round, in rotating order: no collectors; the default collectors but
    buffer_pool_index; all defaults (buffer_pool_index walks the pool every 10 s). Every
    arm runs with the CPUs kept awake (noise.keep_awake), or the collectors' own wake-ups
    would make the server look faster with them than without.
    """
    build = catalog.resolve("mariadb-10.11", log=log)
    box = get_provider("local").provision(build)
    try:
        box.start({"innodb_buffer_pool_size": "256M"})
        with tempfile.TemporaryDirectory(prefix="bench-coll-") as art:
            rounds = _collector_rounds(box, build, Path(art), pairs, seconds)
    finally:
        box.destroy()
    res = _collectors_summary(rounds, pairs, seconds)
    log(f"collectors: ratio {res['ratio_defaults_without_buffer_pool_index']} without "
        f"buffer_pool_index, {res['ratio_defaults_with_buffer_pool_index_10s']} with; "
        f"jitter p99 {res['jitter_p99_ms']} ms")
    return res


def _collector_rounds(box: Any, build: Any, art: Path, pairs: int,
                      seconds: int) -> _CollectorRounds:
    """The quickstart's dataset loaded, then ``pairs`` rounds of the three arms, each
    one sysbench run of ``seconds``, the arms' order rotating round by round."""
    from ..collectors import CollectorContext, PolledCollector, start_all
    from ..host.noise import keep_awake
    from ..scenario import CollectorSpec
    from ..workloads.sysbench import SysbenchOLTP, SysbenchWorkload

    settings: dict[str, dict[str, CollectorSpec]] = {
        "defaults_without_buffer_pool_index": {"buffer_pool_index": CollectorSpec(
            enabled=False)},
        "defaults": {}}
    data = SysbenchDataset(tables=4, table_size=50000)
    spec = SysbenchWorkload(test="oltp_read_only", threads=2, duration_s=seconds, warmup_s=2)
    t0 = time.monotonic()
    clock = lambda: time.monotonic() - t0  # noqa: E731
    ctx = RunContext(endpoint=box.endpoint, artifacts=art, clock=clock,
                     sample=lambda *a: None, event=lambda *a: None)
    prepare_dataset(ctx, data)
    out = _CollectorRounds({a: [] for a in COLLECTOR_ARMS}, {}, [])
    with keep_awake() as method:
        out.keepalive = method
        for i in range(pairs):
            for arm in COLLECTOR_ARMS[i % 3:] + COLLECTOR_ARMS[:i % 3]:
                cctx = CollectorContext(endpoint=box.endpoint, flavor=build.flavor,
                                        version=build.version_tuple, clock=clock,
                                        sample=lambda *a: None, event=lambda *a: None,
                                        artifacts=art, mysqld_pid=box.pid)
                stack, started = (start_all(cctx, settings[arm]) if arm in settings
                                  else (ExitStack(), []))
                with stack:
                    result = SysbenchOLTP(spec, data).run(ctx)
                out.tps[arm].append(result.figure("tps_median"))
                for c in started:
                    if isinstance(c, PolledCollector) and arm == "defaults":
                        out.durations.setdefault(c.name, []).extend(c.durations)
                        out.lateness.extend(c.lateness)
                log(f"collectors {arm}: tps {out.tps[arm][-1]:.1f}")
    return out


def _collectors_summary(rounds: _CollectorRounds, pairs: int,
                        seconds: int) -> JsonDict:
    """bench_collectors' section: each arm against the same round's no-collector run
    (drift between rounds, several % here, cancels out), and the samplers' timing."""
    tps = rounds.tps

    def q(xs: list[float], p: float) -> float:
        return float(np.quantile(np.array(xs), p)) if xs else float("nan")

    def paired(arm: str) -> list[float]:
        return [a / b for a, b in zip(tps[arm], tps["none"], strict=True)]

    return {
        "pairs": pairs, "seconds": seconds, "cpu_keepalive": rounds.keepalive,
        "tps_median": {a: round(statistics.median(v), 1) for a, v in tps.items()},
        "tps_runs": tps,
        "ratio_defaults_without_buffer_pool_index": round(
            statistics.median(paired("defaults_without_buffer_pool_index")), 4),
        "ratio_defaults_with_buffer_pool_index_10s": round(
            statistics.median(paired("defaults")), 4),
        "paired_ratios": {a: [round(r, 4) for r in paired(a)]
                          for a in ("defaults_without_buffer_pool_index", "defaults")},
        "goal": {"ratio_defaults_without_buffer_pool_index": ">= 0.99",
                 "ratio_defaults_with_buffer_pool_index_10s": ">= 0.97",
                 "jitter_p99_ms": "<= 50"},
        "collector_duration_ms": {n: {"median": round(q(d, 0.5) * 1000, 3),
                                      "p99": round(q(d, 0.99) * 1000, 3)}
                                  for n, d in sorted(rounds.durations.items())},
        "jitter_p99_ms": round(q(rounds.lateness, 0.99) * 1000, 3),
    }


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process so far."""
    return procfs.read(pid).cpu_s


def bench_client(seconds: int, threads: int = 2) -> JsonDict:
    """The load generator's own CPU per transaction, against the server's: sysbench
    oltp_read_write (its child CPU, from rusage) and the harness's TPC-C driver (this
    process's CPU while only it runs), both at ``threads`` threads on mariadb-10.11. A
    client that needs a large share of the server's CPU would be the bottleneck on a
    2-vCPU host."""
    import resource

    from ..workloads.sysbench import SysbenchOLTP, SysbenchWorkload
    from ..workloads.tpcc import Tpcc, TpccDataset, TpccWorkload
    from ..workloads.tpcc import prepare_dataset as prepare_tpcc

    res: JsonDict = {"seconds": seconds, "threads": threads}
    with bench_server({"innodb_buffer_pool_size": "512M", "innodb_log_file_size": "256M"},
                      "bench-client-") as (box, ctx):
        sb = SysbenchDataset(tables=4, table_size=50000)
        prepare_dataset(ctx, sb)
        tp = TpccDataset(kind="tpcc", warehouses=2)
        prepare_tpcc(ctx, tp)
        arms: dict[str, tuple[Workload[Any, Any], Callable[[], Any], Callable[[Any], Any]]] = {
            "sysbench_oltp_read_write": (
                SysbenchOLTP(SysbenchWorkload(test="oltp_read_write", threads=threads,
                                              duration_s=seconds), sb),
                lambda: resource.getrusage(resource.RUSAGE_CHILDREN),
                lambda s: s["transactions"]),
            "tpcc": (Tpcc(TpccWorkload(kind="tpcc", threads=threads, duration_s=seconds,
                                       check_consistency=False), tp),
                     lambda: resource.getrusage(resource.RUSAGE_SELF),
                     lambda s: sum(x["count"] for x in s["transactions"].values())),
        }
        pid = box.pid
        assert pid is not None
        for name, (workload, usage, count) in arms.items():
            u0, m0 = usage(), _cpu_s(pid)
            summary = workload.run(ctx).summary
            u1, m1 = usage(), _cpu_s(pid)
            n = count(summary)
            client = (u1.ru_utime + u1.ru_stime) - (u0.ru_utime + u0.ru_stime)
            res[name] = {"transactions": n, "per_s": round(n / seconds, 1),
                         "client_cpu_us_per_txn": round(client / n * 1e6, 1),
                         "server_cpu_us_per_txn": round((m1 - m0) / n * 1e6, 1),
                         "client_to_server_cpu": round(client / (m1 - m0), 3)}
            log(f"client {name}: {res[name]}")
    return res


def bench_store(series: int, seconds: int) -> JsonDict:
    """A synthetic 1 h run: counters (integers), gauges and float rates, like real sources."""
    tmp = Path(tempfile.mkdtemp(prefix="bench-store-"))
    try:
        url = f"sqlite:///{tmp}/bench.db"
        store = open_store(url)
        store.create_run(RunRecord(run_id="bench", run_set="bench", scenario="bench",
                                   server="none", flavor="none", version="0", variant="none",
                                   target="local", host="bench", started_at="2026-01-01"))
        rng = np.random.default_rng(7)
        kinds = rng.integers(0, 3, series)
        step = rng.integers(0, 500, series).astype(float)
        level = rng.random(series) * 1e6
        counter = np.zeros(series)
        w = store.writer("bench")
        names = [f"metric_{i}" for i in range(series)]
        t0 = time.monotonic()
        for s in range(seconds):
            t = s + 0.001 * rng.random()
            counter += rng.poisson(step)
            gauge = np.round(level + rng.normal(0, 1000, series))
            rate = np.round(rng.normal(3000, 50, series), 2)
            vals = np.where(kinds == 0, counter, np.where(kinds == 1, gauge, rate))
            for i in range(series):
                w.add(t, "bench", names[i], float(vals[i]))
        w.close()
        write_s = time.monotonic() - t0
        store.engine.dispose()
        with store.engine.connect() as c:
            c.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        size = sum(f.stat().st_size for f in tmp.iterdir())
        n = series * seconds
        t1 = time.monotonic()
        back = store.series("bench")
        read_s = time.monotonic() - t1
        assert sum(len(x.t) for x in back) == n
        res: JsonDict = {"series": series, "seconds": seconds, "samples": n,
               "write_samples_per_s": round(n / write_s), "bytes_per_sample": round(size / n, 2),
               "store_mb": round(size / 1e6, 1), "read_all_s": round(read_s, 2)}
        log(f"store: {res['write_samples_per_s']} samples/s, {res['bytes_per_sample']} B/sample, "
            f"{res['store_mb']} MB, read back in {res['read_all_s']} s")
        return res
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def bench_report(seconds: int, indexes: int = 20) -> JsonDict:
    """Render ``harness report`` for one synthetic run sampled every second: sysbench
    tps and latency, every metric the report plots, ``indexes`` buffer-pool indexes."""
    from ..report import html
    from ..report.html import INDEX_METRIC, PANELS

    tmp = Path(tempfile.mkdtemp(prefix="bench-report-"))
    try:
        store = open_store(f"sqlite:///{tmp}/bench.db")
        store.create_run(RunRecord(run_id="rep", run_set="rep", scenario="bench",
                                   server="none", flavor="none", version="0", variant="none",
                                   target="local", host="bench", started_at="2026-01-01"))
        rng = np.random.default_rng(3)
        w = store.writer("rep")
        lines = [(ln.source, ln.metric) for p in PANELS for ln in p.lines]
        for s in range(seconds):
            t = float(s)
            w.add(t, "sysbench", "tps", float(rng.normal(1000, 30)))
            w.add(t, "sysbench", "latency_ms", float(rng.gamma(4, 0.3)), {"quantile": "0.95"})
            for i, (src, metric) in enumerate(lines):
                w.add(t, src, metric, float(s * (i + 1) * 10 + rng.integers(0, 5)))
            for i in range(indexes):
                w.add(t, "buffer_pool_index", INDEX_METRIC, float(rng.integers(0, 400)),
                      {"schema": "db", "name": f"t{i % 5}", "index": f"ix{i}"})
        w.close()
        store.add_event("rep", 0.0, "phase_start", "warmup", None)
        store.add_event("rep", 30.0, "phase_end", "warmup", None)
        store.update_run("rep", status="ok", summary=RunSummary.of_workload(
            {"tps_median": 1000.0, "latency_p95_ms": 1.2, "workload_start_s": 0.0}))
        runs = store.runs(run_set="rep")
        t0 = time.monotonic()
        page = html.write(store, runs, tmp / "out", "bench")
        secs = time.monotonic() - t0
        res: JsonDict = {"run_seconds": seconds, "series": 2 + len(lines) + indexes,
               "render_s": round(secs, 2), "html_mb": round(page.stat().st_size / 1e6, 2),
               "goal_s": 10.0}
        log(f"report: a {seconds} s run with {res['series']} plotted series rendered in "
            f"{res['render_s']} s (goal <= 10 s), HTML {res['html_mb']} MB")
        return res
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _sections(quick: bool, obs: ObserverChoice | None = None,
              sbc: SwitchbackChoice | None = None) -> dict[str, Callable[[], Any]]:
    """Each section's measurement, at its quick or full size."""
    two = ["mariadb-10.11"] if quick else ["mariadb-10.11", "mysql-5.7.29"]

    def faults() -> JsonDict:
        from .faults import bench_faults
        return bench_faults(log)

    def cli() -> JsonDict:
        from .commands import bench_commands
        return bench_commands(log)

    return {**_cost_sections(quick, two),
            **_verdict_sections(quick, two, obs or ObserverChoice(),
                                sbc or SwitchbackChoice()),
            "faults": faults, "cli": cli}


@dataclass(frozen=True)
class ObserverChoice:
    """What ``--observer-windows``, ``--observer`` and ``--observer-server`` ask of the
    observer_windows section (unset: the section's own size, every observer, two
    servers), and the section as stored before, whose other rows are kept."""
    windows: int | None = None
    threads: int = 1
    observers: tuple[str, ...] = ()
    servers: tuple[str, ...] = ()
    earlier: Mapping[str, Json] | None = None


@dataclass(frozen=True)
class SwitchbackChoice:
    """The workload ``--switchback-workload`` asks of the switchback section (compare's
    default unless set), and the section as stored before: one entry a workload, the
    others kept."""
    workload: str = DEFAULT_WORKLOAD
    earlier: Mapping[str, Json] | None = None

    def merged(self, now: JsonDict) -> JsonDict:
        """The section with this workload's entry measured again, the others kept (an
        entry from before the section had workloads, one run's own record, is not)."""
        kept = {k: v for k, v in (self.earlier or {}).items()
                if isinstance(v, Mapping) and "windows" in v}
        return {**kept, self.workload: now}


def _section(results: JsonDict, name: str) -> Mapping[str, Json] | None:
    """A section as results/bench.json holds it (None: not there, or not an object)."""
    got = results.get(name)
    return got if isinstance(got, Mapping) else None


def _cost_sections(quick: bool, two: list[str]) -> dict[str, Callable[[], Any]]:
    """What the harness costs: sandboxes, datasets, snapshots, the store, collectors,
    reports, the client, the replay."""
    def snapshot_sets() -> list[SysbenchDataset]:
        if quick:
            return [SysbenchDataset(database="small", tables=1, table_size=20000)]
        return [SysbenchDataset(database="small", tables=1, table_size=120000),
                SysbenchDataset(database="big", tables=1, table_size=2400000)]

    def replay() -> JsonDict:
        from .replay import bench_replay
        return bench_replay(5 if quick else 30, 2, log)

    return {
        "sandbox": lambda: bench_sandboxes(1 if quick else 3),
        "targets": lambda: bench_targets(1 if quick else 3, two),
        "prepare": lambda: bench_prepare(4, 20000 if quick else 250000, 1 if quick else 2),
        "ssb": lambda: bench_ssb(0.05 if quick else 1.0, two),
        "snapshot": lambda: bench_snapshot(snapshot_sets(), two),
        "store": lambda: bench_store(250 if quick else 2500, 360 if quick else 3600),
        "collectors": lambda: bench_collectors(1 if quick else 8, 10 if quick else 15),
        "report": lambda: bench_report(300 if quick else 3600),
        "client": lambda: bench_client(10 if quick else 30),
        "replay": replay,
    }


def _verdict_sections(quick: bool, two: list[str], obs: ObserverChoice,
                      sbc: SwitchbackChoice) -> dict[str, Callable[[], Any]]:
    """What the verdicts can tell: power, switchback, an injected effect, placement,
    observers, what moved, warmup, state, a seeking disk."""
    def power() -> JsonDict:
        from .power import bench_verdict_power
        return (bench_verdict_power(6, 10, 3, 12, 40, 200) if quick
                else bench_verdict_power(24, 30, 5, GOAL_WINDOWS))

    def switchback() -> JsonDict:
        from .power import bench_switchback
        return sbc.merged(bench_switchback(24, 40, sbc.workload) if quick
                          else bench_switchback(GOAL_WINDOWS, workload=sbc.workload))

    def seek_disk() -> JsonDict:
        from .disk import bench_seek_disk
        return bench_seek_disk(3 if quick else 20, log=log)

    def injected() -> JsonDict:
        from .power import bench_injected
        return bench_injected(4, 10, 200) if quick else bench_injected(18, 30)

    def warmup() -> JsonDict:
        from .power import bench_warmup
        return bench_warmup(2, 10, 1) if quick else bench_warmup(3, 30, 3)

    def state() -> JsonDict:
        from .power import bench_state
        return bench_state(2, 10, 1) if quick else bench_state(3, 30, 2)

    def observers() -> JsonDict:
        from .power import bench_observers
        return (bench_observers(2, 10, ["mariadb-10.11"]) if quick
                else bench_observers(3, 15, two))

    def observer_windows() -> JsonDict:
        from .observers import DEFAULT_OBSERVERS, bench_observer_windows, merged
        now = bench_observer_windows(obs.windows or (24 if quick else 48), 4 if quick else 6,
                                     list(obs.servers) or two, threads=obs.threads,
                                     observers=obs.observers or DEFAULT_OBSERVERS)
        return merged(obs.earlier, now)

    def moved() -> JsonDict:
        from .moved import bench_moved
        return bench_moved(2 if quick else 10)

    def instructions() -> JsonDict:
        from .instructions import bench_instructions
        return bench_instructions(8, 2, 50) if quick else bench_instructions(48, 4, 400)

    def placement() -> JsonDict:
        from .power import bench_placement
        return bench_placement(2, 10, 1) if quick else bench_placement(3, 30, 3)

    return {
        "verdict_power": power,
        "switchback": switchback,
        "injected_effect": injected,
        "placement": placement,
        "observers": observers,
        "observer_windows": observer_windows,
        "moved": moved,
        "instructions": instructions,
        "warmup": warmup,
        "state": state,
        "seek_disk": seek_disk,
    }


SECTIONS = tuple(_sections(True))


def _quads(text: str) -> int:
    n = int(text)
    if n < 4 or n % 4:
        raise argparse.ArgumentTypeError(f"{text}: windows come in quads (4, 8, ...)")
    return n


def _threads(text: str) -> int:
    n = int(text)
    if not 1 <= n <= 1024:
        raise argparse.ArgumentTypeError(f"{text}: between 1 and 1024 threads")
    return n


def main(argv: list[str] | None = None) -> int:
    from .observers import OBSERVERS
    p = argparse.ArgumentParser(prog="python -m harness.bench")
    p.add_argument("--out", default="results/bench.json")
    p.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke check")
    p.add_argument("--only", action="append", choices=SECTIONS, metavar="SECTION",
                   help=f"run only these sections ({', '.join(SECTIONS)}) and update them "
                        "in an existing --out file")
    p.add_argument("--observer-windows", type=_quads, metavar="N",
                   help="observer_windows: windows a server and observer (default 48; a "
                        "multiple of 4)")
    p.add_argument("--observer-threads", type=_threads, default=1, metavar="N",
                   help="observer_windows: sysbench threads of the stream (default 1, "
                        "the noisiest case: a core idles between client and server; as "
                        "many as the host's cores keeps them busy)")
    p.add_argument("--observer", action="append", default=[], metavar="NAME",
                   choices=OBSERVERS,
                   help="observer_windows: measure only this observer (repeatable); the "
                        "stored rows of the others are kept")
    p.add_argument("--observer-server", action="append", default=[], metavar="SERVER",
                   help="observer_windows: on this catalog server (repeatable; default "
                        "mariadb-10.11 and mysql-5.7.29)")
    p.add_argument("--switchback-workload", default=DEFAULT_WORKLOAD,
                   choices=SWITCHBACK_WORKLOADS,
                   help="switchback: the workload (default oltp_read_write, the one "
                        "harness compare runs by default; one_thread: quickstart's data at "
                        "one thread of oltp_read_only, the noisiest case); the stored "
                        "entries of the others are kept")
    a = p.parse_args(argv)
    quick = a.quick
    only = a.only or list(SECTIONS)
    results: JsonDict = {}
    if a.only and Path(a.out).exists():
        results = json.loads(Path(a.out).read_text())
    results.update({"host": host_facts(), "started_at": time.strftime(
        "%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    obs = ObserverChoice(a.observer_windows, a.observer_threads, tuple(a.observer),
                         tuple(a.observer_server), _section(results, "observer_windows"))
    sbc = SwitchbackChoice(a.switchback_workload, _section(results, "switchback"))
    for name, run in _sections(quick, obs, sbc).items():
        if name in only:
            results[name] = run()
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(results, indent=2))
    log(f"wrote {a.out}")
    return 0

