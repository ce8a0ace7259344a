"""The client side's CPU from /proc: this process's descendants, summed per program,
the server's subtree and others' processes left out."""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from harness.collectors import CollectorContext
from harness.collectors.client_process import METRIC, SELF_METRIC, ClientProcess

BUSY = "import time\nt = time.process_time()\nwhile time.process_time() - t < {s}: pass\n"


def _ctx(tmp_path: Path, mysqld_pid: int | None) -> CollectorContext:
    return CollectorContext(endpoint=None, flavor="mysql", version=(8, 0),  # type: ignore[arg-type]
                            clock=time.monotonic, sample=lambda *a: None,
                            event=lambda *a: None, artifacts=tmp_path, mysqld_pid=mysqld_pid)


def test_a_childs_cpu_is_counted_under_its_program_and_the_servers_is_not(tmp_path):
    spare = tmp_path / "server.py"  # stands for mysqld: left out by its pid
    spare.write_text(BUSY.format(s=1.0))
    server = subprocess.Popen([sys.executable, str(spare)])
    # a detached process (its parent gone): not this harness's, as another run's would be
    subprocess.run(["sh", "-c", f"{sys.executable} -c '{BUSY.format(s=1.0)}' >/dev/null &"],
                   check=True)
    c = ClientProcess(_ctx(tmp_path, server.pid))
    c.setup()
    # the first sample: where each process stands (the harness's own CPU apart)
    assert [m for m, _, _ in c.collect()] == [SELF_METRIC]
    child = subprocess.Popen([sys.executable, "-c", BUSY.format(s=0.6)])
    child.wait()
    before_exit = c.collect()  # the child is gone: it ended between two samples
    # a child that has used its 0.8 s of CPU and then waits, alive, to be sampled (on a
    # busy host the CPU takes as long as it takes: no sleep decides it)
    child = subprocess.Popen([sys.executable, "-c", BUSY.format(s=0.8) + "print(flush=True)\n"
                              "import sys\nsys.stdin.read()\n"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdout is not None and child.stdout.readline() == b"\n"
    # a daemon of its own session, as the harness starts mysqld or dockerd: not a client
    daemon = subprocess.Popen([sys.executable, "-c", BUSY.format(s=1.0) + "print(flush=True)\n"
                               "import sys\nsys.stdin.read()\n"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              start_new_session=True)
    assert daemon.stdout is not None and daemon.stdout.readline() == b"\n"
    server.wait()  # its 1 s of CPU spent: counted, it would show
    points = {labels["program"]: v for metric, v, labels in c.collect()
              if metric == METRIC}
    child.communicate(b"")
    daemon.communicate(b"")
    program = Path(sys.executable).name[:15]
    # 0.8 s of the second child (new since the last sample: all its CPU), none of the
    # first (gone before it was seen), none of the server's 1 s, the daemon's 1 s nor the
    # detached one's
    assert 0.7 <= points[program] <= 1.1, (points, before_exit)
    assert list(points) == [program], points



def test_the_harness_process_is_counted_apart_from_the_programs_it_started(tmp_path):
    """Statements run in the harness's own threads (a replay's clients) are its CPU: a
    series of its own, not a program's."""
    c = ClientProcess(_ctx(tmp_path, None))
    c.setup()
    first = {m: v for m, v, _ in c.collect()}
    t = time.process_time()
    while time.process_time() - t < 0.5:
        pass
    points = c.collect()
    grown = {m: v for m, v, _ in points}[SELF_METRIC] - first[SELF_METRIC]
    assert 0.45 <= grown <= 0.9, grown
    assert [m for m, _, _ in points] == [SELF_METRIC], points  # no child: no program


def test_a_comparison_warns_only_when_the_harness_ran_near_one_core():
    from harness.report.conditions import NEAR_ONE_CORE, Conditions
    said = [Conditions("w", "m", harness_cpu=x).lines() for x in
            (None, 0.3, NEAR_ONE_CORE - 0.01, NEAR_ONE_CORE, 0.78)]
    warned = [any("the client, not the server, may have set the pace" in ln for ln in s)
              for s in said]
    assert warned == [False, False, False, True, True]
    assert "ran 0.78 of a core" in " ".join(said[-1])
