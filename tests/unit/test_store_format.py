"""Stores of an older format are migrated, never refused without a way forward; a store
left half-made is finished; runs left 'running' by a dead process are found; a failing
store stops the run instead of hoarding samples."""
from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import insert

from harness.cli import main
from harness.errors import StoreError, StoreOpenError
from harness.store import RunRecord, open_store, schema

from ..conftest import ROOT

V1 = Path(__file__).parent.parent / "data" / "store-v1.db"


def _record(run_id: str = "r1") -> RunRecord:
    return RunRecord(run_id=run_id, run_set="s1", scenario="sc", server="mariadb-10.11",
                     flavor="mariadb", version="10.11.19", variant="default",
                     target="local", host="h", started_at=datetime.now(UTC).isoformat())


def test_a_v1_store_is_refused_with_the_way_forward_then_migrated(tmp_path, capsys):
    db = tmp_path / "old.db"
    shutil.copy(V1, db)
    url = f"sqlite:///{db}"
    with pytest.raises(StoreOpenError, match="harness store migrate"):
        open_store(url)
    assert main(["runs", "--results", url]) == 9
    assert main(["store", "migrate", "--results", url]) == 0
    out = capsys.readouterr().out
    assert "format 1 -> 2" in out and "format 2 -> 3: artifacts table added" in out
    store = open_store(url)
    assert store.format_version == schema.FORMAT_VERSION
    assert all(store.artifact_names(r.run_id) == [] for r in store.runs())
    # vmstat's columns lose the node_exporter prefix they never had a right to
    ok_id = next(r.run_id for r in store.runs() if r.status == "ok")
    vm = {x.metric for x in store.series(ok_id, source="vmstat")}
    assert {"si", "so", "wa", "free_bytes"} <= vm and not any("node_" in m for m in vm)
    (so,) = store.series(ok_id, source="vmstat", metric="so")  # found by its new key
    assert len(so.v) > 10
    runs = {r.run_id: r for r in store.runs()}
    assert sorted(r.status for r in runs.values()) == ["ok", "running"]
    ok = next(r for r in runs.values() if r.status == "ok")
    (tps,) = store.series(ok.run_id, metric="tps")  # samples written by format 1 read back
    assert len(tps.v) > 10 and (tps.v > 0).all()
    # its summary, written flat before summaries had a version, reads typed
    s = ok.summary
    assert s.workload == "sysbench oltp_point_select" and s.threads == 4
    assert s.figure("tps_median") == 53860.88 and s.start_s == 17.871
    assert s.measured["ramp"][0]["threads"] == 4 and "threads" not in s.measured
    assert s.side_loads == [] and s.expectations == []
    assert main(["store", "migrate", "--results", url]) == 0  # again: nothing to do
    assert "nothing to do" in capsys.readouterr().out


def test_two_migrations_at_once_take_turns_and_run_each_step_once(tmp_path):
    db = tmp_path / "old.db"
    shutil.copy(V1, db)
    url = f"sqlite:///{db}"
    procs = [subprocess.Popen([sys.executable, "-m", "harness", "store", "migrate",
                               "--results", url], cwd=ROOT, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(3)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], outs
    said = "".join(o for o, _ in outs)
    assert said.count("format 1 -> 2") == 1 and said.count("format 2 -> 3") == 1, said
    assert open_store(url).format_version == schema.FORMAT_VERSION


def test_store_check_finds_runs_a_dead_harness_left_running(tmp_path, capsys):
    db = tmp_path / "old.db"
    shutil.copy(V1, db)
    url = f"sqlite:///{db}"
    main(["store", "migrate", "--results", url])
    store = open_store(url)
    store.create_run(_record("dead"))  # this process's host, a pid that is not a harness
    with store.engine.begin() as c:
        c.exec_driver_sql("UPDATE runs SET owner = owner || '0' WHERE run_id = 'dead'")
        c.exec_driver_sql("UPDATE runs SET owner = substr(owner, 1, instr(owner, ':')) "
                          "|| '999999999' WHERE run_id = 'dead'")
    store.create_run(_record("alive"))  # this very process: still running
    capsys.readouterr()
    assert main(["store", "check", "--results", url]) == 8
    out = capsys.readouterr().out
    assert "stale: run dead: its harness process 999999999 is gone" in out
    assert "over a day ago" in out and "alive" not in out
    assert main(["store", "check", "--repair", "--results", url]) == 0
    status = {r.run_id: r.status for r in store.runs()}
    assert status["dead"] == "interrupted" and status["alive"] == "running"
    assert list(status.values()).count("interrupted") == 2  # and the v1 fixture's


def test_a_store_left_without_its_version_row_is_finished(tmp_path):
    db = tmp_path / "half.db"
    c = sqlite3.connect(db)  # what a creator killed between the tables and the row left
    c.execute("CREATE TABLE harness_meta (key VARCHAR(64) PRIMARY KEY, value VARCHAR(255))")
    c.commit()
    c.close()
    store = open_store(f"sqlite:///{db}")
    assert store.format_version == schema.FORMAT_VERSION
    store.create_run(_record())
    assert [r.run_id for r in store.runs()] == ["r1"]
    # With runs in it, it is not this harness's to finish: refused with what to do.
    with store.engine.begin() as conn:
        conn.exec_driver_sql("DELETE FROM harness_meta")
    with pytest.raises(StoreError, match="1 runs but no format version row"):
        open_store(f"sqlite:///{db}")


def test_a_new_store_has_its_version_from_its_first_moment(tmp_path):
    """Tables and version row are one transaction: no reader ever sees one without the
    other (the failure that left stores unopenable)."""
    url = f"sqlite:///{tmp_path}/h.db"
    open_store(url)
    c = sqlite3.connect(tmp_path / "h.db")
    assert c.execute("SELECT value FROM harness_meta").fetchall() == [
        (str(schema.FORMAT_VERSION),)]


@pytest.mark.parametrize("url, needle, code", [
    ("sqlite:///", "names no file", 2),
    ("sqlite:///:memory:", "names no file", 2),
    ("sqlite:////proc/nope/h.db", "cannot write in /proc/nope", 9),
])
def test_a_store_url_that_cannot_hold_results_is_bad_input(url, needle, code, capsys):
    assert main(["runs", "--results", url]) == code
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err


def test_a_writer_whose_store_keeps_failing_gives_up_with_the_cause(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_STORE_MAX_PENDING", "50")
    store = open_store(f"sqlite:///{tmp_path}/h.db")
    store.create_run(_record())
    w = store.writer("r1", chunk_points=10, flush_interval_s=1e9)
    told: list[str] = []
    w.on_failure.append(told.append)
    with store.engine.begin() as c:
        c.exec_driver_sql("ALTER TABLE chunks RENAME TO chunks_away")
    for t in range(1000):
        w.add(float(t), "s", f"m{t % 3}", 1.0)
    assert told and "chunks" in told[0]  # the hooks ran once, with the cause
    assert len(told) == 1 and w.dropped > 0
    assert w._pending <= 50 + 4 * 10  # bounded: what waited when it gave up
    with pytest.raises(StoreError, match="1000 samples not stored"):
        w.close()


def test_a_run_id_prefix_is_literal(tmp_path):
    store = open_store(f"sqlite:///{tmp_path}/h.db")
    store.create_run(_record("20261124-a"))
    with store.engine.begin() as c:
        c.execute(insert(schema.runs).values(**{**_record("20261124-b").__dict__,
                                                 "details": "{}", "owner": None}))
    assert store.get_run("2026") is None  # ambiguous
    assert store.get_run("_") is None and store.get_run("%") is None
    assert store.get_run("20261124-a").run_id == "20261124-a"


def test_the_default_results_folder_does_not_depend_on_the_working_directory(
        tmp_path, monkeypatch):
    from harness.paths import results_dir

    monkeypatch.delenv("HARNESS_RESULTS", raising=False)
    monkeypatch.chdir(tmp_path)
    assert results_dir() == ROOT / "results"  # the checkout's, from anywhere
    monkeypatch.setenv("HARNESS_RESULTS", "rel")
    assert results_dir() == tmp_path / "rel"  # made absolute where it was given


def test_a_runs_files_are_kept_in_the_store_except_the_large_ones(tmp_path, capsys):
    store = open_store(f"sqlite:///{tmp_path / 'harness.db'}")
    folder = tmp_path / "runs" / "r1"
    (folder / "pt").mkdir(parents=True)
    (folder / "my.cnf").write_text("[mysqld]\ninnodb_buffer_pool_size = 64M\n")
    (folder / "pt" / "summary.txt").write_bytes(b"\x00binary\xff" * 10)
    (folder / "dump.sql").write_bytes(b"x" * 5000)
    store.create_run(RunRecord(**{**_record().__dict__, "artifacts": str(folder)}))
    assert store.get_run("r1").artifacts == str(folder)  # stored relative, read back
    assert store.save_artifacts("r1", folder, limit=4096) == ["dump.sql (0 MB)"]
    assert store.artifact_names("r1") == [("my.cnf", 39), ("pt/summary.txt", 80)]
    assert store.artifact("r1", "pt/summary.txt") == b"\x00binary\xff" * 10
    assert store.artifact("r1", "dump.sql") is None
    (folder / "my.cnf").write_text("changed")  # saved again: replaced, not doubled
    store.save_artifacts("r1", folder, limit=4096)
    assert store.artifact("r1", "my.cnf") == b"changed"
    url = f"sqlite:///{tmp_path / 'harness.db'}"
    assert main(["artifacts", "r1", "-o", str(tmp_path / "out"), "--results", url]) == 0
    assert (tmp_path / "out" / "pt" / "summary.txt").read_bytes() == b"\x00binary\xff" * 10
    assert main(["artifacts", "r1", "nope", "--results", url]) == 9
    assert "has no file 'nope'" in capsys.readouterr().err


def test_a_store_given_as_a_path_is_its_sqlite_file(tmp_path, capsys):
    from harness.cli import main
    from harness.store import open_store
    from harness.store.url import as_url

    assert as_url(str(tmp_path / "lab")) == f"sqlite:///{tmp_path}/lab/harness.db"
    assert as_url(str(tmp_path / "night.db")) == f"sqlite:///{tmp_path}/night.db"
    assert as_url("mysql+pymysql://u@h/db") == "mysql+pymysql://u@h/db"
    assert as_url("sqlite:///x.db") == "sqlite:///x.db"
    store = open_store(str(tmp_path / "lab"))
    assert store.url == f"sqlite:///{tmp_path}/lab/harness.db"
    assert (tmp_path / "lab" / "harness.db").is_file()
    assert main(["runs", "--results", str(tmp_path / "lab")]) == 0  # a folder, as typed
