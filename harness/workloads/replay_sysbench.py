"""The replay's compiled client: sysbench's threads execute the captured statements.

A Python client spends ~170 us of CPU on each statement (reading the log, the
fingerprint, PyMySQL): on two vCPUs that is a replay five to seven times slower than the
workload it captured. So, for a replay as fast as possible without result checksums,
the harness first splits the log, once, into one file per client thread (each statement
with its digest's number, and the session's connect, ``USE`` and quit), then runs
sysbench with ``replay.lua``: each statement is one sysbench event on its session's own
connection, timed and tallied per digest in LuaJIT, and sysbench's own per-second
reports are the statements per second. The split is in a temporary folder beside the
cache, removed after the run; what the log skipped is counted while it is split.
"""
from __future__ import annotations

import errno
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from .. import client, locks, paths, proc
from ..errors import HarnessError, ToolError
from ..inputs.sqlread import read_only_session
from ..server import osuser
from ..server.mysql import connection
from .base import RunContext, Tick
from .fingerprint import digest, fingerprint
from .replay_shared import DigestStats, ReplayWorkload, Tally, follow_admin, report_series
from .slowlog import Entry
from .sysbench import CHECKPOINT_RE, parse_interval, write_config

SCRIPT = Path(__file__).with_name("replay.lua")
SPLIT_LOCK = ".lock"
SPLIT_PROGRESS = 200_000  # entries between two progress lines while the log is split


@dataclass
class Split:
    """The log, split per client thread: where, and each digest's (fingerprint, example)
    by its number."""

    folder: Path
    digests: list[tuple[str, str]] = field(default_factory=list)
    statements: int = 0
    lock: int | None = None  # held while the split is in use: not an orphan

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
        if self.lock is not None:
            os.close(self.lock)
            self.lock = None


class _Writer:
    """Records into the client files (see replay.lua): a session connects before its
    first statement, and again after a captured Quit."""

    def __init__(self, folder: Path, clients: int, database: str):
        self.files: list[IO[bytes]] = [open(folder / f"client-{k}.bin", "wb")
                                       for k in range(clients)]
        self.database = database
        self.open: set[int] = set()
        self.numbers: dict[str, int] = {}

    def close(self) -> None:
        for f in self.files:
            f.close()

    def _put(self, session: int, header: str, body: bytes | None = None) -> None:
        f = self.files[session % len(self.files)]
        f.write(header.encode() + b"\n")
        if body is not None:
            f.write(body + b"\n")

    def statement(self, e: Entry, split: Split) -> None:
        if e.session not in self.open:
            db = (e.db or self.database).encode("utf-8", "surrogateescape")
            self._put(e.session, f"C {e.session} {len(db)}", db)
            self.open.add(e.session)
        fp = fingerprint(e.sql)
        n = self.numbers.get(fp)
        if n is None:
            n = self.numbers[fp] = len(split.digests)
            split.digests.append((fp, e.sql[:400]))
        sql = e.sql.encode("utf-8", "surrogateescape")
        self._put(e.session, f"Q {e.session} {n} {len(sql)}", sql)
        split.statements += 1

    def admin(self, e: Entry, skip: Callable[[str], None]) -> None:
        """Quit closes the session, Init DB moves it; other commands are counted."""
        follow_admin(e, e.session in self.open, lambda: self._close(e.session),
                     lambda db: self._use(e.session, db), skip)

    def _close(self, session: int) -> None:
        self._put(session, f"X {session}")
        self.open.discard(session)

    def _use(self, session: int, db: str) -> None:
        raw = db.encode("utf-8", "surrogateescape")
        self._put(session, f"U {session} {len(raw)}", raw)


def _remove_orphans(root: Path) -> None:
    """Splits left by a harness that was killed: no process holds their lock (a pid the
    kernel gave again, or one of another pid namespace, does not keep one alive)."""
    for d in root.glob("split-*-*"):
        fd = locks.try_hold(d / SPLIT_LOCK) if d.is_dir() else None
        if fd is not None:
            try:
                shutil.rmtree(d, ignore_errors=True)
            finally:
                os.close(fd)


def split_log(entries: Iterator[Entry], clients: int, database: str, tally: Tally,
              progress: Callable[[str], None]) -> Split:
    """The entries into one file per client thread, in a new temporary folder."""
    root = paths.cache_dir() / "replay"
    root.mkdir(parents=True, exist_ok=True)
    _remove_orphans(root)
    split = Split(Path(tempfile.mkdtemp(prefix=f"split-{os.getpid()}-", dir=root)))
    split.lock = locks.try_hold(split.folder / SPLIT_LOCK)  # ours while the process lives
    writer, whole = _Writer(split.folder, clients, database), False
    try:
        for n, e in enumerate(entries, 1):
            if e.admin:
                writer.admin(e, tally.skip)
            else:
                writer.statement(e, split)
            if n % SPLIT_PROGRESS == 0:
                progress(f"replay: splitting the log for sysbench, {n} entries")
        whole = True
    except OSError as e:
        raise HarnessError(f"replay: splitting the log into {split.folder}: "
                           + (paths.disk_full(root) if e.errno == errno.ENOSPC
                              else str(e))) from None
    finally:
        writer.close()
        if not whole:
            split.remove()
    return split


def argv(spec: ReplayWorkload, split: Split, config: Path) -> list[str]:
    secs = spec.warmup_s + spec.duration_s if spec.duration_s else 0
    return [proc.which("sysbench"), f"--config-file={config}", str(client.copy_in(SCRIPT)),
            f"--threads={spec.clients}", f"--time={secs}", "--events=0",
            f"--report-interval={max(1, round(spec.report_interval_s))}",
            "--percentile=95", "--mysql-ignore-errors=all", "--db-ps-mode=disable",
            f"--replay-dir={split.folder}", f"--replay-warmup={spec.warmup_s}",
            f"--replay-read-only={'on' if spec.read_only else 'off'}", "run"]


TOTALS_RE = re.compile(r"^\s+total (time|number of events):\s+([\d.]+)s?$")


class _Reports:
    """sysbench's per-interval reports as the replay's samples, and at the end the part
    after the last report (a replay shorter than a report interval has only that)."""

    def __init__(self, ctx: RunContext, spec: ReplayWorkload, start: float, source: str):
        self.ctx, self.spec, self.start, self.source = ctx, spec, start, source
        self.intervals: list[Tick] = []
        self.reported = (0.0, 0.0)  # (seconds, events) the reports covered
        self.totals: dict[str, float] = {}

    def line(self, line: str) -> None:
        m = TOTALS_RE.match(line)
        if m:
            self.totals[m.group(1)] = float(m.group(2))
            return
        iv = parse_interval(line)
        if iv is None or CHECKPOINT_RE.match(line):
            return
        self.reported = (iv.t, self.reported[1] + iv.tps * (iv.t - self.reported[0]))
        self._sample(iv.t, iv.tps, iv.errors, iv.latency_ms)
        self.ctx.progress(f"replay (sysbench)  {iv.tps:.0f} statements/s  "
                          f"p95 {iv.latency_ms} ms  errors {iv.errors:.0f}/s")

    def _sample(self, at: float, rate: float, errors: float, p95: float | None) -> None:
        t = self.start + at
        report_series(self.ctx, self.source, t, self.spec.clients, rate, errors, p95)
        if at > self.spec.warmup_s:
            self.intervals.append(Tick(t, rate, p95))

    def finish(self) -> None:
        """The rate after the last report, from sysbench's totals."""
        secs, events = self.totals.get("time"), self.totals.get("number of events")
        if secs is None or events is None or secs <= self.reported[0]:
            return
        rest = max(events - self.reported[1], 0.0) / (secs - self.reported[0])
        self._sample(secs, rest, 0.0, None)


def run_sysbench(ctx: RunContext, spec: ReplayWorkload, split: Split, start: float,
                 source: str) -> list[Tick]:
    """sysbench through the split; its reports as samples, and the measured ones (after
    warmup) as the run's intervals."""
    if spec.read_only:  # its sessions get the server's sql_mode: one the guard reads
        with connection(ctx.endpoint) as c, c.cursor() as cur:
            read_only_session(cur)
    cfg = write_config(ctx.artifacts / "replay-sysbench.cnf", ctx.endpoint, spec.database)
    # sysbench runs as the client account: it reads its script and the pieces, and
    # writes its tallies, in a folder of that account's (harness/client.py)
    osuser.hand_over(split.folder, osuser.client_account(), 0o700)
    args = argv(spec, split, cfg)
    (ctx.artifacts / "replay-sysbench.command").write_text(" ".join(args) + "\n")
    reports = _Reports(ctx, spec, start, source)
    try:
        with client.stream(args, reports.line, ctx.artifacts / "replay-sysbench.log",
                           what="sysbench replay") as s:
            ctx.on_stop.append(s.stop)
            try:
                s.wait(timeout=None)
            finally:
                ctx.on_stop.remove(s.stop)
    finally:
        cfg.unlink(missing_ok=True)
    check_finished(args, ctx.artifacts / "replay-sysbench.log", spec.clients, split)
    reports.finish()
    return reports.intervals


def read_tallies(split: Split, clients: int, tally: Tally) -> None:
    """Each thread's stats file into ``tally``, as the Python client would have filled
    it."""
    by_number: dict[int, DigestStats] = {}

    def stats_of(n: int) -> DigestStats:
        s = by_number.get(n)
        if s is None:
            fp, example = split.digests[n]
            d = digest(fp)
            s = by_number[n] = tally.digests.get(d) or \
                tally.digests.setdefault(d, DigestStats(fp, example))
        return s

    for k in range(clients):
        # written by the client account: read without following a link
        text = osuser.read_mysqld_file(split.folder / f"stats-{k}.txt", limit=1 << 30) or ""
        for line in text.splitlines():
            kind, _, rest = line.partition(" ")
            if kind == "s":
                why, _, n = rest.rpartition("|")
                tally.skipped[why] += int(n)
                continue
            if kind == "c":
                tally.sessions.add(int(rest))
                continue
            f = rest.split()
            s = stats_of(int(f[0]))
            if kind == "d":
                s.count += int(f[1])
                s.rows += int(f[2])
                s.total_ms += float(f[3])
            elif kind == "b":
                s.buckets[int(f[1])] += int(f[2])
            elif kind == "e":
                s.errors[int(f[1])] += int(f[2])


def check_finished(args: list[str], log: Path, clients: int, split: Split) -> None:
    """sysbench ended: every thread must have written its tally."""
    missing = [k for k in range(clients) if not (split.folder / f"stats-{k}.txt").is_file()]
    if missing:
        tail = log.read_text(errors="replace").splitlines()[-20:] if log.is_file() else []
        raise ToolError(args, 0, "\n".join(tail),
                        f"sysbench replay threads {missing} ended without a tally")


def replay_with_sysbench(ctx: RunContext, spec: ReplayWorkload,
                         entries: Iterator[Entry], tally: Tally, source: str
                         ) -> tuple[list[Tick], tuple[float, float], float]:
    """Split, run, tally: (measured intervals, the measured window, start)."""
    split = split_log(entries, spec.clients, spec.database, tally, ctx.progress)
    try:
        ctx.log(f"  replay: {split.statements} statements of {len(split.digests)} digests "
                f"split for {spec.clients} sysbench threads")
        start = ctx.clock()
        ctx.measured_from(start + spec.warmup_s)
        if spec.warmup_s:
            ctx.event(start, "phase_start", "warmup", {"seconds": spec.warmup_s})
        intervals = run_sysbench(ctx, spec, split, start, source)
        end = ctx.clock()
        if spec.warmup_s:
            ctx.event(start + spec.warmup_s, "phase_end", "warmup", None)
        read_tallies(split, spec.clients, tally)
    finally:
        split.remove()
    return intervals, (min(start + spec.warmup_s, end), end), start
