"""Host tuning on this machine for real: a swap file and vm.* sysctls applied for a run
set on a host marked disposable, in force during the runs (and the server's memory
cgroup following vm.swappiness), and undone afterwards - also when the harness is
interrupted, and from the journal when it was killed outright. The same runs place
mysqld and the client on CPUs of their own (cpu_placement)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.host import tuning

from ..conftest import ROOT, harness

# swap files, vm.* sysctls and CPU placement: host-wide
pytestmark = [pytest.mark.integration, pytest.mark.alone]

NAMES = ("vm.swappiness", "vm.dirty_ratio", "vm.dirty_bytes")


def _balloons() -> list[int]:
    """Balloon processes alive (harness/host/balloon.py)."""
    out = []
    for d in Path("/proc").iterdir():
        try:
            if d.name.isdigit() and b"harness.host.balloon" in (d / "cmdline").read_bytes():
                out.append(int(d.name))
        except OSError:
            pass
    return out


def _host() -> dict:
    return {"sysctls": {n: tuning.read_sysctl(n) for n in NAMES},
            "swaps": [s["path"] for s in tuning.active_swaps()],
            "journal": tuning.journal_path().exists(), "balloons": _balloons()}


SCENARIO = """\
name: host_tuning
servers: [mariadb-10.11]
mysqld: {{innodb_buffer_pool_size: 64M}}
host: {{disposable: true, swap_file: 256M, sysctls: {{vm.swappiness: 7}},
       balloon: {{size: 192M}}}}
host_profile: {{memory: 512M}}
cpu_placement: {{server: "1", client: "0"}}
variants:
  low: {{sysctls: {{vm.dirty_bytes: 48M}}}}
  high: {{sysctls: {{vm.dirty_ratio: 41, vm.swappiness: 90}}}}
dataset: {{kind: sysbench, tables: 1, table_size: 2000}}
workload: {{test: oltp_read_only, threads: 1, duration_s: {duration}}}
wakeup_probe: false
collectors: {{buffer_pool_index: {{enabled: false}}}}
side_loads:
  - {{name: where, kind: command, argv: [cat, /proc/self/cgroup], start: {{at: 0}},
     in_server_cgroup: true}}
  - {{name: split, kind: backup_split, file: /dev/zero, size: 8M, chunk_size: 1M,
     start: {{at: 0}}, in_server_cgroup: true}}
  - name: limit
    kind: command
    start: {{at: 0}}
    argv:
      - sh
      - -c
      - >-
        pid=$(cat "$(mysql --defaults-file="$HARNESS_DEFAULTS_FILE" -N -e
        'SELECT @@pid_file')") && m=$(grep :memory: /proc/$pid/cgroup | cut -d: -f3) &&
        cat /sys/fs/cgroup/memory$m/memory.limit_in_bytes &&
        grep -h Cpus_allowed_list /proc/self/status /proc/$pid/task/*/status
"""


def test_swap_and_sysctls_in_force_for_each_variant_then_restored(tmp_path, results):
    before = _host()
    f = tmp_path / "s.yaml"
    f.write_text(SCENARIO.format(duration=2))
    # Without the command line's confirmation nothing is touched.
    r = harness("run", str(f))
    assert r.returncode == 2, r.stderr
    assert "host" in r.stderr and "--i-know-this-is-disposable" in r.stderr
    assert _host() == before
    out = harness("run", str(f), "--json", "--i-know-this-is-disposable", check=True,
                  timeout=600)
    runs = {r["variant"]: r for r in json.loads(out.stdout)["runs"]}
    assert {v: r["status"] for v, r in runs.items()} == {"low": "ok", "high": "ok"}
    shown = {v: json.loads(harness("show", r["run_id"], "--json", check=True).stdout)
             for v, r in runs.items()}
    details = {v: x["details"] for v, x in shown.items()}
    low, high = (details[v]["host_tuning"] for v in ("low", "high"))
    assert low["sysctls"]["vm.dirty_bytes"] == str(48 << 20)
    assert low["sysctls"]["vm.dirty_ratio"] == "0"  # the twin is zeroed by the kernel
    assert low["sysctls"]["vm.swappiness"] == "7"
    assert high["sysctls"]["vm.dirty_ratio"] == "41"
    assert high["sysctls"]["vm.dirty_bytes"] == "0"
    assert high["sysctls"]["vm.swappiness"] == "90"
    # mysqld's memory cgroup follows the host's swappiness of its run
    assert details["low"]["host_profile"]["swappiness"] == 7
    assert details["high"]["host_profile"]["swappiness"] == 90
    # The balloon held its memory locked through both runs, and was let go after.
    for v in ("low", "high"):
        balloon = details[v]["host_tuning"]["balloon"]
        assert balloon["bytes"] == balloon["locked"] == 192 << 20
        assert balloon["available_after"] < balloon["available_before"]
    if before["swaps"]:
        assert low["swap"] == "existing"
    else:
        assert low["swap"] == "file" and low["bytes"] == 256 << 20
        assert not Path(low["path"]).exists(), "the swap file was left behind"
    assert _host() == before
    art = Path(shown["low"]["artifacts"])
    # mysqld ran under the memory limit (started inside its cgroup).
    limit, *cpus = (art / "sideload-limit-1.log").read_text().splitlines()
    assert limit == str(512 << 20)
    # Side loads marked in_server_cgroup ran inside mysqld's memory cgroup.
    (memory,) = [ln for ln in (art / "sideload-where-1.log").read_text().splitlines()
                 if ":memory:" in ln]
    assert "/mysql-harness-" in memory
    # cpu_placement: what the harness starts (this side load, sysbench) on CPU 0, every
    # thread of mysqld on CPU 1
    own, *server = [ln.split()[-1] for ln in cpus]
    assert own == "0" and set(server) == {"1"} and len(server) > 10
    placed = details["low"]["cpu_placement"]
    assert (placed["server"], placed["client"]) == ([1], [0])
    assert 10 < placed["mysqld_threads"] <= len(server)  # and the connections since
    (split,) = [x for x in shown["low"]["summary"]["side_loads"] if x["name"] == "split"]
    assert split["status"] == "ok" and split["bytes"] == 8 << 20
    assert split["passes"][0]["extra"]["chunks"] == 8


def test_interrupted_run_set_restores_the_host(tmp_path, results):
    before = _host()
    f = tmp_path / "s.yaml"
    f.write_text(SCENARIO.format(duration=120))
    p = subprocess.Popen([sys.executable, "-m", "harness", "run", str(f), "--variant",
                          "high", "--i-know-this-is-disposable"], cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 120
        while tuning.read_sysctl("vm.dirty_ratio") != "41":
            assert time.monotonic() < deadline and p.poll() is None, "never applied"
            time.sleep(0.2)
        time.sleep(3)  # into the run
        p.send_signal(signal.SIGTERM)
        out, _ = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 130, out
    assert "host settings restored" in out
    assert _host() == before


def test_journal_of_a_killed_harness_is_restored(tmp_path):
    before = _host()
    # A harness process that changes a setting and is killed before it can undo it.
    code = ("import os, signal\n"
            "from harness.host import tuning\n"
            "t = tuning.HostTuner()\n"
            "t.set_sysctls({'vm.dirty_ratio': '37', 'vm.swappiness': '3'})\n"
            "print(t.inflate(size=64 << 20)['locked'], flush=True)\n"
            "os.kill(os.getpid(), signal.SIGKILL)\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                       text=True)
    assert r.returncode == -signal.SIGKILL
    assert r.stdout.strip() == str(64 << 20)  # it was locked
    assert tuning.read_sysctl("vm.dirty_ratio") == "37"
    assert json.loads(tuning.journal_path().read_text())["balloon_pid"]
    # The balloon did not outlive its harness (the kernel kills it with its parent).
    deadline = time.monotonic() + 10
    while _balloons() != before["balloons"] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _balloons() == before["balloons"]
    done = tuning.recover()
    assert "vm.dirty_ratio=" + before["sysctls"]["vm.dirty_ratio"] in done
    assert _host() == before


def test_a_second_harness_waits_for_the_first_to_untune_the_host(tmp_path):
    """Two harnesses tuning this host, with caches of their own: the second waits for
    the host tuning lock, naming the first, and reads the host's own values as the
    originals, so the host ends as it began (not with the first's settings)."""
    before = _host()
    code = ("import sys, time\n"
            "from harness.host import tuning\n"
            "t = tuning.HostTuner()\n"
            "t.set_sysctls({'vm.swappiness': sys.argv[1]})\n"
            "print('set', flush=True)\n"
            "time.sleep(float(sys.argv[2]))\n"
            "t.close()\n")

    def tuner(value: str, hold_s: float, cache: Path) -> subprocess.Popen:
        env = {**os.environ, "HARNESS_CACHE": str(cache)}
        return subprocess.Popen([sys.executable, "-c", code, value, str(hold_s)], cwd=ROOT,
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)

    first = tuner("7", 3, tmp_path / "a")
    try:
        assert first.stdout.readline() == "set\n"
        assert tuning.read_sysctl("vm.swappiness") == "7"
        second = tuner("9", 0, tmp_path / "b")
        out, err = second.communicate(timeout=60)
        assert second.returncode == 0, err
        assert f"host tuning lock: waiting for pid {first.pid}" in err, err
        assert "tuning the host" in err, err
        first.wait(timeout=30)
    finally:
        first.kill()
    assert first.returncode == 0
    assert _host() == before
