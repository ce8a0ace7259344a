"""Not collected by the suite (its name does not match test_*.py): the test run that
test_concurrency.py kills. It keeps a sandbox (its mysqld outlives the process) and
makes a network namespace, notes both as a test fixture does, says where, and waits to
be killed."""
from __future__ import annotations

import json
import os
import subprocess
import time

from harness.providers.local import LocalProvider, mysqld_pid
from harness.server import catalog
from tests import leftovers


def test_wait_to_be_killed(sandbox_root):
    box = LocalProvider().provision(catalog.resolve("mariadb-10.11"))
    box.start({"innodb_buffer_pool_size": "16M"})
    box.keep("killed-suite")  # outlives this process, as a --keep run's does
    ns = f"hxkill{os.getpid()}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    leftovers.note(netns=[ns])
    says = os.environ["KILLED_SUITE_SAYS"]
    with open(f"{says}.tmp", "w") as f:  # whole, then renamed: the test polls for it
        json.dump({"root": str(sandbox_root), "mysqld": mysqld_pid(box.dir), "netns": ns,
                   "pid": os.getpid()}, f)
    os.replace(f"{says}.tmp", says)
    time.sleep(600)
