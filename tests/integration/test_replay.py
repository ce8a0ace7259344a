"""A workload captured and replayed on real servers, through `harness run` each time:
sysbench oltp_read_write on MariaDB 10.11 with the slow_log collector on, whose
slow.log is then replayed with every statement, session and digest accounted for (the
replayed server's own slow log shows each captured session's statements in their
captured order), and replayed read-only, which runs only what cannot write."""
from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.sqlread import first_write
from harness.store import open_store
from harness.workloads.fingerprint import digest, fingerprint
from harness.workloads.slowlog import SlowLog

from ..conftest import QUIET_COLLECTORS, harness

pytestmark = pytest.mark.integration

COLLECTORS = QUIET_COLLECTORS + "  global_status: {enabled: false}\n"
BASE = """\
servers: [mariadb-10.11]
dataset: {tables: 1, table_size: 2000}
wakeup_probe: false
"""


@pytest.fixture(scope="module")
def captured(tmp_path_factory) -> Iterator[Path]:
    """The slow log of 3 s of sysbench oltp_read_write at 2 threads, as the harness's
    slow_log collector stored it with the run."""
    folder = tmp_path_factory.mktemp("capture")
    f = folder / "capture.yaml"
    f.write_text("name: capture\n" + BASE + """\
workload: {test: oltp_read_write, threads: 2, duration_s: 3}
""" + COLLECTORS + "  slow_log: {enabled: true}\n")
    env = {"HARNESS_RESULTS": str(folder / "results")}
    out = json.loads(harness("run", str(f), "--json", check=True, env=env).stdout)
    (run,) = out["runs"]
    notes = " ".join(run["summary"]["collectors"]["notes"])
    assert "bytes captured into slow.log" in notes, notes
    show = json.loads(harness("show", run["run_id"], "--json", check=True, env=env).stdout)
    assert [e["kind"] for e in show["events"] if e["name"] == "slow_log"] == \
        ["capture_start", "capture_end"]
    yield Path(show["artifacts"]) / "slow.log"


def _sessions(log: Path) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for e in SlowLog(log):
        if not e.admin:
            out.setdefault(e.session, []).append(e.sql)
    return out


def _replay(tmp_path: Path, captured: Path, workload: str, extra: str = "") -> dict:
    shutil.copy(captured, tmp_path / "captured-slow.log")
    f = tmp_path / "replay.yaml"
    f.write_text("name: replay\n" + BASE + f"workload: {{kind: replay, database: sbtest, "
                 f"log: captured-slow.log, {workload}}}\n" + extra + COLLECTORS)
    (run,) = json.loads(harness("run", str(f), "--json", check=True).stdout)["runs"]
    return run


def test_a_captured_workload_replays_statement_for_statement(captured, tmp_path, results):
    folder = tmp_path / "replayed"
    folder.mkdir()
    folder.chmod(0o777)  # the replayed server's own slow log, to hold it to the capture
    run = _replay(tmp_path, captured, "clients: 4", "mysqld: {slow_query_log: 1, "
                  f"long_query_time: 0, slow_query_log_file: {folder}/slow.log}}\n")
    s = run["summary"]["measured"]
    entries = [e for e in SlowLog(captured) if not e.admin]
    sessions = _sessions(captured)
    assert s["statements"] == len(entries) > 500 and s["skipped"] == {}
    assert s["sessions"] == len(sessions) >= 2
    assert set(s["digests"]) == {digest(fingerprint(e.sql)) for e in entries}
    assert sum(x["count"] for x in s["digests"].values()) == s["statements"]
    assert s["errors"] <= 0.01 * s["statements"], s["digests"]
    assert s["statements_per_s"] > 0 and run["summary"]["threads"] == 4
    # every captured session ran, in its captured order, on a connection of its own
    replayed = list(_sessions(folder / "slow.log").values())
    for session, statements in sessions.items():
        assert any(r[-len(statements):] == statements for r in replayed), session
    (stored,) = open_store().series(run["run_id"], source="replay", metric="statements_per_s")
    assert stored.v.sum() == pytest.approx(s["statements"], rel=0.05)


def test_read_only_replays_only_what_cannot_write(captured, tmp_path, results):
    entries = [e for e in SlowLog(captured) if not e.admin]
    writes = [e for e in entries if first_write(e.sql)]
    assert writes and len(writes) < len(entries)
    s = _replay(tmp_path, captured, "clients: 2, read_only: true")["summary"]["measured"]
    assert s["skipped"] == {"could change data (read_only)": len(writes)}
    # in READ ONLY sessions a write would have failed (1792): none was tried
    assert s["statements"] == len(entries) - len(writes) and s["errors"] == 0
