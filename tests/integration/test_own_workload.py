"""A DBA's own workload on real servers: sysbench oltp_read_write on MariaDB 10.11
captured by the slow_log collector, replayed through `harness run` with every
statement, session and digest accounted for (the replayed server's own slow log shows
each captured session's statements in their captured order), replayed read-only (only
what cannot write runs), and a real mariadb-dump (routines, triggers, a view) loaded as
a dump dataset. One server for the module; the end-to-end replay has its own sandbox."""
from __future__ import annotations

import gzip
import html
import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness import proc
from harness.analysis.items import result_differences, runs_needed
from harness.collectors.base import CollectorContext
from harness.collectors.slow_log import SlowLog as Capture
from harness.errors import InputError
from harness.inputs.sqlread import first_write
from harness.providers.base import Server
from harness.server.mysql import connection, query
from harness.store import RunSummary, open_store
from harness.workloads import drop_dataset
from harness.workloads.base import RunContext
from harness.workloads.dump import DumpDataset, prepare_dataset, verify_dataset
from harness.workloads.fingerprint import digest, fingerprint
from harness.workloads.replay import Replay, ReplayWorkload
from harness.workloads.slowlog import SlowLog
from harness.workloads.sysbench import SysbenchDataset, SysbenchOLTP, SysbenchWorkload
from harness.workloads.sysbench import prepare_dataset as prepare_sysbench

from ..conftest import QUIET_COLLECTORS, a_run, harness, sandbox

pytestmark = pytest.mark.integration

DATA = SysbenchDataset(tables=2, table_size=2000)
COLLECTORS = QUIET_COLLECTORS + "  global_status: {enabled: false}\n"


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    with sandbox(innodb_buffer_pool_size="64M") as box:
        yield box


def _ctx(box: Server, folder: Path) -> RunContext:
    return RunContext(box.endpoint, folder, time.monotonic, lambda *a: None, lambda *a: None)


@pytest.fixture(scope="module")
def captured(server, tmp_path_factory) -> Path:
    """The slow log of 2 s of sysbench oltp_read_write at 2 threads, as the slow_log
    collector captures a run (the dataset is then put back as it was). (1 s: a loaded
    machine's sysbench may end before its first 1 s report.)"""
    folder = tmp_path_factory.mktemp("capture")
    ctx = _ctx(server, folder)
    prepare_sysbench(ctx, DATA)
    cctx = CollectorContext(endpoint=server.endpoint, flavor="mariadb", version=(10, 11),
                            clock=ctx.clock, sample=ctx.sample, event=ctx.event,
                            artifacts=folder)
    with connection(server.endpoint) as c:
        before = query(c, "SELECT @@GLOBAL.long_query_time, @@GLOBAL.slow_query_log")
    with Capture(cctx):
        SysbenchOLTP(SysbenchWorkload(test="oltp_read_write", threads=2, warmup_s=0,
                                      duration_s=2), DATA).run(ctx)
    with connection(server.endpoint) as c:
        assert query(c, "SELECT @@GLOBAL.long_query_time, @@GLOBAL.slow_query_log") == \
            before, "the capture put the server's options back"
    assert "bytes captured into slow.log" in " ".join(cctx.notes), cctx.notes
    drop_dataset(server.endpoint, DATA)  # as it was before the capture's writes
    prepare_sysbench(ctx, DATA)
    return folder / "slow.log"


def _sessions(log: Path) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for e in SlowLog(log):
        if not e.admin:
            out.setdefault(e.session, []).append(e.sql)
    return out


def test_a_captured_workload_replays_statement_for_statement(captured, tmp_path, results):
    sessions = _sessions(captured)
    assert len(sessions) == 2, "only sysbench's connections: the harness's stay out"
    shutil.copy(captured, tmp_path / "captured-slow.log")
    f = tmp_path / "replay.yaml"
    f.write_text("""\
name: replay
servers: [mariadb-10.11]
dataset: {tables: 2, table_size: 2000}
workload: {kind: replay, database: sbtest, log: captured-slow.log, clients: 4,
           checksums: true}
variants: {small: {mysqld: {innodb_buffer_pool_size: 32M}},
           large: {mysqld: {innodb_buffer_pool_size: 128M}}}
repetitions: 2
wakeup_probe: false
""" + COLLECTORS + "  slow_log: {enabled: true}\n")  # what the replayed server ran
    out = json.loads(harness("run", str(f), "--json", check=True).stdout)
    run = out["runs"][0]
    s = run["summary"]["measured"]
    entries = [e for e in SlowLog(captured) if not e.admin]
    assert s["statements"] == len(entries) > 500 and s["skipped"] == {}
    assert s["sessions"] == 2 and run["summary"]["threads"] == 4
    assert set(s["digests"]) == {digest(fingerprint(e.sql)) for e in entries}
    assert sum(x["count"] for x in s["digests"].values()) == s["statements"]
    assert s["errors"] <= 0.01 * s["statements"], s["digests"]
    # every captured session ran, in its captured order, on a connection of its own
    show = json.loads(harness("show", run["run_id"], "--json", check=True).stdout)
    replayed = list(_sessions(Path(show["artifacts"]) / "slow.log").values())
    for session, statements in sessions.items():
        assert any(r[-len(statements):] == statements for r in replayed), session
    (stored,) = open_store().series(run["run_id"], source="replay", metric="statements_per_s")
    assert stored.v.sum() == pytest.approx(s["statements"], rel=0.05)
    _compare_by_digest(out["run_set"], set(s["digests"]), results)


def _compare_by_digest(run_set: str, digests: set[str], results: Path) -> None:
    """harness compare on the replay's two variants: every digest judged (none decided
    on 2 runs a side, and the note says how many it takes), their results compared
    (writes racing across sessions make some vary from run to run), and the page."""
    got = harness("compare", "--run-sets", run_set, "--variants", "small", "large", "--json")
    assert got.returncode in (0, 3, 4), got.stderr
    out = json.loads(got.stdout)
    (c,) = out["comparisons"]
    # the Python clients' process, measured over the runs' measured parts
    own = out["conditions"]["harness_cpu"]
    assert own is not None and 0.02 < own < 1.6, own
    assert {x["item"] for x in c["items"]} == digests
    assert all(x["verdict"] is None for x in c["items"])
    assert f"{len(digests)} digests in every side's runs" in c["items_note"]
    assert f"it takes {runs_needed(0.05 / len(digests))} runs a side" in c["items_note"]
    compared = int(c["results_note"].split()[2])
    assert 0 < compared <= len(digests) and c["results_note"].startswith("results of ")
    page = (results / "reports" / run_set / "compare.html").read_text()
    assert all(d[:16] in page for d in digests) and html.escape(c["items_note"]) in page


def test_read_only_replays_only_what_cannot_write(server, captured, tmp_path):
    """Read-only, by sysbench's threads (the compiled client) and by the Python client:
    the same statements of the same digests in the same sessions; no write tried."""
    entries = [e for e in SlowLog(captured) if not e.admin]
    writes = [e for e in entries if first_write(e.sql)]
    assert writes and len(writes) < len(entries)
    with connection(server.endpoint) as c:
        before = query(c, "CHECKSUM TABLE sbtest.sbtest1, sbtest.sbtest2")
    by = {}
    for client in ("sysbench", "python"):
        spec = ReplayWorkload(kind="replay", database="sbtest", log=captured.name,
                              read_only=True, clients=2, client=client
                              ).located(captured.parent)
        (tmp_path / client).mkdir()
        m = by[client] = Replay(spec, DATA).run(_ctx(server, tmp_path / client)).summary
        assert m["skipped"] == {"could change data (read_only)": len(writes)}, client
        # in READ ONLY sessions a write would have failed (1792): none was tried
        assert m["statements"] == len(entries) - len(writes) and m["errors"] == 0, client
        assert m["sessions"] == 2, client
    assert {d: x["count"] for d, x in by["sysbench"]["digests"].items()} == \
        {d: x["count"] for d, x in by["python"]["digests"].items()}
    assert sum(x["rows"] for x in by["sysbench"]["digests"].values()) == \
        sum(x["rows"] for x in by["python"]["digests"].values()) > 0
    with connection(server.endpoint) as c:
        assert query(c, "CHECKSUM TABLE sbtest.sbtest1, sbtest.sbtest2") == before


@pytest.mark.alone  # a pace kept: on a quiet machine (a loaded one is BEHIND, and says so)
def test_a_paced_replay_takes_the_captured_time_over_its_speed(server, tmp_path):
    """MySQL 5.7's capture (tests/data: four sessions, timed to the microsecond), replayed
    read-only at a twentieth of its speed: it takes the captured span over the speed,
    and keeps the pace (its statements fail here: their databases are not on this
    server; the pace does not care)."""
    log = Path(__file__).parent.parent / "data" / "slowlog-mysql-5.7.29.log"
    starts = [e.start for e in SlowLog(log)]
    span = max(starts) - min(starts)
    spec = ReplayWorkload(kind="replay", database="sbtest", log=log.name,
                          read_only=True, clients=2, speed=0.05).located(log.parent)
    t = time.monotonic()
    m = Replay(spec, DATA).run(_ctx(server, tmp_path)).summary
    assert time.monotonic() - t >= span / 0.05 > 1
    assert m["late_statements"] >= m["statements"] > 10 and m["speed"] == 0.05
    assert m["late_p95_ms"] < 100 and "BEHIND" not in m["headline"], m["headline"]


def test_checksums_name_the_digests_whose_results_changed(server, captured, tmp_path):
    """Replayed read-only with checksums: twice on the same data, every digest's results
    agree; after the rows changed, exactly the SELECTs' digests differ, each with a
    statement that shows it (BEGIN and COMMIT return what they did)."""
    spec = ReplayWorkload(kind="replay", database="sbtest", log=captured.name,
                          read_only=True, clients=2, checksums=True).located(captured.parent)

    def run() -> Any:
        m = Replay(spec, DATA).run(_ctx(server, tmp_path)).summary
        return a_run(run_id="r", status="ok", summary=RunSummary.of_workload(m))

    same = [run(), run()]
    differ, note = result_differences(same[:1], same[1:])
    reads = list(same[0].summary.measured["digests"].values())
    assert differ == [] and note == f"results of {len(reads)} digests compared: 0 differ"
    change = "UPDATE sbtest.sbtest{} SET c = REVERSE(c), k = k {} 1"
    with connection(server.endpoint) as c:
        for t in (1, 2):
            query(c, change.format(t, "+"))
    try:
        changed = run()
    finally:
        with connection(server.endpoint) as c:
            for t in (1, 2):
                query(c, change.format(t, "-"))
    differ, _ = result_differences(same, [changed])
    assert {x.label for x in differ} == {x["fingerprint"] for x in reads
                                           if x["fingerprint"].startswith("select ")}
    assert all(x.example and x.example.startswith("SELECT ") for x in differ)


OBJECTS = [
    "CREATE VIEW src.busy AS SELECT k, COUNT(*) AS n FROM src.sbtest1 GROUP BY k",
    "CREATE TRIGGER src.sbtest2_bi BEFORE INSERT ON src.sbtest2 FOR EACH ROW "
    "SET NEW.pad = CONCAT('trigger:', NEW.pad)",
    "CREATE PROCEDURE src.top_k(IN lim INT) BEGIN SELECT k FROM sbtest1 ORDER BY k DESC "
    "LIMIT lim; END",
]


def test_a_real_dump_loads_as_the_same_database(server, tmp_path):
    ctx = _ctx(server, tmp_path)
    prepare_sysbench(ctx, SysbenchDataset(database="src", tables=2, table_size=3000))
    with connection(server.endpoint) as c, c.cursor() as cur:
        for sql in OBJECTS:
            cur.execute(sql)
        checksums = query(c, "CHECKSUM TABLE src.sbtest1, src.sbtest2")
    cnf = server.endpoint.write_defaults_file(tmp_path / "client.cnf")
    out = subprocess.run([proc.which("mariadb-dump"), f"--defaults-extra-file={cnf}",
                          "--routines", "--triggers", "--databases", "src"],
                         check=True, capture_output=True).stdout
    (tmp_path / "src.sql.gz").write_bytes(gzip.compress(out))
    data = DumpDataset(kind="dump", database="src", file="src.sql.gz",
                       threads=2).located(tmp_path)
    with pytest.raises(InputError, match="a dump of database src: load it as database: src"):
        prepare_dataset(ctx, DumpDataset(kind="dump", database="dst", file="src.sql.gz")
                        .located(tmp_path))
    done = prepare_dataset(ctx, data)  # the database dropped and loaded from the dump
    assert done.tables == {"sbtest1": 3000, "sbtest2": 3000} and done.rows == 6000
    assert done.own["deferred_indexes"] == 2 and done.own["objects"] >= 3  # k_1, k_2
    assert done.own["skipped"]["LOCK/UNLOCK TABLES (the load is alone)"] == 4
    assert verify_dataset(server.endpoint, data) == []
    with connection(server.endpoint) as c:
        # the same rows, none through the trigger (made after them)
        assert query(c, "CHECKSUM TABLE src.sbtest1, src.sbtest2") == checksums
        for t in ("sbtest1", "sbtest2"):
            assert {r[2] for r in query(c, f"SHOW INDEX FROM src.{t}")} == {"PRIMARY",
                                                                       f"k_{t[-1]}"}
        (definer,) = query(c, "SELECT DEFINER FROM information_schema.VIEWS WHERE "
                              "TABLE_SCHEMA = 'src'")
        assert definer[0].startswith(server.endpoint.user + "@")
        assert query(c, "SELECT n FROM src.busy LIMIT 1")
        assert query(c, "SELECT TRIGGER_NAME FROM information_schema.TRIGGERS WHERE "
                        "TRIGGER_SCHEMA = 'src'") == [("sbtest2_bi",)]
        assert len(query(c, "CALL src.top_k(2)")) == 2


@pytest.mark.parametrize("fmt", ["tsv", "csv"])
def test_a_tab_dump_loads_by_load_data(server, tmp_path, fmt):
    """mariadb-dump --tab (the server writes each table's data file; as CSV with the
    options that make one) loaded from the directory: the same rows, the secondary
    index after them, the trigger that was in its table's .sql."""
    ctx = _ctx(server, tmp_path)
    db = f"tab_{fmt}"
    prepare_sysbench(ctx, SysbenchDataset(database=db, tables=2, table_size=2000))
    with connection(server.endpoint) as c, c.cursor() as cur:
        cur.execute(f"UPDATE {db}.sbtest1 SET pad = 'tab\\there, \"quoted\", back\\\\slash'"
                    " WHERE id <= 10")
        cur.execute(f"CREATE TRIGGER {db}.t2_bi BEFORE INSERT ON {db}.sbtest2 FOR EACH ROW "
                    "SET NEW.pad = 'trigger'")
        checksums = query(c, f"CHECKSUM TABLE {db}.sbtest1, {db}.sbtest2")
    folder = server.dir / "files" / f"tab-{fmt}"  # where secure_file_priv lets it write
    folder.mkdir()
    folder.chmod(0o777)  # the server writes the data files, as its own account
    cnf = server.endpoint.write_defaults_file(tmp_path / "client.cnf")
    csv = ["--fields-terminated-by=,", "--fields-optionally-enclosed-by=\""] \
        if fmt == "csv" else []
    subprocess.run([proc.which("mariadb-dump"), f"--defaults-extra-file={cnf}",
                    f"--tab={folder}", *csv, db], check=True, capture_output=True)
    shutil.copytree(folder, tmp_path / "tab")  # as handed over
    if fmt == "csv":
        for f in (tmp_path / "tab").glob("*.txt"):
            f.rename(f.with_suffix(".csv"))
    data = DumpDataset(kind="dump", database=db, file="tab").located(tmp_path)
    done = prepare_dataset(ctx, data)
    assert done.tables == {"sbtest1": 2000, "sbtest2": 2000}
    assert done.own["load_data_warnings"] == {} and done.own["deferred_indexes"] == 2
    assert verify_dataset(server.endpoint, data) == []
    with connection(server.endpoint) as c:
        assert query(c, f"CHECKSUM TABLE {db}.sbtest1, {db}.sbtest2") == checksums
        assert query(c, "SELECT TRIGGER_NAME FROM information_schema.TRIGGERS WHERE "
                        f"TRIGGER_SCHEMA = '{db}'") == [("t2_bi",)]
