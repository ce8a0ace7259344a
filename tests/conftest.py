"""Shared fixtures: real servers in sandboxes under a private folder, and a check that
the suite leaves no process or sandbox behind.

``make test`` (tests/run.py) runs the suite on several workers (pytest-xdist), then the
tests marked ``alone`` one by one with nothing beside them. Each worker has its own
sandboxes and snapshots folder; builds are shared through the cache's locks. What a
worker makes outside its tmp_path is noted in :mod:`tests.leftovers`, which removes it
after a killed run.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from harness import proc
from tests import cpuacct, leftovers

if TYPE_CHECKING:
    from harness.store import StoredRun

ROOT = Path(__file__).parent.parent


def a_run(**fields: Any) -> StoredRun:
    """A stored run as the store returns it (harness.store.StoredRun), for unit tests:
    ``fields`` over a cell of scenario ``sc`` that ended ok."""
    from harness.store import StoredRun
    return StoredRun(**{"run_id": "r", "run_set": "rs", "scenario": "sc", "server": "s",
                        "flavor": "mysql", "version": "8.0", "variant": "v",
                        "target": "sandbox", "host": "h", "status": "ok",
                        "started_at": "2026-11-01T00:00:00", **fields})
# A lab's tarball mirror: the published posts' servers built from source (Percona Server
# 5.5 and 5.6, Oracle MySQL 5.5), which the catalog pins; `make` names it HARNESS_MIRROR.
MIRROR = Path(os.environ.get("HARNESS_MIRROR") or ROOT.parent / "shared" / "tarballs")
SEEDS = ["percona-5.5.52", "percona-5.6.33", "mysql-5.5.55"]


def seeds(*names: str) -> list[Any]:
    """The seed servers as parameters, skipped (saying why) on a machine without the
    mirror."""
    missing = not any(MIRROR.glob("*.tar.gz"))
    return [pytest.param(n, marks=pytest.mark.skipif(
        missing, reason=f"no tarball mirror at {MIRROR} (HARNESS_MIRROR)"))
        for n in names or SEEDS]


def pytest_configure(config):
    if not os.environ.get("HARNESS_MIRROR") and MIRROR.is_dir():  # as make would say
        os.environ["HARNESS_MIRROR"] = str(MIRROR)
    config.cpu_group = cpuacct.join()
    if not hasattr(config, "workerinput"):  # the controller (or a run without workers)
        for what in leftovers.clean():
            print(f"removed what a killed test run left: {what}", file=sys.stderr)


# Seconds each file took in the parallel phase (6 workers, 2026-12-02 18:41, make test
# TEST_JUNIT): the longest are scheduled first, so that none starts last and keeps one
# worker busy while the others wait. A file not named here counts as 0: name any over
# ~15 s (test_datadir_dataset.py and test_current_servers.py's upgrade, the store's
# fault files and the measurement lock's: estimated).
LONGEST_FIRST = {
    "test_cli_runs.py": 550, "test_current_servers.py": 480, "test_faults.py": 440,
    "test_faults_store.py": 150, "test_measure_lock.py": 50, "test_counted_runs.py": 40,
    "test_ssb.py": 360, "test_cpu_profile.py": 330, "test_concurrency.py": 330,
    "test_vendor_tarball.py": 300, "test_collectors.py": 270, "test_nightly_alerts.py": 260,
    "test_switchback.py": 230, "test_sandbox.py": 230, "test_ansible.py": 220,
    "test_tpcc.py": 220, "test_wait_events.py": 200, "test_compare_settle.py": 200,
    "test_own_workload.py": 180, "test_timeline.py": 180, "test_cnf_check.py": 170,
    "test_option_files.py": 160, "test_store_outage.py": 160, "test_iibench.py": 140,
    "test_report.py": 140, "test_external.py": 130, "test_docker.py": 130,
    "test_compare_stall.py": 130, "test_datadir_dataset.py": 120,
    "test_sqlread_server.py": 110, "test_compare_files.py": 110,
    "test_runner_lifecycle.py": 110, "test_snapshot_profile.py": 100, "test_salvage.py": 70,
    "test_compare_interval.py": 60, "test_bench_observer_rows.py": 50, "test_setup.py": 50,
    "test_slowlog.py": 50, "test_compare.py": 40, "test_scenario_properties.py": 40,
    "test_stall_stacks.py": 40, "test_secrets.py": 40, "test_upgrade_verdicts.py": 40,
    "test_power.py": 30, "test_seekdisk.py": 30, "test_three_valued.py": 20,
    "test_architecture.py": 20, "test_codec_store.py": 20, "test_sequential.py": 20,
    "test_install_trust.py": 20, "test_history_site.py": 20,
}


def _procs_mentioning(text: str) -> list[str]:
    return [f"{pid}: {' '.join(argv)[:200]}" for pid, argv in proc.processes()
            if text in " ".join(argv)]


def pytest_unconfigure(config):
    cpuacct.leave(getattr(config, "cpu_group", None))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    item.cpu_at_start = cpuacct.usage(item.config.cpu_group)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    if call.when == "teardown" and item.config.cpu_group and hasattr(item, "cpu_at_start"):
        took = cpuacct.usage(item.config.cpu_group) - item.cpu_at_start
        item.user_properties.append(("cpu_s", f"{took:.1f}"))
    yield


def pytest_collection_modifyitems(config, items):
    """The longest files first (a stable sort: a file's tests keep their order)."""
    items.sort(key=lambda it: -LONGEST_FIRST.get(it.path.name, 0))


@pytest.fixture(scope="session", autouse=True)
def sandbox_root():
    """Every sandbox of this test session lives here (short path: unix socket limit)."""
    root = Path(tempfile.mkdtemp(prefix="hs-", dir="/tmp"))
    root.chmod(0o755)  # mysqld runs as an unprivileged account: it must reach its sandbox
    os.environ["HARNESS_SANDBOXES"] = str(root)
    # Dataset snapshots of this session stay private too (not the user's cache).
    snaps = Path(tempfile.mkdtemp(prefix="hsnap-", dir="/tmp"))
    os.environ["HARNESS_SNAPSHOTS"] = str(snaps)
    # Tests measure side by side (those whose assertions need a quiet machine are
    # marked alone); test_concurrency takes a measurement lock of its own.
    os.environ["HARNESS_MEASURE_LOCK"] = "off"
    # The Percona Toolkit fingerprint (pt-summary starts some hundred processes) took
    # about a tenth of the parallel phase's CPU; the tests that check it turn it on.
    os.environ["HARNESS_COLLECTORS_OFF"] = "percona_toolkit"
    leftovers.note(dirs=[str(root), str(snaps)])
    yield root
    subprocess.run(["rm", "-rf", str(snaps)], check=False)
    left = _procs_mentioning(str(root))
    from harness.providers.dockerd import running_client
    docker = running_client()
    if docker is not None:  # containers of this session: their sandbox is under root
        left += [f"container {c.name}" for c in docker.containers.list(
            all=True, filters={"label": "org.mysql-harness.owned=true"})
            if c.labels.get("org.mysql-harness.sandbox", "").startswith(str(root))]
    boxes = list(root.iterdir())
    leftovers.clean_mine()  # (what the assertions below name goes too)
    assert not left, f"processes left behind by the tests: {left}"
    assert not boxes, f"sandboxes left behind by the tests: {boxes}"


@pytest.fixture
def open_tmp():
    """A private folder that mysqld's unprivileged account may enter (pytest's tmp_path
    is under a 0700 folder): for builds unpacked by a test."""
    d = Path(tempfile.mkdtemp(prefix="hopen-", dir="/tmp"))
    d.chmod(0o755)
    leftovers.note(dirs=[str(d)])
    yield d
    subprocess.run(["rm", "-rf", str(d)], check=False)


# Only what a verdict needs: on 2 vCPUs the samplers' CPU is run-to-run noise.
QUIET_COLLECTORS = "collectors:\n" + "".join(
    f"  {name}: {{enabled: false}}\n" for name in (
        "innodb_metrics", "innodb_status", "buffer_pool_stats", "buffer_pool_index",
        "vmstat", "meminfo", "diskstats", "mysqld_process"))


@contextmanager
def sandbox(name: str = "mariadb-10.11", **options: str) -> Iterator[Any]:
    """A catalog server of the test's own, started with ``options``, destroyed after."""
    from harness.providers.local import LocalProvider
    from harness.server import catalog

    box = LocalProvider().provision(catalog.resolve(name))
    try:
        box.start(options)
        yield box
    finally:
        box.destroy()


@pytest.fixture
def results(tmp_path, monkeypatch):
    """A private results folder (embedded store + artifacts) for one test."""
    d = tmp_path / "results"
    monkeypatch.setenv("HARNESS_RESULTS", str(d))
    monkeypatch.delenv("HARNESS_STORE", raising=False)
    return d


# Read-only queries of the store run in this process: the same parser, command and
# printing, without an interpreter's start (about 0.9 s of CPU each, most of it imports;
# the suite's parallel phase is CPU-bound, and these follow most runs it makes).
IN_PROCESS = ("runs", "show", "export", "reference")


def harness(*args: str, check: bool = False, env: dict[str, str] | None = None,
            timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """Run the real CLI in a child process, as a user would (the queries of IN_PROCESS: its
    main() in this one, with the same arguments, environment and output streams)."""
    if args and args[0] in IN_PROCESS:
        r = _in_process(list(args), env or {})
    else:
        r = subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True,
                           text=True, timeout=timeout, cwd=ROOT,
                           env={**os.environ, **(env or {})})
    if check and r.returncode != 0:
        raise AssertionError(f"harness {' '.join(args)} exited {r.returncode}\n"
                             f"stdout:\n{r.stdout}\nstderr:\n{r.stderr}")
    return r


def _in_process(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``harness ARGS`` through main() here: stdout and stderr captured, ``env`` set for
    the call, the signal handlers main() installs and the working folder put back."""
    import io
    import signal
    from contextlib import redirect_stderr, redirect_stdout

    from harness.cli import main

    out, err = io.StringIO(), io.StringIO()
    saved_env, cwd = dict(os.environ), os.getcwd()
    handlers = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    os.environ.update(env)
    try:
        os.chdir(ROOT)
        with redirect_stdout(out), redirect_stderr(err):
            try:
                code = main(args)
            except SystemExit as e:  # argparse: --help, or bad flags (2)
                code = e.code if isinstance(e.code, int) else int(e.code is not None)
    finally:
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        for s, h in handlers.items():
            signal.signal(s, h)
    return subprocess.CompletedProcess(["harness", *args], code, out.getvalue(),
                                       err.getvalue())


TARGET_SCENARIO = """\
name: {name}
servers: {servers}
mysqld:
  innodb_buffer_pool_size: 64M
dataset: {{kind: sysbench, database: sbtest, tables: 2, table_size: 2000}}
workload:
  kind: sysbench
  test: oltp_read_only
  threads: 1
  warmup_s: 1
  duration_s: {duration}{options}
wakeup_probe: false
{extra}
"""


# Tests of the plumbing cap sysbench's rate (sysbench --rate, a scenario's own option):
# the suite runs eight workers on two CPUs, and one workload at full tilt takes both
# from the other seven. Tests that judge throughput run uncapped, and alone.
CAPPED = "\n  options: {rate: 50}"


def holding(folder: Path, secret: str) -> list[Path]:
    """The files under ``folder`` whose bytes hold ``secret``. A file that goes while the
    folder is read is skipped: SQLite removes its ``-shm`` and ``-wal`` files when a
    store's last connection closes, which the CLI run in this process may do meanwhile
    (their contents are in the database file by then, which is read)."""
    found = []
    for f in (f for f in folder.rglob("*") if f.is_file()):
        try:
            if secret.encode() in f.read_bytes():
                found.append(f)
        except FileNotFoundError:
            continue
    return found


def target_scenario(tmp_path: Path, name: str, servers: str = "[mariadb-10.11]",
                    duration: int = 4, extra: str = "") -> str:
    """A small scenario file for the target tests (docker, ansible), at a capped rate."""
    f = tmp_path / f"{name}.yaml"
    f.write_text(TARGET_SCENARIO.format(name=name, servers=servers, duration=duration,
                                        extra=extra, options=CAPPED))
    return str(f)


def run_watching_argv(args: list[str], env: dict[str, str] | None = None,
                      timeout: float = 900, watch: Callable[[], None] = lambda: None
                      ) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run the real CLI like :func:`harness`, and collect the argv of every process on
    the machine while it runs (a secret must never be in one); ``watch`` is called
    at each look."""
    import time
    p = subprocess.Popen([sys.executable, "-m", "harness", *args], cwd=ROOT, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env={**os.environ, **(env or {})})
    seen: set[str] = set()
    deadline = time.monotonic() + timeout
    while p.poll() is None and time.monotonic() < deadline:
        seen.update(" ".join(argv) for pid, argv in proc.processes() if pid != p.pid)
        watch()
        time.sleep(0.05)
    out, err = p.communicate(timeout=60)
    return subprocess.CompletedProcess(p.args, p.returncode, out, err), seen


@contextmanager
def mysql_store() -> Iterator[tuple[str, str]]:
    """A shared results store on a MariaDB sandbox of our own: (its URL, which holds
    the password, and the password)."""
    from harness.bench.faults import store_server

    with store_server() as (box, url):
        yield url, box.endpoint.password
