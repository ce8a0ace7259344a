"""A run's spool on a disk that fills and empties again (a small tmpfs, the run folder's
own): what the disk refuses waits in memory and is written, whole and in order, once
there is room; the spool says when it fell behind and when it caught up, and each gap
is kept with its seconds. Past its patience it says it is stuck; past its memory bound
it stops with the cause. (A whole run through a full disk and a kill -9:
test_faults.py.)"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from harness.bench.faults import fill_to_the_last_byte
from harness.store import spool as spooling
from harness.store.details import RunDetails
from harness.store.run import RunRecord

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")]


@pytest.fixture
def small_disk():
    mnt = Path(f"/tmp/hspool-{os.getpid()}")
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)], check=True)
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=False)
        mnt.rmdir()


def _record(folder: Path) -> RunRecord:
    return RunRecord(run_id="r1", run_set="s1", scenario="sc", server="x", flavor="mysql",
                     version="8.0", variant="v", target="local", host="h",
                     started_at="2026-12-07T10:00:00+00:00", artifacts=str(folder),
                     details=RunDetails())


def _fill(mnt: Path) -> Path:
    """The disk filled to its last byte."""
    fill_to_the_last_byte(mnt / "fill")
    return mnt / "fill"


def test_a_full_disk_for_a_while_loses_nothing(small_disk, request):
    said: list[str] = []
    sp = spooling.Spool(small_disk, _record(small_disk), "sqlite:///x", flush_s=3600)
    request.addfinalizer(sp.release)
    sp.on_behind = lambda why: said.append(f"behind: {why}")
    sp.on_caught_up = lambda s: said.append(f"caught up after {s:.1f} s")
    key = ("sysbench", "tps", ())
    for i in range(100):
        sp.add(float(i), key, float(i))
    sp.flush()
    fill = _fill(small_disk)
    for i in range(100, 5000):  # taken while the disk is full: ~50 refused flushes
        sp.add(float(i), key, float(i))
        if i % 100 == 0:
            sp.event(float(i), "note", f"n{i}", None)
            sp.flush()
    assert sp.behind > 0 and sp.holding
    assert len(said) == 1 and said[0].startswith("behind: the run's spool") \
        and "disk full" in said[0], said
    # nothing half-written: what is on disk reads back whole, up to the first refusal
    # (the file's last page took a few small flushes after the fill)
    on_disk = spooling.read(sp.path)
    assert not on_disk.torn and 100 <= on_disk.sample_count < 5000
    fill.unlink()
    sp.add(5000.0, key, 5000.0)
    sp.flush()
    assert sp.behind == 0 and said[-1].startswith("caught up"), said
    assert len(sp.gaps) == 1 and sp.gaps[0].seconds >= 0
    sp.release()
    back = spooling.read(sp.path)
    ts, vs = back.samples[key]
    assert not back.torn and list(ts) == [float(i) for i in range(5001)] == list(vs)
    assert [e.name for e in back.events] == [f"n{i}" for i in range(100, 5000, 100)]


def test_a_disk_full_past_the_patience_is_stuck_and_past_the_bound_fails(small_disk,
                                                                         monkeypatch,
                                                                         request):
    monkeypatch.setenv("HARNESS_SPOOL_PATIENCE_S", "0")
    stuck: list[str] = []
    failed: list[str] = []
    sp = spooling.Spool(small_disk, _record(small_disk), "sqlite:///x", flush_s=3600,
                        max_behind=64 << 10)
    request.addfinalizer(sp.release)
    sp.on_stuck = stuck.append
    sp.on_failure = failed.append
    _fill(small_disk)
    key = ("sysbench", "tps", ())
    for i in range(2000):
        sp.add(float(i), key, float(i))
        sp.flush()
        if stuck and not sp.holding and failed:
            break
    assert stuck and "disk full" in stuck[0] and not sp.holding
    assert failed and "in memory (the bound, HARNESS_SPOOL_MAX_BEHIND_MB)" in failed[0]
    assert sp.failed == failed[0] and sp.behind == 0
    sp.release()


def test_a_spool_begun_on_a_full_disk_is_behind_from_its_first_line(small_disk, request):
    fill = _fill(small_disk)
    sp = spooling.Spool(small_disk, _record(small_disk), "sqlite:///x", flush_s=3600)
    request.addfinalizer(sp.release)
    assert sp.behind > 0 and "disk full" in sp.why_behind and sp.holding
    fill.unlink()
    sp.add(1.0, ("s", "m", ()), 1.0)
    sp.flush()
    assert sp.behind == 0
    back = spooling.read(sp.path)
    assert back.record == _record(small_disk) and back.sample_count == 1
