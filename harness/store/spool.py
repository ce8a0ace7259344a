"""A run's spool: everything a run records, appended to a file in its folder as it is
taken, so a results store that goes away loses nothing.

The file (``spool.jsonl.gz``) is a row of gzip members, one per flush (every
``FLUSH_S`` seconds, each fsync'd), each holding JSON lines: first the run's record,
then samples a series at a time and events, and last the run's end (status, summary,
error) once it is known. A member cut short by a crash or a full disk is where reading
stops: every member before it is whole. The store is written from memory as the run
goes; the spool is removed once the store holds the whole run, and stays (with what it
holds said on the console) when the store could not take it. ``replay`` writes a spool
into the store again, whole: the run's samples and events there are replaced by the
spool's, so a replay that fails half-way is simply done again.
"""
from __future__ import annotations

import contextlib
import fcntl
import gzip
import json
import os
import socket
import threading
import time
import zlib
from array import array
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import StoreError
from ..jsonvalue import JsonDict
from ..paths import describe_os_error
from .details import RunDetails
from .event import Event
from .run import RunRecord
from .summary import RunSummary

NAME = "spool.jsonl.gz"
FORMAT = 1
FLUSH_S = 1.0

Key = tuple[str, str, tuple[tuple[str, str], ...]]  # source, metric, sorted labels


@dataclass(frozen=True)
class RunEnd:
    """How the run ended, as the runner would have stored it."""

    status: str
    ended_at: str
    error: str | None
    summary: RunSummary
    details: RunDetails


@dataclass
class SpooledRun:
    """A spool read back: the run's record, its samples by series, its events, its end
    (None: the harness died before it), and whether the last flush was cut short."""

    path: Path
    record: RunRecord
    owner: str  # host:pid of the harness that wrote it
    store: str  # the results store it is for, as Store.identity() says it
    samples: dict[Key, tuple[array[float], array[float]]] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    end: RunEnd | None = None
    torn: bool = False

    @property
    def sample_count(self) -> int:
        return sum(len(ts) for ts, _ in self.samples.values())


class Spool:
    """The writing side: ``add`` and ``event`` from any thread (memory only), a thread
    of its own appending what they took every ``flush_s``.

    A write that fails (a full disk, an I/O error) is taken back (the file cut to its
    last whole member) and tried again at every flush, the members not yet written kept
    in memory up to ``max_behind`` bytes: ``on_behind`` is called when the spool falls
    behind and ``on_caught_up`` (with the seconds it was behind) when it has written
    them all, and ``gaps`` lists each such time. Past the bound the spool stops with
    ``failed`` set (``on_failure``); the run goes on with the store alone."""

    def __init__(self, folder: Path, rec: RunRecord, store: str,
                 flush_s: float = FLUSH_S, max_behind: int | None = None):
        self.path = folder / NAME
        self.flush_s = flush_s
        self.failed: str | None = None
        self.on_failure: Callable[[str], None] | None = None  # called once, with failed
        self.on_behind: Callable[[str], None] | None = None  # why it fell behind
        self.on_caught_up: Callable[[float], None] | None = None  # seconds behind
        # Behind for longer than stuck_s: on_stuck, once an episode (the keeper fails
        # the run if the store is not taking it either: nothing on disk keeps it).
        self.stuck_s = patience_s()
        self.on_stuck: Callable[[str], None] | None = None
        self.stuck = False
        self.why_behind = ""  # why it fell behind, while it is
        self.max_behind = max_behind if max_behind is not None else max_behind_bytes()
        self.gaps: list[Gap] = []  # each time the spool was behind, whole once written
        self._unwritten: list[bytes] = []  # members not on disk yet, in order
        self._behind_since: float | None = None  # time.monotonic() of the first failure
        self._gap_from = ""  # its wall-clock time (ISO), for the gap it opens
        self._lock = threading.Lock()
        self._io = threading.Lock()
        self._buf: dict[Key, tuple[array[float], array[float]]] = {}
        self._lines: list[str] = []
        self._stop = threading.Event()
        # Held (shared) for the writer's life: a replay, which takes it exclusively,
        # never runs beside the harness that writes the spool, whatever its pid became.
        try:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            fcntl.flock(self._fd, fcntl.LOCK_SH)
        except OSError as e:
            self._fd = -1
            self.failed = f"the run's spool {self.path} cannot be written: {e.strerror or e}"
        run = {**asdict(rec), "details": rec.details.to_json()}
        self._append([json.dumps({"format": FORMAT, "run": run, "store": store,
                                  "owner": f"{socket.gethostname()}:{os.getpid()}"},
                                 default=str)])
        self._thread = threading.Thread(target=self._loop, daemon=True,
                                        name=f"spool-{rec.run_id}")
        self._thread.start()

    def add(self, t: float, key: Key, value: float) -> None:
        with self._lock:
            ts, vs = self._buf.setdefault(key, (array("d"), array("d")))
            ts.append(t)
            vs.append(value)

    def event(self, t: float, kind: str, name: str, detail: JsonDict | None) -> None:
        line = json.dumps({"e": [t, kind, name, detail or {}]}, default=str)
        with self._lock:
            self._lines.append(line)

    def end(self, end: RunEnd) -> None:
        """The run's end, written at once (the last line of a whole spool)."""
        line = json.dumps({"end": {"status": end.status, "ended_at": end.ended_at,
                                   "error": end.error, "summary": end.summary.to_json(),
                                   "details": end.details.to_json()}},
                          default=str)
        with self._lock:
            self._lines.append(line)
        self.flush()

    def flush(self) -> None:
        """What was taken since the last flush, appended as one member and fsync'd (one
        flush at a time: members in the order they were taken)."""
        with self._io:
            with self._lock:
                buf, self._buf = self._buf, {}
                lines, self._lines = self._lines, []
            lines = [json.dumps({"s": [src, metric, list(labels)], "t": ts.tolist(),
                                 "v": vs.tolist()}) for (src, metric, labels), (ts, vs)
                     in buf.items()] + lines
            if lines or self._unwritten:
                self._append(lines)

    def close(self) -> None:
        """The last samples written; the file stays (held by this process until it
        ends, or ``discard``)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(30)
        self.flush()

    def discard(self) -> None:
        """The store holds the whole run: the spool goes (removed while still held)."""
        self.close()
        self.path.unlink(missing_ok=True)
        self._let_go()

    def release(self) -> None:
        """The store could not take the run: the spool stays, whole, for a replay by
        any harness (this one's included) from now on."""
        self.close()
        self._let_go()

    def _let_go(self) -> None:
        with self._io:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1

    def _loop(self) -> None:
        while not self._stop.wait(self.flush_s):
            self.flush()

    @property
    def behind(self) -> int:
        """Bytes taken and not yet on disk (0: the file holds everything taken)."""
        return sum(map(len, self._unwritten))

    def _append(self, lines: list[str]) -> None:
        if self.failed is not None or self._fd < 0:
            return
        if lines:
            self._unwritten.append(gzip.compress(("\n".join(lines) + "\n").encode(),
                                                 compresslevel=3))
        while self._unwritten:
            try:
                _write_whole(self._fd, self._unwritten[0])
            except OSError as e:
                self._fell_behind(e)
                return
            self._unwritten.pop(0)
        if self._behind_since is not None:
            self._caught_up()

    def _fell_behind(self, e: OSError) -> None:
        why = f"the run's spool {self.path} cannot be written: {describe_os_error(e, self.path)}"
        if self.behind > self.max_behind:
            self.failed = (f"{why}, with {self.behind >> 20} MB waiting in memory (the "
                           f"bound, HARNESS_SPOOL_MAX_BEHIND_MB)")
            self._unwritten.clear()
            if self.on_failure is not None:
                self.on_failure(self.failed)
        elif self._behind_since is None:
            self._behind_since = time.monotonic()
            self._gap_from = now_iso()
            self.why_behind = why
            if self.on_behind is not None:
                self.on_behind(why)
        elif not self.stuck and time.monotonic() - self._behind_since > self.stuck_s:
            self.stuck = True
            if self.on_stuck is not None:
                self.on_stuck(f"{why} for {time.monotonic() - self._behind_since:.0f} s")

    @property
    def holding(self) -> bool:
        """Whether the spool keeps what the run takes (on disk, or in memory for a short
        time): not failed, not stuck behind."""
        return self.failed is None and not self.stuck

    def _caught_up(self) -> None:
        assert self._behind_since is not None
        seconds = time.monotonic() - self._behind_since
        self.gaps.append(Gap(self._gap_from, round(seconds, 1)))
        self._behind_since = None
        self.stuck = False
        if self.on_caught_up is not None:
            self.on_caught_up(seconds)


@dataclass(frozen=True)
class Gap:
    """A time the spool could not write: from when (ISO), for how many seconds. What
    was taken then waited in memory and was written after."""

    started_at: str
    seconds: float


def max_behind_bytes() -> int:
    """How much a spool holds in memory while its disk refuses it
    (HARNESS_SPOOL_MAX_BEHIND_MB, default 256 MB: hours of a run's samples)."""
    try:
        return max(0, int(os.environ.get("HARNESS_SPOOL_MAX_BEHIND_MB", 256))) << 20
    except ValueError:
        return 256 << 20


def patience_s() -> float:
    """How long a spool may stay behind before the run depends on the store alone
    (HARNESS_SPOOL_PATIENCE_S, default 30 s)."""
    try:
        return max(0.0, float(os.environ.get("HARNESS_SPOOL_PATIENCE_S", 30)))
    except ValueError:
        return 30.0


def _write_whole(fd: int, data: bytes) -> None:
    """``data`` appended whole and fsync'd, or the file cut back to where it was and
    the error raised: a member written in part would end what a reader can read."""
    start = os.fstat(fd).st_size
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    except OSError:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, start)
        raise


@dataclass(frozen=True)
class Head:
    """A spool's first line: whose run, for which store, written by which process."""

    record: RunRecord
    store: str
    owner: str


def head(path: Path) -> Head:
    """The first line of a spool (read without the rest)."""
    with path.open("rb") as f:
        d = zlib.decompressobj(wbits=31)
        first = d.decompress(f.read(1 << 16)).split(b"\n", 1)[0]
    return _head(path, first)


def _head(path: Path, line: bytes) -> Head:
    try:
        h = json.loads(line)
    except ValueError:
        h = {}
    if not isinstance(h, dict) or h.get("format") != FORMAT or "run" not in h:
        raise StoreError(f"{path}: not a run's spool of this harness")
    run = {**h["run"], "details": RunDetails.from_json(h["run"].get("details"))}
    return Head(RunRecord(**run), str(h.get("store") or ""), str(h.get("owner") or ""))


def read(path: Path) -> SpooledRun:
    """A spool file read back, up to its last whole member."""
    members, torn = _members(path.read_bytes())
    lines = [ln for m in members for ln in m.split(b"\n") if ln]
    if not lines:
        raise StoreError(f"{path}: not a run's spool (nothing whole in it)")
    h = _head(path, lines[0])
    out = SpooledRun(path, h.record, h.owner, h.store, torn=torn)
    for line in lines[1:]:
        _take(out, json.loads(line))
    return out


def _take(out: SpooledRun, rec: dict[str, Any]) -> None:
    if "s" in rec:
        src, metric, labels = rec["s"]
        ts, vs = out.samples.setdefault((src, metric, tuple(map(tuple, labels))),
                                        (array("d"), array("d")))
        ts.extend(rec["t"])
        vs.extend(rec["v"])
    elif "e" in rec:
        t, kind, name, detail = rec["e"]
        out.events.append(Event(t, kind, name, detail))
    elif "end" in rec:
        end = dict(rec["end"])
        end["summary"] = RunSummary.from_json(end["summary"], where=str(out.path))
        end["details"] = RunDetails.from_json(end.get("details"))
        out.end = RunEnd(**end)


def _members(data: bytes) -> tuple[list[bytes], bool]:
    """The gzip members of ``data`` that are whole, and whether a cut one followed."""
    out: list[bytes] = []
    while data:
        d = zlib.decompressobj(wbits=31)
        try:
            text = d.decompress(data)
        except zlib.error:
            return out, True
        if not d.eof:
            return out, True
        out.append(text)
        data = d.unused_data
    return out, False


def pending(root: Path) -> list[Path]:
    """The spools left under a results folder's runs/ (each a run the store may lack)."""
    runs = root / "runs"
    return sorted(runs.glob(f"*/{NAME}")) if runs.is_dir() else []


def writer_alive(owner: str) -> bool:
    """Whether the harness that wrote a spool still runs here (another host's: assumed
    so, never replayed under it)."""
    host, _, pid = owner.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return host != socket.gethostname() and bool(host)
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def now_iso() -> str:
    return datetime.now(UTC).isoformat()


@contextlib.contextmanager
def claimed(path: Path) -> Iterator[bool]:
    """Whether this process holds the spool at ``path`` for a replay (False: another
    harness replays it now, or has just stored it and removed it)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        yield False
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield os.fstat(fd).st_nlink > 0
    finally:
        os.close(fd)
