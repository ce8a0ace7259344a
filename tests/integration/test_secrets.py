"""A planted password never shows up in child argv, logs, artifacts, the store, exports
or /metrics."""
from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from harness import proc

from ..conftest import ROOT, harness, holding

pytestmark = pytest.mark.integration

SECRET = "Pl4nted-S3cret-7f3a9c"
SCENARIO = """\
name: secrets
servers: [mariadb-10.11]
dataset: {tables: 2, table_size: 5000}
workload: {test: oltp_read_write, threads: 2, warmup_s: 1, duration_s: 8,
           options: {rate: 50}}
"""


def _ppid(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _below(pid: int, root: int) -> bool:
    """Whether ``pid`` is ``root``'s or a descendant of it (a process of this test's
    harness run, not of another test's containers)."""
    while pid > 1:
        if pid == root:
            return True
        pid = _ppid(pid)
    return False


def _environs_of_account(root: int) -> dict[int, dict[str, str]]:
    """Each process of ``root``'s tree now running as mysqld's account: its environment,
    as that account reads it from /proc/PID/environ."""
    import pwd
    uid = pwd.getpwnam(os.environ.get("HARNESS_MYSQLD_USER", "mysql")).pw_uid
    found = {}
    for pid, _argv in proc.processes():
        try:
            if os.stat(f"/proc/{pid}").st_uid != uid or not _below(pid, root):
                continue
            raw = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        env = dict(kv.split("=", 1) for kv in raw.decode(errors="replace").split("\0")
                   if "=" in kv)
        found[pid] = {**env, "(argv)": " ".join(_argv), "(parent)": _parent(pid)}
    return found


def _parent(pid: int) -> str:
    """The parent's pid and argv, to name who started a process."""
    ppid = _ppid(pid)
    try:
        return f"{ppid} " + Path(f"/proc/{ppid}/cmdline").read_bytes().replace(
            b"\0", b" ").decode(errors="replace")[:200]
    except OSError:
        return f"{ppid} ?"


def test_planted_password_appears_nowhere(tmp_path, results, monkeypatch):
    monkeypatch.setenv("HARNESS_SANDBOX_PASSWORD", SECRET)
    monkeypatch.setenv("EXT_PW", SECRET)  # an external server's, named by password_env
    f = tmp_path / "s.yaml"
    f.write_text(SCENARIO)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = subprocess.Popen([sys.executable, "-m", "harness", "run", str(f), "--metrics-port",
                          str(port)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=dict(os.environ))
    seen_argv: set[str] = set()
    environs: dict[int, dict[str, str]] = {}
    scraped = ""
    while p.poll() is None:  # watch every process's argv for the whole run
        seen_argv.update(" ".join(argv) for _pid, argv in proc.processes())
        environs.update(_environs_of_account(p.pid))
        if not scraped:
            try:
                body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2)
                text = body.read().decode()
                if "harness_sysbench_tps" in text:
                    scraped = text
            except OSError:
                pass
        time.sleep(0.05)
    out, err = p.communicate()
    assert p.returncode == 0, err
    assert any("sysbench" in a for a in seen_argv) and any("mariadbd" in a for a in seen_argv)
    assert not [a for a in seen_argv if SECRET in a]
    # what mysqld's account can read of its processes: an allow-listed environment
    assert environs, "no process of mysqld's account was seen"
    for pid, seen in environs.items():
        who = (pid, seen.pop("(argv)"), seen.pop("(parent)"))
        assert SECRET not in " ".join(seen.values()), (who, sorted(seen))
        # (PWD, SHLVL and _: what a build's loader script's shell sets itself)
        assert set(seen) <= {*proc.KEPT_ENV, "LD_LIBRARY_PATH", "PWD", "SHLVL", "_"}, (
            who, sorted(seen))
    assert scraped and SECRET not in scraped
    assert SECRET not in out + err
    (run,) = json.loads(harness("runs", "--json", check=True).stdout)["runs"]
    for args in (["show", run["run_id"], "--json"], ["export", run["run_id"]], ["runs"]):
        assert SECRET not in harness(*args, check=True).stdout
    files = [x for x in results.rglob("*") if x.is_file()]
    assert any(x.name == "harness.db" for x in files) and len(files) > 10
    assert holding(results, SECRET) == []
    # What is stored is its owner's alone: the new results folder and each run folder
    # 0700, the SQLite store and the journal files SQLite gives the same mode 0600.
    art = Path(json.loads(harness("show", run["run_id"], "--json", check=True).stdout)
               ["artifacts"])
    for folder in (results, art):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    stores = [x for x in results.iterdir() if x.name.startswith("harness.db")]
    assert stores and all(stat.S_IMODE(x.stat().st_mode) == 0o600 for x in stores), stores
