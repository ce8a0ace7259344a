"""Format migrations of the results store, one function per step, run by ``harness store
migrate``: each step changes the tables and the version row in one go, so an interrupted
migration leaves the store at the old version or the new one."""
from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import Connection, inspect, select, text, update

from . import schema
from .db import key_hash


def _v1_to_v2(c: Connection) -> str:
    # DDL commits by itself on MySQL (and under the SQLite driver): a step interrupted
    # after it finds the column there the next time.
    if "owner" not in {col["name"] for col in inspect(c).get_columns("runs")}:
        c.execute(text("ALTER TABLE runs ADD COLUMN owner VARCHAR(200)"))
    return "runs.owner added (which process writes a run; v1 runs have none)"


def _v2_to_v3(c: Connection) -> str:
    schema.artifacts.create(c, checkfirst=True)
    s = schema.series
    renamed = 0
    for sid, metric, labels in c.execute(select(s.c.series_id, s.c.metric, s.c.labels).where(
            s.c.source == "vmstat", s.c.metric.like("node_vmstat_%"))).all():
        new = metric[len("node_vmstat_"):]  # vmstat's own column, not node_exporter's
        c.execute(update(s).where(s.c.series_id == sid).values(
            metric=new, key_hash=key_hash("vmstat", new, labels)))
        renamed += 1
    return ("artifacts table added (run files kept in the store; runs stored before "
            f"have theirs only in their folder); {renamed} vmstat series renamed from "
            "node_vmstat_<column> to <column> (node_vmstat_* is node_exporter's /proc/vmstat)")


# from version -> the step to the next one
STEPS: dict[int, Callable[[Connection], str]] = {1: _v1_to_v2, 2: _v2_to_v3}


def pending(version: int) -> list[int]:
    """The steps from ``version`` to the current format."""
    return list(range(version, schema.FORMAT_VERSION))


def run_step(c: Connection, version: int) -> str:
    """One step, with its version row (the caller's transaction)."""
    done = STEPS[version](c)
    c.execute(update(schema.meta).where(schema.meta.c.key == "format_version").values(
        value=str(version + 1)))
    return f"format {version} -> {version + 1}: {done}"
