"""A results store on MariaDB (as a lab's nightly uses) killed while a run measures and
started again: nothing the run measured is lost. Every second sysbench reported is in
the store afterwards, counted against its own log, whether the store came back before
the run's end (waited for), in its middle (the run went on, its samples kept in the run's
spool past the writer's memory bound), or only after the harness gave up (the spool
kept, stored by 'harness store replay-spool'). No traceback in any of them. (The same
drills, and the others, as a bench section: harness/bench/faults.py.)"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.bench.faults import Place, Stored, outage, store_server, stored
from harness.store import spool as spooling

from ..conftest import harness

pytestmark = pytest.mark.integration


def _here(tmp_path: Path, results: Path) -> Place:
    """The drill's results folder (its own, set in its harness's environment); the
    session's sandboxes."""
    where = Place(tmp_path / "drill", own_sandboxes=False)
    where.folder.mkdir()
    assert where.results != results
    return where


def _every_second_stored(url: str, where: Place) -> Stored:
    """The run as stored: ok, with one tps sample for each second sysbench reported,
    its side load's events, and no spool left."""
    facts = stored(url, where)
    assert facts.status == "ok", facts
    assert facts.stored_s == facts.reported_s > 5, facts
    assert facts.samples > 10 * facts.reported_s, facts
    assert [e for e in facts.events if e == "nap"] == ["nap", "nap"], facts.events
    assert not facts.spool_left
    return facts


def test_a_store_away_at_the_run_end_is_waited_for(tmp_path, results):
    where = _here(tmp_path, results)
    with store_server() as (box, url):
        done = outage(where, box, url, duration=12, away_at=10, back_after=15)
        assert done.returncode == 0, done.stderr[-3000:]
        assert "went away" in done.stderr and "storing the run's samples is tried again " \
            "in 1 s, for up to 120 s" in done.stderr, done.stderr[-3000:]
        assert "Traceback" not in done.stderr
        _every_second_stored(url, where)


def test_a_store_away_mid_run_past_the_memory_bound_loses_nothing(tmp_path, results):
    # 400 samples waiting are the writer's bound here: the store is away for longer
    # than that takes, so the spool alone holds the samples until the run's end
    where = _here(tmp_path, results)
    with store_server() as (box, url):
        done = outage(where, box, url, duration=18, away_at=3, back_after=8,
                      env={"HARNESS_STORE_MAX_PENDING": "400"})
        assert done.returncode == 0, done.stderr[-3000:]
        assert "go into the store from its spool" in done.stderr, done.stderr[-3000:]
        assert "Traceback" not in done.stderr
        _every_second_stored(url, where)


def test_a_store_away_past_the_patience_leaves_the_run_in_its_spool(tmp_path, results):
    where = _here(tmp_path, results)
    with store_server() as (box, url):
        done = outage(where, box, url, duration=8, away_at=6, back_after=None,
                      env={"HARNESS_STORE_PATIENCE_S": "4"})
        assert done.returncode == 1, done.stderr[-3000:]
        (spool,) = where.results.glob(f"runs/*/{spooling.NAME}")
        last = done.stderr.strip().splitlines()[-1]
        assert str(spool) in last and "'harness store replay-spool'" in last, last
        assert "Traceback" not in done.stderr
        assert url.split("@")[0].split(":")[-1] not in done.stderr  # the password
        assert spooling.read(spool).end.status == "ok"
        env = {"HARNESS_STORE": url, "HARNESS_RESULTS": str(where.results)}
        r = harness("store", "check", env=env)
        assert r.returncode == 8 and f"waits in its spool {spool}" in r.stdout, r.stdout
        r = harness("store", "replay-spool", env=env)
        assert r.returncode == 0, r.stderr
        assert "events stored from its spool, ok" in r.stdout, r.stdout
        _every_second_stored(url, where)
        (run,) = json.loads(harness("runs", "--json", env=env).stdout)["runs"]
        show = json.loads(harness("show", run["run_id"], "--json", env=env).stdout)
        assert show["details"]["stored_from_spool"]["by"] == "'harness store replay-spool'"
        assert harness("store", "check", env=env).returncode == 0
