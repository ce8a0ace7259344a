"""A stored run is typed: the store returns StoredRun, whose fields read as attributes
(and by key, for scripts written against the dict rows of before)."""
from __future__ import annotations

from dataclasses import asdict

import pytest

from harness.store import RunRecord, RunSummary, StoredRun, open_store
from harness.store.details import RunDetails


def test_the_store_returns_typed_runs_read_as_attributes(tmp_path):
    store = open_store(f"sqlite:///{tmp_path}/s.db")
    store.create_run(RunRecord(
        run_id="r1", run_set="rs1", scenario="sc", server="mariadb-10.11", flavor="mariadb",
        version="10.11.19", variant="a", target="local", host="h1",
        started_at="2026-11-28T01:00:00+00:00", repetition=2, details=RunDetails(scale=2.0),
        artifacts=str(tmp_path / "runs" / "r1")))
    store.update_run("r1", status="ok", summary=RunSummary.of_workload({"tps_median": 7.0}))
    (run,) = store.runs(run_set="rs1")
    assert isinstance(run, StoredRun) and run == store.get_run("r1")
    assert (run.server, run.variant, run.repetition, run.status) == ("mariadb-10.11", "a", 2,
                                                                      "ok")
    assert run.summary.figure("tps_median") == 7.0 and run.details == RunDetails(scale=2.0)
    # an SQLite store keeps the folder relative to itself and gives it back whole
    assert run.artifacts == str(tmp_path / "runs" / "r1")
    assert store.engine.connect().exec_driver_sql(
        "SELECT artifacts FROM runs").scalar() == "runs/r1"
    with pytest.raises(TypeError):  # read as attributes only; asdict for a row
        run["run_id"]  # type: ignore[index]  # the old dict reading, gone
    assert asdict(run)["host"] == "h1"
    # a copy judged afresh leaves the stored run as it was
    again = run.but(summary=RunSummary())
    assert again.summary.figure("tps_median") is None
    assert store.get_run("r1").summary.figure("tps_median") == 7.0


def test_a_runs_details_read_typed_and_keep_what_a_newer_harness_wrote():
    """Each known field typed (the report's hints as Hints), a field this harness does
    not know kept and written back as it was, a field never set not written."""
    stored = {"scale": 2.0, "report": {"watch_indexes": ["db.t.PRIMARY"],
                                       "baseline_server": "mysql-5.7.29"},
              "server_state": {"how": "new sandbox"}, "from_a_newer_harness": [1, 2]}
    d = RunDetails.from_json(stored)
    assert d.report is not None and d.report.baseline_server == "mysql-5.7.29"
    assert d.extra == {"from_a_newer_harness": [1, 2]} and d.purpose is None
    d.note_state("a note")
    assert d.to_json() == {**stored, "server_state": {"how": "new sandbox",
                                                      "notes": ["a note"]}}
    assert RunDetails().to_json() == {}
