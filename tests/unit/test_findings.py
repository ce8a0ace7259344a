"""metric: series findings: windows, statistics, run-set ratios, and their input errors."""
from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from harness.analysis.findings import evaluate_run_set, stat, window_of
from harness.analysis.phases import Window, describe
from harness.scenario import Expectation, Scenario
from harness.store import RunSummary
from harness.store.finding import RunStat

from ..conftest import a_run

MAIN = Window("main", 10.0, 110.0)


def test_windows_are_main_a_phase_or_a_slice_of_main():
    dump = Window("dump", 40.0, 50.0)
    assert window_of("main", MAIN, [dump]) is MAIN
    assert window_of("dump", MAIN, [dump]) is dump
    assert window_of("other", MAIN, [dump]) is None
    last = window_of([0.75, 1.0], MAIN, [])
    assert last is not None and (last.start, last.end) == (85.0, 110.0)


def test_statistics_over_a_window():
    t = np.arange(0.0, 121.0)  # one sample a second
    v = t * 2.0  # a counter growing by 2 a second
    w = Window("w", 20.0, 30.0)
    assert stat(t, v, w, "median") == 50.0
    assert stat(t, v, w, "min") == 40.0 and stat(t, v, w, "max") == 60.0
    assert stat(t, v, w, "last") == 60.0
    assert stat(t, v, w, "delta") == 20.0
    assert stat(t, v, w, "rate") == pytest.approx(2.0)
    assert stat(t, v, Window("late", 500.0, 600.0), "median") is None
    # a window between two samples still gets a rate from the samples around it
    sparse_t, sparse_v = np.array([0.0, 10.0, 20.0]), np.array([0.0, 100.0, 300.0])
    assert stat(sparse_t, sparse_v, Window("w", 12.0, 14.0), "rate") == pytest.approx(20.0)


def _run(run_id, variant, value, status="ok", server="s1"):
    return a_run(run_id=run_id, server=server, variant=variant, status=status,
            summary=RunSummary(series_stats={"hll": RunStat(value)}))


def test_run_set_ratio_of_medians_over_repetitions():
    e = Expectation(name="hll", metric="series", series="innodb_metrics/trx_rseg_history_len",
                    stat="max", variant="nolag", baseline_variant="lag", min=3)
    runs = [_run("a1", "nolag", 900.0), _run("a2", "nolag", 1100.0), _run("a3", "nolag", 5.0,
                                                                         status="failed"),
            _run("b1", "lag", 200.0), _run("b2", "lag", 300.0)]
    found = evaluate_run_set([e], runs)
    assert set(found) == {"a1", "a2", "a3"}  # stored with every run of the variant
    (x,) = found["a1"]
    assert x.value == pytest.approx(1000.0 / 250.0) and x.reproduced is True
    assert x.own["variant_value"] == 1000.0 and x.own["baseline_value"] == 250.0
    assert "nolag / lag" in describe(x) and "reproduced" in describe(x)
    # no finished baseline run: not reproduced, and says why
    (y,) = evaluate_run_set([e], runs[:3])["a1"]
    assert y.value is None and y.reproduced is False and "lag" in y.why_not


def test_one_run_a_side_carries_the_within_run_intervals_into_the_ratio():
    e = Expectation(name="hll", metric="series", series="iibench/rows_per_s",
                    variant="b", baseline_variant="a", max=0.8)

    def run(run_id, variant, value, ci):
        return a_run(run_id=run_id, server="s1", variant=variant, status="ok",
                summary=RunSummary(series_stats={"hll": RunStat(value, ci)}))

    clear = [run("a", "a", 1000.0, [980.0, 1020.0]), run("b", "b", 500.0, [490.0, 510.0])]
    (x,) = evaluate_run_set([e], clear)["b"]
    assert x.value == 0.5 and 0.47 < x.ci95[0] < 0.5 < x.ci95[1] < 0.53
    assert x.outcome == "reproduced" and x.runs == 1
    near = [run("a", "a", 1000.0, [900.0, 1100.0]), run("b", "b", 790.0, [700.0, 880.0])]
    (x,) = evaluate_run_set([e], near)["b"]
    assert x.value == 0.79 and x.outcome == "inconclusive", x
    bare = [run("a", "a", 1000.0, None), run("b", "b", 790.0, None)]
    (x,) = evaluate_run_set([e], bare)["b"]  # a max, say: one point a run, no interval
    assert x.ci95 is None and x.outcome == "reproduced"


@pytest.mark.parametrize("body, message", [
    ({"metric": "series", "min": 1}, "needs 'series"),
    ({"metric": "series", "series": "iibench/rows_per_s", "window": [0.5, 0.2], "min": 1},
     "fractions"),
    ({"metric": "series", "series": "x/y", "baseline_window": "main",
      "variant": "a", "baseline_variant": "b", "min": 1}, "not both"),
    ({"metric": "tps_ratio", "phase": "dump", "series": "x/y", "max": 1}, "for metric: series"),
])
def test_bad_series_expectations(body, message):
    with pytest.raises(ValidationError, match=message):
        Expectation(name="e", **body)


def test_series_window_must_name_a_side_load():
    with pytest.raises(ValidationError, match="'dump' is not main or a side load"):
        Scenario(name="x", dataset={"kind": "iibench"},
                 workload={"kind": "iibench", "duration_s": 5},
                 expectations=[{"name": "e", "metric": "series",
                                "series": "iibench/rows_per_s", "window": "dump", "min": 1}])
