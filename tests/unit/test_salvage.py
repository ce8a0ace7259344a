"""A damaged SQLite store (a file cut short, as a full disk or a stopped copy leaves it):
named as damaged by every command, with what to do; ``store check --salvage`` copies
every run SQLite can still read whole, each equal to the original, and names the rest."""
import os
import shutil
import subprocess
import sys

import pytest

from harness.bench.faults import synthetic_store
from harness.errors import StoreOpenError
from harness.store import open_store

from ..conftest import ROOT

RUNS = 30


def _store(path):
    synthetic_store(path, RUNS)


def _harness(*args, store):
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=ROOT, text=True,
                          capture_output=True, env={**os.environ, "HARNESS_STORE": store})


def test_a_store_cut_short_is_named_and_its_whole_runs_salvaged(tmp_path):
    whole, cut = tmp_path / "whole.db", tmp_path / "cut.db"
    _store(whole)
    shutil.copyfile(whole, cut)
    size = cut.stat().st_size
    os.truncate(cut, size * 6 // 10)
    with pytest.raises(StoreOpenError) as e:
        open_store(f"sqlite:///{cut}")
    assert str(e.value) == (
        f"the store file {cut} is damaged (database disk image is malformed; "
        f"{size * 6 // 10:,} bytes where its header counts {size:,}: cut short): "
        "'harness store check --salvage NEW.db' copies every run still readable into a "
        "new store")
    r = _harness("runs", store=f"sqlite:///{cut}")
    assert r.returncode == 9 and "is damaged" in r.stderr and "Traceback" not in r.stderr

    out = tmp_path / "saved.db"
    r = _harness("store", "check", "--salvage", str(out), store=f"sqlite:///{cut}")
    assert r.returncode == 1, r.stderr  # some runs were lost: said, and the exit says so
    lost = [ln.split()[2].rstrip(":") for ln in r.stdout.splitlines() if ln.startswith("lost:")]
    saved, original = open_store(f"sqlite:///{out}"), open_store(f"sqlite:///{whole}")
    copied = [x.run_id for x in saved.runs()]
    assert sorted(copied + lost) == [f"r{i:02d}" for i in range(RUNS)]
    assert 0 < len(copied) < RUNS, r.stdout
    assert f"{len(copied)} run(s) and {15000 * len(copied)} samples copied, " \
        f"{len(lost)} lost" in r.stdout
    for rid in copied:  # each copied run whole and equal to the original
        a, b = saved.series(rid), original.series(rid)
        assert [(x.metric, x.t.tolist(), x.v.tolist()) for x in a] == \
            [(x.metric, x.t.tolist(), x.v.tolist()) for x in b]
        assert saved.events(rid) == original.events(rid)
        assert saved.get_run(rid) == original.get_run(rid)
    assert _harness("store", "check", store=f"sqlite:///{out}").returncode == 0
    # never over a store that holds something, never from a server's store
    r = _harness("store", "check", "--salvage", str(out), store=f"sqlite:///{cut}")
    assert r.returncode == 2 and "the file exists; give a new one" in r.stderr
    r = _harness("store", "check", "--salvage", str(tmp_path / "x.db"),
                 store="mysql+pymysql://u@127.0.0.1:1/db")
    assert r.returncode == 2 and "reads an SQLite store file, not mysql+pymysql" in r.stderr


def test_half_a_store_gives_the_runs_its_pages_still_hold(tmp_path):
    # Cut at half, SQLite reads no run at all (an interior page of the chunks' tree is
    # past the cut); read page by page, the runs whose rows are all still there are
    # copied, each equal to the original. Nothing is made beside the damaged file.
    whole, cut = tmp_path / "whole.db", tmp_path / "cut.db"
    _store(whole)
    shutil.copyfile(whole, cut)
    os.truncate(cut, cut.stat().st_size // 2)
    r = _harness("runs", store=f"sqlite:///{cut}")
    assert r.returncode == 9 and "cut short" in r.stderr
    out = tmp_path / "saved.db"
    r = _harness("store", "check", "--salvage", str(out), store=f"sqlite:///{cut}")
    assert r.returncode == 1, r.stderr
    assert sorted(p.name for p in tmp_path.glob("cut.db*")) == ["cut.db"]
    saved, original = open_store(f"sqlite:///{out}"), open_store(f"sqlite:///{whole}")
    copied = [x.run_id for x in saved.runs()]
    assert len(copied) >= RUNS // 3, r.stdout
    for rid in copied:
        a, b = saved.series(rid), original.series(rid)
        assert [(x.metric, x.t.tolist(), x.v.tolist()) for x in a] == \
            [(x.metric, x.t.tolist(), x.v.tolist()) for x in b]
        assert saved.events(rid) == original.events(rid)
        assert saved.get_run(rid) == original.get_run(rid)
