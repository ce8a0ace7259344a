"""Sample encoding and the embedded store, without a server."""
import threading
import time

import numpy as np
import pytest
from sqlalchemy import event, update

from harness.errors import StoreError
from harness.store import RunRecord, RunSummary, open_store, schema
from harness.store.codec import decode_times, decode_values, encode_times, encode_values
from harness.store.db import MAX_QUEUED_BATCHES


@pytest.mark.parametrize("values", [
    np.cumsum(np.random.default_rng(1).integers(0, 1000, 600)).astype(float),
    np.random.default_rng(2).random(600) * 1e4,
    np.array([0.0, -1.5, 1e300, -0.0, 3.25]),
    np.array([7.0]),
    np.round(np.random.default_rng(5).normal(3000, 50, 600), 2),  # tps-like, 2 decimals
    np.array([0.1, 0.2, 0.30000000000000004]),  # not a short decimal: must stay exact
    np.array([-5.0, 3.0, -(2.0 ** 40), 2.0 ** 52]),
    np.array([np.nan, 1.0, np.inf]),
])
def test_values_round_trip_exactly(values):
    assert np.array_equal(decode_values(encode_values(values)), values, equal_nan=True)


def test_times_round_trip_to_the_millisecond():
    t = np.arange(3600) + np.random.default_rng(3).random(3600) * 0.01
    assert np.allclose(decode_times(encode_times(t)), t, atol=0.0005)


def test_decimal_rates_are_packed_as_integers():
    rate = np.round(np.random.default_rng(6).normal(3000, 50, 600), 2)
    assert encode_values(rate)[0] == 3  # CODEC_DECIMAL_DELTA
    assert len(encode_values(rate)) / 600 < 3.0


def test_writer_flushes_on_the_run_clock(tmp_path):
    store = open_store(f"sqlite:///{tmp_path}/h.db")
    store.create_run(_record())
    w = store.writer("r1", chunk_points=10_000, flush_interval_s=60)
    for t in range(59):
        w.add(float(t), "s", "m", 1.0)
    assert store.sample_count("r1") == 0  # still buffered
    w.add(60.0, "s", "m", 1.0)
    assert _eventually(lambda: store.sample_count("r1") == 60)  # a minute of run clock
    w.close()


def _eventually(cond, timeout_s=10.0):
    deadline = time.monotonic() + timeout_s
    while not cond():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_writes_happen_on_the_writers_thread_and_a_failed_one_is_kept(tmp_path):
    store = open_store(f"sqlite:///{tmp_path}/h.db")
    store.create_run(_record())
    writers = []

    @event.listens_for(store.engine, "before_cursor_execute")
    def who(conn, cursor, statement, *args):
        if statement.startswith("INSERT INTO chunks"):
            writers.append(threading.current_thread().name)

    w = store.writer("r1", chunk_points=10_000, flush_interval_s=10)
    w.add(0.0, "s", "m", 0.0)  # the series exists
    with store.engine.begin() as c:  # writes fail: no table to write to
        c.exec_driver_sql("ALTER TABLE chunks RENAME TO chunks_away")
    for t in range(1, 15):  # a hand-over at 10 s fails; the collectors never see it
        w.add(float(t), "s", "m", float(t))
    assert _eventually(lambda: w._error is not None)
    with store.engine.begin() as c:
        c.exec_driver_sql("ALTER TABLE chunks_away RENAME TO chunks")
    assert store.sample_count("r1") == 0
    for t in range(15, 21):  # the next hand-over writes what failed, then the rest
        w.add(float(t), "s", "m", float(t))
    assert _eventually(lambda: store.sample_count("r1") == 21)
    w.add(21.0, "s", "m", 21.0)
    w.close()
    (series,) = store.series("r1", "s")
    assert list(series.v) == [float(t) for t in range(22)]
    assert writers[0] == writers[-2] == "samples-r1", writers  # the last one: close()


def test_a_slow_store_makes_the_adders_wait_instead_of_queueing_without_bound(tmp_path):
    store = open_store(f"sqlite:///{tmp_path}/h.db")
    store.create_run(_record())
    writers, queued = [], []
    w = store.writer("r1", chunk_points=10_000, flush_interval_s=1)

    @event.listens_for(store.engine, "before_cursor_execute")
    def slow(conn, cursor, statement, *args):
        if statement.startswith("INSERT INTO chunks"):
            writers.append(threading.current_thread().name)
            queued.append(len(w._batches))
            time.sleep(0.2)

    for t in range(40):  # a hand-over a sample, far faster than the store writes
        w.add(float(t), "s", "m", float(t))
    w.close()
    assert max(queued) <= MAX_QUEUED_BATCHES + 1, queued
    # the adder wrote itself once the queue was full (the writer's thread writes too on
    # a quiet host; beside the parallel suite it may not win the store once: CI, run 40)
    assert "MainThread" in writers, writers
    (series,) = store.series("r1", "s")
    assert list(series.v) == [float(t) for t in range(40)]  # in order, none lost


def test_close_reports_a_write_that_still_fails(tmp_path):
    store = open_store(f"sqlite:///{tmp_path}/h.db")
    store.create_run(_record())
    w = store.writer("r1")
    w.add(0.0, "s", "m", 0.0)
    with store.engine.begin() as c:
        c.exec_driver_sql("ALTER TABLE chunks RENAME TO chunks_away")
    with pytest.raises(StoreError, match="writing the samples of run r1 failed: .*chunks"):
        w.close()


def test_regular_counters_cost_a_few_bytes_per_point():
    t = np.arange(600, dtype=float)
    v = np.cumsum(np.random.default_rng(4).integers(0, 50, 600)).astype(float)
    size = len(encode_times(t)) + len(encode_values(v))
    assert size / 600 < 2.0


def _record(run_id="r1"):
    return RunRecord(run_id=run_id, run_set="s1", scenario="sc", server="mariadb-10.11",
                     flavor="mariadb", version="10.11.19", variant="default", target="local",
                     host="h", started_at="2026-01-01T00:00:00+00:00")


def test_store_round_trip(tmp_path):
    store = open_store(f"sqlite:///{tmp_path}/h.db")
    store.create_run(_record())
    w = store.writer("r1", chunk_points=7)
    for i in range(20):
        w.add(i + 0.5, "sysbench", "tps", 100.0 + i)
        w.add(i + 0.5, "status", "com_select", i * 10, {"server": "x"})
    w.close()
    store.add_event("r1", 2.0, "phase_start", "warmup", {"seconds": 2})
    store.update_run("r1", status="ok", summary=RunSummary.of_workload({"tps_median": 110.0}))
    assert store.sample_count("r1") == 40
    (tps,) = store.series("r1", metric="tps")
    assert tps.t.tolist() == [i + 0.5 for i in range(20)]
    assert tps.v.tolist() == [100.0 + i for i in range(20)]
    (sel,) = store.series("r1", metric="com_select")
    assert sel.labels == {"server": "x"} and sel.v[-1] == 190
    assert store.get_run("r1").summary.figure("tps_median") == 110.0
    assert store.get_run("r").run_id == "r1"  # unambiguous prefix
    assert store.events("r1")[0].detail == {"seconds": 2}
    assert store.check() == []
    # reopening appends chunks after existing ones
    w2 = open_store(f"sqlite:///{tmp_path}/h.db").writer("r1")
    w2.add(30.0, "sysbench", "tps", 1.0)
    w2.close()
    assert store.series("r1", metric="tps")[0].v[-1] == 1.0


def test_store_refuses_unknown_format_version(tmp_path):
    url = f"sqlite:///{tmp_path}/h.db"
    store = open_store(url)
    with store.engine.begin() as c:
        c.execute(update(schema.meta).values(value="99"))
    with pytest.raises(StoreError, match="format version 99"):
        open_store(url)


def test_check_finds_a_corrupt_chunk(tmp_path):
    store = open_store(f"sqlite:///{tmp_path}/h.db")
    store.create_run(_record())
    w = store.writer("r1")
    w.add(1.0, "s", "m", 1.0)
    w.close()
    with store.engine.begin() as c:
        c.execute(update(schema.chunks).values(vals=b"\x01garbage"))
    assert any("undecodable" in p for p in store.check())


def test_many_processes_creating_one_store_at_once(tmp_path):
    import subprocess
    import sys

    code = f"from harness.store import open_store; open_store('sqlite:///{tmp_path}/h.db')"
    procs = [subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True)
             for _ in range(8)]
    errors = [p.communicate()[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * 8, errors
    assert open_store(f"sqlite:///{tmp_path}/h.db").check() == []
