"""The A/B statistics: verdicts that can be trusted, and none when the data cannot
carry one."""
from __future__ import annotations

import numpy as np
import pytest

from harness.analysis.ab_verdict import BUILTIN, Comparison, Limits, Outlier, cv, judge
from harness.analysis.compare import parse_metric
from harness.errors import InputError
from harness.store import RunSummary

from ..conftest import a_run

TPS, P95, P99 = BUILTIN


def noisy(center: float, n: int, rel_sd: float, seed: int) -> list[float]:
    return list(np.random.default_rng(seed).normal(center, center * rel_sd, n))


def test_a_large_drop_is_worse_and_a_large_gain_better():
    base, cand = noisy(1000, 5, 0.02, 1), noisy(600, 5, 0.02, 2)
    v = judge(TPS, base, cand)
    assert v.verdict == "worse" and 0.55 < v.ratio < 0.65
    assert v.ci95[1] < 1 and v.p_value < 0.05
    assert judge(TPS, cand, base).verdict == "better"
    # Latency: lower is better, so a higher candidate is worse.
    assert judge(P95, [2.0, 2.1, 2.0, 1.9, 2.05], [3.0, 3.1, 2.9, 3.05, 3.0]).verdict == "worse"


def test_same_distribution_is_the_same_only_when_the_interval_says_so():
    # Runs varying 2%: not told apart, but the interval reaches past the 3% band, so
    # "could not tell", with the smallest change the runs could have seen
    v = judge(TPS, noisy(1000, 6, 0.02, 3), noisy(1000, 6, 0.02, 4))
    assert v.verdict == "could not tell" and v.ci95[0] < 1 < v.ci95[1], v
    assert v.reach == pytest.approx(max(1 - v.ci95[0], v.ci95[1] - 1))
    assert f"changes under {v.reach:.1%} were not visible in this run" in v.why
    # runs varying 0.5%: the interval lies inside the band, so no difference
    v = judge(TPS, noisy(1000, 6, 0.005, 3), noisy(1000, 6, 0.005, 4))
    assert v.verdict == "no significant difference" and 0.97 <= v.ci95[0] <= v.ci95[1] <= 1.03
    assert "inside the +-3% noise band" in v.why


def test_a_significant_but_tiny_change_is_under_the_noise_threshold():
    base = [1000.0, 1001, 1002, 1000.5, 1001.5]
    cand = [x * 1.01 for x in base]  # +1%, perfectly separated
    v = judge(TPS, base, cand)
    assert v.p_value < 0.05 and v.verdict == "no significant difference"
    assert "noise threshold" in v.why
    assert judge(TPS, base, cand, Limits(noise=0.005)).verdict == "better"


def test_no_verdict_when_too_few_or_too_noisy():
    v = judge(TPS, [1000, 1010, 990], [500, 505, 495])
    assert v.verdict is None and "too few runs" in v.why
    v = judge(TPS, noisy(1000, 6, 0.3, 5), noisy(900, 6, 0.02, 6))
    assert v.verdict is None and "too noisy" in v.why and "baseline CV" in v.why
    assert cv([1.0]) is None and cv([10.0, 10.0]) == 0.0


def test_identical_values_do_not_crash_the_test():
    v = judge(TPS, [50.0] * 5, [50.0] * 5)
    assert v.verdict == "no significant difference" and v.p_value == 1.0 and v.ratio == 1.0


def test_false_alarm_rate_on_identical_configurations():
    # 200 comparisons of two samples from one distribution at 3% noise: the verdict must
    # say "no significant difference" (nearly) always - the DBA's trust depends on it.
    calls = [judge(TPS, noisy(1000, 5, 0.03, 2 * i), noisy(1000, 5, 0.03, 2 * i + 1)).verdict
             for i in range(200)]
    assert calls.count("better") + calls.count("worse") <= 10


def test_overall_verdict_and_exit_codes():
    worse = judge(TPS, noisy(1000, 5, 0.01, 7), noisy(500, 5, 0.01, 8))
    same = judge(P95, [2.0] * 5, [2.0] * 5)
    none = judge(P95, [2.0] * 2, [2.0] * 2)
    c = Comparison("a", "b", "s", [], [], [worse, same])
    assert (c.overall, c.exit_code) == ("worse", 3)
    c = Comparison("a", "b", "s", [], [], [same, none])
    assert (c.overall, c.exit_code) == ("no verdict", 4)
    c = Comparison("a", "b", "s", [], [], [same])
    assert (c.overall, c.exit_code) == ("no significant difference", 0)
    assert "WORSE" in Comparison("a", "b", "s", [], [], [worse]).text()


def test_one_verdict_when_a_sequential_rule_decided_what_the_fixed_size_test_cannot():
    """The rule decided on 3 rounds; the fixed-size test on those runs (3 a side, under
    its minimum of 4) has no verdict. The rule's decision is the one verdict: the text's
    last line, the exit code, the JSON's top level and each comparison agree."""
    from types import SimpleNamespace as Run

    from harness.analysis.ab_verdict import final_verdict
    from harness.analysis.sequential import Budget, SequentialRule
    from harness.store import RunSummary

    runs = [Run(run_id=f"{v}{i}", variant=v, status="ok",
                summary=RunSummary.of_workload({"tps_median": tps + i}))
            for i in range(3) for v, tps in (("a", 1000.0), ("b", 500.0))]
    rule = SequentialRule("a", "b", 0.03, Budget(3600), log=lambda m: None,
                          clock=lambda: 0.0)
    assert rule(runs) == "decided after 3 rounds: worse"
    values = ([r.summary.figure("tps_median") for r in runs if r.variant == v]
              for v in ("a", "b"))
    c = Comparison("a", "b", "s", ["a0", "a1", "a2"], ["b0", "b1", "b2"],
                   [judge(TPS, *values)])
    assert (c.overall, c.exit_code) == ("no verdict", 4)  # 3 runs a side: no test
    final = final_verdict([c], rule)
    assert (final.verdict, final.exit_code) == ("worse", 3)
    assert final.line() == "verdict: the candidate is WORSE than the baseline (exit code 3)"
    j = c.to_json(final)
    assert (j["verdict"], j["exit_code"]) == ("worse", 3)
    assert j["fixed_size"] == {"verdict": "no verdict", "exit_code": 4}
    assert "verdict:" not in c.text(with_verdict=False)
    # without a rule, over two servers: any worse is worse, then any unjudged
    same = Comparison("a", "b", "t", [], [], [judge(P95, [2.0] * 5, [2.0] * 5)])
    assert final_verdict([same, c]).to_json() == {
        "verdict": "no verdict", "exit_code": 4, "decided_by": "interleaved runs"}
    assert final_verdict([same]).line() == \
        "verdict: the candidate is the same, within the noise band, as the baseline"


def test_metric_flag_syntax():
    m = parse_metric("global_status/mysql_global_status_innodb_data_reads:rate:lower")
    assert m.series == "global_status/mysql_global_status_innodb_data_reads"
    assert m.rate and not m.higher_is_better
    assert parse_metric("innodb_metrics/x_total:higher").rate  # counters by name
    assert not parse_metric("innodb_status/mysql_engine_innodb_checkpoint_age:lower").rate
    for bad in ("mysql_global_status_questions", "x:sum:lower", ":lower"):
        with pytest.raises(InputError, match="higher or :lower"):
            parse_metric(bad)


def test_a_counter_that_did_not_move_in_the_baseline():
    from harness.analysis.ab_verdict import Metric
    reads = Metric("reads", False, series="reads", rate=True)
    v = judge(reads, [0.0] * 5, [5700.0, 5900.0, 5950.0, 5770.0, 5450.0])
    assert v.cv_baseline == 0.0 and v.ratio is None and v.verdict == "worse", v.why
    assert judge(reads, [0.0] * 5, [0.0] * 5).verdict == "no significant difference"


def test_the_obvious_is_called_however_noisy_and_the_bad_run_is_named():
    # Seen in the suite on a machine with one busy moment: a 4x drop, no overlap, one
    # baseline run dipped (CV 25%) and the candidate's runs vary 17%.
    base, cand = [1979, 2010, 2035, 886, 1756], [538, 437, 481, 336, 506]
    v = judge(TPS, base, cand, runs=(["r1", "r2", "r3", "r4", "r5"], list("abcde")))
    assert v.verdict == "worse", v.why
    assert v.cv_baseline > 0.25 and v.cv_candidate > 0.10  # the old gate refused both
    assert v.outliers == [Outlier("baseline", "r4", 886.0)]
    assert v.to_json()["outliers"] == [{"side": "baseline", "run": "r4", "value": 886.0}]
    assert "outlier(s) baseline run r4 (886)" in v.why
    assert "further from 1 than their CV: decided although candidate CV" in v.why


def test_one_bad_run_does_not_make_a_quiet_side_noisy():
    base = [1000.0, 1004, 996, 1002, 998, 500]  # one run hit by something else
    cand = [1080.0, 1084, 1076, 1082, 1078, 1081]
    v = judge(TPS, base, cand)
    assert v.cv_baseline > 0.10 and v.verdict == "better", v.why
    assert [o.run for o in v.outliers] == ["#6"]
    # A side that is noisy throughout stays noisy: no verdict on a modest change.
    v = judge(TPS, noisy(1000, 6, 0.3, 5), noisy(900, 6, 0.02, 6))
    assert v.verdict is None and "too noisy (baseline CV 27.3% > 10%)" in v.why
    assert not [o for o in v.outliers if o.side == "baseline"]


def test_noise_never_turns_identical_configurations_into_a_verdict():
    # At 15% run-to-run noise (p95 of short runs here) the decisive path must not raise
    # false alarms: A/A over 400 seeded trials, better or worse at most 2% of the time.
    calls = [judge(TPS, noisy(1000, 5, 0.15, 1000 + 2 * i),
                   noisy(1000, 5, 0.15, 1001 + 2 * i)).verdict for i in range(400)]
    assert calls.count("better") + calls.count("worse") <= 8, calls
    assert calls.count(None) >= 300  # mostly refused as too noisy, as before


def test_each_workloads_headline_is_judged_beside_tps():
    from harness.analysis.ab_verdict import headline_metrics
    from harness.analysis.compare import compare_runs

    def runs(tpmc: float, seed: int) -> list[dict]:
        return [a_run(run_id=f"r{seed}{i}", status="ok",
                 summary=RunSummary.of_workload({"workload": "tpcc", "tps_median": 1000.0,
                                                    "tpmc": x}))
                for i, x in enumerate(noisy(tpmc, 5, 0.01, seed))]
    base, cand = runs(30000, 7), runs(27000, 8)
    metrics = headline_metrics(base + cand)
    assert [m.name for m in metrics] == ["tpmc"]  # tps is judged already
    assert headline_metrics([a_run(summary=RunSummary.of_workload(
        {"workload": "sysbench oltp_read_only", "tps_median": 5.0}))]) == []
    class NoSeries:  # runs whose summaries are all there is
        def series(self, *_a, **_k):
            return []

    comp = compare_runs(NoSeries(), base, cand, [*metrics, TPS], "a", "b", "s")
    assert comp.noise is None  # no per-second series: nothing to say of the noise
    verdicts = {m.metric: m.verdict for m in comp.metrics}
    assert verdicts["tpmc"] == "worse"  # tps alone would not have seen it
    assert verdicts["tps"] != "worse"


def test_a_replays_digests_are_judged_one_by_one_against_chance():
    from harness.analysis.ab_verdict import Limits
    from harness.analysis.compare import compare_runs
    from harness.analysis.items import runs_needed

    rng = np.random.default_rng(3)
    slow = {"d-slow": 1.3, "d-same": 1.0, "d-fast": 0.6, **{f"d{i}": 1.0 for i in range(7)}}

    def runs(n: int, cand: bool, seed: int) -> list[dict]:
        out = []
        for i in range(n):
            digests = {d: {"fingerprint": f"select {d}", "count": 1000,
                           "total_s": 1.0 * (f if cand else 1.0) * (1 + rng.normal(0, 0.02)),
                           "share": 0.1} for d, f in slow.items()}
            out.append(a_run(run_id=f"{seed}-{i}", status="ok",
                        summary=RunSummary.of_workload({"workload": "replay cap.log",
                                                           "statements_per_s": 1000.0,
                                                           "digests": digests})))
        return out

    class NoSeries:
        def series(self, *_a, **_k):
            return []

        def events(self, *_a, **_k):
            return []

    c = compare_runs(NoSeries(), runs(8, False, 1), runs(8, True, 2), [], "a", "b", "s",
                     Limits())
    verdicts = {x.item: x.judged.verdict for x in c.items}
    assert verdicts.pop("d-slow") == "worse" and verdicts.pop("d-fast") == "better"
    assert set(verdicts.values()) <= {"no significant difference", "could not tell"}
    assert c.items[0].item == "d-slow" and c.items[-1].item == "d-fast"
    assert "10 digests in every side's runs, each judged at alpha 0.005 (/10;" in c.items_note
    text = c.text()
    assert "x1.297 [1.273, 1.343] worse, 10.0% of the time: d-slow select d-slow" in text
    few = compare_runs(NoSeries(), runs(3, False, 3), runs(3, True, 4), [], "a", "b", "s",
                       Limits())
    assert not any(x.judged.verdict in ("worse", "better") for x in few.items)
    assert f"it takes {runs_needed(0.005)} runs a side" in few.items_note
    assert runs_needed(0.05) == 4 and runs_needed(0.005) == 6


def test_quiet_silences_what_the_design_chose(tmp_path, capsys):
    from harness.runner.request import CompareRequest, compare_pair
    from harness.scenario import parse_scenario

    sc = parse_scenario(tmp_path / "ab.yaml", "name: ab\nservers: [mariadb-10.11]\n"
                        "dataset: {tables: 1, table_size: 100}\n"
                        "workload: {kind: sysbench, test: oltp_read_only}\n"
                        "variants:\n  a: {mysqld: {innodb_io_capacity: 200}}\n"
                        "  b: {mysqld: {innodb_io_capacity: 400}}\n")
    loud, pair = compare_pair(CompareRequest(scenario="ab.yaml"), sc)
    assert pair == ["a", "b"] and loud.model.cpu_keepalive is True
    assert "cpu keep-alive: on for the comparison" in capsys.readouterr().err
    quiet, _ = compare_pair(CompareRequest(scenario="ab.yaml", quiet=True), sc)
    assert quiet.model.cpu_keepalive is True and capsys.readouterr().err == ""


def test_two_my_cnf_files_without_a_scenario_run_a_shipped_workload(tmp_path):
    from harness.errors import InputError
    from harness.paths import AB_DIR
    from harness.runner.request import CompareRequest

    files = CompareRequest(baseline="a.cnf", candidate="b.cnf")
    assert files.scenario_file(None) == str(AB_DIR / "oltp_read_write.yaml")
    assert files.scenario_file("tpcc") == str(AB_DIR / "tpcc.yaml")
    assert all((AB_DIR / f"{w}.yaml").is_file() for w in ("oltp_read_only", "tpcc"))
    with pytest.raises(InputError, match="--workload picks a shipped workload"):
        CompareRequest(scenario="s.yaml", baseline="a", candidate="b").scenario_file("tpcc")
    with pytest.raises(InputError, match="--workload goes with --baseline and --candidate"):
        CompareRequest(scenario=None).scenario_file("tpcc")
    assert CompareRequest(scenario="s.yaml").scenario_file(None) == "s.yaml"


def test_the_my_cnf_difference_is_the_servers_reading_of_both_files(tmp_path):
    """Read as mariadbd 10.11 reads them: its [mariadb] group and an included file count
    (the naive [mysqld]-only reading called such a change no difference)."""
    from harness.runner.designs import cnf_difference
    from harness.runner.request import CompareRequest

    (tmp_path / "a.cnf").write_text("[mysqld]\ninnodb_buffer_pool_size = 128M\n"
                                    "[mariadb]\ninnodb_io_capacity = 500\n")
    (tmp_path / "extra.cnf").write_text("[mysqld]\ninnodb_flush_log_at_trx_commit = 2\n")
    (tmp_path / "b.cnf").write_text("[mysqld]\ninnodb_buffer_pool_size = 256M\n"
                                    "[mysql]\nno-auto-rehash\n!include extra.cnf\n")
    req = CompareRequest(baseline=str(tmp_path / "a.cnf"), candidate=str(tmp_path / "b.cnf"))
    req.scenario = req.scenario_file("oltp_read_only")
    server, changes = cnf_difference(req)
    assert server == "mariadb-10.11"
    assert [(c.option, c.baseline, c.candidate) for c in changes] == [
        ("innodb_buffer_pool_size", "128M", "256M"),
        ("innodb_flush_log_at_trx_commit", None, "2"),
        ("innodb_io_capacity", "500", None)]
