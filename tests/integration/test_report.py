"""harness report: plots and one self-contained HTML file, rendered for real in
headless Chromium (the images must decode), with a screenshot kept as an artifact."""
from __future__ import annotations

import json
import re

import pytest

from ..browser import rendered
from ..conftest import ROOT, harness

pytestmark = pytest.mark.integration

SCENARIO = """\
name: rep
servers: [mariadb-10.11]
mysqld: {innodb_buffer_pool_size: 32M}
dataset:
  - {database: small, tables: 1, table_size: 5000}
  - {database: big, tables: 1, table_size: 40000}
workload: {test: oltp_read_only, database: small, threads: 1, warmup_s: 2, duration_s: 8,
           options: {rate: 50}}
variants:
  obt0: {mysqld: {innodb_old_blocks_time: 0}}
  obt1000: {mysqld: {innodb_old_blocks_time: 1000}}
side_loads:
  - {name: dump, kind: mysqldump, database: big, start: {after: warmup, delay_s: 2}}
watch_indexes: [small.sbtest1.PRIMARY]
wakeup_probe: false
collectors: {buffer_pool_index: {interval_s: 1}}
expectations:
  - {name: serves queries, metric: series, series: sysbench/tps, min: 10}
"""


def _judged_at_its_bound(f, ran):
    """The stored finding has a 95% interval of the median tps over the run's seconds;
    judged again with the bound moved onto its value, it is inconclusive: a run that
    lands a little either side of the bound cannot flip it."""
    for run in ran["runs"]:
        r = json.loads(harness("show", run["run_id"], "--json", check=True).stdout)
        (x,) = r["expectations"]
        lo, hi = x["ci95"]
        assert lo < x["value"] < hi and x["outcome"] == "reproduced", x
        f.write_text(SCENARIO.replace("min: 10", f"min: {x['value']}"))
        out = harness("report", ran["run_set"], "--judge", str(f), "--no-plots", check=True).stdout
        (line,) = [ln for ln in out.split("judged again")[1].splitlines()
                   if r["variant"] in ln]
        assert line.endswith(": inconclusive") and "[95% CI" in line, line


def test_html_report_renders_in_chromium(tmp_path, results):
    f = tmp_path / "rep.yaml"
    f.write_text(SCENARIO)
    out = json.loads(harness("run", str(f), "--json", check=True).stdout)
    folder = tmp_path / "report"
    p = harness("report", out["run_set"], "-o", str(folder), check=True)
    page = folder / "report.html"
    assert f"report: {page}" in p.stdout
    text = page.read_text()
    # Self-contained: every image is a data URI, nothing is fetched.
    imgs = re.findall(r"<img [^>]*src='([^']+)'", text)
    assert len(imgs) >= 4 and all(s.startswith("data:image/png;base64,") for s in imgs)
    assert not re.search(r"(src|href)=['\"]https?:", text)
    for needle in ("Servers and variants", "<td>tps</td>", "95% CI", "Environment",
                   "innodb_old_blocks_time=0",
                   "Buffer pool per index", "Throughput and p95 latency", "10.11"):
        assert needle in text, needle
    assert (folder / "throughput.png").stat().st_size > 10_000
    assert (folder / "metrics.png").stat().st_size > 10_000
    assert (folder / "findings.png").stat().st_size > 5_000
    assert "Expected findings" in text and "class='ok'" in text
    _judged_at_its_bound(f, out)

    # Kept where CI and a human find it after the run (results/ is not committed).
    shot = ROOT / "results" / "test-artifacts" / "report-screenshot.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    shot.unlink(missing_ok=True)
    sizes = rendered(page, shot).images
    assert len(sizes) == len(imgs)
    assert all(ok and w > 500 and h > 200 for ok, w, h in sizes), sizes
    assert shot.stat().st_size > 50_000
