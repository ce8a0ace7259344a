"""A results store on MariaDB (as a lab's nightly uses) killed while a run measures and
started again: nothing the run measured is lost. Every second sysbench reported is in
the store afterwards, counted against its own log, whether the store came back before
the run's end (waited for), in its middle (the run went on, its samples kept in the run's
spool past the writer's memory bound), or only after the harness gave up (the spool
kept, stored by 'harness store replay-spool'). No traceback in any of them."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from harness.providers.local import LocalProvider
from harness.server import catalog
from harness.server.mysql import connection
from harness.store import open_store
from harness.store import spool as spooling

from ..conftest import ROOT, harness

pytestmark = pytest.mark.integration

SCENARIO = """\
name: outage
servers: [mariadb-10.11]
dataset: {{tables: 1, table_size: 5000}}
workload: {{test: oltp_read_write, threads: 2, warmup_s: 0, duration_s: {duration}}}
wakeup_probe: false
collectors: {{buffer_pool_index: {{enabled: false}}}}
side_loads:
  - {{kind: command, name: nap, start: 5, argv: [sleep, "2"]}}
"""


@contextmanager
def _store_server() -> Iterator[tuple[object, str]]:
    box = LocalProvider().provision(catalog.resolve("mariadb-10.11"))
    try:
        box.start()
        with connection(box.endpoint) as c, c.cursor() as cur:
            cur.execute("CREATE DATABASE results")
        ep = box.endpoint
        yield box, f"mysql+pymysql://{ep.user}:{ep.password}@127.0.0.1:{ep.port}/results"
    finally:
        box.destroy()


def _run(tmp_path: Path, results: Path, box, url: str, duration: int, away_at: int,
         back_after: float | None, env: dict[str, str] | None = None
         ) -> tuple[subprocess.CompletedProcess, Path]:
    """``harness run`` into the store at ``url``, whose mysqld is killed once sysbench
    reported ``away_at`` seconds and started again ``back_after`` seconds later (None:
    once the harness has ended). The result and the run's folder."""
    f = tmp_path / "outage.yaml"
    f.write_text(SCENARIO.format(duration=duration))
    p = subprocess.Popen([sys.executable, "-m", "harness", "run", str(f)], cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env={**os.environ, "HARNESS_STORE": url, **(env or {})})
    killed, deadline = False, time.monotonic() + 180
    while not killed and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.2)
        logs = list((results / "runs").glob("*/sysbench.log")) \
            if (results / "runs").exists() else []
        if logs and logs[0].read_text().count("tps:") >= away_at:
            box.kill()
            killed = True
    if back_after is not None:
        time.sleep(back_after)
        box.start()
    out, err = p.communicate(timeout=400)
    if back_after is None:
        box.start()
    assert killed, err[-3000:]
    (folder,) = (results / "runs").iterdir()
    return subprocess.CompletedProcess(p.args, p.returncode, out, err), folder


def _every_second_stored(url: str, folder: Path) -> dict:
    """The run as stored: ok, with one tps sample for each second sysbench reported,
    and no spool left."""
    store = open_store(url)
    (run,) = store.runs()
    reported = (folder / "sysbench.log").read_text().count("tps:")
    (tps,) = store.series(run.run_id, source="sysbench", metric="tps")
    assert run.status == "ok", (run.status, run.error)
    assert len(tps.t) == reported > 5, (len(tps.t), reported)
    assert run.summary.samples == store.sample_count(run.run_id) > 10 * reported
    assert [(e["kind"], e["name"]) for e in store.events(run.run_id)
            if e["kind"].startswith("phase")] == [("phase_start", "nap"), ("phase_end", "nap")]
    assert not (folder / spooling.NAME).exists()
    store.engine.dispose()
    return json.loads(json.dumps(run.details, default=str))


def test_a_store_away_at_the_run_end_is_waited_for(tmp_path, results):
    with _store_server() as (box, url):
        done, folder = _run(tmp_path, results, box, url, duration=12, away_at=10,
                            back_after=15)
        assert done.returncode == 0, done.stderr[-3000:]
        assert "went away" in done.stderr and "storing the run's samples is tried again " \
            "in 1 s, for up to 120 s" in done.stderr, done.stderr[-3000:]
        assert "Traceback" not in done.stderr
        details = _every_second_stored(url, folder)
        assert "stored_from_spool" not in details


def test_a_store_away_mid_run_past_the_memory_bound_loses_nothing(tmp_path, results):
    # 400 samples waiting are the writer's bound here: the store is away for longer
    # than that takes, so the spool alone holds the samples until the run's end
    with _store_server() as (box, url):
        done, folder = _run(tmp_path, results, box, url, duration=18, away_at=3,
                            back_after=8, env={"HARNESS_STORE_MAX_PENDING": "400"})
        assert done.returncode == 0, done.stderr[-3000:]
        assert "go into the store from its spool" in done.stderr, done.stderr[-3000:]
        assert "Traceback" not in done.stderr
        _every_second_stored(url, folder)


def test_a_store_away_past_the_patience_leaves_the_run_in_its_spool(tmp_path, results):
    with _store_server() as (box, url):
        done, folder = _run(tmp_path, results, box, url, duration=8, away_at=6,
                            back_after=None, env={"HARNESS_STORE_PATIENCE_S": "4"})
        assert done.returncode == 1, done.stderr[-3000:]
        spool = folder / spooling.NAME
        last = done.stderr.strip().splitlines()[-1]
        assert str(spool) in last and "'harness store replay-spool'" in last, last
        assert "Traceback" not in done.stderr
        assert url.split("@")[0].split(":")[-1] not in done.stderr  # the password
        assert spooling.read(spool).end.status == "ok"
        r = harness("store", "check", env={"HARNESS_STORE": url})
        assert r.returncode == 1 and f"waits in its spool {spool}" in r.stdout, r.stdout
        r = harness("store", "replay-spool", env={"HARNESS_STORE": url})
        assert r.returncode == 0, r.stderr
        assert "events stored from its spool, ok" in r.stdout, r.stdout
        details = _every_second_stored(url, folder)
        assert details["stored_from_spool"]["by"] == "'harness store replay-spool'"
        assert harness("store", "check", env={"HARNESS_STORE": url}).returncode == 0
