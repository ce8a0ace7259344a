"""``make bench``, section ``verdict_power``: how small a change ``harness compare``
sees on this machine, measured.

Quickstart-sized runs (the quickstart's dataset, 5 s warmup, 30 s measured, CPUs kept
awake as a comparison keeps them) of oltp_read_only and oltp_read_write at 1 and 2
threads, through the harness's own runner (a fresh sandbox, the dataset restored
before each run). Per configuration and metric (median tps, p95 latency): the run-to-run
and within-run variance components, which dominates, and the smallest change a
comparison of 5, 15, 30 and 60 minutes would see with 90% power at alpha 0.05.

On the main configuration (oltp_read_only, 1 thread: the noisiest), the sequential rule of
``harness compare --budget 15m --effect 3%`` (5% for p95) is tried on the measured runs:
A/A trials (two random halves of one configuration's runs; the false-positive rate) and
trials with a known change put into the candidate's runs (tps x 0.97, p95 x 1.05: the
detection rate). The measured runs are few, so the trials share runs; the same trials on
runs drawn from the measured variance are independent and many. The main configuration
is also measured with CPUs left to sleep, which shows what keeping them awake buys.

The switchback design gets its own trial: one run of about 15 minutes with identical
sides (A/A), its own paired verdict, then trials that re-cut its seconds into windows
of other widths and offsets, each quad's orientation drawn again, with and without the
goal's change put into the B windows: here on the main configuration, and in section
``switchback`` (:func:`bench_switchback`) on compare's default workload, the one the
switchback's goal names (or another of :data:`SWITCHBACK_WORKLOADS`).
Both designs are judged here without compare's 3% noise floor (``--noise 0``): the
question is what the statistics can see.
"""
from __future__ import annotations

import contextlib
import functools
import math
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from ..analysis import power
from ..analysis import switchback as sba
from ..analysis.compare import measured_from
from ..analysis.moved import CPU, PerTransaction, measured_part
from ..paths import AB_DIR, CHECKOUT
from ..progress import Progress
from ..runner import Runner, RunOptions
from ..runner.request import AB_WORKLOADS
from ..scenario import parse_scenario
from ..stats.steady import settled_after
from ..store import Store, StoredRun, open_store

CONFIGS = (("oltp_read_only", 1), ("oltp_read_only", 2), ("oltp_read_write", 1),
           ("oltp_read_write", 2))
BUDGETS_MIN = (5, 15, 30, 60)
GOAL_BUDGET_S = 15 * 60
# The switchback run: compare's own windows, as many whole quads as fit the 800 s that
# leave the goal's 15 minutes room for the load and the warmup (13.6 minutes in all).
SWITCHBACK_WINDOW_S = sba.WINDOW_S
GOAL_WINDOWS = 800 // SWITCHBACK_WINDOW_S // 4 * 4
# Window lengths the run's seconds are re-cut at, each in compare's default time
# (sba.WINDOWS x sba.WINDOW_S seconds): which length this host's noise favours.
WIDTHS = (4, 6, 8, 10, 12)
# metric: (summary key, per-second series (metric, labels), higher is better, the
# goal's change to detect, the effect of interest given to the sequential rule)
Spec = tuple[str, tuple[str, dict[str, str]], bool, float, float]
METRICS: dict[str, Spec] = {
    "tps": ("tps_median", ("tps", {}), True, -0.03, 0.03),
    "p95_ms": ("latency_p95_ms", ("latency_ms", {"quantile": "0.95"}), False, 0.05, 0.05)}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


PLACEMENT = {"server": "1", "client": "0"}  # mysqld on CPU 1, sysbench on CPU 0


def scenario_text(test: str, threads: int, runs: int, seconds: int, awake: bool,
                  placement: dict[str, str] | None = None,
                  options: dict[str, Any] | None = None, warmup: int | str | None = None,
                  between: str | None = None, server: str | None = None,
                  mysqld: dict[str, Any] | None = None,
                  collectors: dict[str, Any] | None = None) -> str:
    data = yaml.safe_load((CHECKOUT / "scenarios/quickstart.yaml").read_text())
    data["name"] = f"power-{test.replace('_', '-')}-{threads}"
    if server is not None:
        data["servers"] = [server]
    data["mysqld"].update(mysqld or {})
    if collectors:
        data["collectors"] = collectors
    data["workload"].update(test=test, threads=threads, duration_s=seconds)
    if warmup is not None:
        data["workload"]["warmup_s"] = warmup
    if between is not None:
        data["between_runs"] = between
    data.update(repetitions=runs, cpu_keepalive=awake, wakeup_probe=False)
    if placement:
        data["cpu_placement"] = placement
    if options:
        data["workload"]["options"] = options
    return yaml.safe_dump(data, sort_keys=False)


def measure(folder: Path, test: str, threads: int, runs: int, seconds: int,
            awake: bool = True, placement: dict[str, str] | None = None,
            options: dict[str, Any] | None = None, warmup: int | str | None = None,
            between: str | None = None, **more: Any) -> dict[str, Any]:
    """Run one configuration ``runs`` times; each metric's run values and seconds, and
    each run's warmup. ``more``: :func:`scenario_text`'s server, mysqld, collectors."""
    sc = parse_scenario(Path(f"<verdict_power {test} {threads}>"), scenario_text(
        test, threads, runs, seconds, awake, placement, options, warmup, between, **more))
    log(f"verdict_power: {runs} runs of {test}, {threads} thread(s), {seconds} s each"
        + _settings(awake, placement, options, warmup, between, more))
    folder.mkdir(parents=True, exist_ok=True)
    store = open_store(f"sqlite:///{folder}/power.db")
    t0 = time.monotonic()
    runner = Runner(sc, store, RunOptions(), Progress(quiet=True))
    runner.run()
    wall = time.monotonic() - t0
    done = [r for r in store.runs(run_set=runner.run_set) if r.status == "ok"]
    out: dict[str, Any] = {"test": test, "threads": threads, "cpu_keepalive": awake,
                           "runs": len(done), "run_s": seconds,
                           "run_cost_s": round(wall / max(1, len(done)), 1)}
    for name, (key, (metric, labels), *_) in METRICS.items():
        out[name] = {"values": [r.summary.figure(key) for r in done],
                     "seconds": [_measured_seconds(store, r, metric, labels) for r in done]}
    out["warmup_s"] = [r.summary.warmup_s for r in done]
    per = PerTransaction(store, measured_part(measured_from))
    out["cpu_us_per_txn"] = [per(r, CPU) for r in done]
    store.engine.dispose()
    return out


def _settings(awake: bool, placement: dict[str, str] | None, options: dict[str, Any] | None,
              warmup: int | str | None, between: str | None, more: dict[str, Any]) -> str:
    """The settings of one configuration beside the defaults, for its log line."""
    return ("" if awake else ", CPUs left to sleep") \
        + (f", warmup_s: {warmup}" if warmup is not None else "") \
        + (f", between_runs: {between}" if between is not None else "") \
        + (f", mysqld on CPU {placement['server']}, the client on {placement['client']}"
           if placement else "") \
        + "".join(f", {k}={v}" for k, v in (options or {}).items()) \
        + "".join(f", {k}: {v}" for k, v in more.items() if v)


def _measured_seconds(store: Store, run: StoredRun, metric: str,
                      labels: dict[str, str] | None) -> list[float]:
    """A run's per-second values of a sysbench metric after its warmup."""
    s = run.summary
    start = s.start_s + (s.warmup_s or 0)
    series = [x for x in store.series(run.run_id, "sysbench", metric)
              if x.labels == labels]
    return [float(v) for v in series[0].v[series[0].t > start]] if series else []


def judged(m: dict[str, Any]) -> dict[str, Any]:
    """Per metric: median, components, advice, smallest change per budget."""
    out = {k: m[k] for k in ("test", "threads", "cpu_keepalive", "runs", "run_s",
                             "run_cost_s")}
    overhead = m["run_cost_s"] - m["run_s"]
    for name in METRICS:
        values, secs = m[name]["values"], m[name]["seconds"]
        comp = power.components(values, secs, m["run_s"])
        row: dict[str, Any] = {"median": round(statistics.median(values), 3),
                               "values": [round(v, 3) for v in values],
                               "settling_s": statistics.median(
                                   settled_after(x) for x in secs)}
        if comp is not None:
            row["components"] = comp.to_json()
            row["advice"] = comp.advice(overhead)
            best = comp.best_run_s(overhead)
            row["best_run_s"] = round(best) if best else None
            row["detectable_pct"] = {
                f"{b}m": _pct(power.detectable(comp.total, power.runs_a_side(
                    60 * b, m["run_cost_s"]))) for b in BUDGETS_MIN}
            if best:  # the same budgets with runs of the best length
                row["detectable_at_best_run_s_pct"] = {
                    f"{b}m": _pct(power.detectable(comp.at(best), power.runs_a_side(
                        60 * b, best + overhead))) for b in BUDGETS_MIN}
        out[name] = row
    return out


def _pct(x: float | None) -> float | None:
    return None if x is None else round(100 * x, 2)


def trials(m: dict[str, Any], n_split: int, n_simulated: int) -> dict[str, Any]:
    """The goal's trials on one configuration's runs, per metric."""
    rounds = power.runs_a_side(GOAL_BUDGET_S, m["run_cost_s"])
    out: dict[str, Any] = {"budget_s": GOAL_BUDGET_S, "rounds_in_budget": rounds}
    for name, (_, _, higher, change, effect) in METRICS.items():
        values = m[name]["values"]
        comp = power.components(values, m[name]["seconds"], m["run_s"])
        row = {"change": change, "effect": effect,
               "aa_split": power.split_trials(values, rounds, n_split, effect, 0.0,
                                              higher, seed=1).to_json(),
               "injected_split": power.split_trials(values, rounds, n_split, effect,
                                                    change, higher, seed=2).to_json()}
        if comp is not None:
            row["aa_simulated"] = power.simulated_trials(
                comp.total, rounds, n_simulated, effect, 0.0, higher, seed=3).to_json()
            row["injected_simulated"] = power.simulated_trials(
                comp.total, rounds, n_simulated, effect, change, higher, seed=4).to_json()
        out[name] = row
        log(f"verdict_power {name}: {_trial_line(row)}")
    return out


def _trial_line(row: dict[str, Any]) -> str:
    return f"change {row['change']:+.0%}: " + _rates(row)


def _rates(row: dict[str, Any]) -> str:
    """Each trial set of ``row``: A/A ones as how many called a difference, the others
    as how many found the change."""
    return ", ".join(f"{k} {v['called' if k.startswith('aa') else 'found']}/{v['trials']}"
                     for k, v in row.items() if isinstance(v, dict) and "trials" in v)


def ab_workload(name: str) -> dict[str, Any]:
    """The shipped workload ``harness compare --baseline/--candidate`` runs
    (scenarios/ab/), as compare runs it: CPUs kept awake."""
    data = yaml.safe_load((AB_DIR / f"{name}.yaml").read_text())
    data.update(cpu_keepalive=True, wakeup_probe=False)
    return data


def one_thread() -> dict[str, Any]:
    """verdict_power's first configuration (quickstart's data, one thread): the noisiest
    case on a 2-vCPU VM."""
    return yaml.safe_load(scenario_text(*CONFIGS[0], 1, 1, True))


# What bench-switchback can run: the goal's "default workload" (compare's), the other
# sysbench one compare ships, and verdict_power's one-thread case.
DEFAULT_WORKLOAD = AB_WORKLOADS[0]
SWITCHBACK_WORKLOADS: dict[str, Callable[[], dict[str, Any]]] = {
    **{w: functools.partial(ab_workload, w) for w in AB_WORKLOADS if w.startswith("oltp_")},
    "one_thread": one_thread}


def switchback(folder: Path, data: dict[str, Any], window_s: int, windows: int,
               n_trials: int) -> dict[str, Any]:
    """One switchback run of the scenario ``data`` with identical sides (A/A: every
    window sets nothing), its own verdict, then trials that re-cut its seconds, with
    and without the goal's change put into the B windows; the seconds are kept in the
    record."""
    from ..analysis import switchback as sba
    from ..analysis.ab_verdict import Limits
    from ..runner import switchback as sb

    test, threads = data["workload"]["test"], data["workload"]["threads"]
    data["variants"] = {"a": {}, "a_again": {}}
    sc = sb.scenario(parse_scenario(Path("<verdict_power switchback>"),
                                    yaml.safe_dump(data, sort_keys=False)),
                     ["a", "a_again"], window_s, windows)
    log(f"verdict_power: a switchback run of {windows} windows of {window_s} s, A/A, "
        f"{data['name']}: {test}, {threads} thread(s)")
    folder.mkdir(parents=True, exist_ok=True)
    store = open_store(f"sqlite:///{folder}/power.db")
    t0 = time.monotonic()
    runner = Runner(sc, store, RunOptions(variants=[sb.VARIANT]), Progress(quiet=True))
    runner.run()
    wall = time.monotonic() - t0
    (run,) = store.runs(run_set=runner.run_set)
    real = sba.compare_run(store, run, "a", "a_again", Limits(noise=0.0))
    out: dict[str, Any] = {"scenario": data["name"], "test": test, "threads": threads,
                           "window_s": window_s, "windows": windows, "machine_s": round(wall),
                           "status": run.status, "design": real.design,
                           "aa_verdicts": {m.metric: m.verdict for m in real.metrics},
                           "aa_judged": {m.metric: {"ratio": m.ratio, "ci95": m.ci95,
                                                    "p_value": m.p_value}
                                         for m in real.metrics}}
    start = min((e.t for e in store.events(run.run_id) if e.kind == "config"),
                default=0.0)
    for name, t, v, higher, change in _recut(store, run, start):
        row: dict[str, Any] = {"change": change, **{
            key: power.switchback_trials(t, v, window_s, n_trials, shift, higher,
                                         seed=seed).to_json()
            for key, shift, seed in (("aa", 0.0, 5), ("injected", change, 6))},
            "reach": _reach(t, v, window_s, n_trials, higher),
            "widths": _widths(t, v, n_trials, higher, change),
            # the run's seconds, to judge them again another way
            "seconds": {"t": [round(float(x), 3) for x in t],
                        "v": [round(float(x), 4) for x in v]}}
        out[name] = row
        log(f"verdict_power switchback {name}: change {change:+.0%}: A/A called "
            f"{row['aa']['called']}/{n_trials}, injected found "
            f"{row['injected']['found']}/{n_trials} ({row['aa']['rounds']} pairs at most)")
        log(f"verdict_power switchback {name}: reach: " + ", ".join(
            f"{r['change']:+.1%} found {r['found']}/{n_trials}" for r in row["reach"]))
        log(f"verdict_power switchback {name}: {_widths_line(row['widths'])}")
    store.engine.dispose()
    return out


# The change in mysqld's CPU a transaction a comparison should find: 1% (Callaghan
# reads releases by it; a tps bench on a host with idle cores cannot see that much).
CPU_CHANGE = 0.01


def _recut(store: Any, run: Any, start: float
           ) -> Iterator[tuple[str, Any, Any, bool, float]]:
    """The seconds each re-cut judges after ``start``: (metric, times, values, higher is
    better, the change to find) for tps, p95 and mysqld's CPU a transaction (each second's
    CPU over its transactions, where the run sampled mysqld's CPU)."""
    from .. import workloads

    if run.status != "ok":
        return
    tps = workloads.throughput(store, run.run_id)
    for name, series in (("tps", tps), ("p95_ms", workloads.latency(store, run.run_id))):
        if series:
            keep = series[0].t > start
            _, _, higher, change, _ = METRICS[name]
            yield name, series[0].t[keep], series[0].v[keep], higher, change
    cpu = store.series(run.run_id, source="mysqld_process",
                       metric="harness_mysqld_cpu_seconds_total")
    if tps and cpu:
        t, v = tps[0].t, tps[0].v
        used: np.ndarray = np.interp(t, cpu[0].t, cpu[0].v) - \
            np.interp(t - 1.0, cpu[0].t, cpu[0].v)
        keep = (t > start) & (v > 0) & (t - 1.0 >= cpu[0].t[0])
        yield "cpu_us_per_tx", t[keep], used[keep] * 1e6 / v[keep], False, CPU_CHANGE


# Changes smaller than the goal's, put into the switchback's B windows: how small a
# change its GOAL_WINDOWS windows (13 minutes) still find (the aim: "1% in 15 minutes").
REACH = (0.01, 0.015, 0.02)


def _reach(t: Any, v: Any, window_s: int, n_trials: int, higher: bool
           ) -> list[dict[str, Any]]:
    """The re-cut trials with each change of REACH for the worse (tps down, p95 up)."""
    sign = -1.0 if higher else 1.0
    return [{"change": sign * c, **power.switchback_trials(
        t, v, window_s, n_trials, sign * c, higher, seed=7 + i).to_json()}
        for i, c in enumerate(REACH)]


def _widths(t: Any, v: Any, n_trials: int, higher: bool, change: float
            ) -> list[dict[str, Any]]:
    """The goal's change and A/A, re-cut at each of WIDTHS in compare's default time:
    as many whole quads of that length as fit it."""
    budget = sba.WINDOWS * sba.WINDOW_S
    out = []
    for i, width in enumerate(WIDTHS):
        n = budget // width // 4 * 4
        out.append({"window_s": width, "windows": n, **{
            key: power.switchback_trials(t, v, width, n_trials, shift, higher,
                                         seed=20 + 2 * i + k, windows=n).to_json()
            for k, (key, shift) in enumerate((("aa", 0.0), ("injected", change)))}})
    return out


def _widths_line(rows: list[dict[str, Any]]) -> str:
    return f"in {sba.WINDOWS * sba.WINDOW_S} s: " + ", ".join(
        f"{w['windows']} x {w['window_s']} s found {w['injected']['found']} (A/A "
        f"{w['aa']['called']})" for w in rows)


def bench_verdict_power(runs: int, seconds: int, other_runs: int, windows: int,
                        n_split: int = 200, n_simulated: int = 2000) -> dict[str, Any]:
    out: dict[str, Any] = {"configs": [], "goal_budget_s": GOAL_BUDGET_S}
    with scratch("bench-power-") as folder:
        out["switchback"] = switchback(folder / "sb", one_thread(), SWITCHBACK_WINDOW_S,
                                       windows, n_split)
        for i, (test, threads) in enumerate(CONFIGS):
            m = measure(folder / f"{i}", test, threads, runs if i == 0 else other_runs,
                        seconds)
            row = judged(m)
            out["configs"].append(row)
            log(f"verdict_power {test} {threads} thread(s): {_config_line(row)}")
            if i == 0:
                out["main"] = {**trials(m, n_split, n_simulated), "test": test,
                               "threads": threads}
        asleep = judged(measure(folder / "asleep", *CONFIGS[0], other_runs, seconds,
                                awake=False))
        out["main_cpus_asleep"] = asleep
        log(f"verdict_power {CONFIGS[0][0]} 1 thread, CPUs asleep: {_config_line(asleep)}")
    return out


def bench_switchback(windows: int, n_trials: int = 200,
                     workload: str = DEFAULT_WORKLOAD) -> dict[str, Any]:
    """One A/A switchback run of ``windows`` windows on ``workload`` (one of
    SWITCHBACK_WORKLOADS: by default compare's own, the one The switchback's goal names), its
    verdict, and the trials that re-cut it."""
    with scratch("bench-switchback-") as folder:
        return switchback(folder, SWITCHBACK_WORKLOADS[workload](), SWITCHBACK_WINDOW_S,
                          windows, n_trials)


def bench_placement(runs: int, seconds: int, rounds: int) -> dict[str, Any]:
    """Does placing mysqld and the client on CPUs of their own cut the noise? The
    quickstart configuration, ``rounds`` times ``runs`` runs unplaced then placed
    (alternating, so the machine's drift hits both), judged like verdict_power's."""
    sides = alternating("bench-placement-", rounds, runs, seconds,
                        {"unplaced": {}, "placed": {"placement": PLACEMENT}})
    out: dict[str, Any] = {"test": CONFIGS[0][0], "threads": CONFIGS[0][1],
                           "placement": PLACEMENT}
    for side, m in sides.items():
        out[side] = judged(m)
        log(f"placement, {side}: {_config_line(out[side])}")
    return out


def bench_state(runs: int, seconds: int, rounds: int) -> dict[str, Any]:
    """Does the state a run starts from move its level? The quickstart configuration
    with each ``between_runs``: the dataset restored and the server restarted (fresh
    files, a cold pool), the server restarted on the last run's files, and the server
    kept running (a warm pool); ``rounds`` times ``runs`` runs of each, in turn."""
    sides = alternating("bench-state-", rounds, runs, seconds,
                        {s: {"between": s} for s in ("restore", "restart", "warmup")})
    out: dict[str, Any] = {"test": CONFIGS[0][0], "threads": CONFIGS[0][1]}
    for side, m in sides.items():
        out[side] = judged(m)
        log(f"between_runs {side}: {_config_line(out[side])}")
    return out


def alternating(prefix: str, rounds: int, runs: int, seconds: int,
                sides: dict[str, dict[str, Any]], balanced: bool = False
                ) -> dict[str, dict[str, Any]]:
    """The main configuration, ``rounds`` times ``runs`` runs of each side in turn (so
    the machine's drift hits every side; ``balanced``: every other round in reverse,
    as compare orders its rounds), each side's runs as one, in time order; ``sides``
    maps a side's name to :func:`measure`'s keyword arguments. The runs' stores and
    sandboxes live in a temporary folder named from ``prefix``, removed after."""
    test, threads = CONFIGS[0]
    got: dict[str, list[dict[str, Any]]] = {name: [] for name in sides}
    with scratch(prefix) as folder:
        for k in range(rounds):
            turn = list(sides.items())
            for name, kw in (turn[::-1] if balanced and k % 2 else turn):
                got[name].append(measure(folder / f"{name}-{k}", test, threads, runs,
                                         seconds, **kw))
    return {name: _merged(ms) for name, ms in got.items()}


@contextlib.contextmanager
def scratch(prefix: str) -> Iterator[Path]:
    """A temporary folder for a bench's stores and sandboxes, removed after."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def bench_warmup(runs: int, seconds: int, rounds: int) -> dict[str, Any]:
    """Does a warmup chosen from the data (``warmup_s: auto``) cut the noise against
    the quickstart's fixed 5 s? ``rounds`` times ``runs`` runs of each, alternating,
    judged like verdict_power's, with the warmups auto chose."""
    sides = alternating("bench-warmup-", rounds, runs, seconds,
                        {"fixed_5s": {"warmup": 5}, "auto": {"warmup": "auto"}})
    out: dict[str, Any] = {"test": CONFIGS[0][0], "threads": CONFIGS[0][1]}
    for side, m in sides.items():
        out[side] = {**judged(m), "warmup_s": m["warmup_s"]}
        log(f"warmup, {side}: {_config_line(out[side])}; warmups {m['warmup_s']}")
    return out


def _config_line(row: dict[str, Any]) -> str:
    bits = []
    for name in METRICS:
        c = row[name].get("components")
        if c:
            bits.append(f"{name} {row[name]['median']} sd {c['sd_total_pct']}% (between "
                        f"{c['sd_between_pct']}%, within {c['sd_within_pct']}%), 15 min "
                        f"sees {row[name]['detectable_pct']['15m']}%")
    return f"{row['runs']} runs, {row['run_cost_s']} s each; " + "; ".join(bits)


CHANGE = {"point_selects": 11}  # sysbench's default is 10


def bench_injected(rounds: int, seconds: int, n_trials: int = 2000) -> dict[str, Any]:
    """A real change of known size, and whether ``harness compare --budget 15m --effect
    3%`` sees it: one more point select a transaction (sysbench's ``point_selects`` 10
    -> 11), the same work added to every transaction whatever the host is doing.
    ``rounds`` rounds of one run without and one with it, in compare's balanced order
    (A B, B A, ...), so each round is a pair of runs back to back. Measured: the change
    (its pairs' ratio and interval, and how far single pairs scatter), how the host
    drifts from run to run (the runs' levels in time order: their spread and lag-1
    autocorrelation), and the sequential rule on these runs' stretches of the budget's
    rounds, then on runs simulated with the measured spread and drift, in each order,
    paired and not (:func:`..analysis.power.drift_trials`)."""
    test, threads = CONFIGS[0]
    sides = alternating("bench-injected-", rounds, 1, seconds, {"without": {}, "with": {
        "options": CHANGE}}, balanced=True)
    a, b = sides["without"], sides["with"]
    out: dict[str, Any] = {"test": test, "threads": threads, "change": CHANGE,
                           "without": judged(a), "with": judged(b)}
    budget = power.runs_a_side(GOAL_BUDGET_S, (a["run_cost_s"] + b["run_cost_s"]) / 2)
    out["trials"] = {"budget_s": GOAL_BUDGET_S, "rounds_in_budget": budget}
    for name, (_, _, higher, change, effect) in METRICS.items():
        row = _injected_trials(a[name]["values"], b[name]["values"], budget, higher,
                               effect, change, n_trials)
        out["trials"][name] = row
        log(f"injected {name}: {_injected_line(row)}")
    return out


# What watching the server costs it: each side a way of watching (on top of the default
# collectors), against the side it adds to.
OBSERVERS: dict[str, tuple[dict[str, Any], str | None]] = {
    # a side the others are judged against, judged against nothing itself
    "performance_schema_off": ({"mysqld": {"performance_schema": "OFF"}}, ""),
    "performance_schema_on": ({"mysqld": {"performance_schema": "ON"}},
                              "performance_schema_off"),
    # its start options: performance_schema on, every wait instrument enabled and timed
    "wait_events": ({"collectors": {"wait_events": {"enabled": True}}},
                    "performance_schema_on"),
    "cpu_profile_99hz": ({"collectors": {"cpu_profile": {"enabled": True}}}, None),
}
# The observers' goals: perf at 99 Hz costs at most 2% of tps (against the build's default
# performance_schema), the wait-event collector at most 1% on top of performance_schema.
OBSERVER_GOALS = {"cpu_profile_99hz": 0.98, "wait_events": 0.99}


def bench_observers(rounds: int, seconds: int, servers: Sequence[str]) -> dict[str, Any]:
    """What each observer costs in tps, per server: the quickstart workload with
    performance_schema off, on (its default instruments), with the wait_events
    collector (every wait instrument timed) and with perf at 99 Hz (cpu_profile),
    ``rounds`` rounds of one run of each in compare's balanced order; each observer's
    paired ratio (and its interval) against the side it adds to, of tps and of mysqld's
    CPU per transaction: performance_schema on against off, wait_events against
    performance_schema on, perf against the build's default (whichever of off or on it
    is)."""
    out: dict[str, Any] = {"test": CONFIGS[0][0], "threads": CONFIGS[0][1],
                           "seconds": seconds, "rounds": rounds, "goals": OBSERVER_GOALS}
    for server in servers:
        sides = alternating(f"bench-observers-{server}-", rounds, 1, seconds, {
            name: {**kw, "server": server} for name, (kw, _) in OBSERVERS.items()},
            balanced=True)
        out[server] = _observer_costs(server, sides)
    return out


def _observer_costs(server: str, sides: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Each observer's paired tps ratio against the side it adds to, and its CPU per
    transaction's."""
    from ..server import catalog
    default = "performance_schema_on" if _ps_on_by_default(catalog.resolve(server)) \
        else "performance_schema_off"
    row: dict[str, Any] = {"performance_schema_by_default": default.endswith("_on"),
                           "tps_median": {s: round(statistics.median(m["tps"]["values"]), 1)
                                          for s, m in sides.items()}}
    for name, (_, against) in OBSERVERS.items():
        base = default if against is None else against
        if name == base or not base:  # the build's default, or a baseline only
            continue
        a, b = sides[base]["tps"]["values"], sides[name]["tps"]["values"]
        if len(a) != len(b) or len(a) < 2:
            row[name] = {"against": base, "note": "a run failed: no paired ratio"}
            continue
        ratio, lo, hi = power.log_ratio_ci(a, b, paired=True)
        row[name] = {"against": base, "ratio": round(ratio, 4),
                     "ci95": [round(lo, 4), round(hi, 4)],
                     "pairs": [round(y / x, 4) for x, y in zip(a, b, strict=True)],
                     **_cpu_cost(sides[base], sides[name])}
        row[name].update(_goals_met(name, row[name]))
        log(f"observers, {server}: {name} against {base}: tps x{ratio:.4f} "
            f"[{lo:.4f}, {hi:.4f}]" + (f" (goal >= {g})" if (g := OBSERVER_GOALS.get(name))
                                       else "")
            + _cpu_line(row[name]))
    return row


def _goals_met(name: str, cost: dict[str, Any]) -> dict[str, bool]:
    """Whether an observer's tps ratio meets its goal, and its CPU ratio the same goal
    as CPU (at most 1/goal of the side it adds to)."""
    goal = OBSERVER_GOALS.get(name)
    if goal is None:
        return {}
    out = {"goal_met": cost["ratio"] >= goal}
    if "cpu_ratio" in cost:
        out["cpu_goal_met"] = cost["cpu_ratio"] <= 1 / goal
    return out


def _cpu_cost(base: dict[str, Any], side: dict[str, Any]) -> dict[str, Any]:
    """mysqld's CPU per transaction of ``side`` over ``base``'s, paired by round: the
    cost an observer adds where one-thread tps swings with how fast an idle core wakes
    (CPU per transaction does not)."""
    a, b = base.get("cpu_us_per_txn") or [], side.get("cpu_us_per_txn") or []
    if len(a) != len(b) or len(a) < 2 or None in a or None in b:
        return {}
    ratio, lo, hi = power.log_ratio_ci(a, b, paired=True)
    return {"cpu_ratio": round(ratio, 4), "cpu_ci95": [round(lo, 4), round(hi, 4)],
            "cpu_us_per_txn": [round(statistics.median(a), 1), round(statistics.median(b), 1)]}


def _cpu_line(row: dict[str, Any]) -> str:
    if "cpu_ratio" not in row:
        return "; no CPU per transaction"
    lo, hi = row["cpu_ci95"]
    return f"; mysqld CPU per transaction x{row['cpu_ratio']:.4f} [{lo:.4f}, {hi:.4f}]"


def _ps_on_by_default(build: Any) -> bool:
    """performance_schema's default on a build: on from MySQL 5.6.6, off on MariaDB
    10.x and on MySQL 5.5 (the build's own --help --verbose says it)."""
    from ..server.mycnf import option_defaults
    said = (option_defaults(build).get("performance_schema") or "").upper()
    return said in ("ON", "TRUE", "1")


def _merged(ms: list[dict[str, Any]]) -> dict[str, Any]:
    """Several measure() results of one configuration as one."""
    return {**ms[0], "runs": sum(m["runs"] for m in ms),
            "run_cost_s": round(statistics.mean(m["run_cost_s"] for m in ms), 1),
            "warmup_s": [x for m in ms for x in m["warmup_s"]],
            "cpu_us_per_txn": [x for m in ms for x in m.get("cpu_us_per_txn", [])],
            **{n: {k: [x for m in ms for x in m[n][k]] for k in ("values", "seconds")}
               for n in METRICS}}


def _injected_trials(a: list[float], b: list[float], budget: int, higher: bool,
                     effect: float, goal: float, n_trials: int) -> dict[str, Any]:
    """One metric, ``a[i]`` and ``b[i]`` the runs of round i: the change measured, the
    drift, and the sequential rule's rates on the real runs and on simulated ones."""
    ratio, lo, hi = power.log_ratio_ci(a, b, paired=True)
    pairs = [y / x for x, y in zip(a, b, strict=True)]
    levels = _levels(a, b)
    sd, phi = statistics.stdev(levels), power.lag1(levels)
    row: dict[str, Any] = {
        "ratio": round(ratio, 4), "ci95": [round(lo, 4), round(hi, 4)], "effect": effect,
        "pairs": [round(x, 4) for x in pairs], "pair_sd_pct": round(
            100 * statistics.stdev(math.log(x) for x in pairs), 2),
        "run_sd_pct": round(100 * sd, 2), "lag1": round(phi, 3),
        "real": {design: _stretches(a, b, budget, effect, higher, ratio, paired)
                 for design, paired in (("paired", True), ("welch", False))},
        "simulated": {}}
    for order, key in power.ORDERS.items():
        for design, paired in (("paired", True), ("welch", False)):
            row["simulated"][f"{order}, {design}"] = {
                f"{what}": power.drift_trials(sd, phi, budget, n_trials, effect, shift, key,
                                              paired, higher, seed=seed).to_json()
                for what, shift, seed in (("aa", 0.0, 21), ("measured", ratio - 1, 22),
                                          ("goal", goal, 23))}
    return row


def _levels(a: list[float], b: list[float]) -> list[float]:
    """The runs' log levels in time order (rounds in balanced order), each side about
    its own mean: what the host did from run to run, the change left out."""
    la, lb = [math.log(x) for x in a], [math.log(y) for y in b]
    ma, mb = statistics.fmean(la), statistics.fmean(lb)
    out: list[float] = []
    for i, (x, y) in enumerate(zip(la, lb, strict=True)):
        pair = (x - ma, y - mb)
        out += pair if i % 2 == 0 else pair[::-1]
    return out


def _stretches(a: list[float], b: list[float], budget: int, effect: float, higher: bool,
               ratio: float, paired: bool) -> dict[str, Any]:
    """The sequential rule on each stretch of ``budget`` consecutive rounds of the real
    runs: on them as they are (the change), and with the measured change taken out of
    the candidate's (A/A). Stretches overlap: few, and not independent."""
    n = len(a) - budget + 1
    expected = "better" if (ratio > 1) == higher else "worse"
    real, aa = power.Rates(max(0, n), budget), power.Rates(max(0, n), budget)
    for o in range(max(0, n)):
        sa, sb = a[o:o + budget], b[o:o + budget]
        real.add(power.sequential_verdict(sa, sb, effect, higher, paired=paired), expected)
        aa.add(power.sequential_verdict(sa, [y / ratio for y in sb], effect, higher,
                                        paired=paired), None)
    return {"change": real.to_json(), "aa": aa.to_json()}


def _injected_line(row: dict[str, Any]) -> str:
    sim = "; ".join(f"{k}: A/A {v['aa']['called']}, measured {v['measured']['found']}, "
                    f"goal {v['goal']['found']} of {v['aa']['trials']}"
                    for k, v in row["simulated"].items())
    real = "; ".join(f"{k}: {v['change']['found']} of {v['change']['trials']} (A/A "
                     f"{v['aa']['called']})" for k, v in row["real"].items())
    return (f"x{row['ratio']} [{row['ci95'][0]}, {row['ci95'][1]}] measured (pairs sd "
            f"{row['pair_sd_pct']}%, runs sd {row['run_sd_pct']}%, lag-1 {row['lag1']}); "
            f"real stretches {real}; simulated {sim}")
