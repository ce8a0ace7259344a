"""Store implementation over SQLAlchemy Core."""
from __future__ import annotations

import functools
import hashlib
import json
import os
import socket
import threading
import time
import zlib
from array import array
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar, cast

import numpy as np
from numpy.typing import NDArray
from sqlalchemy import create_engine, delete, event, func, insert, inspect, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError, SQLAlchemyError
from sqlalchemy.pool import NullPool

from .. import procfs
from ..errors import StoreError, StoreOpenError, StoreUrlError
from ..paths import disk_full, free_mb, private_file, private_folder, results_dir, writable_folder
from . import codec, schema
from . import spool as spooling
from . import url as store_url
from .damage import cut_short, damage
from .event import Event
from .run import RunRecord, StoredRun

F = TypeVar("F", bound=Callable[..., Any])
Labels = Mapping[str, str]
Key = tuple[str, str, tuple[tuple[str, str], ...]]  # source, metric, sorted labels


def canonical_labels(labels: Labels | None) -> str:
    return json.dumps(dict(sorted((labels or {}).items())), separators=(",", ":"))


def key_hash(source: str, metric: str, labels_json: str) -> str:
    return hashlib.sha1(f"{source}\x00{metric}\x00{labels_json}".encode()).hexdigest()


@dataclass(frozen=True)
class Sample:
    t: float
    source: str
    metric: str
    value: float
    labels: Labels | None = None


@dataclass
class Series:
    source: str
    metric: str
    labels: dict[str, str]
    t: NDArray[Any]
    v: NDArray[Any]

    def points(self) -> list[tuple[float, float]]:
        """(t, value) pairs, as Python floats."""
        return list(zip(cast(list[float], self.t.tolist()), cast(list[float], self.v.tolist()),
                        strict=True))


# A run's files larger than this stay in its folder only (a dump, a split backup).
ARTIFACT_MAX = 4 << 20
# Batches waiting for the writer's thread before adders wait for the store instead.
MAX_QUEUED_BATCHES = 4
# Samples kept in memory while the store keeps failing (16 bytes each): beyond them the
# writer gives up - the run fails with the cause - rather than hoarding samples.
MAX_PENDING_SAMPLES = 1_000_000


def why_store_failed(store: Store, e: BaseException) -> str:
    """The cause of a failed write, in a DBA's words (a full disk with how much is left)."""
    text = str(e).lower()
    if store.url.startswith("sqlite:///"):
        file = Path(store.url[len("sqlite:///"):])
        if "disk is full" in text or "no space" in text:
            return f"{disk_full(file.parent)} (the results store)"
        if "disk i/o error" in text:
            free = free_mb(file.parent)
            return (f"the results store {file} could not be written (SQLite: disk I/O "
                    f"error, with {'?' if free is None else free} MB free: the disk "
                    "failed, or the file was made unwritable)")
        if "readonly" in text or "read-only" in text:
            return f"the results store {file} is read-only now"
        if "locked" in text:
            return (f"the results store {store.url} stays locked by another process (a "
                    "long transaction or a crashed writer)")
    if "gone away" in text or "lost connection" in text or "can't connect" in text:
        return (f"the results store {store.safe_url()} went away: "
                f"{store_url.scrub(str(e), store.url).splitlines()[0]}")
    return (f"the results store {store.safe_url()} failed: "
            f"{store_url.scrub(str(e), store.url).splitlines()[0]}")


class SampleWriter:
    """Buffers samples per series and writes them as compressed chunks.

    Thread-safe, so every collector can add from its own thread; none of them waits for
    the database. A series is handed to the writer's own thread when it holds
    ``chunk_points`` points, and every series whenever the run clock has advanced
    ``flush_interval_s`` since the last hand-over, so memory stays flat on long runs and
    a crash loses at most that much. Longer intervals make larger, better-compressed
    chunks (``make bench`` measures the size per sample).

    Creating series, encoding and INSERTs happen on that one thread, a batch in one
    transaction. When the collector thread that crossed the minute did them, glibc grew a
    heap per collector thread to the size of a flush, one after another (the soak
    measured +0.3 MB a minute for the first hours); and a transaction per new series
    made the first SHOW GLOBAL VARIABLES/STATUS of every run ~1,800 transactions long.
    """

    def __init__(self, store: Store, run_id: str, chunk_points: int = 600,
                 flush_interval_s: float = 60.0, spool: spooling.Spool | None = None):
        self.store = store
        self.run_id = run_id
        self.spool = spool  # every sample goes there too, as it is taken
        self.chunk_points = chunk_points
        self.flush_interval_s = flush_interval_s
        self._lock = threading.RLock()  # the buffers (taken before _write_lock)
        self._write_lock = threading.Lock()  # one batch goes into the database at a time
        self._ids: dict[Key, int] = {}  # series ids, only touched under _write_lock
        self._seq: dict[int, int] = {}  # the next chunk of each, likewise
        self._buf: dict[Key, tuple[array[float], array[float]]] = {}
        self._batches: deque[list[tuple[Key, array[float], array[float]]]] = deque()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._closing = False
        self._error: Exception | None = None  # of the last write, until one succeeds
        self._last_flush_t = 0.0
        self.count = 0
        self._pending = 0  # samples handed over and not written yet
        # Set once the store failed with MAX_PENDING_SAMPLES waiting: the cause; later
        # samples are dropped (counted) and ``on_failure`` hooks stop the run.
        self.failed: str | None = None
        self.dropped = 0
        self.max_pending = int(os.environ.get("HARNESS_STORE_MAX_PENDING",
                                              MAX_PENDING_SAMPLES))
        self.on_failure: list[Callable[[str], None]] = []
        # Set instead of ``failed`` when a spool holds every sample: the cause; the
        # samples in memory are let go and the store is written from the spool later.
        self.deferred: str | None = None

    def add(self, t: float, source: str, metric: str, value: float,
            labels: Labels | None = None) -> None:
        # The hot path of every sample: a tuple key; the series row comes at write time.
        key = (source, metric, tuple(sorted(labels.items())) if labels else ())
        if self.spool is not None:
            self.spool.add(float(t), key, float(value))
        with self._lock:
            self.count += 1
            if self.failed is not None:
                self.dropped += 1
                return
            if self.deferred is not None:
                return
            ts, vs = self._buf.setdefault(key, (array("d"), array("d")))
            ts.append(float(t))
            vs.append(float(value))
            if len(ts) >= self.chunk_points:
                self._hand_over([key])
            if t - self._last_flush_t >= self.flush_interval_s:
                self._hand_over(list(self._buf))
                self._last_flush_t = t

    def _take(self, keys: list[Key]) -> None:
        """Move these series' buffers to the queue of batches (under ``_lock``)."""
        batch = [(key, *self._buf.pop(key)) for key in keys if key in self._buf]
        if batch:
            self._batches.append(batch)
            self._pending += sum(len(ts) for _, ts, _ in batch)

    def _hand_over(self, keys: list[Key]) -> None:
        self._take(keys)
        # the store is slower than sampling: the collectors wait for it rather than
        # memory growing; not for a store that is failing while a spool holds it all
        if len(self._batches) > MAX_QUEUED_BATCHES and \
                (self.spool is None or self._error is None):
            try:
                self._drain()
            except Exception as e:  # still queued; reported like the thread's failures
                self._error = e
                if self._pending > self.max_pending and self.failed is None:
                    self._give_up(e)
        if self._thread is None:
            self._thread = threading.Thread(target=self._write_loop, daemon=True,
                                            name=f"samples-{self.run_id}")
            self._thread.start()
        self._wake.set()

    def _write_loop(self) -> None:
        while not self._closing:
            self._wake.wait()
            self._wake.clear()
            try:
                self._drain()
            except Exception as e:  # the batch stays queued, tried again at the next
                self._error = e  # hand-over; close() raises if it still fails then
                if self._pending > self.max_pending and self.failed is None:
                    self._give_up(e)

    def _drain(self) -> None:
        """Write the queued batches in order; a batch leaves the queue once written."""
        with self._write_lock:
            while self._batches:
                batch = self._batches[0]
                new = list(dict.fromkeys(key for key, _, _ in batch if key not in self._ids))
                if new:
                    found = self.store._series_ids(self.run_id, [
                        (src, metric, canonical_labels(dict(labels)))
                        for src, metric, labels in new])
                    for key, (sid, seq) in zip(new, found, strict=True):
                        self._ids[key] = sid
                        self._seq[sid] = seq
                rows = []
                for key, ts, vs in batch:
                    sid = self._ids[key]
                    t = np.frombuffer(ts, dtype=np.float64)
                    v = np.frombuffer(vs, dtype=np.float64)
                    rows.append(dict(series_id=sid, seq=self._seq[sid], n=len(t),
                                     t_min=float(t.min()), t_max=float(t.max()),
                                     times=codec.encode_times(t), vals=codec.encode_values(v)))
                with self.store.engine.begin() as c:
                    c.execute(insert(schema.chunks), rows)
                for key, _, _ in batch:  # only once written: a failed batch is retried as is
                    self._seq[self._ids[key]] += 1
                self._batches.popleft()
                self._pending -= sum(len(ts) for _, ts, _ in batch)
            self._error = None

    def _give_up(self, e: Exception) -> None:
        """The store failed with too much waiting: stop taking samples, say why; with a
        spool that holds them all, let go of those in memory instead (the run goes on,
        and its samples go into the store from the spool at its end)."""
        why = why_store_failed(self.store, e)
        if self.spool is None or not self.spool.holding:
            self.fail(why)
            return
        with self._lock:  # (held already when an adder's hand-over failed)
            self.deferred = why
            self._buf.clear()
            self._batches.clear()
            self._pending = 0

    def store_trouble(self) -> str | None:
        """Why the store is not taking this run's samples now, if it is not."""
        if self.deferred is not None:
            return self.deferred
        return None if self._error is None else why_store_failed(self.store, self._error)

    def let_go(self, why: str) -> None:
        """The spool is to write this run's samples (``why``): what waits in memory is
        dropped, after a write under way ends; later samples go to the spool alone."""
        with self._lock, self._write_lock:
            self.deferred = self.deferred or why
            self._buf.clear()
            self._batches.clear()
            self._pending = 0

    def add_series(self, key: Key, ts: array[float], vs: array[float]) -> None:
        """A whole series at once (a spool replayed), in chunks of ``chunk_points``;
        written by the next ``flush``."""
        step = self.chunk_points
        with self._lock:
            for n, i in enumerate(range(0, len(ts), step)):
                while len(self._batches) <= n:
                    self._batches.append([])
                self._batches[n].append((key, ts[i:i + step], vs[i:i + step]))
                self._pending += len(ts[i:i + step])
                self.count += len(ts[i:i + step])

    def fail(self, why: str) -> None:
        """The store cannot take this run any more (``why``): later samples are dropped
        and the ``on_failure`` hooks stop the run (once)."""
        if self.failed is not None:
            return
        self.failed = why
        for hook in list(self.on_failure):
            try:
                hook(self.failed)
            except Exception:  # noqa: BLE001 - a hook must not hide the cause
                pass

    def flush(self) -> None:
        """Write every sample added so far, in the caller's thread."""
        with self._lock:
            self._take(list(self._buf))
        try:
            self._drain()
        except (SQLAlchemyError, OSError) as e:
            lost = self._pending + self.dropped
            raise StoreError(f"writing the samples of run {self.run_id} failed: "
                             f"{why_store_failed(self.store, e)} ({lost} samples not "
                             "stored; those written before are kept)") from e
        if self.failed is not None:
            raise StoreError(f"writing the samples of run {self.run_id} failed: {self.failed} "
                             f"({self.dropped} samples dropped after "
                             f"{self.max_pending} waited; those written are kept)")

    def close(self) -> None:
        self.flush()
        self._closing = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join(30)


def _store_write(fn: F) -> F:
    """A write whose database error becomes a StoreError naming the cause."""
    @functools.wraps(fn)
    def wrapper(self: Store, *args: Any, **kw: Any) -> Any:
        try:
            return fn(self, *args, **kw)
        except SQLAlchemyError as e:
            raise StoreError(why_store_failed(self, e)) from e
    return cast(F, wrapper)


class Store:
    """Runs, samples and events in one SQL database."""

    def __init__(self, url: str, migrating: bool = False):
        self.url = url
        self.migrating = migrating  # open an older format (harness store migrate)
        # An SQLite store's folder: run folders inside it are stored relative to it.
        self.folder = Path(url[len("sqlite:///"):]).absolute().parent \
            if url.startswith("sqlite:///") else None
        if (why := store_url.refusal(url)) is not None:
            raise StoreUrlError(f"results store {self.safe_url()}: {why}")
        if url.startswith("sqlite:"):
            _sqlite_folder(url)
            if self.folder is not None and cut_short(Path(url[len("sqlite:///"):])):
                raise StoreOpenError(self._damaged() or f"{url}: cut short")
        try:
            self.engine: Engine = create_engine(url, future=True, pool_pre_ping=True)
        except (SQLAlchemyError, ImportError, ValueError) as e:
            raise StoreUrlError(f"results store {self.safe_url()}: "
                                f"{store_url.scrub(str(e), self.url)}") from None
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        self._init_schema()

    def safe_url(self) -> str:
        """The store's URL without its password, however it was written."""
        return store_url.masked(self.url)

    def _damaged(self) -> str | None:
        """An SQLite store file SQLite finds damaged, named with how, and what to do."""
        if self.folder is None:
            return None
        path = Path(self.url[len("sqlite:///"):])
        why = damage(path) if path.is_file() else None
        return None if why is None else (
            f"{why}: 'harness store check --salvage NEW.db' copies every run still "
            "readable into a new store")

    def identity(self) -> str:
        """Which store this is, as a spool names it: the URL without its password (an
        SQLite file by its absolute path)."""
        if self.url.startswith("sqlite:///"):
            return f"sqlite:///{Path(self.url[len('sqlite:///'):]).absolute()}"
        return self.safe_url()

    def artifacts_root(self) -> Path:
        """Where runs' raw files and reports live: beside an SQLite store, else under
        HARNESS_RESULTS."""
        if self.url.startswith("sqlite:///"):
            return Path(self.url[len("sqlite:///"):]).parent
        return results_dir()

    def _init_schema(self) -> None:
        # Two harness processes may open a new store at the same moment: on SQLite the
        # schema and its version row are one IMMEDIATE transaction, so the loser waits
        # for the winner's lock and then sees a complete store; on MySQL (whose DDL
        # commits by itself) the loser sees "already exists" and looks again.
        # SQLite: a missing version row is no creator at work (its creation is atomic),
        # but a lock held by a creator is waited for like on MySQL.
        v = self._version_after_any_creator()
        if v is None:  # tables without a version row, still after the wait: finish them
            v = self._finish_half_made()
        self.format_version = int(v)
        self._version_fits(v)

    def _version_after_any_creator(self) -> str | None:
        """The store's format version, once another process creating the store at the
        same moment is done (waited up to 30 s); None if still half made then."""
        sqlite = self.engine.dialect.name == "sqlite"
        deadline = time.monotonic() + 30.0
        pause = 0.05
        while True:
            try:
                v = self._version_or_create()
                if v is not None or sqlite or time.monotonic() >= deadline:
                    return v
            except SQLAlchemyError as e:
                race = any(w in str(e).lower() for w in ("exist", "locked", "unique"))
                if not (race and time.monotonic() < deadline):
                    raise StoreOpenError(self._damaged() or (
                        f"results store {self.safe_url()}: {e.__class__.__name__}: "
                        f"{str(e).splitlines()[0]}")) from None
            time.sleep(pause)
            pause = min(pause * 2, 0.5)

    def _version_fits(self, v: str) -> None:
        """StoreOpenError for a store newer than this harness, or older and not being
        migrated."""
        if self.format_version > schema.FORMAT_VERSION:
            raise StoreOpenError(f"results store {self.safe_url()} has format version {v}, "
                             f"newer than this harness ({schema.FORMAT_VERSION}): use a newer "
                             "harness")
        if self.format_version < schema.FORMAT_VERSION and not self.migrating:
            raise StoreOpenError(
                f"results store {self.safe_url()} has format version {v}; this harness "
                f"writes version {schema.FORMAT_VERSION}: upgrade it in place with 'harness "
                f"store migrate{' --results URL' if not self.url.startswith('sqlite') else ''}'"
                + (f" (copy {self.url[len('sqlite:///'):]} first to keep the old one)"
                   if self.url.startswith("sqlite:///") else ""))

    def _version_or_create(self) -> str | None:
        """The store's format version; a new store is created (tables and version row
        in one transaction where the database allows it)."""
        with self.engine.connect() as c:
            if inspect(c).has_table("harness_meta"):
                return c.execute(select(schema.meta.c.value).where(
                    schema.meta.c.key == "format_version")).scalar()
        if self.engine.dialect.name != "sqlite":
            with self.engine.begin() as c:
                schema.metadata.create_all(c)
                c.execute(insert(schema.meta).values(key="format_version",
                                                     value=str(schema.FORMAT_VERSION)))
            return str(schema.FORMAT_VERSION)
        one = create_engine(self.url, poolclass=NullPool)
        try:
            with one.connect() as c:
                raw: Any = c.connection.driver_connection
                raw.isolation_level = None  # the driver's own BEGIN would skip the DDL
                c.exec_driver_sql("PRAGMA busy_timeout=30000")
                c.exec_driver_sql("BEGIN IMMEDIATE")
                try:
                    if not inspect(c).has_table("harness_meta"):
                        schema.metadata.create_all(c)
                        c.execute(insert(schema.meta).values(
                            key="format_version", value=str(schema.FORMAT_VERSION)))
                    v = c.execute(select(schema.meta.c.value).where(
                        schema.meta.c.key == "format_version")).scalar()
                    c.exec_driver_sql("COMMIT")
                except BaseException:
                    c.exec_driver_sql("ROLLBACK")
                    raise
        finally:
            one.dispose()
        return v

    def _finish_half_made(self) -> str:
        """A store whose creator died between its tables and its version row (MySQL, or
        a store made by an older harness): finished when it holds no run, else refused
        with what to do."""
        with self.engine.begin() as c:
            n = c.execute(select(func.count()).select_from(schema.runs)).scalar() \
                if inspect(c).has_table("runs") else 0
            if n:
                raise StoreOpenError(f"results store {self.safe_url()} has {n} runs but no "
                                 "format version row; it was made by something else than "
                                 "this harness, or damaged: 'harness store check' says more")
            schema.metadata.create_all(c)
            c.execute(insert(schema.meta).values(key="format_version",
                                                 value=str(schema.FORMAT_VERSION)))
        return str(schema.FORMAT_VERSION)

    # --- writes -----------------------------------------------------------------------

    @_store_write
    def create_run(self, rec: RunRecord) -> None:
        with self.engine.begin() as c:
            c.execute(insert(schema.runs).values(
                run_id=rec.run_id, run_set=rec.run_set, scenario=rec.scenario,
                server=rec.server, flavor=rec.flavor, version=rec.version, variant=rec.variant,
                repetition=rec.repetition, target=rec.target, host=rec.host, status=rec.status,
                started_at=rec.started_at, details=json.dumps(rec.details.to_json(), default=str),
                artifacts=self._artifacts_path(rec.artifacts),
                owner=f"{socket.gethostname()}:{os.getpid()}"))

    def _artifacts_path(self, path: str | None) -> str | None:
        """A run's folder as stored: relative when it is inside an SQLite store's folder."""
        if path is None or self.folder is None:
            return path
        p = Path(path).absolute()
        return p.relative_to(self.folder).as_posix() if p.is_relative_to(self.folder) \
            else str(p)

    @_store_write
    def save_artifacts(self, run_id: str, folder: Path, limit: int = ARTIFACT_MAX
                       ) -> list[str]:
        """Every file of a run's folder into the store (replacing what it had), each
        compressed; files over ``limit`` bytes (a dump, a split backup) stay in the
        folder only. Returns those, as ``name (N MB)``."""
        rows, left = [], []
        for f in sorted(p for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else []:
            name, size = f.relative_to(folder).as_posix(), f.stat().st_size
            if name == spooling.NAME:  # the store holds what it holds, or takes it later
                continue
            if size > limit:
                left.append(f"{name} ({size / 2**20:.0f} MB)")
                continue
            rows.append({"run_id": run_id, "name": name, "size": size,
                         "content": zlib.compress(f.read_bytes(), 6)})
        with self.engine.begin() as c:
            c.execute(delete(schema.artifacts).where(schema.artifacts.c.run_id == run_id))
            if rows:
                c.execute(insert(schema.artifacts), rows)
        return left

    def artifact_names(self, run_id: str) -> list[tuple[str, int]]:
        """(name, size in bytes) of each file stored with the run."""
        with self.engine.connect() as c:
            return [(r.name, r.size) for r in c.execute(
                select(schema.artifacts.c.name, schema.artifacts.c.size).where(
                    schema.artifacts.c.run_id == run_id).order_by(schema.artifacts.c.name))]

    def artifact(self, run_id: str, name: str) -> bytes | None:
        """One stored file of the run, or None."""
        with self.engine.connect() as c:
            blob = c.execute(select(schema.artifacts.c.content).where(
                schema.artifacts.c.run_id == run_id, schema.artifacts.c.name == name)).scalar()
        return None if blob is None else zlib.decompress(blob)

    @_store_write
    def update_run(self, run_id: str, **fields: Any) -> None:
        if "summary" in fields:
            fields["summary"] = json.dumps(fields["summary"].to_json(), default=str)
        if "details" in fields:
            fields["details"] = json.dumps(fields["details"].to_json(), default=str)
        with self.engine.begin() as c:
            c.execute(update(schema.runs).where(schema.runs.c.run_id == run_id).values(**fields))

    def writer(self, run_id: str, **kw: Any) -> SampleWriter:
        return SampleWriter(self, run_id, **kw)

    @_store_write
    def clear_measured(self, run_id: str) -> None:
        """A run's samples and events removed (a spool is about to replace them)."""
        ids = select(schema.series.c.series_id).where(schema.series.c.run_id == run_id)
        with self.engine.begin() as c:
            c.execute(delete(schema.chunks).where(schema.chunks.c.series_id.in_(
                ids.scalar_subquery())))
            c.execute(delete(schema.series).where(schema.series.c.run_id == run_id))
            c.execute(delete(schema.events).where(schema.events.c.run_id == run_id))

    @_store_write
    def add_events(self, run_id: str, events: list[Event]) -> None:
        if not events:
            return
        with self.engine.begin() as c:
            c.execute(insert(schema.events), [
                dict(run_id=run_id, t=e.t, kind=e.kind, name=e.name,
                     detail=json.dumps(e.detail, default=str)) for e in events])

    def _series_ids(self, run_id: str, specs: list[tuple[str, str, str]]
                    ) -> list[tuple[int, int]]:
        """(series id, next chunk number) of each (source, metric, labels JSON) of a run,
        creating the series that do not exist yet, all in one transaction."""
        # A read then a write in one transaction: under SQLite's WAL, when another
        # process wrote in between, the upgrade to a write lock fails at once with
        # "database is locked" (the busy timeout cannot help: the snapshot is stale).
        # The whole transaction is then retried on a fresh snapshot.
        for attempt in range(20):
            try:
                return self._series_ids_once(run_id, specs)
            except OperationalError as e:
                if "locked" not in str(e) or attempt == 19:
                    raise
                time.sleep(0.05 * (attempt + 1))
        raise AssertionError("unreachable")

    def _series_ids_once(self, run_id: str, specs: list[tuple[str, str, str]]
                         ) -> list[tuple[int, int]]:
        hashes = [key_hash(*spec) for spec in specs]
        s, ch = schema.series.c, schema.chunks.c
        with self.engine.begin() as c:
            def lookup() -> dict[str, int]:
                out: dict[str, int] = {}
                for i in range(0, len(hashes), 500):  # under any SQL variable limit
                    out.update((kh, int(sid)) for sid, kh in c.execute(
                        select(s.series_id, s.key_hash).where(
                            s.run_id == run_id, s.key_hash.in_(hashes[i:i + 500]))))
                return out
            ids = lookup()
            existing = list(ids.values())
            missing = [dict(run_id=run_id, source=src, metric=metric, labels=labels, key_hash=kh)
                       for (src, metric, labels), kh in zip(specs, hashes, strict=True)
                       if kh not in ids]
            if missing:
                c.execute(insert(schema.series), missing)
                ids = lookup()
            seq: dict[int, int] = {}
            for i in range(0, len(existing), 500):  # series appended to again
                seq.update((int(sid), int(m) + 1) for sid, m in c.execute(
                    select(ch.series_id, func.max(ch.seq)).where(
                        ch.series_id.in_(existing[i:i + 500])).group_by(ch.series_id)))
        return [(ids[kh], seq.get(ids[kh], 0)) for kh in hashes]

    @_store_write
    def add_event(self, run_id: str, t: float, kind: str, name: str,
                  detail: Mapping[str, Any] | None = None) -> None:
        with self.engine.begin() as c:
            c.execute(insert(schema.events).values(run_id=run_id, t=t, kind=kind, name=name,
                                                   detail=json.dumps(detail or {}, default=str)))

    # --- reads ------------------------------------------------------------------------

    def _run_row(self, row: Any) -> StoredRun:
        return StoredRun.from_row(dict(row._mapping), self.folder)

    def runs(self, scenario: str | None = None, run_set: str | None = None,
             since: str | None = None) -> list[StoredRun]:
        q = select(schema.runs).order_by(schema.runs.c.started_at, schema.runs.c.run_id)
        if scenario:
            q = q.where(schema.runs.c.scenario == scenario)
        if run_set:
            q = q.where(schema.runs.c.run_set == run_set)
        if since:
            q = q.where(schema.runs.c.started_at >= since)
        with self.engine.connect() as c:
            return [self._run_row(r) for r in c.execute(q)]

    def get_run(self, run_id: str) -> StoredRun | None:
        with self.engine.connect() as c:
            row = c.execute(select(schema.runs).where(schema.runs.c.run_id == run_id)).first()
            if row is None:
                # Unambiguous prefixes are accepted, as git does for commits.
                # Literally: '_' and '%' are LIKE wildcards, not run id characters.
                pattern = run_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
                rows = c.execute(select(schema.runs).where(schema.runs.c.run_id.like(
                    pattern + "%", escape="\\")).limit(2)).all() if run_id else []
                row = rows[0] if len(rows) == 1 else None
        return None if row is None else self._run_row(row)

    def sample_count(self, run_id: str) -> int:
        with self.engine.connect() as c:
            n = c.execute(select(func.coalesce(func.sum(schema.chunks.c.n), 0)).select_from(
                schema.chunks.join(schema.series)).where(
                schema.series.c.run_id == run_id)).scalar()
        return int(n or 0)

    def series(self, run_id: str, source: str | None = None,
               metric: str | None = None) -> list[Series]:
        """Every matching series of a run, points in time order."""
        q = select(schema.series.c.series_id, schema.series.c.source, schema.series.c.metric,
                   schema.series.c.labels).where(schema.series.c.run_id == run_id)
        if source:
            q = q.where(schema.series.c.source == source)
        if metric:
            q = q.where(schema.series.c.metric == metric)
        with self.engine.connect() as c:
            meta_rows = c.execute(q.order_by(schema.series.c.series_id)).all()
            if not meta_rows:
                return []
            parts = _chunks(c, [r.series_id for r in meta_rows])
        out = []
        for r in meta_rows:
            ps = parts[r.series_id]
            t = np.concatenate([p[0] for p in ps]) if ps else np.empty(0)
            v = np.concatenate([p[1] for p in ps]) if ps else np.empty(0)
            order = np.argsort(t, kind="stable")
            out.append(Series(r.source, r.metric, json.loads(r.labels), t[order], v[order]))
        return out

    def events(self, run_id: str) -> list[Event]:
        """A run's events in time order."""
        with self.engine.connect() as c:
            rows = c.execute(select(schema.events).where(schema.events.c.run_id == run_id)
                             .order_by(schema.events.c.t, schema.events.c.event_id)).all()
        # by column name: a Row's own .t is its tuple, not the column t
        return [Event(m["t"], m["kind"], m["name"], json.loads(m["detail"] or "{}"))
                for m in (r._mapping for r in rows)]

    def stale_runs(self) -> list[tuple[str, str, bool]]:
        """Runs left ``running``: (run id, why, whether it is surely dead). A run whose
        process ran on this machine and is gone is; one of another machine, or written
        before the store knew its process, only when it started a day ago or more."""
        here = socket.gethostname()
        day_ago = (datetime.now(UTC) - timedelta(days=1)).isoformat()
        out = []
        with self.engine.connect() as c:
            rows = c.execute(select(schema.runs.c.run_id, schema.runs.c.owner,
                                    schema.runs.c.started_at).where(
                schema.runs.c.status == "running")).all()
        for run_id, owner, started in rows:
            host, _, pid = (owner or "").rpartition(":")
            if host == here and pid.isdigit():
                if _writer_alive(int(pid), started):
                    continue
                out.append((run_id, f"its harness process {pid} is gone", True))
            elif started < day_ago:
                out.append((run_id, f"started {started}, over a day ago, by "
                            f"{owner or 'a harness that did not record its process'}", True))
            else:
                out.append((run_id, f"running on {owner or 'an unrecorded process'} since "
                            f"{started}: cannot tell from here whether it still runs", False))
        return out

    def mark_dead_runs(self, by: str, ended: Callable[[str], bool] = lambda _r: False
                       ) -> list[tuple[str, str]]:
        """Runs a harness that died here left ``running``, marked interrupted now (by
        ``by``), with its last event as the cause: (run id, why), one a run. Not those
        ``ended`` says were: their harness ended them, and their spool, which the store
        could not take, holds how."""
        dead = [(run_id, why) for run_id, why, sure in self.stale_runs()
                if sure and not ended(run_id)]
        if dead:
            self.mark_interrupted([r for r, _ in dead], by=by)
        return dead

    def mark_interrupted(self, run_ids: list[str],
                         by: str = "'harness store check --repair'") -> None:
        """Runs left ``running`` by a harness that died, marked ``interrupted`` with the
        cause: its process gone, and the last thing the run recorded (an event of its
        own, when it wrote one), and who marked it."""
        for run_id in run_ids:
            events = self.events(run_id)
            last = (f"; the last it recorded: {events[-1].kind} {events[-1].name} "
                    f"at {events[-1].t:.0f} s" if events else "")
            with self.engine.begin() as c:
                c.execute(update(schema.runs).where(
                    schema.runs.c.run_id == run_id, schema.runs.c.status == "running"
                ).values(status="interrupted", ended_at=datetime.now(UTC).isoformat(),
                         error=f"its harness process died{last}; marked by {by}"))

    def check(self) -> list[str]:
        """Integrity problems of the store (empty list when consistent)."""
        problems = []
        with self.engine.connect() as c:
            if self.engine.dialect.name == "sqlite":
                res = c.exec_driver_sql("PRAGMA integrity_check").scalar()
                if res != "ok":
                    problems.append(f"sqlite integrity_check: {res}")
            orphans = c.execute(select(func.count()).select_from(schema.series).where(
                ~schema.series.c.run_id.in_(select(schema.runs.c.run_id)))).scalar()
            if orphans:
                problems.append(f"{orphans} series without a run")
            for sid, tb, vb, n in c.execute(select(schema.chunks.c.series_id,
                                                   schema.chunks.c.times, schema.chunks.c.vals,
                                                   schema.chunks.c.n)):
                try:
                    if len(codec.decode_times(tb)) != n or len(codec.decode_values(vb)) != n:
                        problems.append(f"series {sid}: chunk length differs from its count")
                except Exception as e:  # a corrupt blob of any kind is a finding, not a crash
                    problems.append(f"series {sid}: undecodable chunk ({e})")
        return problems


def _sqlite_folder(url: str) -> None:
    """A SQLite store names a file whose folder exists or can be made; never the
    throw-away in-memory database a bare ``sqlite:///`` would silently be."""
    path = url[len("sqlite:///"):] if url.startswith("sqlite:///") else ""
    if not path or path.startswith(":memory:") or path.endswith("/"):
        raise StoreUrlError(f"results store {url!r} names no file: give "
                            "sqlite:////absolute/path/harness.db (four slashes) or "
                            "sqlite:///relative/path.db")
    folder = Path(path).parent
    try:
        private_folder(folder)
        writable_folder(folder)
        private_file(Path(path))
    except OSError as e:
        raise StoreOpenError(f"results store {url}: cannot write in {folder}: "
                             f"{e.strerror or e}") from None


def _chunks(c: Any, ids: list[int]) -> dict[int, list[tuple[NDArray[Any], NDArray[Any]]]]:
    """Series ``ids``' chunks, decoded, in order (500 series a query)."""
    parts: dict[int, list[tuple[NDArray[Any], NDArray[Any]]]] = {i: [] for i in ids}
    for i in range(0, len(ids), 500):
        cq = select(schema.chunks.c.series_id, schema.chunks.c.times,
                    schema.chunks.c.vals).where(
            schema.chunks.c.series_id.in_(ids[i:i + 500])).order_by(
            schema.chunks.c.series_id, schema.chunks.c.seq)
        for sid, tb, vb in c.execute(cq):
            parts[sid].append((codec.decode_times(tb), codec.decode_values(vb)))
    return parts


def _writer_alive(pid: int, started_at: str) -> bool:
    """Process ``pid`` runs and began before the run did (not a pid reused since)."""
    try:
        began = procfs.boot_time() + procfs.read(pid).start_ticks / procfs.TICKS
    except (OSError, ValueError, IndexError):
        return False
    try:
        run_began = datetime.fromisoformat(started_at).timestamp()
    except ValueError:
        return True  # cannot tell: say alive, never mark a live run interrupted
    return began <= run_began + 1.0


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cur = dbapi_conn.cursor()
    # First: switching to WAL needs a lock another process (a creator) may hold.
    cur.execute("PRAGMA busy_timeout=30000")
    # WAL lets readers and several writers (two harness runs) share the file safely.
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()


def open_store(url: str | None = None, migrating: bool = False) -> Store:
    """The store at ``url`` (a SQLAlchemy URL, or a folder or .db file's path), else the
    results folder's."""
    return Store(store_url.as_url(url) if url else store_url.default_url(), migrating=migrating)
