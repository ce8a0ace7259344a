"""The run summary is typed and versioned: what every run has is a field, what its
workload measured stays by key, a store of any age reads alike, and a summary this
harness cannot read is refused with a message rather than read wrongly."""
from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime

import pytest
from sqlalchemy import update

from harness.errors import StoreError
from harness.store import Finding, RunRecord, RunSummary, open_store, schema
from harness.store.activity import Collected, ConfigChangeRun, PassRun, PollStats, SideLoadRun
from harness.store.finding import RunStat
from harness.store.phase import Diagnostics, Phase
from harness.store.prepared import Prepared
from harness.store.summary import VERSION

SYSBENCH = {"workload": "sysbench oltp_read_only", "threads": 4, "duration_s": 30,
            "warmup_s": 5, "tps_median": 1622.5, "latency_p95_ms": 0.69, "intervals": 30,
            "workload_start_s": 3.2, "workload_end_s": 38.4, "errors": 0.0}


DUMP = SideLoadRun("dump", "mysqldump", "ok")


def _store(tmp_path):
    store = open_store(f"sqlite:///{tmp_path}/h.db")
    store.create_run(RunRecord(run_id="r1", run_set="s1", scenario="sc", server="srv",
                               flavor="mariadb", version="10.11", variant="v",
                               target="local", host="h",
                               started_at=datetime.now(UTC).isoformat()))
    return store


def _raw(store, summary: dict) -> None:
    """A summary as another harness (older or newer) wrote it."""
    with store.engine.begin() as c:
        c.execute(update(schema.runs).where(schema.runs.c.run_id == "r1")
                  .values(summary=json.dumps(summary)))


def test_the_workloads_keys_stay_by_key_and_every_runs_fields_are_typed():
    s = RunSummary.of_workload(dict(SYSBENCH, flights=[{"flight": "cold"}], ok=True,
                                    note="x"), samples=120, side_loads=[DUMP])
    assert (s.workload, s.threads, s.duration_s, s.warmup_s) == \
        ("sysbench oltp_read_only", 4, 30, 5)
    assert s.start_s == 3.2 and s.samples == 120 and s.side_loads == [DUMP]
    assert "threads" not in s.measured and s.measured["intervals"] == 30
    assert s.figure("tps_median") == 1622.5 and s.figure("errors") == 0.0
    # a figure is a number: a list, a flag, a word or a missing key is not one
    assert [s.figure(k) for k in ("flights", "ok", "note", "tpmc")] == [None] * 4
    f = Finding(name="f", outcome="reproduced")
    assert s.but(expectations=[f]).expectations == [f]
    assert s.expectations == [], "but() leaves the summary it copies alone"


def test_a_summary_goes_through_the_store_as_it_was(tmp_path):
    store = _store(tmp_path)
    found = Finding(name="f", outcome="inconclusive", value=0.8, ci95=[0.7, 0.9], max=0.75,
                    metric="tps_ratio", server="s", variant="v", own={"phase": "dump"})
    s = RunSummary.of_workload(SYSBENCH, samples=9, main_window=[8.2, 38.4],
                               phases=[Phase("dump", seconds=4.0)],
                               expectations=[found])
    store.update_run("r1", status="ok", summary=s)
    back = store.get_run("r1").summary
    assert back == s and back.version == VERSION
    stored = json.loads(store.engine.connect().execute(
        schema.runs.select()).first()._mapping["summary"])
    assert stored["version"] == VERSION and stored["measured"]["tps_median"] == 1622.5
    # every field is stored, in the order it is declared, and nothing else
    assert list(stored) == [f.name for f in dataclasses.fields(RunSummary)]
    # a finding is stored flat, its kind's fields beside the common ones, as before
    assert stored["expectations"] == [{
        "name": "f", "metric": "tps_ratio", "value": 0.8, "min": None, "max": 0.75,
        "outcome": "inconclusive", "reproduced": False, "ci95": [0.7, 0.9], "runs": 1,
        "why_not": None, "server": "s", "variant": "v", "phase": "dump"}]


def test_a_flat_summary_of_before_versions_reads_typed(tmp_path):
    store = _store(tmp_path)
    _raw(store, dict(SYSBENCH, samples=40, side_loads=None, phases=None,
                     expectations=[{"name": "f", "outcome": "reproduced"}]))
    s = store.get_run("r1").summary
    assert s.workload == "sysbench oltp_read_only" and s.samples == 40
    assert s.figure("latency_p95_ms") == 0.69 and s.side_loads == [] and s.phases is None
    assert s.expectations[0].outcome == "reproduced" and s.expectations[0].reproduced
    assert set(s.measured) == {"tps_median", "latency_p95_ms", "intervals", "errors"}


@pytest.mark.parametrize("written, needle", [
    ({"version": VERSION + 1, "workload": "x"},
     f"run r1: summary version {VERSION + 1} is newer than this harness reads"),
    ({"version": VERSION, "workload": "x", "tps": 1.0},
     "run r1: summary version 2 with unknown fields ['tps']"),
])
def test_a_summary_this_harness_cannot_read_is_refused_naming_the_run(tmp_path, written,
                                                                      needle):
    store = _store(tmp_path)
    _raw(store, written)
    with pytest.raises(StoreError, match=needle.replace("[", r"\[").replace("]", r"\]")):
        store.runs()


def test_a_phase_stored_before_the_diagnostics_reads_typed_and_marked_partial(tmp_path):
    """A phase row of an early store (no collapsed share, no diagnostics) reads as a
    Phase, marked partial so the phase report works those out again; a whole one as
    it was written."""
    store = _store(tmp_path)
    old = {"phase": "dump", "start_s": 20.0, "end_s": 30.0, "seconds": 10.0,
           "main_intervals_inside": 10, "tps_median_inside": 5.0, "tps_ratio": 0.05,
           "indexes": {"s.t.PRIMARY": {"mb_before": 1.56, "mb_min_during": 0.0}}}
    _raw(store, dict(SYSBENCH, phases=[old]))
    (ph,) = store.get_run("r1").summary.phases
    assert ph.partial and ph.diagnostics is None and ph.ratio("tps_ratio") == (0.05, None)
    assert ph.indexes["s.t.PRIMARY"].mb_before == 1.56 and ph.p95_ratio is None
    whole = Phase("dump", 20.0, 30.0, 10.0, tps_collapsed_share=0.5,
                  diagnostics=Diagnostics(pages_read_per_s=440.0))
    store.update_run("r1", status="ok", summary=RunSummary(phases=[whole]))
    (back,) = store.get_run("r1").summary.phases
    assert back == whole and not back.partial
    assert back.diagnostics and back.diagnostics.pages_read_per_s == 440.0


def test_a_prepare_is_stored_flat_and_read_back_typed(tmp_path):
    """A dataset's load, its kind's figures beside the common ones as they always were;
    a datadir's load stored before it named its database reads with "?"."""
    store = _store(tmp_path)
    ssb = Prepared.timed("ssb", 6000, 2.0, kind="ssb", tables={"lineorder": 6000},
                         own={"load_s": 1.5})
    store.update_run("r1", status="ok", summary=RunSummary(prepare=[ssb]))
    assert store.get_run("r1").summary.prepare == [ssb]
    stored = json.loads(store.engine.connect().execute(
        schema.runs.select()).first()._mapping["summary"])
    assert stored["prepare"] == [{"database": "ssb", "rows": 6000, "seconds": 2.0,
                                  "rows_per_s": 3000.0, "kind": "ssb",
                                  "tables": {"lineorder": 6000}, "load_s": 1.5}]
    _raw(store, dict(SYSBENCH, prepare=[{"seconds": 0.5, "rows": 10, "tables": 2,
                                         "copied_from": "/backups/x"}]))
    (old,) = store.get_run("r1").summary.prepare
    assert (old.database, old.table_count, old.own) == ("?", 2, {"copied_from": "/backups/x"})


def test_what_ran_beside_the_workload_is_stored_as_it_was_and_read_back_typed(tmp_path):
    """Side loads (their passes, a query side load's seconds per query inside a pass's
    extra), config changes and the collectors' stats: the stored JSON has the shape it
    always had, and reads back equal."""
    store = _store(tmp_path)
    p = PassRun(1, 10.0, 14.5, "ok", 0, 2048, 10, extra={"file": "/d/dump.sql"},
                query_seconds={"Q1.1": 0.25}, queries=1)
    load = SideLoadRun("dump", "mysqldump", "ok", 10.0, 14.5, 4.5, [p], 1, 2048, 10,
                       deadline_hit=True)
    change = ConfigChangeRun("obt", 5.0, {"innodb_old_blocks_time": 0}, None,
                             {"innodb_old_blocks_time": "1000"})
    seen = Collected(["pt-summary: from run r0"], {"global_status": PollStats(1.0, 30, 0)})
    s = RunSummary(side_loads=[load], config_changes=[change], collectors=seen)
    store.update_run("r1", status="ok", summary=s)
    assert store.get_run("r1").summary == s
    stored = json.loads(store.engine.connect().execute(
        schema.runs.select()).first()._mapping["summary"])
    (sp,) = stored["side_loads"][0]["passes"]
    assert sp["extra"] == {"file": "/d/dump.sql", "query_seconds": {"Q1.1": 0.25},
                           "queries": 1} and sp["seconds"] == 4.5
    assert stored["side_loads"][0]["deadline_hit"] is True
    assert stored["config_changes"] == [{"name": "obt", "t": 5.0, "error": None,
                                         "set_global": {"innodb_old_blocks_time": 0},
                                         "reset": {"innodb_old_blocks_time": "1000"}}]
    assert stored["collectors"]["notes"] == ["pt-summary: from run r0"]
    assert stored["collectors"]["global_status"]["samples"] == 30


def test_a_runs_kept_statistic_reads_typed_whatever_stored_it(tmp_path):
    """A run-set finding's statistic as each run kept it: with its interval, or (runs
    stored before there were intervals) the bare value."""
    store = _store(tmp_path)
    _raw(store, dict(SYSBENCH, series_stats={"hll": {"value": 12.5, "ci95": [11.0, 14.0]},
                                             "old": 7, "none": {"value": None}}))
    kept = store.get_run("r1").summary.series_stats
    assert kept == {"hll": RunStat(12.5, [11.0, 14.0]), "old": RunStat(7.0),
                    "none": RunStat(None)}
