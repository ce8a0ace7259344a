"""The bench's wait-instrument observers on a real server: the B windows switch on what
they name and nothing else, the A windows put back what the server started with, and
the notes they store say why the collector sees what it sees."""
from __future__ import annotations

import time

import pytest

from harness.bench.observers import _TOGGLES, INNODB_LATCHES
from harness.collectors.base import CollectorContext
from harness.server import mysql

from ..conftest import sandbox

pytestmark = pytest.mark.integration


def _instruments(endpoint, pattern: str = "wait/%") -> dict[str, tuple[str, str]]:
    """The instruments the server's own LIKE matches to ``pattern``: (ENABLED, TIMED)."""
    with mysql.connection(endpoint) as c:
        rows = mysql.query(c, "SELECT NAME, ENABLED, TIMED FROM performance_schema"
                              ".setup_instruments WHERE NAME LIKE %s", (pattern,))
    return {name: (enabled, timed) for name, enabled, timed in rows}


def test_innodb_latches_switches_on_those_alone_and_puts_every_row_back(tmp_path):
    with sandbox(performance_schema="ON") as box:
        start = _instruments(box.endpoint)
        cctx = CollectorContext(endpoint=box.endpoint, flavor=box.build.flavor,
                                version=box.build.version_tuple, clock=time.monotonic,
                                sample=lambda *a: None, event=lambda *a: None,
                                artifacts=tmp_path, mysqld_pid=box.pid)
        with _TOGGLES["innodb_latches"](cctx) as toggle:
            toggle.set(True)
            on = _instruments(box.endpoint)
            time.sleep(1.5)  # a sample or two
            toggle.set(False)
            notes = toggle.window_notes()
        latches = set(_instruments(box.endpoint, INNODB_LATCHES))
        assert latches and all(on[n] == ("YES", "YES") for n in latches)
        assert {n: v for n, v in on.items() if n not in latches} == \
            {n: v for n, v in start.items() if n not in latches}
        assert _instruments(box.endpoint) == start
    assert not any("performance_schema_instrument" in n for n in notes), notes
    assert any("does not see their waits" in n for n in notes), notes
