"""Format migrations of the results store, one function per step, run by ``harness store
migrate``: each step changes the tables and the version row in one go, so an interrupted
migration leaves the store at the old version or the new one. Two ``migrate`` at once
take turns (a file lock beside a SQLite store, ``GET_LOCK`` on a MySQL one), and each
step reads the version again in its own transaction, so none runs twice."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, inspect, select, text, update

from .. import locks
from ..errors import StoreError
from . import schema
from .db import key_hash

if TYPE_CHECKING:
    from .db import Store

LOCK_NAME = "mysql-harness-store-migrate"
LOCK_WAIT_S = 600


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


def _version(c: Connection) -> int:
    m = schema.meta
    return int(c.execute(select(m.c.value).where(m.c.key == "format_version")).scalar_one())


@contextmanager
def _one_at_a_time(store: Store) -> Iterator[None]:
    if store.url.startswith("sqlite:///"):
        db = Path(store.url[len("sqlite:///"):])
        with locks.held(db.with_name(db.name + ".migrate.lock"), "migrating the store"):
            yield
        return
    with store.engine.connect() as c:
        got = c.execute(text("SELECT GET_LOCK(:n, :w)"), {"n": LOCK_NAME, "w": LOCK_WAIT_S})
        if got.scalar() != 1:
            raise StoreError(f"results store {store.safe_url()}: another 'harness store "
                             f"migrate' held the lock {LOCK_NAME} for {LOCK_WAIT_S} s")
        try:
            yield
        finally:
            c.execute(text("SELECT RELEASE_LOCK(:n)"), {"n": LOCK_NAME})


def upgrade(store: Store, say: Callable[[str], None] = print) -> int:
    """Every pending step on ``store`` (opened with ``migrating=True``), one process at a
    time; how many steps this process ran."""
    ran = 0
    with _one_at_a_time(store):
        while True:
            with store.engine.begin() as c:
                v = _version(c)
                if v >= schema.FORMAT_VERSION:
                    return ran
                say(f"{store.safe_url()}: {run_step(c, v)}")
                ran += 1
