"""Two harness processes on one host: the cache's locks under a race and a kill, the
measurement lock between two real runs, kept sandboxes per owner, the cache's budget."""
from __future__ import annotations

import glob
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import tarfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from harness import locks
from harness.providers import cache as cache_budget
from harness.server import catalog, snapshot
from harness.server.debroot import sha256
from harness.store import open_store

from ..conftest import ROOT, harness, sandbox

pytestmark = pytest.mark.integration

PROCESSES = 4
ROUNDS = 20
KILLED_ROUNDS = {3, 11, 17}  # the one holding the lock is SIGKILLed half way


def _tarball(into: Path) -> dict[str, object]:
    """A vendor-shaped tarball (one top folder with bin/ share/) of the installed
    mysql-5.7.29 build, and a catalog entry that installs it from a file:// URL."""
    built = catalog.resolve("mysql-5.7.29")
    tar = into / "mysql-5.7.29-linux-glibc2.12-x86_64.tar.gz"
    with tarfile.open(tar, "w:gz", compresslevel=1) as t:
        for sub in ("bin", "share"):
            t.add(built.root / sub, f"mysql-5.7.29-linux-glibc2.12-x86_64/{sub}")
    entry = catalog.CatalogEntry("mysql-5.7.29", "mysql", "5.7.29", "tarball",
                                 tar.as_uri(), sha256(tar))
    return asdict(entry)


def _tree(d: Path) -> dict[str, str]:
    return {str(f.relative_to(d)): hashlib.sha256(f.read_bytes()).hexdigest()
            for f in sorted(d.rglob("*")) if f.is_file() and not f.is_symlink()}


def _race(argvs: list[list[str]], env: dict[str, str], kill_when: str | None
          ) -> tuple[list[subprocess.CompletedProcess[str]], int | None]:
    """Start the workers at once; with ``kill_when`` (a glob of the half-made entry),
    SIGKILL the one at work as soon as it matches. Their results, and the pid killed."""
    procs = [subprocess.Popen([sys.executable, "-m", "tests.stress_worker", *a], cwd=ROOT,
                              env=env, text=True, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) for a in argvs]
    killed = None
    if kill_when is not None:
        deadline = time.monotonic() + 120
        while not glob.glob(kill_when) and time.monotonic() < deadline:
            time.sleep(0.005)
        half = glob.glob(kill_when)[0]
        pid = int(re.findall(r"\.(\d+)\.tmp", half)[0]) if ".tmp" in half else \
            locks.holders(Path(env["HARNESS_CACHE"]) / "locks" / "build-mysql-5.7.29.lock")[0]
        assert pid in [p.pid for p in procs]
        os.kill(pid, signal.SIGKILL)
        killed = pid
    done = []
    for p in procs:
        out, err = p.communicate(timeout=600)
        done.append(subprocess.CompletedProcess(p.args, p.returncode, out, err))
    return done, killed


def _check_round(done: list[subprocess.CompletedProcess[str]], killed: int | None,
                 what: str) -> list[dict[str, Any]]:
    results = []
    for p in done:
        if p.returncode == -signal.SIGKILL and killed is not None:
            continue
        assert p.returncode == 0, f"{what}: {p.args}\n{p.stdout}\n{p.stderr}"
        results.append(json.loads(p.stdout.strip().splitlines()[-1]))
    assert len(results) == PROCESSES - (killed is not None), what
    return results


def _waits(results: list[dict[str, Any]], holders: set[int], what: str) -> int:
    """Every wait a process said names a holder of that round, with what it did."""
    n = 0
    for r in results:
        for line in r["said"]:
            if "waiting for" in line:
                # (a holder killed as it was named has no command line left)
                m = re.search(rf"waiting for pid (\d+) \(root: ('.*stress_worker.*'|exiting), "
                              rf"{what} "
                              r"since \d\d:\d\d:\d\d\)", line)
                assert m and int(m.group(1)) in holders, (line, holders)
                n += 1
    return n


def test_four_processes_race_on_one_install_and_one_snapshot(tmp_path, open_tmp):
    """N=4 harness processes install one build and save and restore one snapshot at
    once, 20 rounds, the holder killed half way in three: one install and one copy a
    round, every waiter names the holder, nothing half made is left or taken."""
    cache = open_tmp / "cache"  # a build's mysqld is asked what it is as mysqld's account
    env = {**os.environ, "HARNESS_CACHE": str(cache),
           "HARNESS_SNAPSHOTS": str(cache / "snapshots")}
    spec = tmp_path / "entry.json"
    spec.write_text(json.dumps(_tarball(tmp_path)))
    built = catalog.resolve("mysql-5.7.29")
    want = _tree(built.root / "bin")
    with sandbox("mariadb-10.11", innodb_log_file_size="4M",
                 innodb_buffer_pool_size="16M") as box:
        box.stop()
        datadir = open_tmp / "data"
        snapshot.copy_datadir(box.datadir, datadir)
    source = _tree(datadir)
    dest = cache / "servers" / "mysql-5.7.29"
    waits = redone = 0
    for n in range(ROUNDS):
        subprocess.run(["rm", "-rf", str(dest), str(cache / "snapshots")], check=True)
        kill = n in KILLED_ROUNDS
        done, killed = _race([["install", str(spec)]] * PROCESSES, env,
                             str(cache / "servers" / ".mysql-5.7.29-*" / "unpacked")
                             if kill else None)
        results = _check_round(done, killed, f"install, round {n}")
        # exactly one live process installed it: a killed install is redone by one
        installers = [r["pid"] for r in results if r["installed"]]
        assert len(installers) == 1, (n, results)
        redone += killed is not None
        waits += _waits(results, {*installers, killed or 0}, "installing mysql-5.7.29")
        assert json.loads((dest / "BUILD.json").read_text())["entry"]["name"] == "mysql-5.7.29"
        assert _tree(dest / "bin") == want
        assert [p.name for p in (cache / "servers").iterdir()] == ["mysql-5.7.29"], n
        assert not list((cache / "downloads").glob(".part-*"))
        outs = [open_tmp / f"restored-{n}-{k}" for k in range(PROCESSES)]
        done, killed = _race([["snapshot", "stress", str(datadir), str(o)] for o in outs],
                             env, str(cache / "snapshots" / ".stress.*.tmp" / "data" / "*")
                             if kill else None)
        results = _check_round(done, killed, f"snapshot, round {n}")
        waits += _waits(results, {r["pid"] for r in results} | {killed or 0},
                        "(saving|restoring) snapshot stress")
        for o, p in zip(outs, done, strict=True):
            if p.returncode == 0:
                assert _tree(o) == source, f"round {n}: {o} is not the datadir"
            subprocess.run(["rm", "-rf", str(o)], check=True)
        snaps = sorted(p.name for p in (cache / "snapshots").iterdir())
        assert snaps == ["stress"], (n, snaps)  # no temporary copy left, killed or not
        assert _tree(cache / "snapshots" / "stress" / "data") == source
    assert redone == len(KILLED_ROUNDS)
    assert waits >= ROUNDS  # the races were real: processes did wait, and said for whom
    assert not list((cache / "locks").glob("*.lock.*")), "a holder's note was left"


MEASURED = """\
name: {name}
servers: [mariadb-10.11]
mysqld: {{innodb_buffer_pool_size: 64M}}
dataset: {{kind: sysbench, database: sbtest, tables: 1, table_size: 1000}}
workload: {{kind: sysbench, test: oltp_point_select, threads: 1, warmup_s: 0,
           duration_s: {duration}, options: {{rate: 50}}}}
wakeup_probe: false
snapshot: false
between_runs: restart
"""


def _scenario(tmp_path: Path, name: str, duration: int) -> str:
    f = tmp_path / f"{name}.yaml"
    f.write_text(MEASURED.format(name=name, duration=duration))
    return str(f)


def _started(argv: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "harness", *argv], cwd=ROOT, env=env,
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_a_second_run_waits_for_the_measurement_lock_naming_the_first(tmp_path, results):
    lock = tmp_path / "measure.lock"
    env = {**os.environ, "HARNESS_MEASURE_LOCK": str(lock)}
    # 30 s: the second and the one beside it make their sandboxes and prepare meanwhile
    # (a few seconds here, more on a loaded machine)
    first = _started(["run", _scenario(tmp_path, "first", 30)], env)
    deadline = time.monotonic() + 120
    while not locks.holders(lock) and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert locks.holders(lock) == [first.pid], first.communicate()
    t0 = time.monotonic()
    second = _started(["run", _scenario(tmp_path, "second", 2)], env)
    # --no-measure-lock measures beside it, without waiting
    beside = _started(["run", _scenario(tmp_path, "beside", 2), "--no-measure-lock"], env)
    b_out, b_err = beside.communicate(timeout=300)
    assert beside.returncode == 0, b_err
    assert "measurement lock" not in b_err
    out, err = second.communicate(timeout=300)
    waited = time.monotonic() - t0
    f_out, f_err = first.communicate(timeout=60)
    assert second.returncode == 0 and first.returncode == 0, err + f_err
    assert re.search(rf"measurement lock: waiting for pid {first.pid} \(root: '.*harness run "
                     rf".*first\.yaml', measuring \S+ of first \(mariadb-10\.11, default\) "
                     r"since \d\d:\d\d:\d\d\)", err), err
    taken = re.search(r"measurement lock: lock taken after (\d+) s", err)
    assert taken and int(taken.group(1)) >= 10, err  # much of the first's 30 s
    assert waited >= 10
    assert not locks.holders(lock)
    # each run stored whether it measured under the lock, and how long it waited
    held = {r.scenario: r.details.measure_lock for r in open_store().runs()}
    assert held["first"] == {"lock": str(lock), "waited_s": held["first"]["waited_s"]}
    assert held["second"]["lock"] == str(lock) and held["second"]["waited_s"] >= 10
    assert held["beside"] == {"lock": None, "waited_s": 0.0}
    # beside measured while the first held the lock (on a loaded machine its sandbox and
    # prepare may outlast the first's 30 s: then this says so, rather than a race)
    span = {r.scenario: (r.started_at, r.ended_at) for r in open_store().runs()}
    assert span["beside"][0] < span["first"][1], span


def _keep(tmp_path: Path, who: str) -> str:
    r = harness("run", _scenario(tmp_path, f"kept-{who}", 3), "--keep", check=True,
                env={"SUDO_USER": who})
    return re.search(r"kept (\S+) \(mariadb-10\.11\)", r.stderr + r.stdout).group(1)


def test_kept_sandboxes_are_listed_and_removed_per_owner(tmp_path, results):
    try:
        alice, bob = _keep(tmp_path, "alice"), _keep(tmp_path, "bob")
        listed = json.loads(harness("sandboxes", "list", "--json",
                                    check=True).stdout)["sandboxes"]
        assert {(b["name"], b["owner"]) for b in listed} == {(alice, "alice"), (bob, "bob")}
        table = harness("sandboxes", "list", check=True).stdout
        assert "owner" in table.splitlines()[0] and "alice" in table and "bob" in table
        # bob's --all is bob's own; alice's, by name, is refused naming her
        r = harness("sandboxes", "remove", "--all", check=True, env={"SUDO_USER": "bob"})
        assert r.stdout.strip() == f"{bob}: removed"
        r = harness("sandboxes", "stop", alice, env={"SUDO_USER": "bob"})
        assert r.returncode == 2 and f"kept by another owner: {alice} (alice)" in r.stderr
        left = json.loads(harness("sandboxes", "list", "--json", check=True).stdout)[
            "sandboxes"]
        assert [(b["name"], b["state"]) for b in left] == [(alice, "running")]
        r = harness("sandboxes", "remove", "--all", "--any-owner", check=True,
                    env={"SUDO_USER": "bob"})
        assert r.stdout.strip() == f"{alice}: removed"
    finally:
        harness("sandboxes", "remove", "--all", "--any-owner")
    assert json.loads(harness("sandboxes", "list", "--json", check=True).stdout)[
        "sandboxes"] == []


def test_the_cache_budget_prunes_least_recently_used_and_skips_what_is_in_use(
        tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HARNESS_SNAPSHOTS", str(tmp_path / "snaps"))
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HARNESS_SANDBOXES", str(tmp_path / "boxes"))
    src = tmp_path / "src"
    src.mkdir()
    (src / "ibdata1").write_bytes(os.urandom(1 << 20))
    monkeypatch.setenv("HARNESS_CACHE_BUDGET", "100G")
    paths = {k: snapshot.save(k, src, {}, say=None)[0] for k in ("a", "b", "c", "d")}
    for age, k in enumerate("dcba"):  # a used longest ago, then b, c, d
        used = time.time() - 1000 * (age + 1)
        os.utime(paths[k].parent / "meta.json", (used, used))
    with snapshot.restoring(paths["a"], say=None):  # a restore of a holds it
        os.utime(paths["a"].parent / snapshot.USED, (time.time() - 5000,) * 2)
        done = cache_budget.prune(int(2.5 * (1 << 20)), say=print)
        assert [e.name for e in done.removed] == ["b", "c"]
        assert [e.name for e in done.in_use] == ["a"] and not done.over
        assert sorted(s["key"] for s in snapshot.listing()) == ["a", "d"]
        done = cache_budget.prune(0, say=print)
        assert [e.name for e in done.removed] == ["d"] and done.over
    out = capsys.readouterr().out
    assert "cache: removed snapshot b (1 MB, last used" in out
    assert ("warning: the cache's snapshots and kept sandboxes take 1 MB, past the budget "
            "of 0 MB (HARNESS_CACHE_BUDGET); 1 in use now, kept") in out
    # after a save, past the budget (what a run does: test_runner_lifecycle), the
    # snapshot just saved stays although it is the least recently used
    monkeypatch.setenv("HARNESS_CACHE_BUDGET", "1500K")
    os.utime(snapshot.save("e", src, {}, say=print)[0].parent / "meta.json", (1, 1))
    done = cache_budget.prune(keep={"e"}, say=print)
    assert sorted(s["key"] for s in snapshot.listing()) == ["e"] and not done.over
    assert "cache: removed snapshot a" in capsys.readouterr().out
    # by hand
    r = harness("snapshots", "prune", "--budget", "0", "--dry-run", check=True,
                env={"HARNESS_SNAPSHOTS": str(tmp_path / "snaps")})
    assert "cache: would remove snapshot e" in r.stdout and "would remove 1" in r.stdout
    assert [s["key"] for s in snapshot.listing()] == ["e"]
    bad = harness("snapshots", "prune", "--budget", "lots")
    assert bad.returncode == 2 and "--budget: 'lots' is not a size" in bad.stderr


def test_a_killed_test_run_leaves_nothing_behind(tmp_path):
    """SIGKILL a test run that kept a sandbox and made a network namespace: what its
    exit trap runs (``python -m tests.leftovers``; the next run does the same) removes
    both, and the folders it noted."""
    says = tmp_path / "says.json"
    run = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                            "tests/integration/killed/killed_suite.py"], cwd=ROOT,
                           env={**os.environ, "KILLED_SUITE_SAYS": str(says)},
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not says.exists() and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    try:
        made = json.loads(says.read_text())
    finally:
        run.kill()
        run.wait()
    assert made["pid"] == run.pid
    assert Path(f"/proc/{made['mysqld']}").exists()  # it outlived the killed run
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert made["netns"] in netns
    r = subprocess.run([sys.executable, "-m", "tests.leftovers"], cwd=ROOT,
                       capture_output=True, text=True, timeout=120, check=True)
    assert f"network namespace {made['netns']}" in r.stderr and made["root"] in r.stderr
    assert proc_gone(made["mysqld"])
    assert made["netns"] not in subprocess.run(["ip", "netns", "list"], capture_output=True,
                                               text=True).stdout
    assert not Path(made["root"]).exists()
    assert not Path(f"/tmp/harness-tests/{made['pid']}.json").exists()


def proc_gone(pid: int, timeout_s: float = 10) -> bool:
    deadline = time.monotonic() + timeout_s
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return not Path(f"/proc/{pid}").exists()


def test_a_killed_make_test_leaves_nothing_behind(tmp_path):
    """SIGTERM to ``make test``'s runner while a worker holds a kept sandbox and a
    network namespace: the runner stops its pytest's whole process group and removes
    what the workers noted; nothing of that run is left."""
    says = tmp_path / "says.json"
    run = subprocess.Popen([sys.executable, "-m", "tests.run", "--workers", "2", "--",
                            "-p", "no:cacheprovider", "tests/integration/killed/killed_suite.py"],
                           cwd=ROOT, env={**os.environ, "KILLED_SUITE_SAYS": str(says)},
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 180
    while not says.exists() and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    try:
        made = json.loads(says.read_text())
        assert Path(f"/proc/{made['mysqld']}").exists()
    finally:
        run.send_signal(signal.SIGTERM)
        out, _ = run.communicate(timeout=120)
    assert run.returncode == 130, out
    assert proc_gone(made["mysqld"]), out
    assert proc_gone(made["pid"]), out  # the worker
    assert made["netns"] not in subprocess.run(["ip", "netns", "list"], capture_output=True,
                                               text=True).stdout
    assert not Path(made["root"]).exists()
    assert not Path(f"/tmp/harness-tests/{made['pid']}.json").exists()
