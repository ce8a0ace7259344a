"""A disk that charges seeks (host_profile.disk), on a real server: the datadir on ext4 on
a loop device on the model's FUSE file, random reads served at the model's rate, and
nothing left mounted - after a run, and after the harness was killed in one."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness import proc
from harness.providers.local import remove_stale

from ..conftest import ROOT, harness

pytestmark = pytest.mark.integration

SEEK_MS = 5.0
SCENARIO = """\
name: seekdisk
servers: [mariadb-10.11]
mysqld: {{innodb_buffer_pool_size: 6M, innodb_flush_method: O_DIRECT,
         innodb_buffer_pool_load_at_startup: 0, innodb_buffer_pool_dump_at_shutdown: 0}}
host_profile: {{disk: {{seek_ms: {seek}, mbps: 100, size: 1G}}}}
dataset: {{tables: 1, table_size: 40000}}
workload: {{test: oltp_point_select, threads: 2, warmup_s: 0, duration_s: {duration}}}
wakeup_probe: false
collectors: {{buffer_pool_index: {{enabled: false}}}}
"""


def _leftovers(root: Path) -> dict[str, list[str]]:
    """Mounts, loop devices and model daemons of sandboxes under ``root``."""
    mounts = [ln.split()[1] for ln in Path("/proc/mounts").read_text().splitlines()
              if str(root) in ln]
    loops = [ln for ln in subprocess.run(["losetup", "-a"], capture_output=True,
                                         text=True).stdout.splitlines() if str(root) in ln]
    daemons = [" ".join(argv) for _pid, argv in proc.processes()
               if "harness.host.seekdisk" in " ".join(argv) and str(root) in " ".join(argv)]
    return {"mounts": mounts, "loops": loops, "daemons": daemons}


NOTHING: dict[str, list[str]] = {"mounts": [], "loops": [], "daemons": []}


@pytest.mark.alone  # a rate against the model's: a quiet machine
def test_random_reads_are_served_at_the_models_seek_rate(tmp_path, results, sandbox_root):
    f = tmp_path / "s.yaml"
    f.write_text(SCENARIO.format(seek=SEEK_MS, duration=6))
    harness("run", str(f), check=True, timeout=600)
    (run,) = json.loads(harness("runs", "--json", check=True).stdout)["runs"]
    show = json.loads(harness("show", run["run_id"], "--json", check=True).stdout)
    disk = show["details"]["disk"]
    assert (disk["seek_ms"], disk["mbps"]) == (SEEK_MS, 100.0)
    m = disk["measured"]
    # A 6M pool over ~10 MB of rows: point selects miss, and each miss is a seek.
    assert m["seeks"] > 100, m
    # One actuator: at most one seek per seek time (this host's disk alone does
    # thousands of such reads a second), and never busier than all the time.
    assert m["seeks_per_s"] <= 1000 / SEEK_MS * 1.02, m
    assert m["busy"] <= 1.01, m
    # The server's own count of reads agrees with the model's bound.
    art = Path(show["artifacts"])
    assert "/disk/fs/data" in json.loads((art / "variables.json").read_text())["datadir"]
    out = harness("export", run["run_id"], check=True).stdout
    reads = [(float(ln.split(",")[1]), float(ln.rsplit(",", 1)[1])) for ln in out.splitlines()
             if ",mysql_global_status_innodb_data_reads," in ln]
    rate = (reads[-1][1] - reads[0][1]) / (reads[-1][0] - reads[0][0])
    assert 20 < rate <= 1000 / SEEK_MS * 1.3, rate
    assert _leftovers(sandbox_root) == NOTHING


def test_a_killed_harness_leaves_no_stuck_mount(tmp_path, results, sandbox_root):
    f = tmp_path / "s.yaml"
    f.write_text(SCENARIO.format(seek=1, duration=120))
    p = subprocess.Popen([sys.executable, "-m", "harness", "run", str(f)], cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 180
        while not list(results.glob("runs/*/sysbench.log")):
            assert time.monotonic() < deadline and p.poll() is None, "the run never started"
            time.sleep(0.3)
        time.sleep(2)
        p.send_signal(signal.SIGKILL)
        p.wait(30)
    finally:
        if p.poll() is None:
            p.kill()
    left = _leftovers(sandbox_root)
    assert len(left["mounts"]) == 2 and len(left["daemons"]) == 1, left  # fuse, ext4
    # The next harness (or make clean-sandboxes) takes the disk down with the sandbox.
    removed = remove_stale()
    assert len(removed) == 1
    assert _leftovers(sandbox_root) == NOTHING
    assert list(sandbox_root.iterdir()) == []
    assert os.path.exists("/dev/fuse")
