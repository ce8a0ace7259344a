"""harness history --html: the lab's history site from a store seeded through the real
store API with a known 8% step (the build changed there) beside a flat history, opened
in headless Chromium: the change point shown with its size, interval and cause (and
what moved per transaction across it: three times the reads from disk), each
run a point linked to its report, the index naming the open regression."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.cli import main

from ..browser import rendered
from ..conftest import ROOT
from ..unit.test_regress import noisy, store_history

pytestmark = pytest.mark.integration


def _site(tmp_path, capsys):
    url = f"sqlite:///{tmp_path}/h.db"
    tps = noisy(40, 2)  # (seed 1 draws a -4% night just before the step: placed there)
    tps[25:] = [x * 0.92 for x in tps[25:]]
    reads = [r * (3.0 if i >= 25 else 1.0) for i, r in enumerate(noisy(40, 5, 100.0, 0.03))]
    store_history(url, tps, build_change_at=25, reads=reads)
    store_history(url, noisy(30, 3), variant="flat")
    report = tmp_path / "reports" / "default-030" / "report.html"  # one run's report
    report.parent.mkdir(parents=True)
    report.write_text("<html>run 30</html>")
    site = tmp_path / "site"
    assert main(["history", "--results", url, "--html", str(site)]) == 0
    return site, report, capsys.readouterr().out


def test_the_history_site_shows_the_step_where_it_happened(tmp_path, capsys):
    site, report, out = _site(tmp_path, capsys)
    assert "OPEN REGRESSION tps -" in out and f"history site: {site / 'index.html'}" in out
    index = (site / "index.html").read_text()
    rows = re.findall(r"<tr><td><a href='([^']+)'>([^<]+)</a></td>.*?</tr>", index)
    assert [t for _, t in rows] == ["nightly on mariadb-10.11 / default (local, lab1)",
                                    "nightly on mariadb-10.11 / flat (local, lab1)"]
    assert re.search(r"class='bad'>tps -[7-9]\.\d% since 2026-01-26", index), index
    assert "class='ok'>none" in index  # the flat history has nothing open

    page = (site / rows[0][0]).read_text()
    step = re.search(r"<td>REGRESSION</td><td>[^<]+</td><td>[^<]+</td><td>(-[\d.]+)%</td>"
                     r"<td>\[(-[\d.]+)%, (-[\d.]+)%\]</td>", page)
    assert step, page
    size, lo, hi = (float(g) for g in step.groups())
    assert -10 < size < -6 and lo < size < hi < 0  # the interval excludes no change
    assert "server build: mariadbd Ver 10.11.19 -&gt; mariadbd Ver 10.11.20" in page
    assert re.search(r"<td>buffer pool reads from disk x3\.\d\d</td>", page)  # what moved
    assert re.search(r"noise [\d.]+% run to run: sees a step of [\d.]+% or more", page)
    links = re.findall(r"<a href='([^']+)'><circle", page)
    assert len(links) == 2 and {(site / x).resolve() for x in links} == {report.resolve()}
    assert page.count("<circle") == 40 * 2  # every run, in the tps and p95 charts
    flat = (site / rows[1][0]).read_text()
    assert "No change point." in flat and "REGRESSION" not in flat
    for text in (index, page):
        assert not re.search(r"(src|href)=['\"]https?:", text) and "<script" not in text

    shot = ROOT / "results" / "test-artifacts" / "history-site.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    shown = rendered(site / rows[0][0], shot)
    assert shown.scripts == 0 and len(shown.svgs) == 2
    assert all(w >= 900 and h >= 250 for w, h in shown.svgs), shown.svgs
    assert "REGRESSION" in shown.text and "what differed" in shown.text
    assert Path(shot).stat().st_size > 20_000


def test_no_history_is_a_clear_refusal(tmp_path, capsys):
    assert main(["history", "--results", f"sqlite:///{tmp_path}/e.db"]) == 9
    assert "no stored runs" in capsys.readouterr().err
