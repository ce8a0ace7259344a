"""Whole run sets through the Runner with its provider given: every sandbox it asks for
is a stand-in in front of one real MariaDB 10.11 server started once, so the workloads
really run and the store really fills, while starts, stops, snapshots and failures
are the test's to decide. Interrupt, resume, a failed cell and --fail-fast in seconds
each (on real sandboxes: test_faults.py), and every registered workload and side load,
run from the example its plugin declares."""
from __future__ import annotations

import io
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from harness.errors import HarnessError
from harness.progress import Progress
from harness.providers.base import Server
from harness.runner import Runner, RunOptions, World
from harness.scenario import parse_scenario
from harness.server import snapshot
from harness.server.mysql import connection
from harness.sideloads import PLUGINS as SIDE_LOADS
from harness.store import StoredRun, open_store
from harness.workloads import DEFAULT_KIND, PLUGINS

from ..conftest import sandbox
from ..fakes import FakeProvider

SYSTEM_SCHEMAS = {"mysql", "information_schema", "performance_schema", "sys"}

SCENARIO = """\
name: stages
servers: [mariadb-10.11]
dataset: {tables: 1, table_size: 500}
workload: {kind: sysbench, test: oltp_point_select, threads: 1, duration_s: 2,
           report_interval_s: 1}
wakeup_probe: false
variants:
  good: {mysqld: {innodb_io_capacity: 300}}
  bad: {mysqld: {innodb_io_capacity: 400}}
"""


@pytest.fixture(scope="module")
def real() -> Iterator[Server]:
    with sandbox(innodb_buffer_pool_size="64M") as box:
        yield box


@pytest.fixture
def fake(real, results, tmp_path) -> FakeProvider:
    """A provider of sandboxes for one test, each in front of the real server (without
    a dataset: each test prepares once), and a store of its own."""
    with connection(real.endpoint) as c, c.cursor() as cur:
        cur.execute("SHOW DATABASES")
        for (db,) in cur.fetchall():
            if db not in SYSTEM_SCHEMAS:
                cur.execute(f"DROP DATABASE `{db}`")
    return FakeProvider(tmp_path / "fake", endpoint=real.endpoint, datadir=real.datadir)


def _runner(tmp_path: Path, fake: FakeProvider, text: str = SCENARIO,
            world: World | None = None, **opts) -> tuple[Runner, io.StringIO]:
    sc = parse_scenario(tmp_path / "stages.yaml", text)
    out = io.StringIO()
    r = Runner(sc, open_store(), RunOptions(collectors=False, **opts), Progress(out),
               provider=fake, world=world)
    r.servers.find_snapshot = fake.find_snapshot
    return r, out


def _by_cell(run_set: str) -> dict[tuple[str, int], list[str]]:
    out: dict[tuple[str, int], list[str]] = {}
    for r in open_store().runs(run_set=run_set):
        out.setdefault((r.variant, r.repetition), []).append(r.status)
    return out


def test_interrupted_run_is_stored_then_resume_runs_only_what_is_missing(tmp_path, fake):
    starts = []

    def ctrl_c_on_the_third_start(options: dict) -> None:
        starts.append(options)
        if len(starts) == 3:  # prepare's start, the measured start, then run 2's restart
            raise KeyboardInterrupt

    fake.on_start = ctrl_c_on_the_third_start
    runner, out = _runner(tmp_path, fake, variants=["good"], repetitions=2)
    with pytest.raises(KeyboardInterrupt):
        runner.run()
    assert _by_cell(runner.run_set) == {("good", 1): ["ok"], ("good", 2): ["interrupted"]}
    assert fake.steps[-1] == "sandbox-1 destroy", "an interrupted run set keeps nothing"
    (ok,) = [r for r in open_store().runs(run_set=runner.run_set) if r.status == "ok"]
    assert ok.summary.measured["tps_median"] > 0 and ok.summary.samples > 0
    assert ok.details.server_state["how"] == "new sandbox, prepared, snapshot saved"

    fake.on_start = lambda options: None
    fake.take_steps()
    again, out = _runner(tmp_path, fake, variants=["good"], repetitions=2,
                         resume=runner.run_set)
    (res,) = again.run()
    assert (res.variant, res.repetition, res.status) == ("good", 2, "ok")
    assert "good rep 1: done in run set" in out.getvalue()
    assert _by_cell(runner.run_set) == {("good", 1): ["ok"],
                                        ("good", 2): ["interrupted", "ok"]}
    # the resumed run started from the first run set's snapshot: no second prepare
    resumed = [r for r in open_store().runs(run_set=runner.run_set)
               if r.status == "ok" and r.repetition == 2][0]
    assert resumed.details.server_state["how"] == "new sandbox from snapshot"
    (key,) = fake.saved
    assert fake.steps == [f"sandbox-2 provision from {key}", "sandbox-2 start",
                          "sandbox-2 destroy"]


def test_the_run_set_reads_the_clock_and_the_host_facts_it_is_given(tmp_path, fake):
    then = datetime(2030, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
    facts = {"hostname": "lab-7", "kernel": "6.1.0",
             "busy_processes": ["cc1plus (pid 4242) at 97% CPU"]}
    world = World(now=lambda: then, host_facts=lambda: dict(facts))
    runner, out = _runner(tmp_path, fake, world=world, repetitions=1)
    assert [r.status for r in runner.run()] == ["ok", "ok"]
    assert runner.run_set.startswith("20300102-030405-")
    for r in open_store().runs(run_set=runner.run_set):
        assert r.run_id.startswith("20300102-030405-") and r.host == "lab-7"
        assert r.started_at == r.ended_at == "2030-01-02T03:04:05.678+00:00"
        assert r.details.host == facts
        assert r.details.clock_origin == then.timestamp()
    # one warning for the same busy machine, however many cells see it
    assert out.getvalue().count("warning: the machine is busy, results may be noisy: "
                                "cc1plus (pid 4242) at 97% CPU") == 1


def _refuse_bad(options: dict) -> None:
    if options.get("innodb_io_capacity") == 400:
        raise HarnessError("mysqld exited during startup: [ERROR] the test's own refusal")


@pytest.mark.parametrize("fail_fast", [True, False])
def test_a_failed_cell_is_not_run_again_and_fail_fast_stops_the_set(tmp_path, fake,
                                                                     fail_fast):
    fake.on_start = _refuse_bad
    runner, out = _runner(tmp_path, fake, variants=["bad", "good"], repetitions=2,
                          fail_fast=fail_fast)
    results = runner.run()
    (failed,) = [r for r in open_store().runs(run_set=runner.run_set)
                 if r.status == "failed"]
    assert failed.variant == "bad" and "the test's own refusal" in failed.error
    if fail_fast:
        assert [r.status for r in results] == ["failed"]
        assert "stopping: --fail-fast and a run failed" in out.getvalue()
        assert fake.steps == ["sandbox-1 provision", "sandbox-1 start", "sandbox-1 destroy"]
    else:  # bad rep 2 skipped: its server does not start; good runs both
        assert [(r.variant, r.repetition, r.status) for r in results] == \
            [("bad", 1, "failed"), ("good", 1, "ok"), ("good", 2, "ok")]
        assert fake.steps[:3] == ["sandbox-1 provision", "sandbox-1 start", "sandbox-1 destroy"]
        (key,) = fake.saved
        assert fake.steps[-4:] == ["sandbox-2 stop", f"sandbox-2 replace_datadir {key}",
                                   "sandbox-2 start", "sandbox-2 destroy"]


def test_a_saved_snapshot_prunes_the_cache_to_its_budget(tmp_path, fake, monkeypatch,
                                                         capsys):
    monkeypatch.setenv("HARNESS_SNAPSHOTS", str(tmp_path / "snapshots"))
    monkeypatch.setenv("HARNESS_SANDBOXES", str(tmp_path / "sandboxes"))  # none kept
    old = tmp_path / "old"
    old.mkdir()
    (old / "ibdata1").write_bytes(os.urandom(1 << 20))
    snapshot.save("old", old, {}, say=None)
    monkeypatch.setenv("HARNESS_CACHE_BUDGET", "512K")
    fake.real_snapshots = True
    runner, out = _runner(tmp_path, fake, variants=["good"])
    (res,) = runner.run()
    assert res.status == "ok", (res.error, out.getvalue()[-2000:])
    # the run's snapshot is the only one left: the older one went to fit the budget
    assert [s["key"] for s in snapshot.listing()] == list(fake.saved)
    assert "cache: removed snapshot old (1 MB, last used" in capsys.readouterr().err


def test_a_variants_my_cnf_notes_are_said_once_when_its_runs_interleave(tmp_path, fake):
    cnf = tmp_path / "prod.cnf"  # port and socket: the sandbox sets them, set aside
    cnf.write_text("[mysqld]\nport = 3307\nsocket = /tmp/x.sock\ninnodb_io_capacity = 500\n")
    text = SCENARIO.replace("bad: {mysqld: {innodb_io_capacity: 400}}", f"bad: {{my_cnf: {cnf}}}")
    runner, out = _runner(tmp_path, fake, text, repetitions=2, interleave=True)
    results = runner.run()
    assert [r.status for r in results] == ["ok"] * 4, out.getvalue()[-2000:]
    said = [ln.strip() for ln in out.getvalue().splitlines() if ln.strip().startswith("my.cnf:")]
    assert said and len(said) == len(set(said)), said  # each note once, not once a run
    assert any("port" in n for n in said), said


def _scenario(name: str, dataset: object, workload: object, side_loads: list | None = None
              ) -> str:
    return yaml.safe_dump({"name": name, "servers": ["mariadb-10.11"], "wakeup_probe": False,
                           "dataset": dataset, "workload": workload,
                           "side_loads": side_loads or []}, sort_keys=False)


def _one_ok_run(tmp_path: Path, fake: FakeProvider, text: str) -> StoredRun:
    runner, out = _runner(tmp_path, fake, text)
    (res,) = runner.run()
    assert res.status == "ok", (res.error, out.getvalue()[-2000:])
    (run,) = open_store().runs(run_set=runner.run_set)
    assert run.details.server_state["how"] == "new sandbox, prepared, snapshot saved"
    assert run.summary.prepare, "the example's dataset was prepared"
    return run


@pytest.mark.parametrize("kind", sorted(PLUGINS))
def test_every_workload_runs_from_its_example(tmp_path, fake, kind):
    p = PLUGINS[kind]
    assert p.example.get("dataset") and p.example.get("workload"), \
        f"workload {kind}: declare example={{'dataset': ..., 'workload': ...}}"
    for name, text in p.example.get("files", {}).items():  # what the example reads
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    run = _one_ok_run(tmp_path, fake, _scenario(f"plugin-{kind}", p.example["dataset"],
                                                p.example["workload"]))
    runs = PLUGINS[p.example["workload"].get("kind", DEFAULT_KIND)]  # a dataset only: who
    (head,) = [f for f in runs.figures if f.headline]
    assert (run.summary.figure(head.key) or 0) > 0, (kind, head.key, run.summary)
    if runs.throughput:
        (series,) = open_store().series(run.run_id, source=runs.throughput[0],
                                        metric=runs.throughput[1])
        assert series.v.max() > 0


@pytest.mark.parametrize("kind", sorted(SIDE_LOADS))
def test_every_side_load_runs_from_its_example(tmp_path, fake, kind):
    model = SIDE_LOADS[kind]
    assert model.example, f"side load {kind}: declare example = {{...}} (one side_loads entry)"
    base = PLUGINS[DEFAULT_KIND].example
    datasets = [base["dataset"]] + ([PLUGINS[model.dataset_kind].example["dataset"]]
                                    if model.dataset_kind else [])
    entry = {"name": f"the-{kind}", "kind": kind, **model.example}
    run = _one_ok_run(tmp_path, fake, _scenario(f"side-{kind}", datasets, base["workload"],
                                                [entry]))
    (load,) = run.summary.side_loads
    assert load.error is None and load.passes_ok >= 1, load
