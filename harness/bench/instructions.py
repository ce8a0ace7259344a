"""``make bench-instructions``: what the counted verdict (``compare --measure
instructions``) sees on this host.

- ``aa``: one lifetime of a sandbox under callgrind, ``windows`` windows of point
  selects with nothing switched (identical sides), then ``restarts`` lifetimes of two
  windows each: the CV of instructions per transaction within a lifetime and across
  restarts;
- ``aa_per_tx``: each judged window's (lifetime, instructions per transaction), to
  re-cut again;
- ``trials``: those windows re-cut into quads of random orientation (a random start in
  the sequence, each quad ABBA or BAAB), the candidate's windows multiplied by an
  effect (1: A/A, 1.01, 1.003), and the sequential rule run quad by quad as the
  comparison runs it, to its verdict or the windows' end: the false-alarm rate (at the
  default band, at 0.1% and with no band: how often the interval alone excludes 1), the
  power for 1% (band 0.5%, the default) and 0.3% (band 0.1%), and the minutes a
  decision took (the windows used, at the windows' measured seconds and a settle run
  after each switch);
- ``real``: a real change of known direction, ``slow_query_log=ON`` with a
  ``long_query_time`` nothing reaches against OFF, compared as a user runs it.
"""
from __future__ import annotations

import random
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from ..analysis import counted as judge
from ..analysis.counted import Window
from ..jsonvalue import JsonDict
from ..paths import AB_DIR
from ..progress import Progress
from ..runner import counted
from ..runner.counted_plan import plan
from ..runner.counted_session import CountedSession
from ..runner.request import CompareRequest
from ..store import Store, open_store
from ..workloads.sysbench import COUNTED_EVENTS

WORKLOAD = AB_DIR / "oltp_point_select.yaml"
# (the candidate's factor, the band): A/A at the default band, at 0.1% and with none
# (the interval's own error rate), then +1% and +0.3%
EFFECTS = ((1.0, judge.BAND), (1.0, 0.001), (1.0, 0.0), (1.01, judge.BAND), (1.003, 0.001))


def bench_instructions(windows: int, restarts: int, trials: int,
                       server: str = "mariadb-10.11") -> JsonDict:
    """The section's figures (see the module's words)."""
    with tempfile.TemporaryDirectory(prefix="bench-instr-") as d:
        folder = Path(d)
        cnf = folder / "same.cnf"
        cnf.write_text("[mysqld]\nslow_query_log=OFF\nlong_query_time=100\n")
        store = open_store(f"sqlite:///{folder / 'results.db'}")
        t0 = time.monotonic()
        aa = _aa_windows(store, cnf, server, windows, restarts)
        aa_minutes = (time.monotonic() - t0) / 60
        real = _real_change(store, folder, server)
    rng = random.Random(20261207)
    return {"server": server, "events_per_window": COUNTED_EVENTS["oltp_point_select"],
            "aa_minutes": round(aa_minutes, 1), **_spread(aa),
            "trials": [_trials(aa, effect, band, trials, rng) for effect, band in EFFECTS],
            "real": real,
            "aa_per_tx": [[w.lifetime, round(w.per_tx, 2)] for w in aa if w.judged]}


def _request(cnf_a: Path, cnf_b: Path, server: str) -> CompareRequest:
    return CompareRequest(scenario=str(WORKLOAD), baseline=str(cnf_a), candidate=str(cnf_b),
                          servers=[server], quiet=True, measure="instructions")


def _aa_windows(store: Store, cnf: Path, server: str, windows: int, restarts: int
                ) -> list[Window]:
    """A lifetime of ``windows`` judged windows, then ``restarts`` lifetimes of two."""
    p = plan(_request(cnf, cnf, server), judge.BAND)
    s = CountedSession(p, store, Progress(quiet=False))
    s.open_run("bench-instructions")
    try:
        s.provision()
        s.start("A")
        s.window("A", p.events, judged=False)
        for _ in range(windows):
            s.window("A", p.events, judged=True)
        for _ in range(restarts):
            s.start("A")
            s.window("A", p.events, judged=False)
            for _ in range(counted.PER_LIFETIME):
                s.window("A", p.events, judged=True)
    finally:
        s.close(None, "ok", None)
    return s.windows


def _spread(ws: list[Window]) -> JsonDict:
    """CV within the first lifetime, and of the lifetimes' means."""
    first = [w.per_tx for w in ws if w.judged and w.lifetime == 1]
    means = _lifetime_means(ws)
    return {"per_tx_mean": round(statistics.fmean(first), 1),
            "cv_within_lifetime": _cv(first),
            "cv_across_restarts": _cv(means) if len(means) > 1 else None,
            "window_seconds": round(statistics.fmean(w.seconds for w in ws if w.judged), 2),
            "windows": len(first), "lifetimes": len(means)}


def _lifetime_means(ws: list[Window]) -> list[float]:
    """Each restart's mean (the lifetimes after the first)."""
    lives = sorted({w.lifetime for w in ws if w.lifetime > 1})
    return [statistics.fmean(w.per_tx for w in ws if w.judged and w.lifetime == life)
            for life in lives]


def _cv(xs: list[float]) -> float:
    return statistics.stdev(xs) / statistics.fmean(xs)


def _trials(ws: list[Window], effect: float, band: float, n: int, rng: random.Random
            ) -> JsonDict:
    """``n`` re-cut trials of the first lifetime's windows with the candidate's
    counts multiplied by ``effect``: what the sequential rule said, and when."""
    life = [w for w in ws if w.judged and w.lifetime == 1]
    secs = statistics.fmean(w.seconds for w in life)
    said: dict[str, int] = {}
    used: list[int] = []
    for _ in range(n):
        verdict, count = _one_trial(life, effect, band, rng)
        said[verdict] = said.get(verdict, 0) + 1
        used.append(count)
    called = said.get(judge.WORSE, 0) + said.get(judge.BETTER, 0)
    # a switch every other window, each followed by a settle run of a tenth of a window
    minutes = [u * secs * 1.05 / 60 for u in used]
    return {"effect": effect, "band": band, "trials": n, "verdicts": said,
            "called_rate": called / n,
            "worse_rate": said.get(judge.WORSE, 0) / n,
            "minutes_median": round(statistics.median(minutes), 2),
            "minutes_max": round(max(minutes), 2)}


def _one_trial(life: list[Window], effect: float, band: float, rng: random.Random
               ) -> tuple[str, int]:
    start = rng.randrange(len(life))
    order = life[start:] + life[:start]
    quads = len(order) // 4
    cut: list[Window] = []
    for k in range(1, quads + 1):
        sides = "ABBA" if rng.random() < 0.5 else "BAAB"
        for side, w in zip(sides, order[4 * (k - 1):4 * k], strict=True):
            n = w.instructions * (effect if side == "B" else 1.0)
            cut.append(replace(w, side=side, instructions=round(n)))
        got = judge.look(cut, k, False, 0.05, band)
        if got is not None and got.verdict:
            return got.verdict, len(cut)
    return judge.UNTOLD, len(cut)


def _real_change(store: Store, folder: Path, server: str) -> JsonDict:
    """slow_query_log=ON (long_query_time 100) against OFF, counted to its verdict."""
    off, on = folder / "off.cnf", folder / "on.cnf"
    off.write_text("[mysqld]\nslow_query_log=OFF\nlong_query_time=100\n")
    on.write_text("[mysqld]\nslow_query_log=ON\nlong_query_time=100\n")
    r = counted.counted_compare(_request(off, on, server), store, judge.BAND)
    v = r.verdict
    return {"change": "slow_query_log=ON, long_query_time=100", "verdict": v.verdict,
            "ratio": v.ratio, "interval": list(v.interval) if v.interval else None,
            "minutes": round(r.minutes, 2),
            "windows": len([w for w in r.windows if w.judged]),
            "moved_first": r.moved[0].function if r.moved else None}
