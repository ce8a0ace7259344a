"""Timeline validation, the scheduler, phase windows and expected findings."""
from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from harness.analysis.phases import Window, evaluate, index_mb, phase_summary, windows
from harness.errors import ScenarioError
from harness.scenario import Expectation, Start, parse_scenario
from harness.server.mysql import sql_value
from harness.sideloads import count_rows_in
from harness.stats.verdict import INCONCLUSIVE, REPRODUCED
from harness.store import Event, RunSummary
from harness.store.phase import Diagnostics, IndexInPool, Phase
from harness.timeline import Timeline
from harness.workloads.base import Tick

from ..conftest import a_run

BASE = """\
name: t
dataset: [{database: small, tables: 1, table_size: 100}, {database: big, table_size: 100}]
workload: {test: oltp_read_only, database: small, duration_s: 5}
"""


def _problems(extra: str) -> list[str]:
    with pytest.raises(ScenarioError) as e:
        parse_scenario(Path("bad.yaml"), BASE + extra)
    return e.value.problems


def test_timeline_shorthands_and_kinds():
    sc = parse_scenario(Path("ok.yaml"), BASE + """\
side_loads:
  - {name: d, kind: mysqldump, database: big, start: warmup}
  - {name: s, kind: backup_split, file: ok.yaml, chunk_size: 1M, start: 3}
  - {name: q, kind: sql, query: SELECT 1, start: {after: d, delay_s: 2}, until: main_end}
config_changes:
  - {start: 4, set_global: {innodb_old_blocks_time: 0}}
""".replace("ok.yaml", __file__))
    d, s, q = sc.model.side_loads
    assert d.start == Start(after="warmup") and s.start == Start(at=3)
    assert q.start.after == "d" and q.start.delay_s == 2


@pytest.mark.parametrize("extra, needle", [
    ("side_loads: [{name: x, database: big, start: 1}]", "'kind' is required"),
    ("side_loads: [{name: x, kind: mysqldumb, database: big, start: 1}]",
     "unknown kind 'mysqldumb'"),
    ("side_loads: [{name: x, kind: mysqldump, database: nope, start: 1}]",
     "'nope' is not prepared"),
    ("side_loads: [{name: x, kind: mysqldump, database: big, start: {after: y}}]",
     "'y' is not warmup, main or a side load"),
    ("side_loads: [{name: x, kind: mysqldump, database: big, start: {at: 1, after: main}}]",
     "exactly one of 'at'"),
    ("side_loads: [{name: x, kind: command, argv: [true], start: 1},"
     " {name: x, kind: command, argv: [true], start: 2}]", "repeated: x"),
    ("side_loads: [{name: main, kind: command, argv: [true], start: 1}]", "reserved"),
    ("side_loads: [{name: x, kind: command, argv: [true], start: 1, until: main_end,"
     " repeat: 3}]", "'repeat' counts passes"),
    ("side_loads: [{name: x, kind: mysqldump, database: big, start: 1,"
     " options: [--password=hunter2]}]", "connection options are set by the harness"),
    ("side_loads: [{name: x, kind: backup_split, file: /nope, start: 1}]",
     "file not found"),
    ("side_loads: [{name: x, kind: backup_split, database: big, chunk_size: lots, start: 1}]",
     "a size like 64M"),
    ("expectations: [{name: e, metric: tps_ratio, phase: dump, max: 1}]",
     "'dump' is not a side load"),
    ("side_loads: [{name: d, kind: command, argv: [true], start: 1}]\n"
     "expectations: [{name: e, metric: index_mb_ratio, phase: d, max: 1}]",
     "needs 'index: schema.table.index'"),
    ("side_loads: [{name: d, kind: command, argv: [true], start: 1}]\n"
     "expectations: [{name: e, metric: tps_ratio, phase: d}]", "give 'min', 'max'"),
    ("snapshot: false", "'restore' needs snapshot: true"),
    ("host_profile: {read_iops: 0}", "host_profile.read_iops"),
    ("host_profile: {memory: lots}", "a size like 4G"),
])
def test_bad_timelines(extra, needle):
    problems = _problems(extra)
    assert any(needle in p for p in problems), problems


def test_cycle_between_main_and_a_side_load():
    text = BASE.replace("duration_s: 5}", "duration_s: 5, start: {after: d}}") + \
        "side_loads: [{name: d, kind: command, argv: [true], start: warmup}]\n"
    with pytest.raises(ScenarioError) as e:
        parse_scenario(Path("bad.yaml"), text)
    assert "timeline cycle: main -> d -> main" in str(e.value)


def test_timeline_waits_for_marks_and_aborts():
    t0 = time.monotonic()
    tl = Timeline(lambda: time.monotonic() - t0)
    assert tl.wait_start(Start(at=0.2))
    assert tl.clock() >= 0.2
    got: list[float] = []
    th = threading.Thread(target=lambda: got.append(tl.wait_start(Start(after="a",
                                                                        delay_s=0.3))
                                                     and tl.clock()))
    th.start()
    time.sleep(0.3)
    tl.mark_end("a")
    th.join(5)
    mark = tl.ended("a")
    assert mark is not None and got and got[0] >= mark + 0.3
    # A future mark (the warmup's end) is waited for, and abort wakes every waiter.
    tl.mark_end("warmup", tl.clock() + 60)
    waiter = threading.Thread(target=lambda: got.append(tl.wait_start(Start(after="warmup"))))
    waiter.start()
    time.sleep(0.2)
    tl.abort()
    waiter.join(5)
    assert got[-1] is False and not waiter.is_alive()


def test_phase_summary_inside_and_outside():
    intervals = [Tick(float(t), 100.0 if not 20 < t <= 30 else 5.0,
                      2.0 if not 20 < t <= 30 else 80.0) for t in range(1, 41)]
    events = [Event(20.0, "phase_start", "dump"), Event(30.0, "phase_end", "dump"),
              Event(0.0, "phase_start", "warmup"), Event(5.0, "phase_end", "warmup"),
              Event(35.0, "phase_start", "never_ended")]
    wins = windows(events)
    assert wins == [Window("dump", 20.0, 30.0)]
    # Pages of the small PRIMARY: 100 before, gone (absent = 0) during, back after.
    series = {"s.t.PRIMARY": [(18.0, 100.0), (22.0, 40.0), (26.0, 0.0), (32.0, 90.0)]}
    (ph,) = phase_summary(intervals, wins, series, ["s.t.PRIMARY"], 16384)
    assert ph.main_intervals_inside == 10 and ph.main_intervals_outside == 30
    assert ph.tps_ratio == 0.05 and ph.p95_ratio == 40.0
    assert ph.indexes["s.t.PRIMARY"] == IndexInPool(mb_before=1.56, mb_min_during=0.0,
                                                    ratio=0.0)
    assert index_mb(series, "s.t.PRIMARY", wins[0], 16384) == (1.56, 0.0)
    exps = [Expectation(name="drop", metric="tps_ratio", phase="dump", max=0.1),
            Expectation(name="kept", metric="index_mb_ratio", phase="dump",
                        index="s.t.PRIMARY", min=0.9),
            Expectation(name="other variant", metric="tps_ratio", phase="dump", max=1,
                        variant="b")]
    out = evaluate(exps, [ph], series, 16384, "srv", "a")
    assert [(x.name, x.value, x.reproduced) for x in out] == [
        ("drop", 0.05, True), ("kept", 0.0, False)]


def _collapse(late: int, seed: int) -> Phase:
    """A 90 s dump whose first ``late`` s leave the main at its rate and the rest at
    0-1 tps (MariaDB 10.11 here washed the pool only after ~37 s), sysbench --rate's
    catch-up burst right after it, and 60 s alone on each side; noisy seconds."""
    import random
    rng = random.Random(seed)
    def tps(t: int) -> float:
        if 60 < t <= 60 + late or t > 150:
            return 1000 * rng.uniform(0.9, 1.1) + (1500 if 150 < t <= 155 else 0)
        return rng.choice([0.0, 1.0]) if 60 < t <= 150 else 1000 * rng.uniform(0.9, 1.1)
    intervals = [Tick(float(t), tps(t)) for t in range(1, 211)]
    (ph,) = phase_summary(intervals, [Window("dump", 60.0, 150.0)], {}, [], 16384)
    return ph


def test_a_collapse_over_half_the_phase_is_judged_by_its_length_not_a_flipping_median():
    drop = Expectation(name="drop", metric="tps_ratio", phase="dump", max=0.1)
    long = Expectation(name="collapsed", metric="tps_collapsed_share", phase="dump",
                       min=0.33)
    said = {"drop": [], "collapsed": []}
    for seed in range(5):
        ph = _collapse(40, seed)
        assert ph.tps_collapsed_share == round(50 / 90, 4)
        lo, hi = ph.tps_collapsed_share_ci95
        assert 0.33 < lo < 50 / 90 < hi < 0.8, (lo, hi)
        for x in evaluate([drop, long], [ph], {}, 16384, "srv", "a"):
            said[x.name].append(x.outcome)
    # the median inside sits between the rate and 0: its interval spans both
    assert said == {"drop": [INCONCLUSIVE] * 5, "collapsed": [REPRODUCED] * 5}
    whole, none = _collapse(0, 0), _collapse(90, 0)
    assert whole.tps_collapsed_share == 1.0 and whole.tps_collapsed_share_ci95 == [1.0, 1.0]
    assert none.tps_collapsed_share == 0.0 and none.tps_collapsed_share_ci95[1] == 0.0


def test_row_counting_across_chunk_boundaries():
    dump = b"INSERT INTO `t` VALUES (1,'a'),(2,'b'),\n(3,'c');\nINSERT INTO `t` VALUES\n(4,'d');\n"
    for size in (1, 2, 3, 7, len(dump)):
        tail, n = b"", 0
        for i in range(0, len(dump), size):
            buf = dump[i:i + size]
            n += count_rows_in(tail + buf) - count_rows_in(tail)
            tail = (tail + buf)[-8:]
        assert n == 4, size


def test_set_global_literals():
    assert sql_value("128M") == str(128 << 20)
    assert sql_value(True) == "ON" and sql_value(0) == "0"
    assert sql_value("O_DIRECT") == "'O_DIRECT'"
    assert sql_value("it's") == "'it''s'"


def test_report_table_is_shaped_like_the_post():
    from harness.report.phase_report import phase_table

    def run(variant: str, during: float, low: float) -> dict:
        diag = Diagnostics(pages_read_per_s=440.0, side_load_mb_per_s=6.0)
        return a_run(server="s", variant=variant, repetition=1, summary=RunSummary(phases=[
            Phase("dump", seconds=80.0, main_intervals_inside=70,
                  tps_median_inside=during, tps_median_outside=1200.0,
                  indexes={"small.t.PRIMARY": IndexInPool(mb_before=25.0, mb_min_during=low)},
                  diagnostics=diag),
            Phase("dump_alone", seconds=75.0, main_intervals_inside=0,
                  tps_median_inside=None, tps_median_outside=1200.0, diagnostics=diag)]))
    rows, cols = phase_table([run("obt0", 4.0, 5.0), run("obt1000", 1100.0, 25.0)])
    assert [r["variant"] for r in rows] == ["obt0", "obt1000"]
    assert rows[0]["main tps alone"] == 1200.0 and rows[0]["main tps during dump"] == 4.0
    assert rows[1]["t.PRIMARY MB min in dump"] == 25.0
    assert rows[0]["dump s (concurrent)"] == 80.0 and rows[0]["dump_alone s (alone)"] == 75.0
    assert cols.index("main tps during dump") < cols.index("dump_alone s (alone)")


def test_diagnostics_rates_cover_a_phase_shorter_than_the_sampling_interval():
    from harness.analysis.phases import BP, OLD_PAGES, Window, diagnostics
    reads = [(float(t), 100.0 * t) for t in range(0, 10)]  # 100 pages/s, sampled each 1 s
    old = [(float(t), 500.0) for t in range(0, 10)]
    counters = {BP + "number_pages_read_total": reads, OLD_PAGES: old}
    short = diagnostics(Window("dump", 3.2, 3.7), counters, None)
    assert short.pages_read_per_s == 100.0  # from the samples at 3 and 4
    assert short.old_sublist_residence_s == 5.0
    long = diagnostics(Window("dump", 2.0, 8.0), {BP + "number_pages_read_total":
                       reads[:5] + [(t, v + 600) for t, v in reads[5:]]}, None)
    assert long.pages_read_per_s == 200.0  # (1400 - 200) / 6 s: only the window's samples
    assert diagnostics(Window("x", 20.0, 30.0), counters, None).pages_read_per_s is None
    assert short.pages_made_young_per_s is None  # counter not sampled


def test_a_phase_shorter_than_an_interval_gets_the_interval_that_holds_it():
    ivs = [Tick(float(t), 100.0 if t != 5 else 40.0, 1.0) for t in range(1, 11)]
    ph = phase_summary(ivs, [Window("dump", 4.3, 4.45)], {}, [], 16384)[0]
    assert ph.main_intervals_inside == 1 and ph.tps_median_inside == 40.0
    assert ph.main_intervals_outside == 9 and ph.tps_median_outside == 100.0
    # A longer window still takes only the intervals whose middle it holds.
    ph = phase_summary(ivs, [Window("dump", 3.2, 6.4)], {}, [], 16384)[0]
    assert ph.main_intervals_inside == 3  # t = 4, 5, 6 (middles 3.5, 4.5, 5.5)


def test_a_short_phase_straddling_two_intervals_goes_to_the_one_it_mostly_fell_in():
    ivs = [Tick(t + 0.174, float(t), 1.0) for t in range(3, 17)]
    ph = phase_summary(ivs, [Window("dump", 6.1718, 6.282)], {}, [], 16384)[0]
    assert ph.main_intervals_inside == 1 and ph.tps_median_inside == 7.0


def test_a_run_line_for_any_summary_never_raises():
    # A workload whose summary has no tps (or no figure at all) used to raise KeyError
    # after its run was stored, aborting the rest of the run set.
    from harness.runner import headline

    def of(measured: dict, samples: int = 0) -> RunSummary:
        return RunSummary.of_workload(measured, samples=samples)

    assert headline(of({"tps_median": 1234.5, "latency_p95_ms": 2.5}, 9)) == \
        "tps 1234, p95 ms 2.5, 9 samples"
    assert headline(of({"rows_per_s_median": 5100.0})) == "rows/s 5100, 0 samples"
    assert headline(of({}, 3)) == "no headline figure in its summary, 3 samples"
    assert headline(of({"headline": "flights 1.1 s"}, 2)) == "flights 1.1 s, 2 samples"
