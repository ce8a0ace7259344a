"""What the replay's two clients (replay.py's Python threads, replay_sysbench.py's
sysbench threads) read and write the same way: a captured administrator command, and
the series of one report interval; the workload's model, and the tally both fill."""
from __future__ import annotations

import hashlib
import math
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from ..errors import InputError
from ..model import WorkloadModel
from .base import RunContext
from .fingerprint import digest, fingerprint
from .querylog import open_log
from .slowlog import Entry

SAMPLE = 4  # statements a digest keeps with their result checksum, to name one that differs
MASK = (1 << 64) - 1


class ReplayWorkload(WorkloadModel):
    """The statements of ``log`` (a slow log or a general log, relative to the scenario
    file; plain or gzip) replayed on ``database``'s server by ``clients`` threads, once
    through the log or for ``duration_s`` at most; the first ``warmup_s`` seconds are not
    measured. ``speed``: ``fast``, or the captured timing that many times faster;
    ``checksums``: each statement's result checksummed, per digest; ``client``: what
    runs the statements (``sysbench`` or ``python``; ``auto``: sysbench unless the
    speed or checksums need python)."""

    kind: Literal["replay"]
    log: str
    clients: int = Field(4, ge=1, le=1024)
    read_only: bool = False
    checksums: bool = False
    speed: Literal["fast"] | Annotated[float, Field(gt=0, le=1000)] = "fast"
    client: Literal["auto", "python", "sysbench"] = "auto"
    duration_s: int | None = Field(None, ge=1)
    report_interval_s: float = Field(1, gt=0, le=3600)

    @model_validator(mode="after")
    def _client_can(self) -> ReplayWorkload:
        if self.client == "sysbench" and (self.speed != "fast" or self.checksums):
            raise ValueError("client: sysbench replays as fast as possible without result "
                             "checksums; speed and checksums need client: python (or auto)")
        return self

    def compiled(self) -> bool:
        """Whether sysbench runs the statements (see replay_sysbench.py): asked for, or
        ``auto`` and nothing needs the Python client."""
        return self.client == "sysbench" or (
            self.client == "auto" and self.speed == "fast" and not self.checksums)

    def writes(self, base: Path) -> list[str]:
        return [] if self.read_only else [
            f"workload: replays {self.log}, whose statements may write; read_only: true "
            "replays only the ones that cannot"]

    def files(self) -> dict[str, str]:
        return {"log": self.log}

    def content_problems(self) -> list[str]:
        """The log read as the replay reads it, up to its first statement: a file the
        reader refuses, or one without a statement, is said when the scenario loads
        (``harness validate``), not after the servers are set up."""
        try:
            log = open_log(self.path_of(self.log))
            entries = iter(log)
            try:
                if any(not e.admin for e in entries):
                    return []
            finally:
                entries.close()  # type: ignore[attr-defined]
        except InputError as e:
            return [str(e)]
        skipped = ", ".join(f"{n} {why}" for why, n in log.skipped.items())
        return [f"{self.log}: no statement in it to replay"
                + (f" (passed over: {skipped})" if skipped else "")]

    def content_summary(self) -> list[str]:
        """The capture read through: statements, sessions, digests, the time it spans,
        what was passed over and why."""
        log = open_log(self.path_of(self.log))
        statements = admin = 0
        sessions: set[int] = set()
        digests: set[str] = set()
        starts: list[float] = []
        for e in log:
            admin += e.admin
            statements += not e.admin
            sessions.add(e.session)
            if not e.admin:
                digests.add(digest(fingerprint(e.sql)))
            if e.start is not None:
                starts.append(e.start)
        span = (f", {max(starts) - min(starts):.1f} s from "
                f"{datetime.fromtimestamp(min(starts), UTC):%Y-%m-%d %H:%M:%S} UTC"
                if starts else ", no start times")
        lines = [f"{self.log} ({type(log).__name__}): {statements} statements and {admin} "
                 f"administrator commands in {len(sessions)} sessions, {len(digests)} "
                 f"digests{span}"]
        lines += [f"{self.log}: passed over {n}: {why}" for why, n in log.skipped.items()]
        if log.binary:
            lines.append(f"{self.log}: {log.binary} statements are not UTF-8 (sent as "
                         "captured)")
        return lines


# --- the tally ------------------------------------------------------------------------------

BUCKET = math.log(1.02)  # latency histogram: 2% wide buckets


@dataclass
class DigestStats:
    fingerprint: str
    example: str
    count: int = 0
    rows: int = 0
    total_ms: float = 0.0
    errors: Counter[int] = field(default_factory=Counter)
    buckets: Counter[int] = field(default_factory=Counter)
    checksum: int = 0  # the sum of its statements' (text, result) hashes
    checked: int = 0  # statements in it (warmup included: results do not warm up)
    sample: dict[int, list[Any]] = field(default_factory=dict)  # text hash: [results, sql]

    def add(self, ms: float, rows: int, error: int | None) -> None:
        self.count += 1
        self.rows += rows
        self.total_ms += ms
        if error is not None:
            self.errors[error] += 1
        self.buckets[int(math.log(max(ms, 1e-4) / 1e-4) / BUCKET)] += 1

    def add_result(self, sql: str, result: int) -> None:
        """One statement's result, into the digest's checksum and, when its text hashes
        among the SAMPLE smallest, the sample (a text run again adds up its results)."""
        key = text_hash(sql.encode("utf-8", "surrogateescape"))
        self.checked += 1
        self.checksum = (self.checksum + text_hash(b"%d:%d" % (key, result))) & MASK
        if key in self.sample:
            self.sample[key][0] = (self.sample[key][0] + result) & MASK
        elif len(self.sample) < SAMPLE or key < max(self.sample):
            self.sample[key] = [result, sql[:300]]
            if len(self.sample) > SAMPLE:
                del self.sample[max(self.sample)]

    def quantile(self, q: float) -> float:
        """The latency under which a fraction ``q`` of its statements finished (the
        upper edge of its 2% bucket)."""
        need, seen = q * self.count, 0
        for b in sorted(self.buckets):
            seen += self.buckets[b]
            if seen >= need:
                return round(1e-4 * math.exp((b + 1) * BUCKET), 3)
        return 0.0


class Tally:
    """What the clients did, under one lock: per digest (measured part only), and since
    the last report."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.digests: dict[str, DigestStats] = {}
        self.recent: list[float] = []
        self.recent_errors = 0
        self.recent_late: list[float] = []
        self.late = DigestStats("", "")  # how late statements started (paced replay)
        self.skipped: Counter[str] = Counter()
        self.failures: list[str] = []
        self.measuring = False
        self.sessions: set[int] = set()

    def add(self, fp: str, sql: str, ms: float, rows: int, error: int | None,
            result: int | None = None) -> None:
        with self.lock:
            self.recent.append(ms)
            self.recent_errors += error is not None
            if not self.measuring and result is None:
                return
            d = digest(fp)
            stats = self.digests.get(d)
            if stats is None:
                stats = self.digests[d] = DigestStats(fp, sql[:400])
            if self.measuring:
                stats.add(ms, rows, error)
            if result is not None:
                stats.add_result(sql, result)

    def behind(self, ms: float) -> None:
        with self.lock:
            self.recent_late.append(ms)
            if self.measuring:
                self.late.add(ms, 0, None)

    def skip(self, why: str) -> None:
        with self.lock:
            self.skipped[why] += 1

    def take(self) -> tuple[list[float], int, list[float]]:
        with self.lock:
            out = self.recent, self.recent_errors, self.recent_late
            self.recent, self.recent_errors, self.recent_late = [], 0, []
            return out


def text_hash(data: bytes) -> int:
    """A 64-bit hash of ``data`` (the checksums and the sample's keys)."""
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")


def follow_admin(e: Entry, connected: bool, close: Callable[[], None],
                 use: Callable[[str], None], skip: Callable[[str], None]) -> None:
    """A captured protocol command: Quit closes the session, Init DB (a general log's)
    moves it to its database, both only once it is ``connected``; the others are counted
    as skipped."""
    command = e.sql.split(": ", 1)[1]
    if command == "Quit":
        if connected:
            close()
    elif command == "Init DB":
        if connected and e.db:
            use(e.db)
    else:
        skip(f"administrator commands ({command})")


def report_series(ctx: RunContext, source: str, t: float, clients: int, rate: float,
                  errors_per_s: float, p95: float | None) -> None:
    """One report interval's samples: statements and errors per second, the client
    threads, and the statements' p95 latency when any ran."""
    for metric, v in (("statements_per_s", rate), ("errors_per_s", errors_per_s),
                      ("threads", float(clients))):
        ctx.sample(t, source, metric, v, None)
    if p95 is not None:
        ctx.sample(t, source, "latency_ms", p95, {"quantile": "0.95"})
