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
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from ..analysis import power
from ..analysis import switchback as sba
from ..analysis.compare import measured_from
from ..analysis.moved import CPU, PerTransaction, measured_part
from ..analysis.power import Components, Rates
from ..jsonvalue import JsonDict
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
Options = dict[str, str | int]  # sysbench's or mysqld's, as a scenario writes them


@dataclass(frozen=True)
class Setting:
    """How a configuration differs from the quickstart's: the CPUs kept awake or not,
    placement, sysbench options, warmup, the state between runs, the server, mysqld's
    options and collectors."""

    awake: bool = True
    placement: dict[str, str] | None = None
    options: Options | None = None
    warmup: int | str | None = None
    between: str | None = None
    server: str | None = None
    mysqld: Options | None = None
    collectors: dict[str, dict[str, bool]] | None = None

    def said(self) -> str:
        """The settings beside the defaults, for a log line."""
        p = self.placement
        return ("" if self.awake else ", CPUs left to sleep") \
            + (f", warmup_s: {self.warmup}" if self.warmup is not None else "") \
            + (f", between_runs: {self.between}" if self.between is not None else "") \
            + (f", mysqld on CPU {p['server']}, the client on {p['client']}" if p else "") \
            + "".join(f", {k}={v}" for k, v in (self.options or {}).items()) \
            + "".join(f", {k}: {v}" for k, v in (("server", self.server),
                                                  ("mysqld", self.mysqld),
                                                  ("collectors", self.collectors)) if v)


def scenario_text(test: str, threads: int, runs: int, seconds: int,
                  setting: Setting = Setting()) -> str:
    data = yaml.safe_load((CHECKOUT / "scenarios/quickstart.yaml").read_text())
    data["name"] = f"power-{test.replace('_', '-')}-{threads}"
    if setting.server is not None:
        data["servers"] = [setting.server]
    data["mysqld"].update(setting.mysqld or {})
    if setting.collectors:
        data["collectors"] = setting.collectors
    data["workload"].update(test=test, threads=threads, duration_s=seconds)
    if setting.warmup is not None:
        data["workload"]["warmup_s"] = setting.warmup
    if setting.between is not None:
        data["between_runs"] = setting.between
    data.update(repetitions=runs, cpu_keepalive=setting.awake, wakeup_probe=False)
    if setting.placement:
        data["cpu_placement"] = setting.placement
    if setting.options:
        data["workload"]["options"] = setting.options
    return yaml.safe_dump(data, sort_keys=False)


@dataclass(frozen=True)
class Runs:
    """One metric of a configuration's runs: each run's value, and its seconds'."""

    values: list[float]
    seconds: list[list[float]]


@dataclass(frozen=True)
class Measurement:
    """A configuration's runs: each metric's values and seconds, each run's warmup and
    mysqld's CPU per transaction, and what a run cost in machine seconds."""

    test: str
    threads: int
    cpu_keepalive: bool
    runs: int
    run_s: int
    run_cost_s: float
    metrics: dict[str, Runs]
    warmup_s: list[float | None] = field(default_factory=list)
    cpu_us_per_txn: list[float | None] = field(default_factory=list)

    def values(self, metric: str) -> list[float]:
        return self.metrics[metric].values

    @classmethod
    def merged(cls, ms: list[Measurement]) -> Measurement:
        """Several measurements of one configuration as one."""
        return replace(
            ms[0], runs=sum(m.runs for m in ms),
            run_cost_s=round(statistics.mean(m.run_cost_s for m in ms), 1),
            warmup_s=[x for m in ms for x in m.warmup_s],
            cpu_us_per_txn=[x for m in ms for x in m.cpu_us_per_txn],
            metrics={n: Runs([x for m in ms for x in m.metrics[n].values],
                             [x for m in ms for x in m.metrics[n].seconds])
                     for n in METRICS})


def measure(folder: Path, test: str, threads: int, runs: int, seconds: int,
            setting: Setting = Setting()) -> Measurement:
    """Run one configuration ``runs`` times; each metric's run values and seconds, and
    each run's warmup."""
    sc = parse_scenario(Path(f"<verdict_power {test} {threads}>"),
                        scenario_text(test, threads, runs, seconds, setting))
    log(f"verdict_power: {runs} runs of {test}, {threads} thread(s), {seconds} s each"
        + setting.said())
    folder.mkdir(parents=True, exist_ok=True)
    store = open_store(f"sqlite:///{folder}/power.db")
    t0 = time.monotonic()
    runner = Runner(sc, store, RunOptions(), Progress(quiet=True))
    runner.run()
    wall = time.monotonic() - t0
    done = [r for r in store.runs(run_set=runner.run_set) if r.status == "ok"]
    per = PerTransaction(store, measured_part(measured_from))
    out = Measurement(
        test, threads, setting.awake, len(done), seconds,
        round(wall / max(1, len(done)), 1),
        {name: Runs([_figure(r, key) for r in done],
                    [_measured_seconds(store, r, metric, labels) for r in done])
         for name, (key, (metric, labels), *_) in METRICS.items()},
        [r.summary.warmup_s for r in done], [per(r, CPU) for r in done])
    store.engine.dispose()
    return out


def _figure(run: StoredRun, key: str) -> float:
    """A run's figure ``key``; a run stored ok without it is not one to judge."""
    v = run.summary.figure(key)
    if v is None:
        raise RuntimeError(f"verdict_power: run {run.run_id} stored ok without {key}")
    return v


def _measured_seconds(store: Store, run: StoredRun, metric: str,
                      labels: dict[str, str] | None) -> list[float]:
    """A run's per-second values of a sysbench metric after its warmup."""
    s = run.summary
    start = s.start_s + (s.warmup_s or 0)
    series = [x for x in store.series(run.run_id, "sysbench", metric)
              if x.labels == labels]
    return [float(v) for v in series[0].v[series[0].t > start]] if series else []


@dataclass(frozen=True)
class JudgedMetric:
    """One metric of a configuration: its median, the variance's components, the advice
    they give, and the smallest change each budget's comparison sees."""

    median: float
    values: list[float]
    settling_s: float
    components: Components | None
    overhead_s: float
    run_cost_s: float

    def detectable_pct(self, run_s: float | None = None) -> dict[str, float | None]:
        """Per budget, the smallest change in % seen with 90% power, with runs as
        measured or (``run_s``) of that length."""
        c = self.components
        assert c is not None
        variance = c.total if run_s is None else c.at(run_s)
        cost = self.run_cost_s if run_s is None else run_s + self.overhead_s
        return {f"{b}m": _pct(power.detectable(variance, power.runs_a_side(60 * b, cost)))
                for b in BUDGETS_MIN}

    def to_json(self) -> JsonDict:
        out: JsonDict = {"median": self.median, "values": self.values,
                         "settling_s": self.settling_s}
        c = self.components
        if c is not None:
            best = c.best_run_s(self.overhead_s)
            out.update(components=c.to_json(), advice=c.advice(self.overhead_s),
                       best_run_s=round(best) if best else None,
                       detectable_pct=self.detectable_pct())
            if best:  # the same budgets with runs of the best length
                out["detectable_at_best_run_s_pct"] = self.detectable_pct(best)
        return out

    def line(self, name: str) -> str:
        c = self.components
        if c is None:
            return ""
        sd = c.to_json()
        return (f"{name} {self.median} sd {sd['sd_total_pct']}% (between "
                f"{sd['sd_between_pct']}%, within {sd['sd_within_pct']}%), 15 min sees "
                f"{self.detectable_pct()['15m']}%")


@dataclass(frozen=True)
class Judged:
    """A configuration judged: each metric's :class:`JudgedMetric`."""

    m: Measurement
    metrics: dict[str, JudgedMetric]

    def to_json(self) -> JsonDict:
        m = self.m
        return {"test": m.test, "threads": m.threads, "cpu_keepalive": m.cpu_keepalive,
                "runs": m.runs, "run_s": m.run_s, "run_cost_s": m.run_cost_s,
                **{n: x.to_json() for n, x in self.metrics.items()}}

    def line(self) -> str:
        bits = [x.line(n) for n, x in self.metrics.items()]
        return f"{self.m.runs} runs, {self.m.run_cost_s} s each; " + \
            "; ".join(b for b in bits if b)


def judged(m: Measurement) -> Judged:
    """Per metric: median, components, advice, smallest change per budget."""
    def one(r: Runs) -> JudgedMetric:
        return JudgedMetric(round(statistics.median(r.values), 3),
                            [round(v, 3) for v in r.values],
                            statistics.median(settled_after(x) for x in r.seconds),
                            power.components(r.values, r.seconds, m.run_s),
                            m.run_cost_s - m.run_s, m.run_cost_s)
    return Judged(m, {name: one(m.metrics[name]) for name in METRICS})


def _pct(x: float | None) -> float | None:
    return None if x is None else round(100 * x, 2)


@dataclass(frozen=True)
class Trials:
    """Sets of trials of one metric with the change ``change`` (A/A ones named aa...)."""

    change: float
    effect: float
    sets: dict[str, Rates]

    def to_json(self) -> JsonDict:
        return {"change": self.change, "effect": self.effect,
                **{k: r.to_json() for k, r in self.sets.items()}}

    def line(self) -> str:
        """A/A sets as how many called a difference, the others as how many found the
        change."""
        return f"change {self.change:+.0%}: " + ", ".join(
            f"{k} {r.called if k.startswith('aa') else r.found}/{r.trials}"
            for k, r in self.sets.items())


def trials(m: Measurement, n_split: int, n_simulated: int) -> JsonDict:
    """The goal's trials on one configuration's runs, per metric."""
    rounds = power.runs_a_side(GOAL_BUDGET_S, m.run_cost_s)
    out: JsonDict = {"budget_s": GOAL_BUDGET_S, "rounds_in_budget": rounds}
    for name, (_, _, higher, change, effect) in METRICS.items():
        values = m.values(name)
        comp = power.components(values, m.metrics[name].seconds, m.run_s)
        sets = {"aa_split": power.split_trials(values, rounds, n_split, effect, 0.0,
                                               higher, seed=1),
                "injected_split": power.split_trials(values, rounds, n_split, effect,
                                                     change, higher, seed=2)}
        if comp is not None:
            sets["aa_simulated"] = power.simulated_trials(
                comp.total, rounds, n_simulated, effect, 0.0, higher, seed=3)
            sets["injected_simulated"] = power.simulated_trials(
                comp.total, rounds, n_simulated, effect, change, higher, seed=4)
        row = Trials(change, effect, sets)
        out[name] = row.to_json()
        log(f"verdict_power {name}: {row.line()}")
    return out


def ab_workload(name: str) -> dict[str, Any]:
    """The shipped workload ``harness compare --baseline/--candidate`` runs
    (scenarios/ab/), as compare runs it: CPUs kept awake."""
    data = yaml.safe_load((AB_DIR / f"{name}.yaml").read_text())
    data.update(cpu_keepalive=True, wakeup_probe=False)
    return data


def one_thread() -> dict[str, Any]:
    """verdict_power's first configuration (quickstart's data, one thread): the noisiest
    case on a 2-vCPU VM."""
    return yaml.safe_load(scenario_text(*CONFIGS[0], 1, 1))


# What bench-switchback can run: the goal's "default workload" (compare's), the other
# sysbench one compare ships, and verdict_power's one-thread case.
DEFAULT_WORKLOAD = AB_WORKLOADS[0]
SWITCHBACK_WORKLOADS: dict[str, Callable[[], dict[str, Any]]] = {
    **{w: functools.partial(ab_workload, w) for w in AB_WORKLOADS if w.startswith("oltp_")},
    "one_thread": one_thread}


def switchback(folder: Path, data: dict[str, Any], window_s: int, windows: int,
               n_trials: int) -> JsonDict:
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
    out: JsonDict = {"scenario": data["name"], "test": test, "threads": threads,
                     "window_s": window_s, "windows": windows, "machine_s": round(wall),
                     "status": run.status, "design": real.design,
                     "aa_verdicts": {m.metric: m.verdict for m in real.metrics},
                     "aa_judged": {m.metric: {"ratio": m.ratio, "ci95": m.ci95,
                                              "p_value": m.p_value}
                                   for m in real.metrics}}
    start = min((e.t for e in store.events(run.run_id) if e.kind == "config"),
                default=0.0)
    for name, t, v, higher, change in _recut(store, run, start):
        aa, injected = (power.switchback_trials(t, v, window_s, n_trials, shift, higher,
                                                seed=seed)
                        for shift, seed in ((0.0, 5), (change, 6)))
        reach = _reach(t, v, window_s, n_trials, higher)
        widths = _widths(t, v, n_trials, higher, change)
        out[name] = {"change": change, "aa": aa.to_json(), "injected": injected.to_json(),
                     "reach": [{"change": c, **r.to_json()} for c, r in reach],
                     "widths": [w.to_json() for w in widths],
                     # the run's seconds, to judge them again another way
                     "seconds": {"t": [round(float(x), 3) for x in t],
                                 "v": [round(float(x), 4) for x in v]}}
        log(f"verdict_power switchback {name}: change {change:+.0%}: A/A called "
            f"{aa.called}/{n_trials}, injected found {injected.found}/{n_trials} "
            f"({aa.rounds} pairs at most)")
        log(f"verdict_power switchback {name}: reach: " + ", ".join(
            f"{c:+.1%} found {r.found}/{n_trials}" for c, r in reach))
        log(f"verdict_power switchback {name}: {_widths_line(widths)}")
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
           ) -> list[tuple[float, Rates]]:
    """The re-cut trials with each change of REACH for the worse (tps down, p95 up)."""
    sign = -1.0 if higher else 1.0
    return [(sign * c, power.switchback_trials(t, v, window_s, n_trials, sign * c, higher,
                                               seed=7 + i))
            for i, c in enumerate(REACH)]


@dataclass(frozen=True)
class Width:
    """A/A and the goal's change re-cut into windows of ``window_s``."""

    window_s: int
    windows: int
    aa: Rates
    injected: Rates

    def to_json(self) -> JsonDict:
        return {"window_s": self.window_s, "windows": self.windows,
                "aa": self.aa.to_json(), "injected": self.injected.to_json()}


def _widths(t: Any, v: Any, n_trials: int, higher: bool, change: float) -> list[Width]:
    """The goal's change and A/A, re-cut at each of WIDTHS in compare's default time:
    as many whole quads of that length as fit it."""
    budget = sba.WINDOWS * sba.WINDOW_S
    out = []
    for i, width in enumerate(WIDTHS):
        n = budget // width // 4 * 4
        aa, injected = (power.switchback_trials(t, v, width, n_trials, shift, higher,
                                                seed=20 + 2 * i + k, windows=n)
                        for k, shift in enumerate((0.0, change)))
        out.append(Width(width, n, aa, injected))
    return out


def _widths_line(rows: list[Width]) -> str:
    return f"in {sba.WINDOWS * sba.WINDOW_S} s: " + ", ".join(
        f"{w.windows} x {w.window_s} s found {w.injected.found} (A/A {w.aa.called})"
        for w in rows)


def bench_verdict_power(runs: int, seconds: int, other_runs: int, windows: int,
                        n_split: int = 200, n_simulated: int = 2000) -> JsonDict:
    configs: list[JsonDict] = []
    out: JsonDict = {"configs": configs, "goal_budget_s": GOAL_BUDGET_S}
    with scratch("bench-power-") as folder:
        out["switchback"] = switchback(folder / "sb", one_thread(), SWITCHBACK_WINDOW_S,
                                       windows, n_split)
        for i, (test, threads) in enumerate(CONFIGS):
            m = measure(folder / f"{i}", test, threads, runs if i == 0 else other_runs,
                        seconds)
            row = judged(m)
            configs.append(row.to_json())
            log(f"verdict_power {test} {threads} thread(s): {row.line()}")
            if i == 0:
                out["main"] = {**trials(m, n_split, n_simulated), "test": test,
                               "threads": threads}
        asleep = judged(measure(folder / "asleep", *CONFIGS[0], other_runs, seconds,
                                Setting(awake=False)))
        out["main_cpus_asleep"] = asleep.to_json()
        log(f"verdict_power {CONFIGS[0][0]} 1 thread, CPUs asleep: {asleep.line()}")
    return out


def bench_switchback(windows: int, n_trials: int = 200,
                     workload: str = DEFAULT_WORKLOAD) -> JsonDict:
    """One A/A switchback run of ``windows`` windows on ``workload`` (one of
    SWITCHBACK_WORKLOADS: by default compare's own, the one The switchback's goal names), its
    verdict, and the trials that re-cut it."""
    with scratch("bench-switchback-") as folder:
        return switchback(folder, SWITCHBACK_WORKLOADS[workload](), SWITCHBACK_WINDOW_S,
                          windows, n_trials)


def _sides_judged(sides: dict[str, Measurement], what: str, **more: Any) -> JsonDict:
    """Each side judged, logged with ``what`` before its name; ``more`` first."""
    out: JsonDict = {"test": CONFIGS[0][0], "threads": CONFIGS[0][1], **more}
    for side, m in sides.items():
        j = judged(m)
        out[side] = j.to_json()
        log(f"{what} {side}: {j.line()}")
    return out


def bench_placement(runs: int, seconds: int, rounds: int) -> JsonDict:
    """Does placing mysqld and the client on CPUs of their own cut the noise? The
    quickstart configuration, ``rounds`` times ``runs`` runs unplaced then placed
    (alternating, so the machine's drift hits both), judged like verdict_power's."""
    sides = alternating("bench-placement-", rounds, runs, seconds,
                        {"unplaced": Setting(), "placed": Setting(placement=PLACEMENT)})
    return _sides_judged(sides, "placement,", placement=PLACEMENT)


def bench_state(runs: int, seconds: int, rounds: int) -> JsonDict:
    """Does the state a run starts from move its level? The quickstart configuration
    with each ``between_runs``: the dataset restored and the server restarted (fresh
    files, a cold pool), the server restarted on the last run's files, and the server
    kept running (a warm pool); ``rounds`` times ``runs`` runs of each, in turn."""
    sides = alternating("bench-state-", rounds, runs, seconds,
                        {s: Setting(between=s) for s in ("restore", "restart", "warmup")})
    return _sides_judged(sides, "between_runs")


def alternating(prefix: str, rounds: int, runs: int, seconds: int,
                sides: dict[str, Setting], balanced: bool = False
                ) -> dict[str, Measurement]:
    """The main configuration, ``rounds`` times ``runs`` runs of each side in turn (so
    the machine's drift hits every side; ``balanced``: every other round in reverse,
    as compare orders its rounds), each side's runs as one, in time order; ``sides``
    maps a side's name to its setting. The runs' stores and sandboxes live in a
    temporary folder named from ``prefix``, removed after."""
    test, threads = CONFIGS[0]
    got: dict[str, list[Measurement]] = {name: [] for name in sides}
    with scratch(prefix) as folder:
        for k in range(rounds):
            turn = list(sides.items())
            for name, setting in (turn[::-1] if balanced and k % 2 else turn):
                got[name].append(measure(folder / f"{name}-{k}", test, threads, runs,
                                         seconds, setting))
    return {name: Measurement.merged(ms) for name, ms in got.items()}


@contextlib.contextmanager
def scratch(prefix: str) -> Iterator[Path]:
    """A temporary folder for a bench's stores and sandboxes, removed after."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def bench_warmup(runs: int, seconds: int, rounds: int) -> JsonDict:
    """Does a warmup chosen from the data (``warmup_s: auto``) cut the noise against
    the quickstart's fixed 5 s? ``rounds`` times ``runs`` runs of each, alternating,
    judged like verdict_power's, with the warmups auto chose."""
    sides = alternating("bench-warmup-", rounds, runs, seconds,
                        {"fixed_5s": Setting(warmup=5), "auto": Setting(warmup="auto")})
    out: JsonDict = {"test": CONFIGS[0][0], "threads": CONFIGS[0][1]}
    for side, m in sides.items():
        j = judged(m)
        out[side] = {**j.to_json(), "warmup_s": m.warmup_s}
        log(f"warmup, {side}: {j.line()}; warmups {m.warmup_s}")
    return out


CHANGE: Options = {"point_selects": 11}  # sysbench's default is 10


def bench_injected(rounds: int, seconds: int, n_trials: int = 2000) -> JsonDict:
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
    sides = alternating("bench-injected-", rounds, 1, seconds, {
        "without": Setting(), "with": Setting(options=CHANGE)}, balanced=True)
    a, b = sides["without"], sides["with"]
    budget = power.runs_a_side(GOAL_BUDGET_S, (a.run_cost_s + b.run_cost_s) / 2)
    found: JsonDict = {"budget_s": GOAL_BUDGET_S, "rounds_in_budget": budget}
    for name, (_, _, higher, change, effect) in METRICS.items():
        row, line = _injected_trials(a.values(name), b.values(name), budget, higher,
                                     effect, change, n_trials)
        found[name] = row
        log(f"injected {name}: {line}")
    return {"test": test, "threads": threads, "change": CHANGE,
            "without": judged(a).to_json(), "with": judged(b).to_json(), "trials": found}


# What watching the server costs it: each side a way of watching (on top of the default
# collectors), against the side it adds to.
OBSERVERS: dict[str, tuple[Setting, str | None]] = {
    # a side the others are judged against, judged against nothing itself
    "performance_schema_off": (Setting(mysqld={"performance_schema": "OFF"}), ""),
    "performance_schema_on": (Setting(mysqld={"performance_schema": "ON"}),
                              "performance_schema_off"),
    # its start options: performance_schema on, every wait instrument enabled and timed
    "wait_events": (Setting(collectors={"wait_events": {"enabled": True}}),
                    "performance_schema_on"),
    "cpu_profile_99hz": (Setting(collectors={"cpu_profile": {"enabled": True}}), None),
}
# The observers' goals: perf at 99 Hz costs at most 2% of tps (against the build's default
# performance_schema), the wait-event collector at most 1% on top of performance_schema.
OBSERVER_GOALS = {"cpu_profile_99hz": 0.98, "wait_events": 0.99}


def bench_observers(rounds: int, seconds: int, servers: Sequence[str]) -> JsonDict:
    """What each observer costs in tps, per server: the quickstart workload with
    performance_schema off, on (its default instruments), with the wait_events
    collector (every wait instrument timed) and with perf at 99 Hz (cpu_profile),
    ``rounds`` rounds of one run of each in compare's balanced order; each observer's
    paired ratio (and its interval) against the side it adds to, of tps and of mysqld's
    CPU per transaction: performance_schema on against off, wait_events against
    performance_schema on, perf against the build's default (whichever of off or on it
    is)."""
    out: JsonDict = {"test": CONFIGS[0][0], "threads": CONFIGS[0][1],
                     "seconds": seconds, "rounds": rounds, "goals": OBSERVER_GOALS}
    for server in servers:
        sides = alternating(f"bench-observers-{server}-", rounds, 1, seconds, {
            name: replace(setting, server=server)
            for name, (setting, _) in OBSERVERS.items()}, balanced=True)
        out[server] = _observer_costs(server, sides)
    return out


def _observer_costs(server: str, sides: dict[str, Measurement]) -> JsonDict:
    """Each observer's paired tps ratio against the side it adds to, and its CPU per
    transaction's."""
    from ..server import catalog
    default = "performance_schema_on" if _ps_on_by_default(catalog.resolve(server)) \
        else "performance_schema_off"
    row: JsonDict = {"performance_schema_by_default": default.endswith("_on"),
                     "tps_median": {s: round(statistics.median(m.values("tps")), 1)
                                    for s, m in sides.items()}}
    for name, (_, against) in OBSERVERS.items():
        base = default if against is None else against
        if name != base and base:  # not the build's default, nor a baseline only
            row[name] = _observer_cost(server, name, base, sides)
    return row


def _observer_cost(server: str, name: str, base: str, sides: dict[str, Measurement]
                   ) -> JsonDict:
    """One observer's paired tps ratio against ``base``, and its CPU per transaction's."""
    a, b = sides[base].values("tps"), sides[name].values("tps")
    if len(a) != len(b) or len(a) < 2:
        return {"against": base, "note": "a run failed: no paired ratio"}
    ratio, lo, hi = power.log_ratio_ci(a, b, paired=True)
    cpu = _cpu_cost(sides[base], sides[name])
    goal = OBSERVER_GOALS.get(name)
    log(f"observers, {server}: {name} against {base}: tps x{ratio:.4f} "
        f"[{lo:.4f}, {hi:.4f}]" + (f" (goal >= {goal})" if goal else "")
        + (cpu.line() if cpu else "; no CPU per transaction"))
    return {"against": base, "ratio": round(ratio, 4), "ci95": [round(lo, 4), round(hi, 4)],
            "pairs": [round(y / x, 4) for x, y in zip(a, b, strict=True)],
            **(cpu.to_json() if cpu else {}),
            **(_goals_met(goal, round(ratio, 4), cpu) if goal else {})}


@dataclass(frozen=True)
class CpuCost:
    """mysqld's CPU per transaction of an observer's side over the side it adds to,
    paired by round, and each side's median."""

    ratio: float
    ci95: tuple[float, float]
    us_per_txn: tuple[float, float]

    def to_json(self) -> JsonDict:
        return {"cpu_ratio": self.ratio, "cpu_ci95": list(self.ci95),
                "cpu_us_per_txn": list(self.us_per_txn)}

    def line(self) -> str:
        lo, hi = self.ci95
        return f"; mysqld CPU per transaction x{self.ratio:.4f} [{lo:.4f}, {hi:.4f}]"


def _goals_met(goal: float, ratio: float, cpu: CpuCost | None) -> JsonDict:
    """Whether an observer's tps ratio meets its goal, and its CPU ratio the same goal
    as CPU (at most 1/goal of the side it adds to)."""
    out: JsonDict = {"goal_met": ratio >= goal}
    if cpu is not None:
        out["cpu_goal_met"] = cpu.ratio <= 1 / goal
    return out


def _cpu_cost(base: Measurement, side: Measurement) -> CpuCost | None:
    """mysqld's CPU per transaction of ``side`` over ``base``'s, paired by round: the
    cost an observer adds where one-thread tps swings with how fast an idle core wakes
    (CPU per transaction does not)."""
    a = [x for x in base.cpu_us_per_txn if x is not None]
    b = [x for x in side.cpu_us_per_txn if x is not None]
    if len(a) != len(base.cpu_us_per_txn) or len(b) != len(side.cpu_us_per_txn) or \
            len(a) != len(b) or len(a) < 2:
        return None
    ratio, lo, hi = power.log_ratio_ci(a, b, paired=True)
    return CpuCost(round(ratio, 4), (round(lo, 4), round(hi, 4)),
                   (round(statistics.median(a), 1), round(statistics.median(b), 1)))


def _ps_on_by_default(build: Any) -> bool:
    """performance_schema's default on a build: on from MySQL 5.6.6, off on MariaDB
    10.x and on MySQL 5.5 (the build's own --help --verbose says it)."""
    from ..server.mycnf import option_defaults
    said = (option_defaults(build).get("performance_schema") or "").upper()
    return said in ("ON", "TRUE", "1")


def _injected_trials(a: list[float], b: list[float], budget: int, higher: bool,
                     effect: float, goal: float, n_trials: int) -> tuple[JsonDict, str]:
    """One metric, ``a[i]`` and ``b[i]`` the runs of round i: the change measured, the
    drift, and the sequential rule's rates on the real runs and on simulated ones; and
    the log line saying them."""
    ratio, lo, hi = power.log_ratio_ci(a, b, paired=True)
    pairs = [y / x for x, y in zip(a, b, strict=True)]
    levels = _levels(a, b)
    sd, phi = statistics.stdev(levels), power.lag1(levels)
    real = {design: _stretches(a, b, budget, effect, higher, ratio, paired)
            for design, paired in (("paired", True), ("welch", False))}
    simulated = _simulated(sd, phi, budget, n_trials, effect, higher,
                           {"aa": 0.0, "measured": ratio - 1, "goal": goal})
    row: JsonDict = {
        "ratio": round(ratio, 4), "ci95": [round(lo, 4), round(hi, 4)], "effect": effect,
        "pairs": [round(x, 4) for x in pairs], "pair_sd_pct": round(
            100 * statistics.stdev(math.log(x) for x in pairs), 2),
        "run_sd_pct": round(100 * sd, 2), "lag1": round(phi, 3),
        "real": {d: {k: r.to_json() for k, r in x.items()} for d, x in real.items()},
        "simulated": {d: {k: r.to_json() for k, r in x.items()}
                      for d, x in simulated.items()}}
    return row, (f"x{row['ratio']} [{round(lo, 4)}, {round(hi, 4)}] measured (pairs sd "
                 f"{row['pair_sd_pct']}%, runs sd {row['run_sd_pct']}%, lag-1 "
                 f"{row['lag1']}); " + _trials_line(real, simulated))


def _simulated(sd: float, phi: float, budget: int, n_trials: int, effect: float,
               higher: bool, shifts: dict[str, float]) -> dict[str, dict[str, Rates]]:
    """The sequential rule on runs simulated with the measured spread and drift, in each
    order, paired and not: per design, the trials of each shift (A/A, the measured
    change, the goal's)."""
    seeds = {"aa": 21, "measured": 22, "goal": 23}
    return {f"{order}, {design}": {
        what: power.drift_trials(sd, phi, budget, n_trials, effect, shift, key, paired,
                                 higher, seed=seeds[what])
        for what, shift in shifts.items()}
        for order, key in power.ORDERS.items()
        for design, paired in (("paired", True), ("welch", False))}


def _trials_line(real: dict[str, dict[str, Rates]],
                 simulated: dict[str, dict[str, Rates]]) -> str:
    sim = "; ".join(f"{k}: A/A {v['aa'].called}, measured {v['measured'].found}, "
                    f"goal {v['goal'].found} of {v['aa'].trials}"
                    for k, v in simulated.items())
    told = "; ".join(f"{k}: {v['change'].found} of {v['change'].trials} (A/A "
                     f"{v['aa'].called})" for k, v in real.items())
    return f"real stretches {told}; simulated {sim}"


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
               ratio: float, paired: bool) -> dict[str, Rates]:
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
    return {"change": real, "aa": aa}
