"""``make bench-faults`` (section ``faults``): the fault drills a lab engineer runs, each
on a real run, and what survived them.

- the results store (a MariaDB sandbox, as a lab's nightly uses) killed near the run's
  end and back 15 s later; killed in its middle and back 8 s later, past the writer's
  memory bound; killed for good (the harness's patience at 5 s), then back and the
  spool replayed: every second sysbench reported stored, counted against its log;
- mysqld stopped (SIGSTOP) for 12 of 18 measured seconds, and for good: a failed run
  naming the stall, ended within a minute of the stop;
- the harness killed (SIGKILL) mid-run: the next run stores its spool as interrupted and
  removes its sandbox;
- the store's disk filling mid-run (a 3 MB tmpfs) for good: the run stops once the
  spool has been behind for its patience (3 s here), and what it measured is stored
  from its spool once there is room;
- the results folder's disk full for 3 s, then the harness killed: the spool kept what
  the disk refused in memory and wrote it after (>= 95% of the seconds stored);
- the SQLite store made immutable for 20 s as the run ends ("disk I/O error", named as
  such): waited for, the run ok with every second;
- the store locked by another process for 45 s at the end: the measured window ends
  with sysbench, not with the wait;
- mysqld stopped for 20 of 45 measured seconds: ok, the stall in the headline;
- the measurement lock held by a stopped process: named, broken after 30 s, measured;
- a store of 30 runs cut at half: the salvage copies the runs its pages still hold,
  and nothing is made beside the damaged file.

Each drill also runs as an integration test (tests/integration/test_store_outage.py,
test_faults.py); this writes what survived to results/bench.json.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .. import proc
from ..jsonvalue import JsonDict
from ..providers.local import LocalProvider, Sandbox
from ..server import catalog
from ..server.mysql import connection
from ..store import open_store
from ..store import spool as spooling

SCENARIO = """\
name: {name}
servers: [mariadb-10.11]
dataset: {{tables: 1, table_size: 5000}}
workload: {{test: oltp_read_write, threads: 2, warmup_s: 0, duration_s: {duration},
           options: {{rate: 100}}}}
wakeup_probe: false
collectors: {{buffer_pool_index: {{enabled: false}}}}
side_loads:
  - {{kind: command, name: nap, start: 5, argv: [sleep, "2"]}}
"""


@dataclass(frozen=True)
class Drill:
    name: str
    survived: bool
    facts: JsonDict = field(default_factory=dict)


@dataclass(frozen=True)
class Place:
    """Where one drill's harness keeps its results and sandboxes."""

    folder: Path
    own_sandboxes: bool = True  # else the environment's HARNESS_SANDBOXES

    @property
    def results(self) -> Path:
        return self.folder / "results"

    @property
    def sandboxes(self) -> Path:
        return self.folder / "sandboxes" if self.own_sandboxes else \
            Path(os.environ["HARNESS_SANDBOXES"])

    def env(self, **more: str) -> dict[str, str]:
        return {**os.environ, "HARNESS_RESULTS": str(self.results),
                "HARNESS_SANDBOXES": str(self.sandboxes), **more}

    def scenario(self, duration: int, name: str = "drill") -> Path:
        f = self.folder / f"{name}.yaml"
        f.write_text(SCENARIO.format(name=name, duration=duration))
        return f

    def reported(self) -> int:
        """Seconds sysbench reported so far, in its log (the largest of the runs')."""
        logs = list(self.results.glob("runs/*/sysbench.log"))
        return max((x.read_text().count("tps:") for x in logs), default=0)


def place(root: Path, name: str) -> Place:
    p = Place(root / name)
    p.sandboxes.mkdir(parents=True, mode=0o755)
    p.sandboxes.chmod(0o755)  # mysqld's account reaches its sandbox
    return p


@contextmanager
def store_server() -> Iterator[tuple[Sandbox, str]]:
    """A results store on a MariaDB sandbox of its own: the sandbox, and its URL."""
    box = LocalProvider().provision(catalog.resolve("mariadb-10.11"))
    try:
        box.start()
        with connection(box.endpoint) as c, c.cursor() as cur:
            cur.execute("CREATE DATABASE results")
        ep = box.endpoint
        yield box, f"mysql+pymysql://{ep.user}:{ep.password}@127.0.0.1:{ep.port}/results"
    finally:
        box.destroy()


@dataclass(frozen=True)
class Later:
    """An action ``after_s`` seconds after the first, done in this thread (a server
    started from a short-lived thread would die with it: the harness's children follow
    their parent)."""

    after_s: float
    action: Callable[[], None]


def run_until(where: Place, args: list[str], seconds: int, then: Callable[[], None],
              env: dict[str, str] | None = None, later: Later | None = None
              ) -> tuple[subprocess.CompletedProcess, bool]:
    """``harness ARGS``, doing ``then`` once sysbench reported ``seconds`` (and ``later``
    after it, while the harness runs or once it has ended); its result and whether
    ``then`` was done."""
    p = proc.popen([sys.executable, "-m", "harness", *args], env=where.env(**(env or {})),
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    done_at, deadline = None, time.monotonic() + 400
    while time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.2)
        if done_at is None and where.reported() >= seconds:
            then()
            done_at = time.monotonic()
        if later is not None and done_at is not None and \
                time.monotonic() - done_at >= later.after_s:
            later.action()
            later = None
    out, err = p.communicate(timeout=60)
    if later is not None and done_at is not None:
        time.sleep(max(0.0, done_at + later.after_s - time.monotonic()))
        later.action()
    return subprocess.CompletedProcess(p.args, p.returncode, out, err), done_at is not None


def outage(where: Place, box: Sandbox, url: str, duration: int, away_at: int,
           back_after: float | None, env: dict[str, str] | None = None
           ) -> subprocess.CompletedProcess:
    """``harness run`` into the store at ``url``, whose mysqld is killed once sysbench
    reported ``away_at`` seconds and started again ``back_after`` seconds later while
    the run goes on (None: once the harness has ended)."""
    done, killed = run_until(where, ["run", str(where.scenario(duration))], away_at,
                             box.kill, {"HARNESS_STORE": url, **(env or {})},
                             Later(back_after, box.start) if back_after is not None
                             else None)
    if back_after is None:
        box.start()
    if not killed:
        raise RuntimeError(f"the store was never killed: {done.stderr[-2000:]}")
    return done


@dataclass(frozen=True)
class Stored:
    """A drill's one run as its store holds it, against what sysbench reported."""

    status: str
    reported_s: int
    stored_s: int  # the seconds of tps stored
    samples: int
    events: list[str]
    spool_left: bool
    error: str | None

    @property
    def whole(self) -> bool:
        """Stored ok, every second sysbench reported, and no spool left behind."""
        return self.status == "ok" and self.stored_s == self.reported_s > 0 and \
            not self.spool_left

    def to_json(self) -> JsonDict:
        return asdict(self)


def stored(url: str, where: Place) -> Stored:
    """The drill's one run as its store holds it, against what sysbench reported."""
    store = open_store(url)
    try:
        (run,) = store.runs()
        tps = store.series(run.run_id, source="sysbench", metric="tps")
        return Stored(run.status, where.reported(), len(tps[0].t) if tps else 0,
                      store.sample_count(run.run_id),
                      [e.name for e in store.events(run.run_id)],
                      bool(list(where.results.glob(f"runs/*/{spooling.NAME}"))), run.error)
    finally:
        store.engine.dispose()


def _harness(where: Place, *args: str, **env: str) -> subprocess.CompletedProcess:
    return proc.run([sys.executable, "-m", "harness", *args], env=where.env(**env),
                    check=False)


@dataclass(frozen=True)
class Away:
    """When the store goes away in a run of ``duration`` s, and for how long."""

    duration: int
    at: int
    back_after: float | None  # None: until the harness has ended
    env: dict[str, str] = field(default_factory=dict)


def store_away(root: Path, name: str, how: Away) -> Drill:
    where = place(root, name)
    with store_server() as (box, url):
        done = outage(where, box, url, how.duration, how.at, how.back_after, how.env)
        replay = subprocess.CompletedProcess([], 0, "", "")
        if how.back_after is None:
            replay = _harness(where, "store", "replay-spool", HARNESS_STORE=url)
        got = stored(url, where)
        traceback = "Traceback" in done.stderr
        facts: JsonDict = {"exit": done.returncode, "traceback": traceback,
                           "said": done.stderr.strip().splitlines()[-1][:400],
                           "replay_exit": replay.returncode, **got.to_json()}
    return Drill(name, got.whole and not traceback, facts)


def _mysqld(where: Place) -> int:
    (pid,) = [pid for pid, argv in proc.processes()
              if str(where.sandboxes) in " ".join(argv) and "mariadbd" in " ".join(argv)]
    return pid


def server_stopped(root: Path, name: str, held_s: float | None) -> Drill:
    where = place(root, name)
    url = f"sqlite:///{where.results}/harness.db"
    stopped: list[float] = []

    def stop() -> None:
        pid = _mysqld(where)
        os.kill(pid, signal.SIGSTOP)
        stopped.append(time.monotonic())
        if held_s is not None:
            time.sleep(held_s)
            os.kill(pid, signal.SIGCONT)
    done, _ = run_until(where, ["run", str(where.scenario(18 if held_s else 10))], 3, stop)
    ended_after = time.monotonic() - stopped[0] if stopped else None
    got = stored(url, where)
    traceback = "Traceback" in done.stderr
    facts: JsonDict = {"exit": done.returncode, "ended_s_after_the_stop": ended_after,
                       "traceback": traceback, **got.to_json()}
    named = "answered nothing" in (got.error or "")
    quick = held_s is not None or (ended_after or 999) < 70
    return Drill(name, got.status == "failed" and named and quick and not traceback, facts)


def harness_killed(root: Path) -> Drill:
    where = place(root, "harness_killed")
    url = f"sqlite:///{where.results}/harness.db"
    p = proc.popen([sys.executable, "-m", "harness", "run", str(where.scenario(60))],
                   env=where.env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while where.reported() < 8 and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.2)
    reported = where.reported()
    p.kill()
    p.wait()
    orphans = json.loads(_harness(where, "sandboxes", "list", "--json").stdout or "[]")
    nxt = _harness(where, "run", str(where.scenario(3, "next")))
    store = open_store(url)
    try:
        (dead,) = [r for r in store.runs() if r.scenario == "drill"]
        tps = store.series(dead.run_id, source="sysbench", metric="tps")
        stored_s = len(tps[0].t) if tps else 0
        left = [d.name for d in where.sandboxes.iterdir()]
        facts: JsonDict = {"reported_s": reported, "stored_s": stored_s,
                           "status": dead.status, "error": dead.error,
                           "orphans_listed": len(orphans), "next_exit": nxt.returncode,
                           "sandboxes_left": left}
    finally:
        store.engine.dispose()
    return Drill("harness_killed", dead.status == "interrupted" and
                 stored_s >= reported - 2 and len(orphans) == 1 and not left, facts)


def disk_full(root: Path) -> Drill:
    where = place(root, "disk_full")
    mnt = where.folder / "mnt"
    mnt.mkdir()
    proc.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mnt)])
    try:
        url = f"sqlite:///{mnt}/harness.db"
        f = where.scenario(40)
        f.write_text(f.read_text() + f"  - {{kind: command, name: fill, start: 4, argv: "
                     f"[sh, -c, \"cat /dev/zero > {mnt}/fill || true\"]}}\n")
        done = _harness(where, "run", str(f), HARNESS_STORE=url,
                        HARNESS_STORE_MAX_PENDING="3000", HARNESS_SPOOL_PATIENCE_S="3",
                        HARNESS_STORE_PATIENCE_S="5")
        (mnt / "fill").unlink()
        (log,) = mnt.glob("runs/*/sysbench.log")
        ran = log.read_text().count("tps:")
        replay = _harness(where, "store", "replay-spool", HARNESS_STORE=url)
        store = open_store(url)
        (run,) = store.runs()
        events = [e.name for e in store.events(run.run_id)]
        facts: JsonDict = {"exit": done.returncode, "ran_s": ran,
                           "replay_exit": replay.returncode, "status": run.status,
                           "error": run.error, "events": events}
        store.engine.dispose()
    finally:
        proc.run(["umount", str(mnt)], check=False)
    return Drill("disk_full", done.returncode == 1 and ran < 20 and replay.returncode == 0
                 and "fill" in events, facts)


def fill_to_the_last_byte(path: Path) -> None:
    """``path`` written until its disk refuses even one byte more."""
    with open(path, "wb", buffering=0) as f:
        for size in (1 << 20, 4096, 1):
            try:
                while True:
                    f.write(b"\0" * size)
            except OSError:
                pass


def disk_full_for_3_s_then_killed(where: Place) -> Drill:
    """The results folder (a 64 MB tmpfs: the store, the run's folder and its spool)
    full for 3 s once sysbench reported 5 s, the harness killed (SIGKILL) once it
    reported 25: the spool kept what the disk refused in memory and wrote it after, so
    the replay stores at least 95% of the seconds sysbench reported."""
    where.results.mkdir(parents=True)
    proc.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(where.results)])
    try:
        p = proc.popen([sys.executable, "-m", "harness", "run", str(where.scenario(60))],
                       env=where.env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True)
        _wait_reported(where, p, 5)
        fill_to_the_last_byte(where.results / "fill")
        time.sleep(3)
        (where.results / "fill").unlink()
        _wait_reported(where, p, 25)
        reported = where.reported()
        p.kill()
        err = str(p.communicate(timeout=30)[1])
        time.sleep(2)  # mysqld follows its parent (PDEATHSIG)
        replay = _harness(where, "store", "replay-spool")
        got = stored(f"sqlite:///{where.results}/harness.db", where)
    finally:
        _harness(where, "sandboxes", "remove", "--orphans")
        proc.run(["umount", str(where.results)], check=False)
    said = [ln.strip() for ln in err.splitlines()
            if "spool" in ln and ("cannot be written" in ln or "written again" in ln)][:2]
    facts: JsonDict = {"reported_s": reported, "said": said,
                       "replay_exit": replay.returncode, **got.to_json()}
    return Drill("disk_full_for_3_s_then_killed", got.stored_s >= 0.95 * reported and
                 len(said) == 2 and "Traceback" not in err, facts)


def _wait_reported(where: Place, p: subprocess.Popen[Any], seconds: int) -> None:
    deadline = time.monotonic() + 180
    while where.reported() < seconds:
        if time.monotonic() > deadline or p.poll() is not None:
            p.kill()
            raise RuntimeError(f"sysbench never reported {seconds} s: "
                               f"{p.communicate()[1][-2000:]}")
        time.sleep(0.2)


def store_io_error_at_the_end(where: Place, held_s: float = 20) -> Drill:
    """The SQLite store's files made immutable (``chattr +i``: SQLite answers "disk I/O
    error") as the run ends, for ``held_s`` seconds: the end waits for the store, and
    the run is ok with its tps and every second."""
    files = lambda: [str(p) for p in where.results.glob("harness.db*")  # noqa: E731
                     if not p.name.endswith("-shm")]  # mapped: a write faults

    def lock() -> None:
        proc.run(["chattr", "+i", *files()])

    def unlock() -> None:
        proc.run(["chattr", "-i", *files()], check=False)
    try:
        done, _ = run_until(where, ["run", str(where.scenario(12))], 11, lock,
                            later=Later(held_s, unlock))
    finally:
        unlock()
    got = stored(f"sqlite:///{where.results}/harness.db", where)
    traceback = "Traceback" in done.stderr
    said = "disk I/O error" in done.stderr and "tried again" in done.stderr
    facts: JsonDict = {"exit": done.returncode, "traceback": traceback, "said": said,
                       "message": next((ln.strip() for ln in done.stderr.splitlines()
                                        if "I/O" in ln), ""), **got.to_json()}
    return Drill("store_io_error_at_the_end", done.returncode == 0 and got.whole
                 and said and not traceback, facts)


HOLD_LOCK = """\
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=60)
c.execute("BEGIN EXCLUSIVE")
print("held", flush=True)
time.sleep(float(sys.argv[2]))
"""


def store_locked_at_the_end(where: Place, held_s: float = 45) -> Drill:
    """Another process holds the SQLite store locked (BEGIN EXCLUSIVE) for ``held_s``
    seconds from 2 s before sysbench's end (after a 2 s warmup, whose end is an event
    the store waits to take): the run waits for the store, is ok, and its measured
    window ends when sysbench ended, not when the store took what came after."""
    holder: list[subprocess.Popen[Any]] = []

    def lock() -> None:
        p = proc.popen([sys.executable, "-c", HOLD_LOCK, str(where.results / "harness.db"),
                        str(held_s)], stdout=subprocess.PIPE, text=True)
        assert p.stdout is not None and p.stdout.readline().strip() == "held"
        holder.append(p)
    try:
        f = where.scenario(20)
        f.write_text(f.read_text().replace("warmup_s: 0", "warmup_s: 2"))
        done, _ = run_until(where, ["run", str(f)], 20, lock)
    finally:
        for p in holder:
            p.kill()
            p.wait()
    store = open_store(f"sqlite:///{where.results}/harness.db")
    try:
        (run,) = store.runs()
        s = run.summary
        window = (s.workload_end_s or 0) - (s.workload_start_s or 0)
    finally:
        store.engine.dispose()
    got = stored(f"sqlite:///{where.results}/harness.db", where)
    facts: JsonDict = {"exit": done.returncode, "window_s": round(window, 1),
                       "traceback": "Traceback" in done.stderr, **got.to_json()}
    return Drill("store_locked_at_the_end", done.returncode == 0 and got.whole and
                 window < 20 + 5 and not facts["traceback"], facts)


def stall_in_the_headline(root: Path) -> Drill:
    """mysqld stopped (SIGSTOP) for 20 of 45 measured seconds: not most of them, so the
    run is ok, with the stall in its headline and its summary."""
    where = place(root, "stall_in_the_headline")

    def stop() -> None:
        pid = _mysqld(where)
        os.kill(pid, signal.SIGSTOP)
        time.sleep(20)
        os.kill(pid, signal.SIGCONT)
    done, _ = run_until(where, ["run", str(where.scenario(45))], 3, stop)
    store = open_store(f"sqlite:///{where.results}/harness.db")
    try:
        (run,) = store.runs()
        stall, status = run.summary.stall, run.status
    finally:
        store.engine.dispose()
    said = bool(stall) and stall in done.stderr and stall in done.stdout
    facts: JsonDict = {"exit": done.returncode, "status": status, "stall": stall,
                       "said": said, "traceback": "Traceback" in done.stderr}
    return Drill("stall_in_the_headline", status == "ok" and said and
                 not facts["traceback"], facts)


# Takes a lock, forks a child that keeps the open file (and so the lock), exits: the
# kernel's /proc/locks then names a process that is gone.
HOLD_IN_A_CHILD = """
import os, sys, time
from pathlib import Path
from harness import locks
with locks.held(Path(sys.argv[1]), "a holder that forked", say=None):
    child = os.fork()
    if child == 0:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        time.sleep(600)
        os._exit(0)
    print(child, flush=True)
    os._exit(0)
"""


def lock_held_by_a_child(lock: Path) -> int:
    """The pid of a process that holds ``lock`` through a file it inherited from the
    (exited) process that took it."""
    out = proc.run([sys.executable, "-c", HOLD_IN_A_CHILD, str(lock)], timeout=60).stdout
    return int(out.strip())


def lock_holder_stopped(root: Path) -> Drill:
    """The measurement lock held by a process that is then stopped (SIGSTOP): a run
    waiting for it names it (not the exited process that took it), breaks the lock
    after 30 s, says so, and measures."""
    where = place(root, "lock_holder_stopped")
    lock = where.folder / "measure.lock"
    child = lock_held_by_a_child(lock)
    try:
        os.kill(child, signal.SIGSTOP)
        t0 = time.monotonic()
        done = _harness(where, "run", str(where.scenario(3)), HARNESS_MEASURE_LOCK=str(lock))
        took = time.monotonic() - t0
    finally:
        os.kill(child, signal.SIGKILL)
    named = f"waiting for pid {child} " in done.stderr
    broken = "the lock is broken" in done.stderr
    facts: JsonDict = {"exit": done.returncode, "named": named, "broken": broken,
                       "took_s": round(took, 1)}
    return Drill("lock_holder_stopped", done.returncode == 0 and named and broken, facts)


def synthetic_store(path: Path, runs: int = 30, samples: int = 3000) -> None:
    """A store of ``runs`` runs of 5 series of ``samples`` samples each, and an event."""
    from ..store import RunRecord, RunSummary

    s = open_store(f"sqlite:///{path}")
    for r in range(runs):
        rid = f"r{r:02d}"
        s.create_run(RunRecord(run_id=rid, run_set="s", scenario="sc", server="x",
                               flavor="mysql", version="8.0", variant="v", target="local",
                               host="h", started_at=f"2026-12-02T10:{r:02d}:00+00:00"))
        w = s.writer(rid)
        for i in range(samples):
            for m in range(5):
                w.add(float(i), "src", f"m{m}", float(i * m + r))
        w.close()
        s.add_event(rid, 1.0, "phase_start", "main", {"r": r})
        s.update_run(rid, status="ok", summary=RunSummary(samples=s.sample_count(rid)))
    s.engine.dispose()


def half_a_store_salvaged(root: Path) -> Drill:
    """A store of 30 runs cut at half its size (what a full disk leaves): SQLite reads
    none of its runs; the salvage copies those whose rows its pages still hold."""
    where = place(root, "half_a_store")
    whole, cut = where.folder / "whole.db", where.folder / "cut.db"
    synthetic_store(whole)
    cut.write_bytes(whole.read_bytes()[:whole.stat().st_size // 2])
    done = _harness(where, "store", "check", "--salvage", str(where.folder / "saved.db"),
                    HARNESS_STORE=f"sqlite:///{cut}")
    saved = open_store(f"sqlite:///{where.folder / 'saved.db'}")
    try:
        copied = len(saved.runs())
    finally:
        saved.engine.dispose()
    beside = sorted(p.name for p in where.folder.glob("cut.db?*"))
    facts: JsonDict = {"exit": done.returncode, "copied": copied, "of": 30,
                       "made_beside": beside, "said": done.stdout.strip()[-300:]}
    return Drill("half_a_store_salvaged", copied > 0 and not beside, facts)


def bench_faults(log: Callable[[str], None]) -> JsonDict:
    """Every drill in turn; what survived each, and how many did."""
    drills: list[Callable[[Path], Drill]] = [
        lambda r: store_away(r, "store_away_at_the_end", Away(12, 10, 15)),
        lambda r: store_away(r, "store_away_mid_run", Away(
            18, 3, 8, {"HARNESS_STORE_MAX_PENDING": "400"})),
        lambda r: store_away(r, "store_away_for_good", Away(
            12, 10, None, {"HARNESS_STORE_PATIENCE_S": "5"})),
        lambda r: server_stopped(r, "mysqld_stopped_12_s", 12),
        lambda r: server_stopped(r, "mysqld_stopped_for_good", None),
        harness_killed,
        disk_full,
        lambda r: store_io_error_at_the_end(place(r, "store_io_error_at_the_end")),
        lambda r: disk_full_for_3_s_then_killed(place(r, "disk_full_for_3_s")),
        lambda r: store_locked_at_the_end(place(r, "store_locked_at_the_end")),
        stall_in_the_headline,
        lock_holder_stopped,
        half_a_store_salvaged,
    ]
    out: JsonDict = {}
    survived = 0
    with tempfile.TemporaryDirectory(prefix="faults-", dir="/tmp") as tmp:
        os.chmod(tmp, 0o755)
        for drill in drills:
            d = drill(Path(tmp))
            log(f"faults: {d.name}: {'survived' if d.survived else 'LOST SOMETHING'}")
            out[d.name] = asdict(d)
            survived += d.survived
    out["survived"] = f"{survived} of {len(drills)}"
    return out
