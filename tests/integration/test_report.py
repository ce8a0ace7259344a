"""harness report: plots and one self-contained HTML file, rendered for real in
headless Chromium (the images must decode), with a screenshot kept as an artifact."""
from __future__ import annotations

import json
import re

import pytest

from ..browser import rendered
from ..conftest import ROOT, harness
from ..schemas import conform

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
    judged again with the bound moved inside that interval, it is inconclusive: a run
    that lands a little either side of the bound cannot flip it."""
    for run in ran["runs"]:
        r = json.loads(harness("show", run["run_id"], "--json", check=True).stdout)
        (x,) = r["expectations"]
        lo, hi = x["ci95"]
        # tps are whole numbers: the median may sit on an edge of its interval
        assert lo <= x["value"] <= hi and lo < hi and x["outcome"] == "reproduced", x
        f.write_text(SCENARIO.replace("min: 10", f"min: {(lo + hi) / 2}"))
        out = harness("report", ran["run_set"], "--judge", str(f), "--no-plots", check=True).stdout
        (line,) = [ln for ln in out.split("judged again")[1].splitlines()
                   if r["variant"] in ln]
        assert line.endswith(": inconclusive") and "[95% CI" in line, line


def _held_against_a_reference(tmp_path, f, ran):
    """The run set's own reference agrees with it; the reference with one cell's
    interval moved off the run's differs on that cell alone (exit 3); a finding the
    reference lacks is listed, not counted; a reference of another scenario is refused
    before any server starts."""
    ref = tmp_path / "ref.json"
    harness("reference", ran["run_set"], "-o", str(ref), check=True)
    made = json.loads(ref.read_text())
    conform("reference", made)
    assert made["reference_version"] == 1 and made["scenario"] == "rep"
    assert {(x["variant"], x["outcome"]) for x in made["findings"]} == \
        {("obt0", "reproduced"), ("obt1000", "reproduced")}
    assert made["host"]["cpus"] and {f["key"] for f in made["figures"]} >= {"tps_median"}
    same = harness("report", ran["run_set"], "--no-plots", "--against", str(ref))
    assert same.returncode == 0 and "2 agrees" in same.stdout, same.stdout
    assert "x1.000" in same.stdout  # its own figures
    # A reproduction, as the experiments' make targets run one: a second run set held
    # against the first's reference when it ends (the rate cap keeps tps alike).
    again = harness("run", str(f), "--no-collectors", "--against", str(ref))
    assert again.returncode in (0, 3), again.stderr
    held = again.stdout.split("against the reference")[1]
    assert re.search(r"\n  (2 agrees|1 agrees, 1 DIFFERS|2 DIFFERS)\n", held), held
    assert f"run sets {ran['run_set']}" in held and "tps_median" in held

    moved = dict(made, findings=[dict(x, value=x["value"] * 10, ci95=[
        x["ci95"][1] * 5, x["ci95"][1] * 20]) if x["variant"] == "obt0" else x
        for x in made["findings"] if x["variant"] != "obt1000"])
    ref.write_text(json.dumps(moved))
    off = harness("report", ran["run_set"], "--no-plots", "--against", str(ref))
    assert off.returncode == 3, off.stdout + off.stderr
    assert re.search(r"DIFFERS\s+mariadb-10.11 / obt0: serves queries", off.stdout), off.stdout
    assert "1 DIFFERS, 1 not in the reference" in off.stdout, off.stdout

    other = tmp_path / "other.yaml"
    other.write_text(SCENARIO.replace("name: rep", "name: other"))
    before = len(json.loads(harness("runs", "--json", check=True).stdout)["runs"])
    no = harness("run", str(other), "--against", str(ref))
    assert no.returncode == 2 and "a reference of scenario rep, not of other" in no.stderr
    assert len(json.loads(harness("runs", "--json", check=True).stdout)["runs"]) == before


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
    _held_against_a_reference(tmp_path, f, out)

    # Kept where CI and a human find it after the run (results/ is not committed).
    shot = ROOT / "results" / "test-artifacts" / "report-screenshot.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    shot.unlink(missing_ok=True)
    sizes = rendered(page, shot).images
    assert len(sizes) == len(imgs)
    assert all(ok and w > 500 and h > 200 for ok, w, h in sizes), sizes
    assert shot.stat().st_size > 50_000
