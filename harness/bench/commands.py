"""The commands a user types to look around, timed as the user starts them: each a
fresh interpreter, its wall time (median of ``repeats``) and CPU seconds (best of
them). ``runs`` and ``show`` read a store of 1,000 runs; ``validate`` reads the
quickstart scenario. The goals: ``runs`` 0.15 s wall, ``validate`` 0.3 s, the
commands that read no store 0.3 CPU-s."""
from __future__ import annotations

import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from .. import proc
from ..jsonvalue import JsonDict
from ..paths import CHECKOUT

STORE_RUNS = 1000
GOALS_WALL_S = {"runs": 0.15, "runs --json": 0.15, "validate": 0.3}
GOAL_CPU_S = 0.3  # the commands that read no store


def _commands(first_run: str) -> tuple[tuple[str, ...], ...]:
    return (("--help",), ("--version",), ("compare", "--help"), ("servers", "list"),
            ("sandboxes", "list"), ("runs",), ("runs", "--json"), ("show", first_run),
            ("validate", str(CHECKOUT / "scenarios" / "quickstart.yaml")))


def _one(argv: tuple[str, ...], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one command, the CPU from the children's rusage."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc.run([sys.executable, "-m", "harness", *argv], env=env, cwd=CHECKOUT, timeout=120,
             what=f"harness {' '.join(argv)}")
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def store_of(results: Path, n: int = STORE_RUNS) -> str:
    """A results folder whose store holds ``n`` finished runs (figures and all); the
    first run's id."""
    from ..store import RunRecord, RunSummary, open_store

    store = open_store(str(results))
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for i in range(n):
        rid = f"bench-{i:05d}"
        store.create_run(RunRecord(
            run_id=rid, run_set=f"set-{i // 10:04d}", scenario="nightly",
            server="mariadb-10.11", flavor="mariadb", version="10.11.19",
            variant="default", target="local", host="lab1",
            started_at=(start + timedelta(hours=i)).isoformat()))
        store.update_run(rid, status="ok", summary=RunSummary.of_workload(
            {"tps_median": 1000.0 + i % 50, "latency_p95_ms": 2.0}))
    return "bench-00000"


def _goal(name: str, wall: float, cpu: float) -> JsonDict:
    key = "validate" if name.startswith("validate") else name
    if key in GOALS_WALL_S:
        return {"goal_wall_s": GOALS_WALL_S[key], "within_goal": wall <= GOALS_WALL_S[key]}
    if name.startswith("show"):
        return {}
    return {"goal_cpu_s": GOAL_CPU_S, "within_goal": cpu <= GOAL_CPU_S}


def bench_commands(log: Callable[[str], None], repeats: int = 5) -> JsonDict:
    """Each command's median wall and best CPU of ``repeats``, on a store of 1,000
    runs made for it."""
    commands: JsonDict = {}
    out: JsonDict = {"store_runs": STORE_RUNS, "repeats": repeats, "commands": commands}
    with tempfile.TemporaryDirectory(prefix="harness-commands-") as tmp:
        results = Path(tmp) / "results"
        first = store_of(results)
        # the store of its own (an empty HARNESS_STORE is none set)
        env = {"HARNESS_RESULTS": str(results), "HARNESS_STORE": ""}
        for argv in _commands(first):
            times = [_one(argv, env) for _ in range(repeats)]
            wall = statistics.median(t for t, _ in times)
            cpu = min(c for _, c in times)
            name = " ".join(argv).replace(str(CHECKOUT) + "/", "")
            commands[name] = {"wall_s": round(wall, 3), "cpu_s": round(cpu, 3),
                              **_goal(name, wall, cpu)}
            log(f"  harness {name}: {wall:.3f} s wall (median), {cpu:.2f} CPU-s")
    return out
