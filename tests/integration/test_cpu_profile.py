"""Why it changed, during real runs: mysqld's CPU profile (perf's stacks of the server,
folded, named by the build's own symbols, drawn as a flame graph that headless Chromium
shows) and its wait events, both collectors on in one run set of two servers, with and
without the binary log; compare draws where the CPU moved between the two."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from harness.collectors.cpu_profile import FOLDED
from harness.store import open_store

from ..browser import rendered
from ..conftest import ROOT, harness
from ..schemas import conform
from .test_wait_events import waits_sampled

pytestmark = pytest.mark.integration

SCENARIO = """\
name: profiled
servers: [mariadb-10.11, mysql-5.7.29]
mysqld: {innodb_buffer_pool_size: 32M}
dataset: {tables: 1, table_size: 10000}
workload: {test: oltp_read_write, threads: 2, warmup_s: 1, duration_s: 6}
variants:
  plain: {}
  binlog: {mysqld: {log_bin: mysql-bin, server_id: 1}}
collectors:
  cpu_profile: {enabled: true, hz: 199}
  wait_events: {enabled: true, instruments: all}
wakeup_probe: false
baseline_server: mysql-5.7.29
"""


def _folded(text: str) -> dict[str, int]:
    out = {}
    for line in text.splitlines():
        stack, n = line.rsplit(" ", 1)
        out[stack] = int(n)
    return out


def test_a_profile_names_the_servers_own_functions_and_draws_them(tmp_path, results):
    f = tmp_path / "p.yaml"
    f.write_text(SCENARIO)
    harness("run", str(f), check=True)
    runs = json.loads(harness("runs", "--json", check=True).stdout)["runs"]
    assert sorted(r["server"] for r in runs) == ["mariadb-10.11"] * 2 + ["mysql-5.7.29"] * 2
    store = open_store(f"sqlite:///{results}/harness.db")
    for run in runs:
        show = json.loads(harness("show", run["run_id"], "--json", check=True).stdout)
        artifacts = tmp_path / show["artifacts"]
        _profiled(show, artifacts)
        waits_sampled(show, store, artifacts)

    folder = tmp_path / "report"
    harness("report", runs[0]["run_set"], "-o", str(folder), check=True)
    page = folder / "report.html"
    text = page.read_text()
    assert text.count("<h2>CPU flame graph") == 4 and "<script" not in text
    assert re.search(r"<title>dispatch_command \(\d+ samples, [\d.]+%\)</title>", text)
    # an upgrade's page: where each server's CPU per transaction went against the
    # baseline server's, function by function, the two builds' own function names
    head = re.search(r"<h3>sysbench oltp_read_write: mariadb-10.11 against mysql-5.7.29, "
                     r"where mysqld&#x27;s CPU per transaction went \(([\d.]+) -&gt; ([\d.]+) us, "
                     r"x[\d.]+\)[^<]*</h3>(.*?)</table>", text, re.S)
    assert head, re.findall(r"<h3>[^<]*</h3>", text)
    assert float(head.group(1)) > 0 and float(head.group(2)) > 0
    functions = re.findall(r"<tr><td>([^<]+)</td><td>[\d.]+</td>", head.group(3))
    assert len(functions) >= 5 and "[unknown]" not in functions, functions
    shot = ROOT / "results" / "test-artifacts" / "flamegraph.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    shown = rendered(page, shot)
    assert sum(w >= 1000 and h >= 100 for w, h in shown.svgs) == 4, shown.svgs
    assert shown.scripts == 0
    _where_the_cpu_moved(tmp_path, results, runs[0]["run_set"])


def _where_the_cpu_moved(tmp_path, results, run_set):
    """compare's page draws the candidate's profile against the baseline's: the binary
    log's own functions, which only the candidate runs, red from 0% of the samples."""
    harness("compare", "--run-sets", run_set, "--variants", "plain", "binlog")
    page = results / "reports" / run_set / "compare.html"
    text = page.read_text()
    for server in ("mariadb-10.11", "mysql-5.7.29"):
        assert f"<h2>Where mysqld's CPU moved on {server}: {run_set}/binlog against " \
            f"{run_set}/plain</h2>" in text
    grew = re.findall(r"<title>([^<]*?(?:BIN_LOG|binlog)[^<]*?): 0\.00% -> ([\d.]+)% of the "
                      r"samples \(\+[\d.]+ points\)</title><rect [^>]*fill='rgb\(255,", text)
    # MYSQL_BIN_LOG::write_event, binlog_log_row, THD::binlog_query ...: red, from 0%
    assert len({name for name, _ in grew}) >= 3, grew[:10]
    shot = ROOT / "results" / "test-artifacts" / "flamegraph-diff.png"
    shown = rendered(page, shot)
    assert sum(w >= 1000 and h >= 100 for w, h in shown.svgs) >= 2 and shown.scripts == 0


def _profiled(show: dict, artifacts: Path) -> None:
    notes = " ".join(show["summary"]["collectors"]["notes"])
    assert "cpu_profile:" in notes and "at 199 Hz" in notes, notes
    counts = _folded((artifacts / FOLDED).read_text())
    samples = sum(counts.values())
    # perf samples mysqld's threads on their CPU time: the samples match what
    # /proc says mysqld used meanwhile, and 2 threads of read-write for 6 s keep it busy
    used = float(re.search(r"mysqld used ([\d.]+) CPU s meanwhile", notes).group(1))
    assert "perf lost" not in notes and samples >= 0.5 * used * 199, notes
    # perf samples every CPU mysqld may run on (root here) and keeps only mysqld's
    # samples: none of sysbench's, the idle task's or perf's own, and no more samples
    # than mysqld's CPU time gives
    assert f"sampled on CPUs {','.join(map(str, sorted(os.sched_getaffinity(0))))}" \
        in notes, notes
    threads = {stack.split(";")[0] for stack in counts}
    assert not threads & {"sysbench", "swapper", "perf", "python3"}, threads
    assert samples <= 1.3 * used * 199 + 20, notes
    # enough to name functions by (beside seven other workers mysqld had 0.97 CPU s of
    # the 12 s: the floor is what a profile needs, not what a quiet machine gives)
    assert used >= 0.5 and samples >= 100, notes
    assert int(re.search(r"cpu_profile: (\d+) samples", notes).group(1)) == samples
    # the server's own functions, by the build's own symbols, under a thread's name
    frames = {fr for stack in counts for fr in stack.split(";")[1:]}
    assert {"do_command", "dispatch_command"} <= frames, sorted(frames)[:50]
    on_query = sum(n for s, n in counts.items() if "dispatch_command" in s.split(";"))
    assert on_query >= samples // 5, (on_query, samples)
    assert not (artifacts / "perf.data").exists()  # folded, then gone


def test_paused_perf_takes_no_samples_and_resumed_it_takes_them(tmp_path):
    """The control make bench-observer-windows switches perf with: a busy process
    (standing in for mysqld: perf neither knows nor cares) sampled while perf is
    resumed, not while it is paused. The process's own CPU time is the yardstick: on a
    busy host (the suite's other workers) it gets far less than the seconds slept, so
    each stretch lasts until the process has had the CPU time the check needs (0.17 s
    in 2 s beside seven workers)."""
    import subprocess
    import sys
    import time

    from harness import procfs
    from harness.collectors.base import CollectorContext
    from harness.collectors.cpu_profile import CpuProfile

    def until(pid: int, cpu_s: float) -> None:
        """Wait until ``pid`` has had ``cpu_s`` more CPU seconds (at most 30 s)."""
        start, t0 = procfs.read(pid).cpu_s, time.monotonic()
        while procfs.read(pid).cpu_s - start < cpu_s and time.monotonic() - t0 < 30:
            time.sleep(0.05)

    def sampled(paused_s: float, resumed_s: float) -> tuple[int, float, float]:
        """Samples taken, the process's CPU s while paused, and while recorded (each
        stretch: at least that many CPU seconds of the process)."""
        folder = tmp_path / f"p{paused_s}-{resumed_s}"
        folder.mkdir()
        busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        try:
            ctx = CollectorContext(endpoint=None, flavor="mariadb", version=(10, 11),
                                   clock=time.monotonic, sample=lambda *a: None,
                                   event=lambda *a: None, artifacts=folder,
                                   mysqld_pid=busy.pid)
            with CpuProfile(ctx) as prof:
                assert prof.pause(), ctx.notes
                cpu0 = procfs.read(busy.pid).cpu_s
                until(busy.pid, paused_s)
                while_paused = procfs.read(busy.pid).cpu_s - cpu0
                assert prof.resume(), ctx.notes
                until(busy.pid, resumed_s)
            note = ctx.notes[-1]
            assert "samples of mysqld" in note, ctx.notes
            used = float(re.search(r"mysqld used ([\d.]+) CPU s meanwhile", note).group(1))
            return sum(_folded((folder / FOLDED).read_text()).values()), while_paused, used
        finally:
            busy.kill()
            busy.wait()

    paused, ran, _ = sampled(0.5, 0.0)
    # it ran while paused, and perf took none of it but the ack's round trip lets in
    assert ran >= 0.2 and paused <= 5 + 0.05 * ran * 99, (paused, ran)
    resumed, _, used = sampled(0.0, 0.5)
    # resumed: what its CPU time while recorded gives at 99 Hz (the note counts that)
    assert used >= 0.2 and 0.5 * used * 99 - 5 <= resumed <= 1.3 * used * 99 + 20, \
        (resumed, used)


RAMPED = """\
name: profiled_one_thread
servers: [mariadb-10.11]
mysqld: {innodb_buffer_pool_size: 32M}
dataset: {tables: 1, table_size: 10000}
workload:
  test: oltp_point_select
  threads: 2
  warmup_s: 0
  duration_s: 4
  ramp: {threads: [2, 1, 2], step_s: 3}
collectors:
  cpu_profile: {enabled: true, threads: [1]}
wakeup_probe: false
"""


def test_a_profile_of_one_thread_count_records_that_ramp_step_alone(tmp_path, results):
    """``threads: [1]`` (an upgrade's one-thread cells): perf records the 3 s the ramp
    spends at one thread, not the 6 s at two around it nor the hold."""
    f = tmp_path / "ramped.yaml"
    f.write_text(RAMPED)
    harness("run", str(f), check=True)
    (run,) = json.loads(harness("runs", "--json", check=True).stdout)["runs"]
    show = json.loads(harness("show", run["run_id"], "--json", check=True).stdout)
    notes = " ".join(show["summary"]["collectors"]["notes"])
    m = re.search(r"cpu_profile: (\d+) samples of mysqld at 99 Hz over (\d+) s while the "
                  r"workload ran 1 client thread\(s\)", notes)
    assert m, notes
    samples, seconds = int(m.group(1)), int(m.group(2))
    assert 2 <= seconds <= 5, notes  # the step, not the 13 s of the whole run
    used = float(re.search(r"mysqld used ([\d.]+) CPU s meanwhile", notes).group(1))
    assert 0.5 * used * 99 <= samples <= 1.3 * used * 99 + 20, notes
    counts = _folded((tmp_path / show["artifacts"] / FOLDED).read_text())
    assert sum(counts.values()) == samples
    # the stretch is in the run's events, for the upgrade's CPU by function to read
    # mysqld's CPU per transaction over the same seconds
    store = open_store(f"sqlite:///{results}/harness.db")
    marks = [(e.name, e.t, e.detail) for e in store.events(run["run_id"])
             if e.kind == "profiling"]
    assert [m[0] for m in marks] == ["start", "stop"], marks
    assert 2 <= marks[1][1] - marks[0][1] <= 5 and marks[0][2] == {"artifact": FOLDED}


def test_every_workload_says_its_threads_so_a_profile_of_some_records(tmp_path, results):
    """Not sysbench alone: the insert benchmark's 1 inserter and 1 querier are 2 client
    threads, and ``threads: [2]`` records its whole run (``[3]``, nothing)."""
    f = tmp_path / "ii.yaml"
    for counts in ([2], [3]):
        f.write_text(f"""\
name: profiled_iibench
servers: [mariadb-10.11]
dataset: {{kind: iibench, initial_rows: 1000}}
workload: {{kind: iibench, threads: 1, query_threads: 1, duration_s: 4}}
collectors:
  cpu_profile: {{enabled: true, threads: {counts}}}
  buffer_pool_index: {{enabled: false}}
wakeup_probe: false
""")
        made = json.loads(harness("run", str(f), "--json", check=True).stdout)
        conform("run-set", made)
        run = made["runs"][0]
        notes = " ".join(run["summary"]["collectors"]["notes"])
        if counts == [2]:
            m = re.search(r"cpu_profile: (\d+) samples of mysqld at 99 Hz over (\d+) s while "
                          r"the workload ran 2 client thread\(s\)", notes)
            assert m and int(m.group(1)) > 0 and 3 <= int(m.group(2)) <= 8, notes
        else:
            assert "only at 3 client thread(s), which the workload never ran" in notes, notes
