"""A DBA's own data as a physical backup, with the field's own tool: a real mariadb-backup
(Debian's) of a MariaDB 10.11 sandbox holding sysbench tables, prepared with
``mariadb-backup --prepare``, becomes the dataset of a `harness run` (a replay of
captured reads on it): the run's sandbox holds the same rows, the backup's files are
byte for byte as they were, and the copy is kept as the dataset snapshot. The same
folder is refused, naming why, before it is prepared, and on a server of another
series (MySQL 9.7)."""
from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.server.mysql import connection, query
from harness.workloads.base import RunContext
from harness.workloads.sysbench import SysbenchDataset
from harness.workloads.sysbench import prepare_dataset as prepare_sysbench

from ..conftest import harness, sandbox

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(shutil.which("mariadb-backup") is None,
                                 reason="mariadb-backup (make setup installs it)")]

TABLES = ("sbtest1", "sbtest2")
LOG = """\
# Time: 2026-11-30T06:00:00.000000Z
# User@Host: app[app] @ localhost []  Id:     7
# Query_time: 0.000100  Lock_time: 0.000000 Rows_sent: 1  Rows_examined: 3
use sbtest;
SET timestamp=1795586400;
SELECT c FROM sbtest1 WHERE id = 17;
# Time: 2026-11-30T06:00:00.100000Z
# User@Host: app[app] @ localhost []  Id:     7
# Query_time: 0.000100  Lock_time: 0.000000 Rows_sent: 1  Rows_examined: 3
SET timestamp=1795586400;
SELECT COUNT(*) FROM sbtest2 WHERE k > 100;
"""


def _tree(folder: Path) -> dict[str, str]:
    """Every file under ``folder``: its sha256, by path."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _counts(conn) -> dict[str, int]:
    return {t: query(conn, f"SELECT COUNT(*) FROM sbtest.{t}")[0][0] for t in TABLES}


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Iterator[tuple[Path, dict[str, int]]]:
    """A 10.11 sandbox's data, backed up (not yet prepared), and its rows per table."""
    folder = tmp_path_factory.mktemp("backup")
    with sandbox() as box:
        ctx = RunContext(box.endpoint, folder, time.monotonic, lambda *a: None,
                         lambda *a: None)
        prepare_sysbench(ctx, SysbenchDataset(tables=2, table_size=3000))
        with connection(box.endpoint) as c:
            c.cursor().execute("DELETE FROM sbtest.sbtest2 WHERE id % 7 = 0")
            counts = _counts(c)
        subprocess.run(["mariadb-backup", f"--defaults-extra-file={box.client_cnf}",
                        "--backup", f"--target-dir={folder / 'full'}",
                        f"--datadir={box.datadir}"],
                       check=True, capture_output=True, timeout=300)
    yield folder / "full", counts


def _scenario(folder: Path, backup: Path, server: str = "mariadb-10.11") -> Path:
    (folder / "captured.log").write_text(LOG)
    f = folder / "from-backup.yaml"
    f.write_text(f"""\
name: from-backup
servers: [{server}]
wakeup_probe: false
between_runs: restore
repetitions: 2
dataset: {{kind: datadir, path: {backup}, database: sbtest}}
workload: {{kind: replay, database: sbtest, log: captured.log}}
""")
    return f


def test_a_prepared_backup_is_the_dataset_and_stays_as_it_was(source, tmp_path, results):
    backup, counts = source
    f = _scenario(tmp_path, backup)
    # Not prepared yet: refused by validate and run, saying how to prepare it.
    p = harness("validate", str(f))
    assert p.returncode == 8 and "a physical backup not prepared" in p.stdout + p.stderr, \
        p.stdout + p.stderr
    assert f"mariadb-backup --prepare --target-dir {backup}" in p.stdout + p.stderr
    subprocess.run(["mariadb-backup", "--prepare", f"--target-dir={backup}"], check=True,
                   capture_output=True, timeout=300)
    p = harness("validate", str(f), check=True)
    assert "a datadir written by MariaDB 10.11" in p.stdout, p.stdout
    before = _tree(backup)

    # On another server series: refused by name before anything starts.
    p = harness("run", str(f), "--server", "mysql-9.7")
    assert p.returncode == 8, p.stdout + p.stderr
    assert f"{backup} was written by MariaDB 10.11" in p.stderr, p.stderr
    assert "mysql-9.7 is mysql 9.7" in p.stderr, p.stderr

    # Two runs on it: the first on a copy of the backup (then kept as the snapshot),
    # the second on the snapshot restored; the same rows in the sandbox as in the source.
    p = harness("run", str(f), "--keep", "--json")
    assert p.returncode == 0, p.stderr[-3000:]
    runs = json.loads(p.stdout)["runs"]
    assert [r["status"] for r in runs] == ["ok", "ok"], runs
    shown = [json.loads(harness("show", r["run_id"], "--json", check=True).stdout)
             for r in runs]
    hows = [s["details"]["server_state"]["how"] for s in shown]
    assert hows == ["new sandbox, prepared, snapshot saved", "snapshot restored, restarted"]
    (prepared,) = shown[0]["summary"]["prepare"]
    assert prepared["tables"] == 2 and prepared["copied_from"] == str(backup), prepared
    # as a DBA reads it: the load names the database it found on the copy
    text = harness("show", runs[0]["run_id"], check=True).stdout
    assert prepared["database"] == "sbtest" and "prepare sbtest" in text, text
    name = shown[-1]["details"]["server_state"]["sandbox"]
    (box,) = [b for b in json.loads(harness("sandboxes", "list", "--json",
                                            check=True).stdout)["sandboxes"]
              if b["name"] == name]
    try:
        r = subprocess.run([box["connect"], "-N", "-e",
                            "SELECT COUNT(*) FROM sbtest.sbtest1; "
                            "SELECT COUNT(*) FROM sbtest.sbtest2"],
                           capture_output=True, text=True, timeout=60)
        assert [int(x) for x in r.stdout.split()] == [counts[t] for t in TABLES], r.stderr
    finally:
        harness("sandboxes", "remove", name, check=True)
    assert _tree(backup) == before, "the backup's files changed"


def test_a_link_in_the_folder_is_refused_naming_it(source, tmp_path):
    backup, _counts = source
    planted = tmp_path / "planted"
    shutil.copytree(backup, planted)
    (planted / "sbtest" / "db.opt").unlink(missing_ok=True)
    (planted / "sbtest" / "db.opt").symlink_to("/etc/shadow")
    f = _scenario(tmp_path, planted)
    p = harness("run", str(f))
    assert p.returncode != 0, p.stdout + p.stderr
    assert f"{planted}/sbtest/db.opt: not a regular file" in p.stderr, p.stderr[-3000:]
