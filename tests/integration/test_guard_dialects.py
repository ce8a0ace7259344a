"""The replay's LOCAL check and the read-only guard read statements as the server will,
held on real servers (MariaDB 10.11 and MySQL 8.0.31) with the attacks that passed them:
LOAD DATA LOCAL hidden in an executable comment (/*!LOCAL*/, /*!50000 LOCAL*/,
/*M!LOCAL*/) or behind a character that is a space in latin1, and MariaDB's MSSQL mode,
under which [x#] is a name where the guard reads '#' as a comment."""
from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.providers.base import Server
from harness.server.mysql import connection, query
from harness.workloads.base import RunContext
from harness.workloads.replay import Replay, ReplayWorkload
from harness.workloads.sysbench import SysbenchDataset
from harness.workloads.sysbench import prepare_dataset as prepare_sysbench

from ..conftest import sandbox

pytestmark = pytest.mark.integration

SECRET = "root-only-4be2c1"
DATA = SysbenchDataset(tables=1, table_size=200)


def _log(path: Path, statements: list[str]) -> Path:
    entries = [f"# Time: 2026-12-07T01:00:{n:02d}.000000Z\n"
               f"# User@Host: app[app] @ localhost []  Id:     {7 + n % 2}\n"
               "# Query_time: 0.000100  Lock_time: 0.000000 Rows_sent: 0  "
               "Rows_examined: 0\n"
               "use sbtest;\nSET timestamp=1796605200;\n"
               f"{sql};\n" for n, sql in enumerate(statements)]
    path.write_text("".join(entries), encoding="utf-8", errors="surrogateescape")
    return path


def _ctx(box: Server, folder: Path) -> RunContext:
    return RunContext(box.endpoint, folder, time.monotonic, lambda *a: None, lambda *a: None)


@pytest.fixture(params=["mariadb-10.11", "mysql-8.0.31"], scope="module")
def server(request, tmp_path_factory) -> Iterator[Server]:
    """A sandbox that would take a LOCAL load (local_infile ON), with sysbench's rows."""
    with sandbox(request.param, local_infile="ON") as box:
        prepare_sysbench(_ctx(box, tmp_path_factory.mktemp("data")), DATA)
        yield box


@pytest.mark.parametrize("client", ["sysbench", "python"])
def test_a_local_load_in_an_executable_comment_is_never_sent(server, client, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text(f"{SECRET}\n")
    secret.chmod(0o600)
    with connection(server.endpoint) as c:
        query(c, "CREATE TABLE IF NOT EXISTS sbtest.li (v VARCHAR(64))")
    loads = [f"LOAD DATA {hidden} INFILE '{secret}' INTO TABLE li"
             for hidden in ("/*!LOCAL*/", "/*!50000 LOCAL*/", "/*M!LOCAL*/", "`LOCAL`")]
    loads += [f"LOAD DATA\u00a0LOCAL INFILE '{secret}' INTO TABLE li",
              f"LOAD DATA\udca0LOCAL INFILE '{secret}' INTO TABLE li"]
    log = _log(tmp_path / "slow.log", ["SET NAMES latin1", *loads, "SELECT 1"])
    spec = ReplayWorkload(kind="replay", database="sbtest", log=log.name, clients=1,
                          client=client).located(tmp_path)
    m = Replay(spec, DATA).run(_ctx(server, tmp_path)).summary
    assert m["skipped"].get("LOAD ... LOCAL (would send a file of this machine)") == \
        len(loads), m["skipped"]
    with connection(server.endpoint) as c:
        assert query(c, "SELECT COUNT(*) FROM sbtest.li") == [(0,)]
        query(c, "DROP TABLE sbtest.li")


def test_a_server_in_mssql_mode_gets_no_read_only_replay(tmp_path):
    """MariaDB in MSSQL mode (its global default): a read-only replay is refused before
    a statement is sent; and a captured SET of the mode is never replayed read-only."""
    with sandbox("mariadb-10.11", sql_mode="MSSQL") as box:
        prepare_sysbench(_ctx(box, tmp_path), DATA)
        log = _log(tmp_path / "slow.log", [
            "SELECT c AS [x#] FROM sbtest1 WHERE id=2; SET SESSION TRANSACTION READ WRITE; "
            "DELETE FROM sbtest1 WHERE id <= 50"])
        for client in ("sysbench", "python"):
            spec = ReplayWorkload(kind="replay", database="sbtest", log=log.name, clients=1,
                                  read_only=True, client=client).located(tmp_path)
            with pytest.raises(HarnessError, match="sql_mode has MSSQL"):
                Replay(spec, DATA).run(_ctx(box, tmp_path / client))
        with connection(box.endpoint) as c:
            assert query(c, "SELECT COUNT(*) FROM sbtest.sbtest1") == [(200,)]
    with sandbox("mariadb-10.11") as box:
        prepare_sysbench(_ctx(box, tmp_path), DATA)
        log = _log(tmp_path / "slow2.log", [
            "SET SESSION sql_mode='MSSQL'",
            "SELECT c AS [x#] FROM sbtest1 WHERE id=2; SET SESSION TRANSACTION READ WRITE; "
            "DELETE FROM sbtest1 WHERE id <= 50", "SELECT 1"])
        spec = ReplayWorkload(kind="replay", database="sbtest", log=log.name, clients=1,
                              read_only=True, client="python").located(tmp_path)
        m = Replay(spec, DATA).run(_ctx(box, tmp_path / "text")).summary
        # the SET is not replayed; without the mode, '#' starts a comment for the server
        # as for the guard (the SELECT is cut there, and fails as the server reads it)
        assert m["skipped"] == {"could change data (read_only)": 1}, m["skipped"]
        with connection(box.endpoint) as c:
            assert query(c, "SELECT COUNT(*) FROM sbtest.sbtest1") == [(200,)]
