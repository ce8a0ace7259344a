"""``make bench``, section ``verdict_power``: how small a change ``harness compare``
sees on this machine, measured.

Quickstart-sized runs (the quickstart's dataset, 5 s warmup, 30 s measured, CPUs kept
awake as a comparison keeps them) of oltp_read_only and oltp_read_write at 1 and 2
threads, through the harness's own runner (a fresh sandbox, the dataset restored
before each run). Per configuration and metric (median tps, p95 latency): the run-to-run
and within-run variance components, which dominates, and the smallest change a
comparison of 5, 15, 30 and 60 minutes would see with 90% power at alpha 0.05.

On the main configuration (oltp_read_only, 1 thread: the Goal's), the sequential rule of
``harness compare --budget 15m --effect 3%`` (5% for p95) is tried on the measured runs:
A/A trials (two random halves of one configuration's runs; the false-positive rate) and
trials with a known change put into the candidate's runs (tps x 0.97, p95 x 1.05: the
detection rate). The measured runs are few, so the trials share runs; the same trials on
runs drawn from the measured variance are independent and many. The main configuration
is also measured with CPUs left to sleep, which shows what keeping them awake buys.

The switchback design gets its own trial: one run of about 15 minutes with identical
sides (A/A), its own paired verdict, then trials that re-cut its seconds into windows
of other widths and offsets, with and without the Goal's change put into the B windows.
Both designs are judged here without compare's 3% noise floor (``--noise 0``): the
question is what the statistics can see.
"""
from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from ..analysis import power
from ..analysis.steady import settled_after
from ..paths import CHECKOUT
from ..progress import Progress
from ..runner import Runner, RunOptions
from ..scenario import parse_scenario
from ..store import open_store

CONFIGS = (("oltp_read_only", 1), ("oltp_read_only", 2), ("oltp_read_write", 1),
           ("oltp_read_write", 2))
BUDGETS_MIN = (5, 15, 30, 60)
SWITCHBACK_WINDOW_S = 10
GOAL_BUDGET_S = 15 * 60
# metric: (summary key, per-second series (metric, labels), higher is better, the
# Goal's change to detect, the effect of interest given to the sequential rule)
Spec = tuple[str, tuple[str, dict[str, str]], bool, float, float]
METRICS: dict[str, Spec] = {
    "tps": ("tps_median", ("tps", {}), True, -0.03, 0.03),
    "p95_ms": ("latency_p95_ms", ("latency_ms", {"quantile": "0.95"}), False, 0.05, 0.05)}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


PLACEMENT = {"server": "1", "client": "0"}  # mysqld on CPU 1, sysbench on CPU 0


def scenario_text(test: str, threads: int, runs: int, seconds: int, awake: bool,
                  placement: dict[str, str] | None = None,
                  cpu_quota: float | None = None, warmup: int | str | None = None,
                  between: str | None = None) -> str:
    data = yaml.safe_load((CHECKOUT / "scenarios/quickstart.yaml").read_text())
    data["name"] = f"power-{test.replace('_', '-')}-{threads}"
    data["workload"].update(test=test, threads=threads, duration_s=seconds)
    if warmup is not None:
        data["workload"]["warmup_s"] = warmup
    if between is not None:
        data["between_runs"] = between
    data.update(repetitions=runs, cpu_keepalive=awake, wakeup_probe=False)
    if placement:
        data["cpu_placement"] = placement
    if cpu_quota:
        data["host_profile"] = {"cpu_quota": round(cpu_quota, 4)}
    return yaml.safe_dump(data, sort_keys=False)


def measure(folder: Path, test: str, threads: int, runs: int, seconds: int,
            awake: bool = True, placement: dict[str, str] | None = None,
            cpu_quota: float | None = None, warmup: int | str | None = None,
            between: str | None = None) -> dict[str, Any]:
    """Run one configuration ``runs`` times; each metric's run values and seconds,
    the CPUs mysqld used in each run's measured part, and each run's warmup."""
    sc = parse_scenario(Path(f"<verdict_power {test} {threads}>"), scenario_text(
        test, threads, runs, seconds, awake, placement, cpu_quota, warmup, between))
    log(f"verdict_power: {runs} runs of {test}, {threads} thread(s), {seconds} s each"
        + ("" if awake else ", CPUs left to sleep")
        + (f", warmup_s: {warmup}" if warmup is not None else "")
        + (f", between_runs: {between}" if between is not None else "")
        + (f", mysqld on CPU {placement['server']}, the client on {placement['client']}"
           if placement else "")
        + (f", mysqld held to {cpu_quota:.3f} CPUs" if cpu_quota else ""))
    folder.mkdir(parents=True, exist_ok=True)
    store = open_store(f"sqlite:///{folder}/power.db")
    t0 = time.monotonic()
    runner = Runner(sc, store, RunOptions(), Progress(quiet=True))
    runner.run()
    wall = time.monotonic() - t0
    done = [r for r in store.runs(run_set=runner.run_set) if r["status"] == "ok"]
    out: dict[str, Any] = {"test": test, "threads": threads, "cpu_keepalive": awake,
                           "runs": len(done), "run_s": seconds,
                           "run_cost_s": round(wall / max(1, len(done)), 1)}
    for name, (key, (metric, labels), *_) in METRICS.items():
        values, secs = [], []
        for r in done:
            s = r["summary"]
            start = s.start_s + (s.warmup_s or 0)
            series = [x for x in store.series(r["run_id"], "sysbench", metric)
                      if x.labels == labels]
            values.append(s.figure(key))
            secs.append([float(v) for v in series[0].v[series[0].t > start]]
                        if series else [])
        out[name] = {"values": values, "seconds": secs}
    out["mysqld_cpus"] = [_mysqld_cpus(store, r) for r in done]
    out["warmup_s"] = [r["summary"].warmup_s for r in done]
    store.engine.dispose()
    return out


def _mysqld_cpus(store: Any, run: dict[str, Any]) -> float | None:
    """CPUs mysqld used in a run's measured part (the mysqld_process collector)."""
    s = run["summary"]
    start, end = s.start_s + (s.warmup_s or 0), s.workload_end_s
    used = 0.0
    for x in store.series(run["run_id"], "mysqld_process", "harness_mysqld_cpu_seconds_total"):
        keep = (x.t >= start) & (x.t <= (end or x.t[-1]))
        if keep.sum() < 2:
            return None
        t, v = x.t[keep], x.v[keep]
        used += float(v[-1] - v[0]) / float(t[-1] - t[0])
    return round(used, 4) if used else None


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
    """The Goal's trials on one configuration's runs, per metric."""
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


def switchback(folder: Path, test: str, threads: int, window_s: int, windows: int,
               n_trials: int) -> dict[str, Any]:
    """One switchback run with identical sides (A/A: every window sets nothing), its
    own verdict, then trials that re-cut its seconds, with and without the Goal's
    change put into the B windows."""
    from .. import switchback as sb
    from .. import workloads
    from ..analysis import switchback as sba
    from ..analysis.compare import Limits

    data = yaml.safe_load(scenario_text(test, threads, 1, 1, True))
    data["variants"] = {"a": {}, "a_again": {}}
    sc = sb.scenario(parse_scenario(Path("<verdict_power switchback>"),
                                    yaml.safe_dump(data, sort_keys=False)),
                     ["a", "a_again"], window_s, windows)
    log(f"verdict_power: a switchback run of {windows} windows of {window_s} s, A/A")
    folder.mkdir(parents=True, exist_ok=True)
    store = open_store(f"sqlite:///{folder}/power.db")
    t0 = time.monotonic()
    runner = Runner(sc, store, RunOptions(variants=[sb.VARIANT]), Progress(quiet=True))
    runner.run()
    wall = time.monotonic() - t0
    (run,) = store.runs(run_set=runner.run_set)
    real = sba.compare_run(store, run, "a", "a_again", Limits(noise=0.0))
    out: dict[str, Any] = {"test": test, "threads": threads, "window_s": window_s,
                           "windows": windows, "machine_s": round(wall),
                           "status": run["status"], "design": real.design,
                           "aa_verdicts": {m.metric: m.verdict for m in real.metrics}}
    start = min((e["t"] for e in store.events(run["run_id"]) if e["kind"] == "config"),
                default=0.0)
    for name, series in (("tps", workloads.throughput(store, run["run_id"])),
                         ("p95_ms", workloads.latency(store, run["run_id"]))):
        if not series or run["status"] != "ok":
            continue
        keep = series[0].t > start
        t, v = series[0].t[keep], series[0].v[keep]
        _, _, higher, change, _ = METRICS[name]
        row: dict[str, Any] = {"change": change, **{
            key: power.switchback_trials(t, v, window_s, n_trials, shift, higher,
                                         seed=seed).to_json()
            for key, shift, seed in (("aa", 0.0, 5), ("injected", change, 6))}}
        out[name] = row
        log(f"verdict_power switchback {name}: change {change:+.0%}: A/A called "
            f"{row['aa']['called']}/{n_trials}, injected found "
            f"{row['injected']['found']}/{n_trials} ({row['aa']['rounds']} pairs at most)")
    store.engine.dispose()
    return out


def bench_verdict_power(runs: int, seconds: int, other_runs: int, windows: int,
                        n_split: int = 200, n_simulated: int = 2000) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="bench-power-"))
    out: dict[str, Any] = {"configs": [], "goal_budget_s": GOAL_BUDGET_S}
    try:
        out["switchback"] = switchback(folder / "sb", *CONFIGS[0], SWITCHBACK_WINDOW_S,
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
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return out


def bench_placement(runs: int, seconds: int, rounds: int) -> dict[str, Any]:
    """Does placing mysqld and the client on CPUs of their own cut the noise? The
    quickstart configuration, ``rounds`` times ``runs`` runs unplaced then placed
    (alternating, so the machine's drift hits both), judged like verdict_power's."""
    folder = Path(tempfile.mkdtemp(prefix="bench-placement-"))
    try:
        sides = alternating(folder, rounds, runs, seconds,
                            {"unplaced": {}, "placed": {"placement": PLACEMENT}})
    finally:
        shutil.rmtree(folder, ignore_errors=True)
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
    folder = Path(tempfile.mkdtemp(prefix="bench-state-"))
    try:
        sides = alternating(folder, rounds, runs, seconds,
                            {s: {"between": s} for s in ("restore", "restart", "warmup")})
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    out: dict[str, Any] = {"test": CONFIGS[0][0], "threads": CONFIGS[0][1]}
    for side, m in sides.items():
        out[side] = judged(m)
        log(f"between_runs {side}: {_config_line(out[side])}")
    return out


def alternating(folder: Path, rounds: int, runs: int, seconds: int,
                sides: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The main configuration, ``rounds`` times ``runs`` runs of each side in turn (so
    the machine's drift hits every side), each side's runs as one; ``sides`` maps a
    side's name to :func:`measure`'s keyword arguments."""
    test, threads = CONFIGS[0]
    got: dict[str, list[dict[str, Any]]] = {name: [] for name in sides}
    for k in range(rounds):
        for name, kw in sides.items():
            got[name].append(measure(folder / f"{name}-{k}", test, threads, runs, seconds,
                                     **kw))
    return {name: _merged(ms) for name, ms in got.items()}


def bench_warmup(runs: int, seconds: int, rounds: int) -> dict[str, Any]:
    """Does a warmup chosen from the data (``warmup_s: auto``) cut the noise against
    the quickstart's fixed 5 s? ``rounds`` times ``runs`` runs of each, alternating,
    judged like verdict_power's, with the warmups auto chose."""
    folder = Path(tempfile.mkdtemp(prefix="bench-warmup-"))
    try:
        sides = alternating(folder, rounds, runs, seconds,
                            {"fixed_5s": {"warmup": 5}, "auto": {"warmup": "auto"}})
    finally:
        shutil.rmtree(folder, ignore_errors=True)
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


TARGET = -0.03  # the throughput a calibrated CPU quota takes away


def bench_injected(calib_runs: int, blocks: int, runs: int, seconds: int,
                   n_trials: int = 200, n_simulated: int = 2000) -> dict[str, Any]:
    """A real change of known size, and whether ``harness compare --budget 15m --effect
    3%`` sees it: a CFS quota on mysqld's cgroup (``host_profile.cpu_quota``) calibrated
    to cost 3% of the main configuration's throughput, then ``blocks`` rounds of ``runs``
    runs without and with it (alternating, so the machine's drift hits both sides), the
    change measured with its interval, and the sequential rule tried on these runs."""
    folder = Path(tempfile.mkdtemp(prefix="bench-injected-"))
    test, threads = CONFIGS[0]
    try:
        quota, calibration = _calibrate(folder, test, threads, calib_runs, seconds)
        sides = alternating(folder, blocks, runs, seconds,
                            {"without": {}, "with": {"cpu_quota": quota}})
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    a, b = sides["without"], sides["with"]
    out: dict[str, Any] = {"test": test, "threads": threads, "target": TARGET,
                           "cpu_quota": round(quota, 4), "calibration": calibration,
                           "without": judged(a), "with": judged(b)}
    rounds = power.runs_a_side(GOAL_BUDGET_S, (a["run_cost_s"] + b["run_cost_s"]) / 2)
    out["trials"] = {"budget_s": GOAL_BUDGET_S, "rounds_in_budget": rounds}
    for name, (_, _, higher, _, effect) in METRICS.items():
        out["trials"][name] = _injected_trials(a[name], b[name], a["run_s"], rounds, higher,
                                               effect, n_trials, n_simulated)
        log(f"injected {name}: {_injected_line(out['trials'][name])}")
    return out


def _calibrate(folder: Path, test: str, threads: int, runs: int, seconds: int
               ) -> tuple[float, dict[str, Any]]:
    """The quota that costs :data:`TARGET` of the throughput: first mysqld's own CPUs
    times 1 + TARGET, then the next by the secant through the last two tries (in
    proportion after the first), until one costs within a point of it, three tries. If
    none does, the tried quota closest to it: the quota is an aim; the change the
    section judges is the one its runs measure."""
    free = measure(folder / "calibrate-free", test, threads, runs, seconds)
    used = statistics.median(x for x in free["mysqld_cpus"] if x)
    tps = statistics.median(free["tps"]["values"])
    goal, quota = 1 + TARGET, used * (1 + TARGET)
    tries: list[dict[str, Any]] = []
    for k in range(3):
        m = measure(folder / f"calibrate-{k}", test, threads, runs, seconds, cpu_quota=quota)
        ratio = statistics.median(m["tps"]["values"]) / tps
        tries.append({"cpu_quota": round(quota, 4), "tps_ratio": round(ratio, 4),
                      "mysqld_cpus": statistics.median(x for x in m["mysqld_cpus"] if x)})
        log(f"injected: a quota of {quota:.3f} CPUs (mysqld used {used:.3f}) costs "
            f"x{ratio:.3f} of the throughput")
        if abs(ratio - goal) <= 0.01:
            break
        quota = _next_quota(tries, goal)
    best = min(tries, key=lambda t: abs(t["tps_ratio"] - goal))
    return best["cpu_quota"], {"mysqld_cpus_free": used, "tps_free": tps, "tries": tries}


def _next_quota(tries: list[dict[str, Any]], goal: float) -> float:
    """The secant through the last two tries' (quota, ratio), else in proportion; kept
    within 20% of the last try."""
    q1, r1 = tries[-1]["cpu_quota"], tries[-1]["tps_ratio"]
    step = q1 * goal / r1
    if len(tries) > 1:
        q0, r0 = tries[-2]["cpu_quota"], tries[-2]["tps_ratio"]
        if abs(r1 - r0) > 1e-3:
            step = q1 + (goal - r1) * (q1 - q0) / (r1 - r0)
    return min(max(step, 0.8 * q1), 1.2 * q1)


def _merged(ms: list[dict[str, Any]]) -> dict[str, Any]:
    """Several measure() results of one configuration as one."""
    return {**ms[0], "runs": sum(m["runs"] for m in ms),
            "run_cost_s": round(statistics.mean(m["run_cost_s"] for m in ms), 1),
            "mysqld_cpus": [x for m in ms for x in m["mysqld_cpus"]],
            "warmup_s": [x for m in ms for x in m["warmup_s"]],
            **{n: {k: [x for m in ms for x in m[n][k]] for k in ("values", "seconds")}
               for n in METRICS}}


def _injected_trials(a: dict[str, Any], b: dict[str, Any], run_s: int, rounds: int,
                     higher: bool, effect: float, n_trials: int, n_simulated: int
                     ) -> dict[str, Any]:
    """One metric: the change measured, and the rule's rates on these runs (A/A within
    the runs without the quota; the quota's change) and on simulated runs of the same
    spread and change."""
    ratio, lo, hi = power.log_ratio_ci(a["values"], b["values"])
    expected = "better" if (ratio > 1) == higher else "worse"
    row: dict[str, Any] = {"ratio": round(ratio, 4), "ci95": [round(lo, 4), round(hi, 4)],
                           "effect": effect, "expected": expected,
                           "aa_split": power.split_trials(a["values"], rounds, n_trials,
                                                          effect, 0.0, higher, seed=11).to_json(),
                           "injected_real": power.pool_trials(
                               a["values"], b["values"], rounds, n_trials, effect, expected,
                               higher, seed=12).to_json()}
    comp = power.components(a["values"], a["seconds"], run_s)
    if comp is not None:
        row["injected_simulated"] = power.simulated_trials(
            comp.total, rounds, n_simulated, effect, ratio - 1, higher, seed=13).to_json()
        row["aa_simulated"] = power.simulated_trials(
            comp.total, rounds, n_simulated, effect, 0.0, higher, seed=14).to_json()
    return row


def _injected_line(row: dict[str, Any]) -> str:
    return f"x{row['ratio']} [{row['ci95'][0]}, {row['ci95'][1]}] measured: " + _rates(row)
