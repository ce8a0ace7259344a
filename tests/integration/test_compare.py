"""harness compare on real servers: a known large effect is called, identical
configurations are not."""
from __future__ import annotations

import itertools
import json
import math
import statistics
from pathlib import Path

import pytest

from harness.analysis.ab_verdict import BUILTIN, Limits, judge
from harness.store import open_store

from ..browser import rendered
from ..conftest import QUIET_COLLECTORS, harness
from ..schemas import conform

pytestmark = pytest.mark.integration

SCENARIO = """\
name: cmp
servers: [mariadb-10.11]
mysqld:
  innodb_flush_method: O_DIRECT
  innodb_buffer_pool_dump_at_shutdown: 0
  innodb_buffer_pool_load_at_startup: 0
dataset: {tables: 1, table_size: 100000}
workload: {test: oltp_read_only, threads: 1, warmup_s: 1, duration_s: 5}
variants:
  fits: {mysqld: {innodb_buffer_pool_size: 128M}}
  small: {mysqld: {innodb_buffer_pool_size: 8M}}
wakeup_probe: false
""" + QUIET_COLLECTORS  # cpu_keepalive unset: a comparison keeps the CPUs awake itself


def _scenario(tmp_path: Path, extra: str = "") -> Path:
    f = tmp_path / "cmp.yaml"
    f.write_text(SCENARIO + extra)
    return f


@pytest.mark.alone  # a sequential verdict: beside five workers single-thread tps swung
# 33-560 within one side, and it spent its whole 10 minutes undecided, the phase's tail
def test_a_sequential_comparison_stops_as_soon_as_it_is_sure(tmp_path, results):
    # --budget: rounds of one run each until the interval decides; a change this large
    # is decided within a few looks (the first, on a quiet machine), far inside the budget.
    # The sides are two my.cnf files: the page to attach is checked in Chromium below.
    (tmp_path / "fits.cnf").write_text("[mysqld]\ninnodb_buffer_pool_size = 128M\n")
    (tmp_path / "small.cnf").write_text("[mysqld]\ninnodb-buffer-pool-size = 8M\n")
    p = harness("compare", str(_scenario(tmp_path)), "--baseline", str(tmp_path / "fits.cnf"),
                "--candidate", str(tmp_path / "small.cnf"),
                "--budget", "10m", "--effect", "5", "--json", timeout=900)
    assert p.returncode == 3, p.stdout + p.stderr
    out = json.loads(p.stdout)
    conform("compare", out)
    seq = out["sequential"]
    assert seq["verdict"] == "worse" and seq["effect"] == 0.05, seq
    # a look after each round from the third; every look but the last went on
    looks = seq["looks"]
    rounds = len(looks) + 2
    assert [x["k"] for x in looks] == list(range(1, len(looks) + 1))
    assert [x["runs"] for x in looks] == [[k + 2, k + 2] for k in range(1, len(looks) + 1)]
    assert [x["verdict"] for x in looks] == [None] * (len(looks) - 1) + ["worse"], looks
    assert looks[-1]["interval"][1] < 1, looks
    assert seq["stopped"] == f"decided after {rounds} rounds: worse"
    # one verdict: the rule's, at the JSON's top, in the comparison and as the exit code
    assert (out["verdict"], out["exit_code"]) == ("worse", 3), out
    assert out["decided_by"] == "the sequential rule on the headline figure"
    assert [(c["verdict"], c["exit_code"]) for c in out["comparisons"]] == [("worse", 3)]
    runs = open_store().runs(run_set=out["run_set"])
    # balanced rounds (A B, B A, A B, ...), then it stopped
    order = [["baseline", "candidate"], ["candidate", "baseline"]]
    assert [r.variant for r in runs] == [v for i in range(rounds) for v in order[i % 2]]
    # The scenario does not say cpu_keepalive: the comparison kept the CPUs awake.
    assert "cpu keep-alive: on for the comparison" in p.stderr
    assert {r.details.cpu_keepalive for r in runs} == {"pm_qos"}
    # what the design chose and why: said once each, and kept for the page
    assert [n.split(" (")[0] for n in out["notes"]] == ["cpu keep-alive: on for the comparison",
                                                        "design: interleaved runs"], out["notes"]
    assert all(p.stderr.count(n) == 1 for n in out["notes"]), p.stderr
    assert [(d["option"], d["candidate"]) for d in out["cnf_diff"]] == [
        ("innodb_buffer_pool_size", "8M")], out["cnf_diff"]
    assert {e["side"] for e in out["environment"]} == {"baseline", "candidate"}
    _the_page_to_attach(results / "reports" / out["run_set"], out)
    p = harness("compare", str(_scenario(tmp_path)), "--variants", "fits", "small",
                "--budget", "soon")
    assert p.returncode == 2 and "--budget 'soon' is not a duration like 15m" in p.stderr


def _the_page_to_attach(folder: Path, out: dict) -> None:
    """compare.html in headless Chromium: the question, the verdict with its interval,
    the power, one plot with both sides in their two colours; and judging the stored
    runs again makes a new file, leaving the first as it was."""
    import matplotlib.image

    from harness.report.compare_html import BASELINE_COLOUR, CANDIDATE_COLOUR

    (first,) = folder.glob("compare-*.html")
    assert (folder / "compare.html").read_text() == first.read_text()
    shot = folder / "shot.png"
    page = rendered(first, shot)
    assert page.scripts == 0 and page.images, page
    assert all(ok and w > 500 for ok, w, _ in page.images), page.images
    text = page.text
    last = out["sequential"]["looks"][-1]  # what the verdict stands on
    for needle in ("The question", "innodb_buffer_pool_size", "128M", "8M",
                   f"verdict: {out['verdict']}: headline x{last['ratio']:.3f} of the "
                   f"baseline, {last['level']:.1%} interval [{last['interval'][0]:.3f}",
                   "power: with ", "runs a side", "the power to see a change of 5% was",
                   "cpu keep-alive: on for the comparison", "Servers and hosts"):
        assert needle in text, (needle, text)
    pixels = matplotlib.image.imread(shot)[:, :, :3]
    for colour in (BASELINE_COLOUR, CANDIDATE_COLOUR):
        rgb = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        near = (abs(pixels - rgb).max(axis=2) < 0.08).sum()
        assert near > 200, (colour, near)  # the side's markers and its name, in colour
    kept = first.read_bytes(), first.with_suffix(".json").read_bytes()
    again = harness("compare", "--run-sets", out["run_set"], "--variants", "baseline",
                    "candidate", "--max-cv", "50")
    assert again.returncode in (0, 3, 4), again.stderr
    assert len(list(folder.glob("compare-*.html"))) == 2
    assert len(list(folder.glob("compare-*.json"))) == 2
    assert (first.read_bytes(), first.with_suffix(".json").read_bytes()) == kept
    assert (folder / "compare.json").read_bytes() != kept[1]  # the latest: its limits differ


@pytest.mark.alone  # an A/A verdict: on a quiet machine
def test_identical_my_cnf_files_are_not_told_apart(tmp_path, results):
    cnf = "[mysqld]\ninnodb_buffer_pool_size = 128M\n"
    (tmp_path / "current.cnf").write_text(cnf)
    (tmp_path / "new.cnf").write_text(cnf)
    p = harness("compare", str(_scenario(tmp_path)), "--baseline",
                str(tmp_path / "current.cnf"), "--candidate", str(tmp_path / "new.cnf"),
                "--json", "--design", "interleaved", "--repetitions", "4", "--aa", timeout=900)
    out = json.loads(p.stdout)
    (c,) = out["comparisons"]
    tps = next(m for m in c["metrics"] if m["metric"] == "tps")
    assert tps["cv_baseline"] is not None
    runs = open_store().runs(run_set=out["run_set"])
    assert {r.variant for r in runs} == {"baseline", "candidate"}
    # Where the noise is: each side's run-to-run and within-run variance, pooled, as
    # the runs' own spread says (the same figures, from the stored values).
    noise = c["noise"]
    assert noise["runs"] == 8 and noise["metric"] == "tps_median"
    logs = [math.log(x) for x in tps["baseline"]], [math.log(x) for x in tps["candidate"]]
    pooled = (statistics.variance(logs[0]) + statistics.variance(logs[1])) / 2
    assert noise["total"] == pytest.approx(pooled)
    assert 0 < noise["within"] and noise["between"] == pytest.approx(
        max(0.0, noise["total"] - noise["within"]))
    assert f"noise: tps_median varies {math.sqrt(pooled):.1%} run to run" in \
        harness("compare", "--run-sets", out["run_set"], "--variants", "baseline",
                "candidate").stdout
    # The printed verdicts are the statistics' on the stored samples, noise gate and all.
    for m in c["metrics"]:
        metric = next(x for x in BUILTIN if x.name == m["metric"])
        assert judge(metric, m["baseline"], m["candidate"]).verdict == m["verdict"], m
    # Identical files are told apart no more often than the test's level allows. On the
    # real split alone that would be a coin with a 2.9% side (Mann-Whitney's exact p of
    # 4 runs against 4 cannot go under 2/70; run 20 of 2026-11-27 drew it), so every one
    # of the 35 ways to split these 8 runs into two sides of 4 is judged (the noise gate
    # off: it has tests of its own, and single-thread tps here varies 8% run to run on a
    # good day). Distinct values: at most the one complete separation (2 of 70 ordered
    # splits). Tied values (p95s fall in sysbench's histogram buckets) take the test's
    # normal approximation, which called 2 of 35 on one run's p95s (run 24): at most 3
    # of 35 (8.6%) then, the level and that approximation's slack.
    for m in c["metrics"]:
        values = m["baseline"] + m["candidate"]
        allowed = 1 if len(set(values)) == len(values) else 3
        assert _splits_called(values, m["metric"]) <= allowed, m
    assert p.returncode in (0, 4), p.stdout + p.stderr
    # exit 4: a metric without a verdict (too noisy), or one whose interval is wider
    # than the noise band (could not tell: identical sides may give that honestly)
    assert (p.returncode == 4) == any(m["verdict"] in (None, "could not tell")
                                      for m in c["metrics"]), c["metrics"]
    assert c["exit_code"] == p.returncode
    for m in c["metrics"]:
        if m["verdict"] is None:
            assert "too noisy" in m["why"], m
    # harness regress leaves runs a comparison made out of its histories, unless asked;
    # counted, two histories of 4 runs, too short for a change (5 needed on each side),
    # so nothing is raised and nothing is new.
    assert {r.details.purpose for r in runs} == {"compare"}
    r = harness("regress", "--scenario", "cmp")
    assert r.returncode == 9 and "all 8 stored run(s) were made by harness compare" in r.stderr
    r = harness("regress", "--scenario", "cmp", "--json", "--include-compare", check=True)
    out = json.loads(r.stdout)
    conform("regress", out)
    assert (out["changes"], out["new_regressions"]) == ([], 0)
    # ... and each history says so: 4 runs cannot show a step of any size.
    assert sorted((x["history"]["variant"], x["metric"], x["runs"], x["smallest_step_pct"])
                  for x in out["sensitivity"]) == [
        ("baseline", "p95_ms", 4, None), ("baseline", "tps", 4, None),
        ("candidate", "p95_ms", 4, None), ("candidate", "tps", 4, None)]
    r = harness("regress", "--scenario", "cmp", "--include-compare", check=True)
    assert "2 histories, 8 ok runs" in r.stdout and "no change point" in r.stdout
    assert "tps, 4 runs: too short to see a change (10 runs needed)" in r.stdout


def _splits_called(values: list[float], metric: str) -> int:
    """Of the ways to split ``values`` into two equal sides (each pair once), how many
    the verdict calls better or worse."""
    m = next(x for x in BUILTIN if x.name == metric)
    half, relaxed = len(values) // 2, Limits(max_cv=float("inf"))
    splits = [set(s) for s in itertools.combinations(range(len(values)), half) if 0 in s]
    return sum(judge(m, [values[i] for i in s],
                     [values[i] for i in range(len(values)) if i not in s],
                     relaxed).verdict in ("better", "worse") for s in splits)


def test_compare_input_errors(tmp_path, results):
    f = _scenario(tmp_path)
    p = harness("compare", str(f), "--baseline", str(tmp_path / "missing.cnf"),
                "--candidate", str(f))
    assert p.returncode == 9 and "--baseline" in p.stderr and "no such file" in p.stderr
    p = harness("compare", "--run-sets", "nope")
    assert p.returncode == 9 and "no run set 'nope'" in p.stderr
    p = harness("compare", str(f), "--variants", "fits", "tiny")
    assert p.returncode == 2 and "unknown variant" in p.stderr and "tiny" in p.stderr
    p = harness("compare", str(f), "--metric", "mysql_global_status_questions")
    assert p.returncode == 2 and "higher or :lower" in p.stderr
