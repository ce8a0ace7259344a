"""The sysbench workload's allow-list held against the real tool: every option a
scenario may pass is one sysbench 1.0 lists (its --help, the OLTP tests' help), and
what it refuses are real options of sysbench that would point it elsewhere or trace
the password's calls, not guesses."""
from __future__ import annotations

import re

import pytest
from pydantic import ValidationError

from harness import proc
from harness.workloads.sysbench import MANAGED_OPTIONS, RUN_OPTIONS, SysbenchWorkload

pytestmark = pytest.mark.integration


def _options(*args: str) -> set[str]:
    """The long options sysbench lists (``_`` read as ``-``, as sysbench reads it)."""
    out = proc.run([proc.which("sysbench"), *args], timeout=30, what="sysbench help").stdout
    return {m.replace("_", "-") for m in re.findall(r"^\s+--([a-z][a-z0-9_-]*)", out, re.M)}


def test_the_allow_list_is_sysbenchs_own_and_the_refusals_are_real_options():
    known = _options("--help") | _options("oltp_read_write", "help")
    assert len(known) > 40, known
    assert RUN_OPTIONS <= known, RUN_OPTIONS - known
    assert MANAGED_OPTIONS - {"config-file"} <= known, MANAGED_OPTIONS - known
    for danger in ("db-driver", "pgsql-host", "mysql-debug", "db-debug", "debug",
                   "mysql-dry-run", "num-threads", "max-time", "create_secondary"):
        assert danger.replace("_", "-") in known, danger  # a real option of sysbench
        with pytest.raises(ValidationError, match="not an option a workload passes|set by "
                                                  "the harness"):
            SysbenchWorkload(test="oltp_read_only", options={danger: "1"})
