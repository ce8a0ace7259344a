"""The wait-events collector on real servers during real sysbench runs: performance_schema
turned on by start-up options (the server's own variables say so), every wait instrument
enabled from the start (fewer when the scenario says so), the time waited per instrument
stored and ranked as the report draws it; where performance_schema is off, InnoDB's own
mutex counters or a note."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from harness.collectors.wait_events import COUNT, MUTEX, SECONDS
from harness.report.html import PANELS, lines_drawn
from harness.store import open_store

from ..conftest import harness

pytestmark = pytest.mark.integration

SCENARIO = """\
name: waits
servers: [{server}]
mysqld: {{innodb_buffer_pool_size: 32M{extra}}}
dataset: {{tables: 1, table_size: 10000}}
workload: {{test: oltp_read_write, threads: 2, warmup_s: 1, duration_s: 5}}
collectors:
  wait_events: {{enabled: true{wait}}}{collectors}
wakeup_probe: false
"""


def _run(tmp_path: Path, server: str, extra: str = "", collectors: str = "",
         wait: str = "") -> dict:
    f = tmp_path / "w.yaml"
    f.write_text(SCENARIO.format(server=server, extra=extra, collectors=collectors,
                                 wait=wait))
    harness("run", str(f), check=True)
    (run,) = json.loads(harness("runs", "--json", check=True).stdout)["runs"]
    return json.loads(harness("show", run["run_id"], "--json", check=True).stdout)


def waits_sampled(show: dict, store: Any, artifacts: Path) -> None:
    """The run's waits: performance_schema on from start-up (the server's own variables
    say so), the instruments enabled from the start moving, the report's top lines."""
    rid = show["run_id"]
    assert show["details"]["options"]["performance_schema"] == "ON"
    variables = json.loads((artifacts / "variables-start.json").read_text())
    assert variables["performance_schema"] == "ON", variables["performance_schema"]
    seconds = {s.labels["event_name"]: s for s in store.series(rid, metric=SECONDS)}
    counts = {s.labels["event_name"]: s for s in store.series(rid, metric=COUNT)}
    assert set(seconds) == set(counts) and len(seconds) >= 5, sorted(seconds)
    # read-write sysbench waits on InnoDB's mutexes and writes its log: both instruments
    # were enabled from the start (off by default on MySQL, everything off on MariaDB)
    grew = {n for n, s in counts.items() if len(s.v) > 1 and s.v[-1] > s.v[0]}
    assert any(n.startswith("wait/synch/") for n in grew), sorted(grew)
    assert any(n.startswith("wait/io/file/") for n in grew), sorted(grew)
    # the server's own mutexes too (5.5: every instrument comes with performance_schema)
    assert any(n.startswith("wait/synch/mutex/sql/") for n in grew), sorted(grew)
    notes = " ".join(show["summary"]["collectors"]["notes"])
    assert "wait instruments are not enabled" not in notes, notes
    for s in seconds.values():  # cumulative, never going back
        assert all(b >= a for a, b in zip(s.v, s.v[1:], strict=False)), s.labels
    assert "idle" not in seconds  # a connection waiting for its client is no wait
    # the report's panel: the six that grew most, each a line of its own, condition
    # waits (background threads sleeping between rounds) left out of the ranking
    (line,) = next(p for p in PANELS if p.lines[0].metric == SECONDS).lines
    drawn = lines_drawn(store, rid, line)
    assert 1 <= len(drawn) <= 6, drawn
    assert not any(d.label.startswith("wait/synch/cond/") for d in drawn), drawn
    growth = sorted((s.v[-1] - s.v[0] for n, s in seconds.items()
                     if not n.startswith("wait/synch/cond/")), reverse=True)
    top = seconds[drawn[0].label]
    assert top.v[-1] - top.v[0] == growth[0]


def test_waits_on_5_5_where_performance_schema_has_no_instrument_option(tmp_path, results):
    # 5.5 enables every instrument with performance_schema; the others are checked
    # with the CPU profile (test_cpu_profile)
    show = _run(tmp_path, "mysql-5.5.55")
    assert "performance_schema_instrument" not in show["details"]["options"]
    waits_sampled(show, open_store(f"sqlite:///{results}/harness.db"),
                  tmp_path / show["artifacts"])
    # the report draws them a row a run, apart from the other metrics' panels
    folder = tmp_path / "report"
    harness("report", show["run_set"], "-o", str(folder), check=True)
    page = (folder / "report.html").read_text()
    assert "Top waits (mutexes, rwlocks, I/O, locks): seconds waited per s: each run" \
        in page and "own top, one row a run" in page
    assert (folder / f"{SECONDS}.png").stat().st_size > 10_000


def test_with_performance_schema_off_it_reads_innodbs_mutexes(tmp_path, results):
    # The scenario's own options win over the collector's: performance_schema stays off.
    # MariaDB 10.1's XtraDB still counts waits per mutex (SHOW ENGINE INNODB MUTEX).
    show = _run(tmp_path, "mariadb-10.1.23", ", performance_schema: 'OFF'")
    store = open_store(f"sqlite:///{results}/harness.db")
    notes = " ".join(show["summary"]["collectors"]["notes"])
    assert "wait_events: performance_schema is off" in notes, notes
    assert not store.series(show["run_id"], metric=SECONDS)
    mutex = store.series(show["run_id"], metric=MUTEX)
    assert len(mutex) >= 2, mutex
    assert any(s.v[-1] > s.v[0] for s in mutex if len(s.v) > 1), mutex


def test_with_performance_schema_off_mysql_5_7_counts_its_mutexes_by_the_latch_monitor(
        tmp_path, results):
    # MySQL 5.7.8+ counts a mutex's waits in SHOW ENGINE INNODB MUTEX only with
    # innodb_monitor_enable = latch: the collector starts the server with it. The
    # innodb_metrics collector (which enables every monitor, the latch one too) is off,
    # so only the collector's own option can have turned it on.
    show = _run(tmp_path, "mysql-5.7.29", ", performance_schema: 'OFF'",
                "\n  innodb_metrics: {enabled: false}")
    assert show["details"]["options"]["innodb_monitor_enable"] == "latch"
    store = open_store(f"sqlite:///{results}/harness.db")
    names = {s.labels["name"] for s in store.series(show["run_id"], metric=MUTEX)}
    # InnoDB's own mutexes by name (LOG_SYS, TRX_SYS, ...), not only the rwlocks it
    # counts without the monitor (named by the file and line that created them)
    mutexes = {n for n in names if "rwlock" not in n}
    assert mutexes, sorted(names)
    notes = " ".join(show["summary"]["collectors"]["notes"])
    assert "rwlocks only" not in notes, notes


@pytest.mark.parametrize(("server", "wait", "why"), [
    ("mysql-5.7.29", ", instruments: build_default", "instruments: build_default keeps"),
    ("mysql-9.7", "", "instruments: build_default, this build's default,")])
def test_the_builds_own_instruments_and_innodbs_latches_counted_beside_them(
        tmp_path, results, server, wait, why):
    # instruments: build_default, named or (MySQL 5.7.8 and later) the default: MySQL 5.7
    # and 9.7 start with their own performance_schema (on) and instruments (file and
    # table I/O timed, InnoDB's latches not), so the run pays nothing on top of it;
    # InnoDB's latch monitor counts the latches' waits instead, read beside the
    # instruments' time. 9.7 reads the summary's rows by name (its key), 5.7 by a scan.
    show = _run(tmp_path, server, wait=wait,
                collectors="\n  innodb_metrics: {enabled: false}")
    options = show["details"]["options"]
    assert "performance_schema_instrument" not in options, options
    assert "performance_schema" not in options, options
    assert options["innodb_monitor_enable"] == "latch"
    store = open_store(f"sqlite:///{results}/harness.db")
    timed = {s.labels["event_name"] for s in store.series(show["run_id"], metric=SECONDS)}
    assert any(n.startswith("wait/io/file/") for n in timed), sorted(timed)
    assert not any(n.startswith("wait/synch/") for n in timed), sorted(timed)
    counted = {s.labels["name"] for s in store.series(show["run_id"], metric=MUTEX)}
    assert {n for n in counted if "rwlock" not in n}, sorted(counted)
    notes = " ".join(show["summary"]["collectors"]["notes"])
    assert why in notes, notes
    assert "performance_schema is off" not in notes, notes


def test_the_scenarios_own_instruments_win_and_the_rest_is_noted(tmp_path, results):
    # The scenario's options win over the collector's: InnoDB's latches only, as the
    # server matches the pattern; the server's own mutexes are not seen, and the run's
    # notes say how many instruments were left out.
    show = _run(tmp_path, "mysql-5.7.29",
                ", performance_schema_instrument: 'wait/synch/%/innodb/%=ON'",
                wait=", instruments: all")
    options = show["details"]["options"]
    assert options["performance_schema_instrument"] == "wait/synch/%/innodb/%=ON"
    store = open_store(f"sqlite:///{results}/harness.db")
    counts = {s.labels["event_name"] for s in store.series(show["run_id"], metric=COUNT)}
    assert any(n.startswith("wait/synch/mutex/innodb/") for n in counts), sorted(counts)
    assert not any(n.startswith("wait/synch/mutex/sql/") for n in counts), sorted(counts)
    notes = " ".join(show["summary"]["collectors"]["notes"])
    left = re.search(r"wait_events: (\d+) wait instruments are not enabled and timed on "
                     r"this server; their waits are not seen \(the scenario's "
                     r"performance_schema_instrument\)", notes)
    assert left and int(left.group(1)) > 100, notes
