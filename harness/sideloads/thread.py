"""The thread every side load runs in, whatever its kind.

Each side load is a thread that waits for its start on the :class:`Timeline`, runs one
or more passes (a child process, or queries on one connection), records a
``phase_start`` / ``phase_end`` event around them and a ``sideload`` sample series of
bytes and rows moved, and ends when its passes are done, its ``duration_s`` is up, or
the main workload ends (``until: main_end``). A failed pass is recorded with its exit
status and stderr tail and ends the side load; it never stops the main workload.

What a pass does is the side load's own (``spec.run_pass(load, pass)``, in its module of
``harness.sideloads``); the helpers here (:meth:`SideLoad.stream`, :meth:`SideLoad.queries`,
:meth:`SideLoad.defaults_file`, :meth:`SideLoad.dump_argv`, :meth:`SideLoad.run_program`) are what
passes are made of.
"""
from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import pymysql

from .. import proc
from ..inputs.sqlread import read_only_session
from ..model import SideLoadModel
from ..server.mysql import Endpoint, connection
from ..store.activity import PassRun, SideLoadRun
from ..timeline import Timeline
from ..workloads.base import RunContext

SOURCE = "sideload"
CHUNK = 1 << 20


Pass = PassRun  # one pass, filled in as it runs


def _rounded(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


def _rates(passes: list[Pass]) -> tuple[float | None, float | None]:
    """MB and rows a second over the passes' own seconds."""
    busy = sum(p.seconds for p in passes) or None
    return (round(sum(p.bytes for p in passes) / busy / 1e6, 3) if busy else None,
            round(sum(p.rows for p in passes) / busy, 1) if busy else None)


def _drained(src: subprocess.Popen[bytes], dst: subprocess.Popen[bytes] | None) -> None:
    """Both ends of a pipeline waited for, ``dst``'s stdin closed first (its EOF)."""
    if dst is not None and dst.stdin is not None:
        dst.stdin.close()
    src.wait()
    if dst is not None:
        dst.wait()


def _raise_on_failure(argvs: list[list[str]],
                      procs: tuple[subprocess.Popen[bytes], subprocess.Popen[bytes] | None],
                      err_path: Path) -> None:
    """RuntimeError naming the first program of the pipeline that exited non-zero,
    with the last lines of their stderr."""
    bad = [(a, c.returncode) for a, c in zip(argvs, procs, strict=False)
           if c is not None and c.returncode != 0]
    if bad:
        lines = err_path.read_text(errors="replace").strip().splitlines()
        msg = "\n".join(proc.clip(x) for x in lines[-5:]) or "(no stderr)"
        raise RuntimeError(f"{Path(bad[0][0][0]).name} exited with code {bad[0][1]}: "
                           f"{msg}")


class Stopped(Exception):
    """A pass was stopped from outside (duration up, main ended, run aborted)."""


class SideLoad(threading.Thread):
    """One side load of a run; ``summary()`` once it has been joined."""

    def __init__(self, spec: SideLoadModel, ctx: RunContext, timeline: Timeline,
                 scratch: Path, base_dir: Path = Path("."),
                 tools: dict[str, str] | None = None,
                 log: Callable[[str], None] | None = None):
        super().__init__(name=f"sideload-{spec.name}", daemon=True)
        self.spec = spec
        self.ctx = ctx
        self.timeline = timeline
        self.scratch = scratch
        self.base_dir = base_dir  # relative file names are the scenario file's
        self.tools = tools or {}
        self.log = log or ctx.progress
        self.cgroups: list[Path] = []  # cgroup dirs its processes start in
        self.deadline_hit = False  # stopped: still running long after the main workload
        # On a server the harness does not own: its SQL runs in a READ ONLY session.
        self.read_only = False
        self.stop_event = threading.Event()
        self.passes: list[Pass] = []
        self.status = "waiting"
        self.start_s: float | None = None
        self.end_s: float | None = None
        self.error: str | None = None
        self._lock = threading.Lock()
        self._bytes = 0
        self._rows = 0
        self._last_sample = 0.0
        self._stopped: set[int] = set()  # pids of children stopped by _watch

    # --- control from the runner ----------------------------------------------------

    def main_ended(self) -> None:
        if self.spec.until == "main_end":
            self.stop_event.set()

    def stop(self) -> None:
        self.stop_event.set()

    def _should_stop(self) -> bool:
        if self.stop_event.is_set() or self.timeline.aborted:
            return True
        d = self.spec.duration_s
        return d is not None and self.start_s is not None and \
            self.ctx.clock() - self.start_s >= d

    # --- the thread -------------------------------------------------------------------

    def run(self) -> None:
        spec = self.spec
        if not self.timeline.wait_start(spec.start, self.stop_event):
            self.status = "not_started"
            self.timeline.mark_end(spec.name)  # nothing waits forever on a load that never ran
            return
        self.start_s = self.ctx.clock()
        self.status = "running"
        self.ctx.event(self.start_s, "phase_start", spec.name, {"kind": spec.kind})
        self.log(f"  side load {spec.name} ({spec.kind}) started at {self.start_s:.1f} s")
        try:
            self._passes()
        finally:
            self._ended()

    def _passes(self) -> None:
        """Pass after pass until one fails or is stopped, ``repeat`` are done (``until:
        complete``) or the run asks the load to stop."""
        spec, n = self.spec, 0
        while not self._should_stop():
            n += 1
            p = self._one_pass(n)
            if p.status != "ok" or (spec.until == "complete" and n >= spec.repeat):
                return
            if spec.pause_s and not self.timeline.sleep(spec.pause_s, self.stop_event):
                return

    def _one_pass(self, n: int) -> Pass:
        p = Pass(n, self.ctx.clock())
        self.passes.append(p)
        try:
            self.spec.run_pass(self, p)
            p.status = "ok"
        except Stopped:
            p.status = "stopped"
        except Exception as e:  # recorded, never raised into the main workload
            p.status, p.error = "failed", str(e)
        p.end_s = self.ctx.clock()
        self._sample(force=True)
        return p

    def _ended(self) -> None:
        """The load's status from its passes, its end marked, said and logged."""
        spec = self.spec
        self.end_s = self.ctx.clock()
        failed = [p for p in self.passes if p.status == "failed"]
        self.status = "failed" if failed else (
            "stopped" if any(p.status == "stopped" for p in self.passes) else "ok")
        if failed:
            self.error = f"side load {spec.name} ({spec.kind}) pass {failed[0].n} " \
                         f"failed: {failed[0].error}"
        self.timeline.mark_end(spec.name, self.end_s)
        seconds = self.end_s - (self.end_s if self.start_s is None else self.start_s)
        self.ctx.event(self.end_s, "phase_end", spec.name,
                       {"status": self.status, "passes": len(self.passes),
                        "seconds": round(seconds, 3)})
        self.log(f"  side load {spec.name} {self.status} after "
                 f"{seconds:.1f} s ({len(self.passes)} pass(es))")

    def summary(self) -> SideLoadRun:
        secs = (self.end_s - self.start_s) if self.start_s is not None and \
            self.end_s is not None else None
        ok = [p for p in self.passes if p.status == "ok"]
        mb_per_s, rows_per_s = _rates(self.passes)
        return SideLoadRun(
            self.spec.name, self.spec.kind, self.status, _rounded(self.start_s),
            _rounded(self.end_s), _rounded(secs), list(self.passes), len(ok),
            sum(p.bytes for p in self.passes), sum(p.rows for p in self.passes),
            mb_per_s, rows_per_s,
            sorted(p.seconds for p in ok)[len(ok) // 2] if ok else None,
            self.error, self.deadline_hit)

    # --- progress samples -------------------------------------------------------------

    def _count(self, nbytes: int, rows: int) -> None:
        with self._lock:
            self._bytes += nbytes
            self._rows += rows
        self._sample()

    def _sample(self, force: bool = False) -> None:
        t = self.ctx.clock()
        if not force and t - self._last_sample < 1.0:
            return
        self._last_sample = t
        lab = {"name": self.spec.name}
        self.ctx.sample(t, SOURCE, "bytes_total", float(self._bytes), lab)
        self.ctx.sample(t, SOURCE, "rows_total", float(self._rows), lab)

    def defaults_file(self) -> Path:
        """A 0600 client defaults file for the server (the caller removes it)."""
        return self.ctx.endpoint.write_defaults_file(
            self.scratch / f"client-{self.spec.name}.cnf")

    def dump_argv(self, database: str, tables: list[str], extra: list[str],
                  cnf: Path) -> list[str]:
        """mysqldump (the build's own, else the PATH's) of ``database`` [``tables``]."""
        exe = self.tools.get("mysqldump") or proc.which("mysqldump")
        return [exe, f"--defaults-extra-file={cnf}", *extra, database, *tables]

    def stream(self, p: Pass, argvs: list[list[str]], sink: Callable[[bytes], Any] | None,
               count_rows: bool) -> None:
        """Run ``argvs[0]``, count its stdout (bytes, and INSERT rows of a dump), and hand
        it to ``sink`` or to the stdin of ``argvs[1]``. Stops both when asked to."""
        err_path = self.ctx.artifacts / f"sideload-{self.spec.name}-{p.n}.stderr"
        with open(err_path, "wb") as err:
            src, dst = self._pipeline(argvs, err)
            threading.Thread(target=self._watch, args=([c for c in (src, dst) if c],),
                             daemon=True).start()
            try:
                self._pump(p, src, sink if dst is None else _pipe_writer(dst.stdin),
                           count_rows)
                _drained(src, dst)
            except BaseException:
                for c in (src, dst):
                    if c is not None and c.poll() is None:
                        c.kill()
                        c.wait()
                raise
        p.rc = src.returncode
        if src.pid in self._stopped:
            raise Stopped()
        _raise_on_failure(argvs, (src, dst), err_path)

    def _pipeline(self, argvs: list[list[str]], err: Any
                  ) -> tuple[subprocess.Popen[bytes], subprocess.Popen[bytes] | None]:
        """``argvs[0]`` with its stdout piped, and ``argvs[1]`` reading it (when given),
        both in the load's cgroups, their stderr to ``err``."""
        src = proc.popen(argvs[0], cgroups=self.cgroups, stdout=subprocess.PIPE,
                         stderr=err, stdin=subprocess.DEVNULL)
        dst = None
        if len(argvs) > 1:
            dst = proc.popen(argvs[1], cgroups=self.cgroups, stdin=subprocess.PIPE,
                             stderr=err, stdout=subprocess.DEVNULL)
        return src, dst

    def _pump(self, p: Pass, src: subprocess.Popen[bytes],
              write: Callable[[bytes], Any] | None, count_rows: bool) -> None:
        """``src``'s stdout to ``write`` until it ends, counted (bytes, and the rows
        of a dump's INSERTs, a row mark possibly split across two reads)."""
        assert src.stdout is not None
        tail = b""
        while True:
            buf = src.stdout.read1(CHUNK)  # type: ignore[attr-defined]
            if not buf:
                return
            rows = 0
            if count_rows:
                rows = count_rows_in(tail + buf) - count_rows_in(tail)
                tail = (tail + buf)[-8:]
            p.bytes += len(buf)
            p.rows += rows
            if write is not None:
                write(buf)
            self._count(len(buf), rows)

    def run_program(self, p: Pass, argv: list[str], log: Path,
                    env: dict[str, str] | None = None) -> None:
        """``argv`` with its output in ``log`` until it exits or the side load must stop
        (:class:`Stopped`); a non-zero exit raises with the output's tail."""
        try:
            with open(log, "wb") as out:
                child = proc.popen(argv, cgroups=self.cgroups, stdout=out,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   cwd=self.scratch, env={**os.environ, **(env or {})})
                self._watch([child])
                child.wait()
        except FileNotFoundError:
            raise RuntimeError(f"command not found: {argv[0]}") from None
        p.rc = child.returncode
        if child.pid in self._stopped:
            raise Stopped()
        if child.returncode != 0:
            text = log.read_text(errors="replace").strip().splitlines()
            tail = "\n".join(proc.clip(x) for x in text[-5:]) or "(no output)"
            raise RuntimeError(f"{argv[0]} exited with code {child.returncode}: {tail}")

    def _watch(self, children: list[subprocess.Popen[bytes]]) -> None:
        """Stop ``children`` when the side load must stop; return when they have exited."""
        while children[0].poll() is None:
            if self._should_stop():
                for c in children:
                    self._stopped.add(c.pid)
                    proc.stop_process(c, grace_s=2.0, first=15)
                return
            self._sample()
            time.sleep(0.2)

    def queries(self, p: Pass, database: str | None,
                queries: list[tuple[str | None, str]]) -> None:
        """Queries in order on one connection; a labelled one is timed (its seconds in
        the pass's ``query_seconds`` and a ``query_seconds`` sample)."""
        ep: Endpoint = self.ctx.endpoint
        with connection(ep, setup=False, database=database) as c:
            if self.read_only:  # the server refuses a write the guard could not see
                with c.cursor() as cur:
                    read_only_session(cur)  # in a sql_mode the guard reads
            cid = c.thread_id()
            done = threading.Event()
            killer = threading.Thread(target=self._kill_query_on_stop, args=(cid, done),
                                      daemon=True)
            killer.start()
            try:
                for label, q in queries:
                    if self._should_stop():
                        raise Stopped()
                    t0 = time.perf_counter()
                    with c.cursor() as cur:
                        try:
                            cur.execute(q)
                        except pymysql.err.OperationalError as e:
                            if self._should_stop() and e.args and e.args[0] in (1317, 2013):
                                raise Stopped() from None  # our own KILL QUERY
                            raise
                        n = len(cur.fetchall()) if cur.description else max(cur.rowcount, 0)
                    if label is not None:
                        secs = time.perf_counter() - t0
                        p.query_seconds[label] = round(secs, 4)
                        self.ctx.sample(self.ctx.clock(), SOURCE, "query_seconds", secs,
                                        {"name": self.spec.name, "query": label})
                    p.queries += 1
                    p.rows += n
                    self._count(0, n)
            finally:
                done.set()

    def _kill_query_on_stop(self, cid: int, done: threading.Event) -> None:
        while not done.wait(0.2):
            if self._should_stop():
                try:
                    with connection(self.ctx.endpoint) as k, k.cursor() as cur:
                        cur.execute(f"KILL QUERY {int(cid)}")
                except pymysql.err.MySQLError:
                    pass
                return

# Row starts in a dump's extended INSERTs: "VALUES (" opens the first row, "),(" each next
# one; MariaDB's mysqldump puts a newline after the comma (and after VALUES).
_ROW_MARKS = (b"VALUES (", b"VALUES\n(", b"),(", b"),\n(")


def count_rows_in(buf: bytes) -> int:
    """Rows that start in ``buf`` (a slice of mysqldump output)."""
    return sum(buf.count(m) for m in _ROW_MARKS)


def _pipe_writer(stdin: IO[bytes] | None) -> Callable[[bytes], Any]:
    assert stdin is not None

    def write(buf: bytes) -> None:
        try:
            stdin.write(buf)
        except BrokenPipeError:
            raise RuntimeError("split exited before the stream ended") from None
    return write
