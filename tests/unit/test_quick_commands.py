"""The commands a user types to look around import only what they use: `runs` (an
SQLite store of this harness's format), `servers list`, `sandboxes list` and the
--help of every sub-command load no numpy, SQLAlchemy, pydantic, report, workload,
runner, scenario or analysis module (the verdicts' defaults, plain constants, aside).
`make bench-cli` measures their time; this holds the graph that time comes from."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli.parser import build_parser

ROOT = Path(__file__).resolve().parent.parent.parent
HEAVY_PACKAGES = ("numpy", "scipy", "sqlalchemy", "pydantic", "matplotlib", "pandas",
                  "pyarrow")
HEAVY_HARNESS = ("harness.analysis.", "harness.report", "harness.workloads",
                 "harness.runner", "harness.scenario", "harness.store.db",
                 "harness.store.summary", "harness.model")
CONSTANTS = {"harness.analysis.defaults"}

PROBE = """
import contextlib, io, json, sys
from harness.cli import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    try:
        code = main(sys.argv[1:])
    except SystemExit as e:
        code = e.code
print(json.dumps({"code": code, "out": out.getvalue(), "modules": sorted(sys.modules)}))
"""


def _loaded(argv: list[str], results: Path) -> dict:
    env = {**os.environ, "HARNESS_RESULTS": str(results), "HARNESS_STORE": ""}
    p = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True,
                       text=True, cwd=ROOT, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.splitlines()[-1])


def _heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if m.split(".")[0] in HEAVY_PACKAGES
            or (m.startswith(HEAVY_HARNESS) and m not in CONSTANTS)]


@pytest.fixture(scope="module")
def store_folder(tmp_path_factory) -> Path:
    """A results folder whose store holds finished runs (the quick read answers)."""
    from harness.bench.commands import store_of

    folder = tmp_path_factory.mktemp("quick") / "results"
    store_of(folder, n=20)
    return folder


@pytest.mark.parametrize("argv", [["runs"], ["runs", "--json"], ["runs", "--scenario",
                                                                   "nightly"],
                                  ["servers", "list"], ["servers"], ["sandboxes", "list"],
                                  ["--help"]])
def test_a_listing_loads_none_of_the_heavy_modules(argv, store_folder):
    got = _loaded(argv, store_folder)
    assert got["code"] == 0 and not _heavy(got["modules"]), _heavy(got["modules"])


def test_the_quick_listing_is_the_full_stores(store_folder, monkeypatch, capsys):
    """Read without SQLAlchemy, the runs are the ones the store itself lists, in its
    order, with the same figures."""
    from harness.cli import main, quick
    from harness.store.listing import quick_runs

    fast = _loaded(["runs", "--json"], store_folder)["out"]
    monkeypatch.setenv("HARNESS_RESULTS", str(store_folder))
    monkeypatch.setattr(quick, "quick_runs", lambda *_a: None)  # the full store's
    assert main(["runs", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(fast)
    listed = quick_runs(f"sqlite:///{store_folder / 'harness.db'}", {"tps": "tps_median"})
    assert listed is not None and [r.figures["tps"] for r in listed[:3]] == [1000, 1001,
                                                                             1002]


def test_a_run_left_running_goes_to_the_full_store_which_marks_it(tmp_path):
    """The quick read never lists a dead harness's run as running: it leaves such a
    store to the full one, which marks the run interrupted first."""
    from harness.store import RunRecord, open_store
    from harness.store.listing import quick_runs

    folder = tmp_path / "results"
    store = open_store(str(folder))
    store.create_run(RunRecord(run_id="r1", run_set="s1", scenario="t", server="m",
                               flavor="mariadb", version="10.11.19", variant="default",
                               target="local", host="h",
                               started_at="2026-11-24T00:00:00"))  # status running
    assert quick_runs(f"sqlite:///{folder / 'harness.db'}", {}) is None


@pytest.mark.parametrize("command", sorted(
    build_parser()._subparsers._group_actions[0].choices))  # type: ignore[union-attr]
def test_every_sub_commands_help_loads_none_of_the_commands_code(command, tmp_path):
    got = _loaded([command, "--help"], tmp_path)
    assert not _heavy(got["modules"]), _heavy(got["modules"])
