"""A run's spool (store/spool.py) and its replay into a store (store/replay.py), on
SQLite: what is written is read back exactly, a flush cut short loses only itself, a
replay replaces what the store held and can be done again, and a spool its harness still
holds is never replayed under it. (A MySQL store that goes away while a run measures:
tests/integration/test_store_outage.py.)"""
import json
import math
import os
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

from harness.errors import StoreError
from harness.store import RunRecord, RunSummary, open_store
from harness.store import replay as replaying
from harness.store import spool as spooling
from harness.store.details import RunDetails


def _record(folder, run_id="r1"):
    return RunRecord(run_id=run_id, run_set="s1", scenario="sc", server="x", flavor="mysql",
                     version="8.0", variant="v", target="local", host="h",
                     started_at="2026-12-02T10:00:00+00:00", artifacts=str(folder),
                     details=RunDetails.from_json({"scale": "quick"}))


def _end(status="ok"):
    return spooling.RunEnd(status=status, ended_at="2026-12-02T10:01:00+00:00", error=None,
                           summary=RunSummary(workload="sysbench oltp_read_only", samples=0,
                                              measured={"tps_median": 812.5}),
                           details=RunDetails.from_json({"scale": "quick", "server_stalls": []}))


def _spooled(tmp_path, store, n=2500, end=True):
    folder = tmp_path / "runs" / "r1"
    folder.mkdir(parents=True)
    sp = spooling.Spool(folder, _record(folder), store.identity(), flush_s=0.05)
    rng = np.random.default_rng(7)
    for i in range(n):
        sp.add(i * 0.1, ("global_status", "tps", (("host", "a"),)), float(rng.normal()))
        sp.add(i * 0.1, ("proc", "cpu", ()), math.inf if i == 3 else i / 7)
    sp.event(1.5, "phase_start", "main", {"why": "measured part"})
    sp.event(9.0, "note", "stall", None)
    if end:
        sp.end(_end())
    sp.release()
    return folder, sp


def test_what_is_spooled_reads_back_exactly(tmp_path):
    store = open_store(f"sqlite:///{tmp_path}/h.db")
    folder, _ = _spooled(tmp_path, store)
    run = spooling.read(folder / spooling.NAME)
    assert not run.torn and run.record == _record(folder) and run.store == store.identity()
    ts, vs = run.samples[("global_status", "tps", (("host", "a"),))]
    rng = np.random.default_rng(7)
    want = [float(rng.normal()) for _ in range(2500)]
    assert list(ts) == [i * 0.1 for i in range(2500)] and list(vs) == want
    assert run.samples[("proc", "cpu", ())][1][3] == math.inf
    assert [(e.t, e.kind, e.detail) for e in run.events] == [
        (1.5, "phase_start", {"why": "measured part"}), (9.0, "note", {})]
    assert run.end == _end() and run.sample_count == 5000


def test_a_flush_cut_short_loses_only_itself(tmp_path):
    store = open_store(f"sqlite:///{tmp_path}/h.db")
    folder, _ = _spooled(tmp_path, store, end=False)
    path = folder / spooling.NAME
    whole = spooling.read(path)
    with path.open("ab") as f:  # a last member, cut where a full disk or kill -9 cut it
        data = spooling.gzip.compress(b'{"e": [20.0, "note", "late", {}]}\n' * 50)
        f.write(data[:len(data) // 2])
    cut = spooling.read(path)
    assert cut.torn and cut.sample_count == whole.sample_count and cut.events == whole.events


def test_a_replay_stores_the_run_whole_and_can_be_done_again(tmp_path):
    store = open_store(f"sqlite:///{tmp_path}/h.db")
    folder, _ = _spooled(tmp_path, store)
    path = folder / spooling.NAME
    # the store held the run and part of its samples when it went away
    store.create_run(_record(folder))
    w = store.writer("r1")
    for i in range(700):
        w.add(i * 0.1, "proc", "cpu", i / 7)
    w.close()
    store.add_event("r1", 1.5, "phase_start", "main", {})
    copy = path.read_bytes()
    r = replaying.replay(store, path, by="a test")
    assert (r.samples, r.events, r.status, r.ended) == (5000, 2, "ok", True)
    assert not path.exists()
    run = store.get_run("r1")
    assert run.status == "ok" and run.summary.samples == 5000
    assert run.summary.measured["tps_median"] == 812.5
    assert run.details.stored_from_spool["by"] == "a test"
    (cpu,) = store.series("r1", source="proc")
    assert len(cpu.t) == 2500 and cpu.v[3] == math.inf and cpu.v[10] == 10 / 7
    assert [e.name for e in store.events("r1")] == ["main", "stall"]
    path.write_bytes(copy)  # again: the same run, nothing doubled
    replaying.replay(store, path, by="a test")
    assert store.sample_count("r1") == 5000 and len(store.events("r1")) == 2


KILLED = """
import os, signal, sys
from pathlib import Path
from harness.store import RunRecord
from harness.store import spool
folder = Path(sys.argv[1])
folder.mkdir(parents=True)
rec = RunRecord(run_id="r1", run_set="s1", scenario="sc", server="x", flavor="mysql",
                version="8.0", variant="v", target="local", host="h",
                started_at="2026-12-02T10:00:00+00:00", artifacts=str(folder))
sp = spool.Spool(folder, rec, sys.argv[2], flush_s=0.05)
for i in range(2500):
    sp.add(i * 0.1, ("global_status", "tps", ()), float(i))
    sp.add(i * 0.1, ("proc", "cpu", ()), i / 7)
sp.event(1.5, "phase_start", "main", {})
sp.event(9.0, "note", "stall", None)
sp.flush()
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_spool_whose_harness_was_killed_is_an_interrupted_run_with_its_samples(tmp_path):
    store = open_store(f"sqlite:///{tmp_path}/h.db")
    p = subprocess.run([sys.executable, "-c", KILLED, str(tmp_path / "runs" / "r1"),
                        store.identity()], capture_output=True, text=True)
    assert p.returncode == -9, p.stderr
    done, problems = replaying.replay_all(store, tmp_path, by="the next harness run")
    assert problems == [] and [(r.run_id, r.status, r.samples) for r in done] == [
        ("r1", "interrupted", 5000)]
    run = store.get_run("r1")
    assert run.error == ("its harness process died (or its spool's disk refused the rest) "
                         "before the run's end was written; the last it recorded: note stall "
                         "at 9 s; its 5000 samples stored from its spool by the next harness "
                         "run")


def test_a_spool_its_harness_still_holds_is_left_alone(tmp_path):
    store = open_store(f"sqlite:///{tmp_path}/h.db")
    folder = tmp_path / "runs" / "r1"
    folder.mkdir(parents=True)
    sp = spooling.Spool(folder, _record(folder), store.identity(), flush_s=0.05)
    sp.add(1.0, ("s", "m", ()), 2.0)
    sp.flush()
    # another process (a second harness) finds it held: not replayed under its writer
    code = ("import sys; from pathlib import Path; from harness.store import open_store; "
            "from harness.store import replay as r; s = open_store(sys.argv[1]); "
            "print(r.replay(s, Path(sys.argv[2]), 'x'))")
    out = subprocess.run([sys.executable, "-c", code, f"sqlite:///{tmp_path}/h.db",
                          str(sp.path)], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "None" and sp.path.exists()
    assert store.get_run("r1") is None
    assert replaying.waiting(store) == [
        f"run r1 waits in its spool {sp.path}: 'harness store replay-spool' stores it"]
    sp.discard()
    assert not sp.path.exists() and replaying.waiting(store) == []


def test_a_spool_of_another_store_is_refused_by_name(tmp_path):
    store = open_store(f"sqlite:///{tmp_path}/h.db")
    other = open_store(f"sqlite:///{tmp_path}/other.db")
    folder, _ = _spooled(tmp_path, other)
    with pytest.raises(StoreError, match=f"a spool of the results store sqlite:///{tmp_path}"
                       "/other.db, not of"):
        replaying.replay(store, folder / spooling.NAME, by="a test")
    assert replaying.replay_all(store, tmp_path, by="x") == ([], [])  # not this store's
    assert (folder / spooling.NAME).exists()


def test_a_file_that_is_no_spool_is_named(tmp_path):
    store = open_store(f"sqlite:///{tmp_path}/h.db")
    bad = tmp_path / "runs" / "r9" / spooling.NAME
    bad.parent.mkdir(parents=True)
    bad.write_bytes(spooling.gzip.compress(json.dumps({"format": 99}).encode()))
    done, problems = replaying.replay_all(store, tmp_path, by="x")
    assert done == [] and problems == [f"{bad}: {bad}: not a run's spool of this harness"]
    with pytest.raises(StoreError, match="no spool there"):
        replaying.replay(store, tmp_path / "nothing" / spooling.NAME, by="x")


def test_a_spool_that_cannot_be_written_says_so_and_takes_nothing(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    os.chmod(folder, 0o500)
    try:
        sp = spooling.Spool(folder, replace(_record(folder)), "sqlite:///x", flush_s=0.05)
        if os.geteuid() == 0:  # root writes anyway: a folder that is not there instead
            sp.discard()
            sp = spooling.Spool(tmp_path / "gone", _record(folder), "sqlite:///x")
        sp.add(1.0, ("s", "m", ()), 1.0)
        sp.close()
        assert sp.failed and "cannot be written" in sp.failed
    finally:
        os.chmod(folder, 0o700)
