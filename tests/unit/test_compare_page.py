"""The compare page to attach: what it shows from compare.json, and judgements that never
overwrite each other."""
from __future__ import annotations

import json
import re

from harness.report import compare_html


def _out(verdict: str = "worse", max_cv: float = 0.1) -> dict:
    tps = {"metric": "tps", "higher_is_better": True, "baseline_median": 1000.0,
           "candidate_median": 612.0, "ratio": 0.612, "ci95": [0.58, 0.64],
           "p_value": 0.008, "verdict": verdict, "why": "-38.8%",
           "baseline": [990.0, 1000.0, 1012.0, 1003.0], "candidate": [600.0, 612.0, 630.0, 611.0]}
    runs_b = ["20261127-010000-aaaa", "20261127-010300-cccc", "20261127-010400-dddd",
              "20261127-010700-gggg"]
    runs_c = ["20261127-010100-bbbb", "20261127-010200-bbbc", "20261127-010500-eeee",
              "20261127-010600-ffff"]
    return {"run_set": "rs1", "verdict": verdict, "exit_code": 3, "decided_by": "interleaved",
            "cnf_diff": [{"option": "innodb_buffer_pool_size", "baseline": "128M",
                          "candidate": "8M"},
                         {"option": "init_connect", "baseline": None,
                          "candidate": "<script>alert(1)</script>"}],
            "notes": ["design: interleaved runs (a static option)"],
            "environment": [{"side": "baseline", "run_id": runs_b[0], "build": "mariadb-10.11",
                             "host": "vm: 2 x cpu"}],
            "comparisons": [{
                "baseline": "a.cnf", "candidate": "b.cnf", "server": "mariadb-10.11",
                "runs_baseline": runs_b, "runs_candidate": runs_c, "verdict": verdict,
                "exit_code": 3, "limits": {"max_cv": max_cv}, "design": "interleaved",
                "noise": {"metric": "tps_median", "runs_a_side": 4, "detectable": 0.0612,
                          "detectable_power": 0.75, "text": "tps_median varies 1%"},
                "metrics": [tps], "items": [], "items_note": "", "results_differ": [],
                "results_note": ""}]}


def test_the_page_shows_the_question_verdict_design_power_and_one_plot():
    page = compare_html.render(_out())
    assert "<script" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert re.search(r"innodb_buffer_pool_size</td><td>128M</td><td>8M", page)
    assert "<td>init_connect</td><td>(not set)</td>" in page
    assert "verdict: <b>worse</b>: tps x0.612 of the baseline, 95% CI [0.580, 0.640]" in page
    assert "design: interleaved runs (a static option)" in page
    assert "a change of <b>6.1%</b> in tps_median is called about 75% of the time" in page
    assert page.count("data:image/png;base64,") == 1
    assert not re.search(r"(src|href)=['\"]https?:", page)
    assert compare_html.BASELINE_COLOUR in page and compare_html.CANDIDATE_COLOUR in page


def test_without_noise_the_page_says_what_each_interval_could_see():
    out = _out("no verdict")
    c = out["comparisons"][0]
    c["noise"] = None
    for m in c["metrics"]:
        m["reach"] = None
    assert "reach: not known (no metric has an interval)" in compare_html.render(out)
    c["metrics"][0]["reach"] = 0.142
    page = compare_html.render(out)
    assert f"none: {c['metrics'][0]['metric']} 14.2%; a smaller one could hide" in page
    assert "docs/switchback.md" not in page  # no link to a page that is not there


def test_each_judgement_gets_a_file_of_its_own(tmp_path):
    first = compare_html.save(_out(), tmp_path)
    second = compare_html.save(_out("no significant difference", max_cv=0.5), tmp_path)
    assert first.json != second.json and first.html != second.html
    assert json.loads(first.json.read_text())["verdict"] == "worse"
    assert json.loads(second.json.read_text())["verdict"] == "no significant difference"
    assert (tmp_path / "compare.json").read_text() == second.json.read_text()
    assert (tmp_path / "compare.html").read_text() == second.html.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["compare.json", "compare.html", first.json.name, first.html.name, second.json.name,
         second.html.name])  # no temporary file left


def test_the_headline_names_the_metric_that_decided_and_those_not_judged():
    # innodb_adaptive_hash_index ON -> OFF as a DBA ran it: tps too noisy to judge,
    # mysqld CPU a transaction worse; the page's headline is the CPU's, not tps's
    out = _out("worse")
    c = out["comparisons"][0]
    tps = c["metrics"][0]
    tps.update(ratio=0.927, ci95=[0.539, 1.595], verdict=None, why="too noisy")
    cpu = {**tps, "metric": "mysqld CPU per transaction", "higher_is_better": False,
           "ratio": 1.081, "ci95": [1.000, 1.122], "verdict": "worse", "why": "+8.1%"}
    c["metrics"].append(cpu)
    page = compare_html.render(out)
    assert ("verdict: <b>worse</b>: mysqld CPU per transaction x1.081 of the baseline, "
            "95% CI [1.000, 1.122]; not judged: tps") in page
    assert "tps x0.927 of the baseline, 95% CI [0.539, 1.595]" not in page
