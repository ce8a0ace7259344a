"""``make bench``, section ``moved``: does "what moved" name the cause of a change of
known cause first? (The goal: in at least 9 of 10 comparisons.)

Two causes, each put into the candidate and compared ``trials`` times by ``harness
compare`` as a user runs it (its own process, a store of its own, ``--json``):

- ``small_pool``: a buffer pool far smaller than the data (8 MB against 128 MB for a
  100,000-row table, oltp_read_only on one thread), by interleaved runs; the cause is
  the reads from disk, which three quantities count (the buffer pool's reads, InnoDB's
  data reads, mysqld's bytes read from storage);
- ``general_log``: the general log on, into a CSV table (every point select writes a
  row), by switchback (SET GLOBAL in windows of 3 s); the cause is mysqld's bytes written.

A trial hits when the first quantity of its ranking is the cause and its two sides are
apart. Per cause: the hits, the rate, and each trial's first three quantities.
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .. import proc
from ..analysis.moved import Moved
from ..jsonvalue import JsonDict
from ..paths import CHECKOUT
from .power import log, scratch

QUIET = ("innodb_metrics", "innodb_status", "buffer_pool_stats", "buffer_pool_index",
         "vmstat", "meminfo", "diskstats", "percona_toolkit")
SMALL_POOL = """\
name: moved-small-pool
servers: [mariadb-10.11]
mysqld: {innodb_flush_method: O_DIRECT, innodb_buffer_pool_dump_at_shutdown: 0,
         innodb_buffer_pool_load_at_startup: 0}
dataset: {tables: 1, table_size: 100000}
workload: {test: oltp_read_only, threads: 1, warmup_s: 1, duration_s: 5}
variants:
  fits: {mysqld: {innodb_buffer_pool_size: 128M}}
  small: {mysqld: {innodb_buffer_pool_size: 8M}}
wakeup_probe: false
"""
GENERAL_LOG = """\
name: moved-general-log
servers: [mariadb-10.11]
dataset: {tables: 1, table_size: 10000}
workload: {test: oltp_point_select, threads: 1, warmup_s: 2, duration_s: 3}
mysqld: {log_output: TABLE}
variants:
  plain: {description: general_log left to the server's default}
  logged: {mysqld: {general_log: 1}}
wakeup_probe: false
cpu_keepalive: true
"""
# cause: (scenario, compare's arguments, the quantities that name the cause)
CAUSES: dict[str, tuple[str, list[str], frozenset[str]]] = {
    "small_pool": (SMALL_POOL, ["--variants", "fits", "small", "--design", "interleaved",
                                "--repetitions", "2", "--max-cv", "50"],
                   frozenset({"buffer pool reads from disk", "InnoDB data reads",
                              "mysqld bytes read from storage"})),
    "general_log": (GENERAL_LOG, ["--variants", "plain", "logged", "--windows", "16",
                                  "--window-s", "3"],
                    frozenset({"mysqld bytes written"})),
}
GOAL = 0.9


def _collectors_off(text: str) -> str:
    """The scenario with the collectors what moved does not read turned off."""
    return text + "collectors:\n" + "".join(f"  {n}: {{enabled: false}}\n" for n in QUIET)


@dataclass(frozen=True)
class Trial:
    """One comparison: whether what moved named the cause first (and apart), its
    verdict and its ranking's first three; or why it gave none."""

    hit: bool
    verdict: str | None = None
    first: list[tuple[str, bool, float | None]] = field(default_factory=list)
    error: str | None = None

    def to_json(self) -> JsonDict:
        if self.error is not None:
            return {"hit": self.hit, "error": self.error}
        return {"hit": self.hit, "verdict": self.verdict, "first": self.first}


def _trial(folder: Path, scenario: Path, args: list[str], cause: frozenset[str]) -> Trial:
    """One comparison by ``harness compare``: its ranking's first three, and a hit."""
    results = folder / "results"
    env = {"HARNESS_RESULTS": str(results), "HARNESS_STORE": f"sqlite:///{results}/harness.db"}
    p = proc.run([sys.executable, "-m", "harness", "compare", str(scenario), *args, "--json"],
                 env=env, cwd=CHECKOUT, check=False, timeout=1800, what="harness compare")
    try:
        (c,) = json.loads(p.stdout)["comparisons"]
    except (ValueError, KeyError):
        return Trial(False, error=(p.stderr or p.stdout)[-500:])
    moved = [Moved.from_json(m) for m in c.get("moved") or []]
    top = moved[0] if moved else None
    return Trial(bool(top and top.quantity in cause and top.apart), c["verdict"],
                 [(m.quantity, m.apart, m.ratio) for m in moved[:3]])


def bench_moved(trials: int) -> JsonDict:
    """``trials`` comparisons of each cause; per cause the rate at which what moved
    names it first, against the goal."""
    out: JsonDict = {"trials": trials, "goal": GOAL}
    for name, (text, args, cause) in CAUSES.items():
        with scratch(f"bench-moved-{name}-") as folder:
            scenario = folder / f"{name}.yaml"
            scenario.write_text(_collectors_off(text))
            rows = []
            for k in range(trials):
                rows.append(_trial(folder / str(k), scenario, args, cause))
                log(f"moved {name} {k + 1}/{trials}: "
                    f"{'hit' if rows[-1].hit else 'MISS'} {rows[-1].first}")
        hits = sum(r.hit for r in rows)
        out[name] = {"cause": sorted(cause), "hits": hits, "rate": hits / trials,
                     "goal_met": hits / trials >= GOAL, "runs": [r.to_json() for r in rows]}
    return out
