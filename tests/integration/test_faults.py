"""Faults mid-run, on real servers: each failure is stored with a cause a human can act
on, the rest of the matrix goes on, and nothing is left behind."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness import proc
from harness.collectors import CollectorContext, PolledCollector
from harness.providers.local import LocalProvider
from harness.server import catalog
from harness.store import open_store

from ..conftest import ROOT, harness

pytestmark = pytest.mark.integration

TWO_VARIANTS = """\
name: faults
servers: [mariadb-10.11]
dataset: {{tables: 2, table_size: 5000}}
workload: {{test: oltp_read_only, threads: 1, warmup_s: 0, duration_s: {duration}{options}}}
variants:
  first: {{}}
  second: {{}}
wakeup_probe: false
collectors: {{buffer_pool_index: {{enabled: false}}}}
"""


def _scenario(tmp_path: Path, duration: int = 3, options: str = ", options: {rate: 50}"
              ) -> str:
    f = tmp_path / "faults.yaml"
    f.write_text(TWO_VARIANTS.format(duration=duration, options=options))
    return str(f)


def _mysqld_pids(root: Path) -> list[int]:
    return [pid for pid, argv in proc.processes()
            if str(root) in " ".join(argv) and "mariadbd" in " ".join(argv)]


def test_mysqld_killed_mid_run(tmp_path, results, sandbox_root):
    p = subprocess.Popen([sys.executable, "-m", "harness", "run",
                          _scenario(tmp_path, duration=15)], cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    killed = None
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and killed is None:
        time.sleep(0.5)
        runs = list((results / "runs").glob("*/sysbench.log")) if (results / "runs").exists() \
            else []
        if runs and runs[0].read_text().count("tps:") >= 3:
            (killed,) = _mysqld_pids(sandbox_root)
            os.kill(killed, signal.SIGKILL)
    out, err = p.communicate(timeout=180)
    assert killed is not None
    assert p.returncode == 1, err
    runs = {r["variant"]: r for r in json.loads(harness("runs", "--json").stdout)["runs"]}
    assert runs["first"]["status"] == "failed" and runs["second"]["status"] == "ok"
    show = json.loads(harness("show", runs["first"]["run_id"], "--json").stdout)
    assert "killed by signal 9 during the run" in show["error"]
    assert "error log" in show["error"]
    assert show["summary"]["samples"] > 0  # what was sampled before the kill is kept
    assert list(sandbox_root.iterdir()) == []


def test_sysbench_exiting_early(tmp_path, results):
    r = harness("run", _scenario(tmp_path, options=", options: {rate: fast}"))
    assert r.returncode == 1
    runs = json.loads(harness("runs", "--json").stdout)["runs"]
    assert [x["status"] for x in runs] == ["failed", "failed"]
    show = json.loads(harness("show", runs[0]["run_id"], "--json").stdout)
    assert "sysbench oltp_read_only exited with code" in show["error"]
    assert "--rate=fast" in show["error"]  # the command line, as run
    assert "Invalid value for the 'rate' option" in show["error"]  # and sysbench's words


class Sleeper(PolledCollector):
    """A collector whose query outlives the query timeout."""

    name = "sleeper"

    def collect(self):
        self.query("SELECT SLEEP(30)")
        return []


def test_collector_query_timeout_is_recorded_and_sampling_goes_on():
    box = LocalProvider().provision(catalog.resolve("mariadb-10.11"))
    events = []
    t0 = time.monotonic()
    try:
        box.start()
        ctx = CollectorContext(endpoint=box.endpoint, flavor="mariadb", version=(10, 11),
                               clock=lambda: time.monotonic() - t0,
                               sample=lambda *a: None,
                               event=lambda t, k, n, d: events.append((k, n, d)),
                               artifacts=box.dir, query_timeout_s=0.5)
        with Sleeper(ctx, interval_s=0.2) as c:
            time.sleep(2.5)
        assert c.failures >= 2  # every attempt timed out, and it kept trying
        assert max(c.durations) < 3  # no sample waited for the 30 s query
        (kind, name, detail), *_ = events
        assert (kind, name) == ("collector_error", "sleeper")
        assert "timed out" in detail["error"].lower() or "interrupted" in detail["error"].lower()
    finally:
        box.destroy()


def test_two_runs_into_one_store_at_once(tmp_path, results):
    f = _scenario(tmp_path, duration=5)
    procs = [subprocess.Popen([sys.executable, "-m", "harness", "run", f, "--variant", v],
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for v in ("first", "second")]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    runs = json.loads(harness("runs", "--json").stdout)["runs"]
    assert sorted(r["variant"] for r in runs) == ["first", "second"]
    assert all(r["status"] == "ok" for r in runs)
    assert harness("store", "check").returncode == 0


def test_harness_killed_while_writing_keeps_earlier_runs(tmp_path, results, sandbox_root):
    harness("run", _scenario(tmp_path), "--variant", "first", check=True)
    store = open_store(f"sqlite:///{results}/harness.db")
    (done,) = store.runs()
    before = store.sample_count(done.run_id)
    p = subprocess.Popen([sys.executable, "-m", "harness", "run",
                          _scenario(tmp_path, duration=60), "--variant", "second"],
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        time.sleep(0.5)
        if len(store.runs()) == 2 and len(list((results / "runs").glob("*/sysbench.log"))) and \
                any(x.read_text().count("tps:") >= 5 for x in
                    (results / "runs").glob("*/sysbench.log")):
            break
    reported = max(x.read_text().count("tps:") for x in (results / "runs").glob("*/sysbench.log"))
    p.kill()  # SIGKILL: no cleanup code of ours runs
    p.wait()
    deadline = time.monotonic() + 10  # mysqld follows its parent (PDEATHSIG)
    while _mysqld_pids(sandbox_root) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _mysqld_pids(sandbox_root) == []
    again = open_store(f"sqlite:///{results}/harness.db")
    assert again.sample_count(done.run_id) == before
    assert {r.status for r in again.runs()} == {"ok", "running"}
    # The run its dead process left 'running' is found by store check, and marked by
    # the next harness run, with the last thing it recorded as the cause.
    check = harness("store", "check")
    assert check.returncode == 8 and "is gone" in check.stdout, check.stdout
    (killed,) = [x for x in again.runs() if x.status == "running"]
    spool = Path(killed.artifacts) / "spool.jsonl.gz"
    assert f"run {killed.run_id} waits in its spool {spool}" in check.stdout
    # the next command that lists runs marks it interrupted, with its cause
    listed = harness("runs", "--json")
    assert f"note: run {killed.run_id} was left running (its harness process" in \
        listed.stderr, listed.stderr
    assert {r["run_id"]: r["status"] for r in json.loads(listed.stdout)["runs"]}[
        killed.run_id] == "interrupted"
    # its sandbox is listed, as an orphan
    (box,) = sandbox_root.iterdir()
    listed = json.loads(harness("sandboxes", "list", "--json").stdout)["sandboxes"]
    assert [(x["name"], x["state"]) for x in listed] == [(box.name, "orphan")], listed
    # The next harness run stores what the dead one measured, from its spool, marks
    # the run interrupted with the last thing it recorded, and removes the sandbox.
    r = harness("run", _scenario(tmp_path), "--variant", "first", check=True)
    assert f"removed {box}, left by a harness that was killed" in r.stderr, r.stderr
    (dead,) = [x for x in again.runs() if x.status == "interrupted"]
    assert dead.run_id == killed.run_id and not spool.exists()
    assert f"note: run {dead.run_id} waited in its spool: " in r.stderr, r.stderr
    assert dead.error.startswith("its harness process died (or its spool's disk refused "
                                 "the rest) before the run's end was written; the last it "
                                 "recorded: "), \
        dead.error
    assert dead.error.endswith("stored from its spool by the next harness run"), \
        dead.error
    tps = again.series(dead.run_id, source="sysbench", metric="tps")[0]
    # every second sysbench had reported, but those of the spool's last second (its
    # flush bound), and the one a log line is read after
    assert len(tps.t) >= reported - 2 and dead.summary.samples == again.sample_count(
        dead.run_id)
    assert sorted(x.status for x in again.runs()) == ["interrupted", "ok", "ok"]
    assert harness("store", "check").returncode == 0
    assert list(sandbox_root.iterdir()) == []


def test_resume_completes_only_the_missing_cells(tmp_path, results):
    f = _scenario(tmp_path, duration=10)
    p = subprocess.Popen([sys.executable, "-m", "harness", "run", f], cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    store, seen = None, []
    deadline = time.monotonic() + 180
    # Ctrl-C once the second cell is running; what was seen is told if that fails
    while time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.5)
        if store is None and (results / "harness.db").exists():
            store = open_store(f"sqlite:///{results}/harness.db")
        seen.append([r.status for r in store.runs()] if store else [])
        if seen[-1] == ["ok", "running"]:
            break
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130 and store is not None, \
        f"exit {p.returncode}; statuses seen {seen[-5:]}\n{err[-3000:]}"
    first, second = store.runs()
    assert (first.variant, first.status) == ("first", "ok")
    assert (second.variant, second.status) == ("second", "interrupted")
    r = harness("run", f, "--resume", first.run_set, check=True)
    assert "mariadb-10.11/first rep 1: done in run set" in r.stderr
    runs = store.runs(run_set=first.run_set)
    assert [(x.variant, x.status) for x in runs] == [
        ("first", "ok"), ("second", "interrupted"), ("second", "ok")]
    bad = harness("run", f, "--resume", "no-such-set")
    assert bad.returncode == 9 and "no such run set" in bad.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small filesystem needs root")
def test_datadir_filesystem_filling_up(tmp_path, results, monkeypatch):
    img, mnt = tmp_path / "fs.img", Path(f"/tmp/hfull-{os.getpid()}")
    mnt.mkdir()
    subprocess.run(["truncate", "-s", "400M", str(img)], check=True)
    subprocess.run(["mkfs.ext4", "-q", "-F", str(img)], check=True)
    if subprocess.run(["mount", "-o", "loop", str(img), str(mnt)]).returncode != 0:
        mnt.rmdir()
        pytest.skip("cannot loop-mount a filesystem here")
    try:
        monkeypatch.setenv("HARNESS_SANDBOXES", str(mnt))
        f = tmp_path / "full.yaml"
        f.write_text("name: full\nservers: [mariadb-10.11]\nwakeup_probe: false\n"
                     "dataset: {tables: 4, table_size: 2000000}\n"
                     "workload: {test: oltp_read_only, duration_s: 5}\n")
        r = harness("run", str(f), timeout=600)
        assert r.returncode == 1, r.stderr
        (run,) = json.loads(harness("runs", "--json").stdout)["runs"]
        assert run["status"] == "failed"
        show = json.loads(harness("show", run["run_id"], "--json").stdout)
        assert "the datadir's filesystem is full" in show["error"]
        assert "sysbench prepare" in show["error"]  # and what failed because of it
        assert list(mnt.iterdir()) in ([], [mnt / "lost+found"])  # sandbox removed
    finally:
        subprocess.run(["umount", str(mnt)], check=False)
        mnt.rmdir()


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small filesystem needs root")
def test_a_store_that_fills_its_disk_mid_run(tmp_path, results):
    """The store's filesystem (its run folders' too) fills while a run writes to it: the
    run stops with the cause named instead of hoarding samples in memory, and what it
    measured until then waits in its spool, which store check names and replay-spool
    stores once there is room again."""
    mnt = Path(f"/tmp/hstore-{os.getpid()}")
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mnt)], check=True)
    try:
        url = f"sqlite:///{mnt}/harness.db"
        f = tmp_path / "fill.yaml"
        f.write_text(Path(_scenario(tmp_path, duration=40)).read_text() + f"""side_loads:
  - {{kind: command, name: fill, start: 4, argv: [sh, -c, "cat /dev/zero > {mnt}/fill || true"]}}
""")
        r = harness("run", str(f), "--variant", "first", env={
            "HARNESS_STORE": url, "HARNESS_STORE_MAX_PENDING": "3000",
            "HARNESS_SPOOL_PATIENCE_S": "3", "HARNESS_STORE_PATIENCE_S": "5"})
        assert r.returncode == 1, r.stderr
        assert "disk full" in r.stderr and str(mnt) in r.stderr, r.stderr
        assert "Traceback" not in r.stderr
        (mnt / "fill").unlink()
        (log,) = mnt.glob("runs/*/sysbench.log")
        assert log.read_text().count("tps:") < 20, r.stderr  # stopped at once, not after 40 s
        # What the run measured until the disk filled is in its spool, stored once
        # there is room again, with the side load's start.
        check = harness("store", "check", env={"HARNESS_STORE": url})
        assert check.returncode == 8 and "waits in its spool" in check.stdout, check.stdout
        replayed = harness("store", "replay-spool", env={"HARNESS_STORE": url})
        assert replayed.returncode == 0, replayed.stderr
        store = open_store(url)
        (run,) = store.runs()
        assert any(e.kind == "phase_start" and e.name == "fill"
                   for e in store.events(run.run_id))
        assert store.series(run.run_id, source="sysbench", metric="tps")
        if run.status == "failed":  # its end reached the spool before the disk filled
            assert "disk full" in run.error, run.error
        else:
            assert run.status == "interrupted" and "disk refused the rest" in run.error, \
                run.error
        assert harness("store", "check", env={"HARNESS_STORE": url}).returncode == 0
        store.engine.dispose()  # the file is no longer open: the mount can go
    finally:
        subprocess.run(["umount", str(mnt)], check=False)
        mnt.rmdir()


HUNG = """\
name: hung
servers: [mariadb-10.11]
dataset: {{tables: 1, table_size: 5000}}
workload: {{test: oltp_point_select, threads: 1, warmup_s: 0, duration_s: {duration}}}
wakeup_probe: false
collectors: {{buffer_pool_index: {{enabled: false}}}}
"""


def _hang(tmp_path: Path, results: Path, root: Path, duration: int, held_s: float | None,
          options: str = "") -> tuple[subprocess.CompletedProcess, float, float]:
    """A run whose mysqld is stopped (SIGSTOP) once sysbench reported 3 seconds, for
    ``held_s`` seconds (None: for good); the harness's result, when the stop came and
    when the harness ended."""
    f = tmp_path / "hung.yaml"
    f.write_text(HUNG.format(duration=duration).replace(
        f"duration_s: {duration}}}", f"duration_s: {duration}{options}}}"))
    p = subprocess.Popen([sys.executable, "-m", "harness", "run", str(f)], cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stopped_at, deadline = None, time.monotonic() + 120
    while stopped_at is None and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.2)
        logs = list((results / "runs").glob("*/sysbench.log")) \
            if (results / "runs").exists() else []
        if logs and logs[0].read_text().count("tps:") >= 3:
            (pid,) = _mysqld_pids(root)
            os.kill(pid, signal.SIGSTOP)
            stopped_at = time.monotonic()
            if held_s is not None:
                time.sleep(held_s)
                os.kill(pid, signal.SIGCONT)
    out, err = p.communicate(timeout=300)
    assert stopped_at is not None, err
    return subprocess.CompletedProcess(p.args, p.returncode, out, err), stopped_at, \
        time.monotonic()


def test_a_server_hung_for_most_of_the_measured_part_is_a_failure_with_its_name(
        tmp_path, results, sandbox_root):
    """mysqld stopped (SIGSTOP) for 12 of the 18 measured seconds: still there, answering
    nothing. A stall event says for how long, and the run is failed, not ok with a tps
    of 0 that history and regress would read."""
    done, _, _ = _hang(tmp_path, results, sandbox_root, duration=18, held_s=12)
    assert done.returncode == 1, done.stderr[-2000:]
    (run,) = json.loads(harness("runs", "--json").stdout)["runs"]
    show = json.loads(harness("show", run["run_id"], "--json").stdout)
    assert run["status"] == "failed", run
    # 18 s measured, or 19 where sysbench's last report came a second late (a busy host)
    assert re.search(r"mysqld answered nothing for 1[0-4] s of the 1[89] s measured",
                     show["error"]), show["error"]
    stalls = [e for e in show["events"] if e["kind"] == "server_stall"]
    assert len(stalls) == 1 and 8 <= stalls[0]["detail"]["seconds"] <= 14, stalls
    assert "Traceback" not in done.stderr
    assert list(sandbox_root.iterdir()) == []


def test_a_20_s_stall_is_in_the_headline(tmp_path, results, sandbox_root):
    """mysqld stopped for 20 of 45 measured seconds: not most of them, so the run is ok,
    but its figures are a stalled server's, and it says so where its tps is said."""
    # (capped: 45 s of uncapped point selects took two cores from the rest of the suite)
    done, _, _ = _hang(tmp_path, results, sandbox_root, duration=45, held_s=20,
                       options=", options: {rate: 200}")
    assert done.returncode == 0, done.stderr[-2000:]
    said = re.search(r"tps \S+.*; (mysqld answered nothing for (\d+) s of the 4\d s "
                     r"measured)", done.stderr)
    assert said and 18 <= int(said.group(2)) <= 23, done.stderr[-3000:]
    assert f"ok, stalled: {said.group(1)}" in done.stdout, done.stdout
    (run,) = json.loads(harness("runs", "--json").stdout)["runs"]
    show = json.loads(harness("show", run["run_id"], "--json").stdout)
    assert run["status"] == "ok" and show["summary"]["stall"] == said.group(1)


def test_a_server_hung_for_good_ends_the_run_within_a_minute(tmp_path, results,
                                                            sandbox_root):
    """Stopped for good: the watcher stops the workload after 30 s of silence, and the
    teardown lets the stopped mysqld run again before asking it to shut down, so the run
    is over well within a minute of the workload's own end, not after sysbench's and
    the shutdown's timeouts (a 32 s run took 5.5 minutes)."""
    done, stopped_at, ended = _hang(tmp_path, results, sandbox_root, duration=10,
                                    held_s=None)
    assert done.returncode == 1, done.stderr[-2000:]
    assert ended - stopped_at < 70, ended - stopped_at
    (run,) = json.loads(harness("runs", "--json").stdout)["runs"]
    show = json.loads(harness("show", run["run_id"], "--json").stdout)
    assert run["status"] == "failed"
    assert "answered nothing for 30 s (hung, not gone)" in show["error"], show["error"]
    assert "Traceback" not in done.stderr
    assert _mysqld_pids(sandbox_root) == [] and list(sandbox_root.iterdir()) == []
