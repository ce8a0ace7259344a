"""Tables of the results store (SQLAlchemy Core, so SQLite and MySQL alike).

FORMAT_VERSION is written into ``meta`` when a store is created. A store of an older
version is migrated by ``harness store migrate`` (store/migrate.py), one of a newer one
is refused rather than misread.

Version 2 added ``runs.owner`` (host:pid of the harness process writing the run), so
``harness store check`` can tell a run left ``running`` by a dead process. Version 3
added ``artifacts``: each run's files (my.cnf, error log, variables, tool output) in the
store itself, so a shared store has them on every machine.
"""
from __future__ import annotations

from sqlalchemy import (
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from .version import FORMAT_VERSION as FORMAT_VERSION  # written into harness_meta

metadata = MetaData()

# Large enough for MySQL to pick MEDIUMTEXT / MEDIUMBLOB; ignored by SQLite.
_BIG = 16 * 1024 * 1024

meta = Table(
    "harness_meta", metadata,
    Column("key", String(64), primary_key=True),
    Column("value", String(255), nullable=False),
)

runs = Table(
    "runs", metadata,
    Column("run_id", String(64), primary_key=True),
    Column("run_set", String(64), nullable=False, index=True),
    Column("scenario", String(200), nullable=False, index=True),
    Column("server", String(100), nullable=False),
    Column("flavor", String(20), nullable=False),
    Column("version", String(40), nullable=False),
    Column("variant", String(100), nullable=False),
    Column("repetition", Integer, nullable=False, default=1),
    Column("target", String(200), nullable=False),
    Column("host", String(200), nullable=False),
    Column("status", String(20), nullable=False),  # running | ok | failed | interrupted
    Column("started_at", String(40), nullable=False, index=True),  # ISO 8601 UTC
    Column("ended_at", String(40)),
    Column("error", Text(_BIG)),
    Column("summary", Text(_BIG)),  # JSON
    Column("details", Text(_BIG)),  # JSON: version string, config, host facts, tool versions
    # The run's artifact folder: relative to an SQLite store's folder (a copied store
    # finds its own), else as the machine that ran it named it.
    Column("artifacts", Text),
    Column("owner", String(200)),  # host:pid of the process writing it (format 2)
)

series = Table(
    "series", metadata,
    Column("series_id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(64), ForeignKey("runs.run_id"), nullable=False),
    Column("source", String(64), nullable=False),
    Column("metric", String(255), nullable=False),
    Column("labels", Text, nullable=False),  # canonical JSON, sorted keys
    Column("key_hash", String(40), nullable=False),  # sha1 of source, metric, labels
    UniqueConstraint("run_id", "key_hash", name="uq_series_key"),
)

chunks = Table(
    "chunks", metadata,
    Column("series_id", Integer, ForeignKey("series.series_id"), primary_key=True),
    Column("seq", Integer, primary_key=True, autoincrement=False),
    Column("n", Integer, nullable=False),
    Column("t_min", Float, nullable=False),
    Column("t_max", Float, nullable=False),
    Column("times", LargeBinary(_BIG), nullable=False),
    Column("vals", LargeBinary(_BIG), nullable=False),
)

events = Table(
    "events", metadata,
    Column("event_id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(64), ForeignKey("runs.run_id"), nullable=False),
    Column("t", Float, nullable=False),
    Column("kind", String(64), nullable=False),  # phase_start | phase_end | config | note | ...
    Column("name", String(200), nullable=False),
    Column("detail", Text),  # JSON
)

Index("ix_events_run", events.c.run_id, events.c.t)

artifacts = Table(
    "artifacts", metadata,
    Column("run_id", String(64), ForeignKey("runs.run_id"), primary_key=True),
    Column("name", String(255), primary_key=True),  # path inside the run's folder
    Column("size", Integer, nullable=False),  # bytes, before compression
    Column("content", LargeBinary(_BIG), nullable=False),  # zlib
)
