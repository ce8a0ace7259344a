"""A server's LOAD DATA LOCAL request reaches nothing of root's through sysbench: its
client library sends whatever file the server names, whatever the statement's text
said, so every sysbench the harness starts runs as the client account. A script of
sysbench's own asks for a root-only file: as the harness starts it, the file is not
sent and sysbench is not root; started as root, the same script loads the file (the
library does send it: the danger is real)."""
from __future__ import annotations

import os

import pytest

from harness import client, proc
from harness.workloads.sysbench import write_config

from ..conftest import sandbox

pytestmark = pytest.mark.integration

SECRET = "root-only-3f9a"
SCRIPT = """
function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
end
function event()
  local f = io.open("/proc/self/status")
  local status = f:read("*a")
  f:close()
  print("UID " .. status:match("Uid:%s+(%d+)"))
  con:query("CREATE TABLE IF NOT EXISTS t (v VARCHAR(80))")
  local ok, err = pcall(function()
    con:query("LOAD DATA LOCAL INFILE '{path}' INTO TABLE t")
  end)
  print("LOAD " .. tostring(ok))
end
"""


def _argv(cfg, script):
    return [proc.which("sysbench"), f"--config-file={cfg}", str(script), "--threads=1",
            "--time=0", "--events=1", "run"]


def test_a_server_asking_for_roots_file_gets_nothing(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text(f"{SECRET}\n")
    secret.chmod(0o600)
    tmp_path.chmod(0o700)
    script = tmp_path / "ask.lua"
    script.write_text(SCRIPT.replace("{path}", str(secret)))
    with sandbox("mariadb-10.11", local_infile="ON") as box:
        with box.endpoint.connect() as c, c.cursor() as cur:
            cur.execute("CREATE DATABASE IF NOT EXISTS li")
        cfg = write_config(tmp_path / "li.cnf", box.endpoint, "li")
        out = client.run(_argv(cfg, client.copy_in(script)), timeout=120).stdout
        uid = int(out.split("UID ", 1)[1].split()[0])
        assert uid != 0 and uid == client.as_user()[0], out
        with box.endpoint.connect(database="li") as c, c.cursor() as cur:
            cur.execute("SELECT COUNT(*) FROM t WHERE v = %s", (SECRET,))
            assert cur.fetchone() == (0,), "the root-only file reached the server"
        # the control: the same script run as root sends the file
        assert os.geteuid() == 0
        proc.run(_argv(cfg, script), timeout=120)
        with box.endpoint.connect(database="li") as c, c.cursor() as cur:
            cur.execute("SELECT COUNT(*) FROM t WHERE v = %s", (SECRET,))
            assert cur.fetchone() == (1,), "the control did not send the file"
