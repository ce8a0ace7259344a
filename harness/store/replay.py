"""A run's spool written into the results store, whole: what ``harness store
replay-spool`` and the next harness run do with a spool a store could not take."""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from ..errors import StoreError
from . import spool as spooling
from .db import Store
from .summary import RunSummary


@dataclass(frozen=True)
class Replayed:
    run_id: str
    status: str
    samples: int
    events: int
    ended: bool  # its harness wrote the run's end; else the run is marked interrupted


def samples_into(store: Store, run: spooling.SpooledRun) -> int:
    """The spool's samples and events in place of the run's in the store; the number of
    samples the store holds for the run after."""
    run_id = run.record.run_id
    store.clear_measured(run_id)
    w = store.writer(run_id)
    for key, (ts, vs) in run.samples.items():
        w.add_series(key, ts, vs)
    w.close()
    store.add_events(run_id, run.events)
    return store.sample_count(run_id)


def replay(store: Store, path: Path, by: str) -> Replayed | None:
    """The spool at ``path`` into ``store`` (the run created there if the store never
    had it), its end stored as the harness meant to, else as interrupted with the last
    thing it recorded; the spool removed once all of it is stored. None: another
    harness replays it at this moment."""
    if not path.is_file():
        raise StoreError(f"{path}: no spool there (its run stored already, or none written)")
    with spooling.claimed(path) as mine:
        return _replay(store, path, by) if mine else None


def _replay(store: Store, path: Path, by: str) -> Replayed:
    run = spooling.read(path)
    if run.store != store.identity():
        raise StoreError(f"{path} is a spool of the results store {run.store}, not of "
                         f"{store.identity()}: give that store (--store)")
    rec = run.record
    held = store.get_run(rec.run_id)
    if held is None or held.run_id != rec.run_id:
        store.create_run(replace(rec, status="running"))
    n = samples_into(store, run)
    end = run.end or _interrupted(run, by)
    note = {"at": spooling.now_iso(), "by": by, "samples": n,
            "why": "the results store could not take the run when it ended"
            if run.end else "its harness died before the run ended"}
    if run.torn:
        note["torn"] = "the spool's last flush was cut short: its last second is missing"
    store.update_run(rec.run_id, status=end.status, ended_at=end.ended_at,
                     error=end.error, summary=replace(end.summary, samples=n),
                     details=replace(end.details, stored_from_spool=note))
    store.save_artifacts(rec.run_id, path.parent)
    path.unlink()
    return Replayed(rec.run_id, end.status, n, len(run.events), run.end is not None)


def _interrupted(run: spooling.SpooledRun, by: str) -> spooling.RunEnd:
    last = run.events[-1] if run.events else None
    said = (f"; the last it recorded: {last.kind} {last.name} at {last.t:.0f} s"
            if last else "")
    how = ("its spool was cut short (a full disk, or its harness killed while writing)"
           if run.torn else "its harness process died (or its spool's disk refused the "
           "rest) before the run's end was written")
    return spooling.RunEnd(
        status="interrupted", ended_at=spooling.now_iso(),
        error=f"{how}{said}; its {run.sample_count} samples stored from its spool by {by}",
        summary=RunSummary(), details=run.record.details)


def replay_all(store: Store, root: Path, by: str) -> tuple[list[Replayed], list[str]]:
    """Every spool of ``store`` under ``root`` whose harness is gone, into it; and
    what could not be read or stored (each naming its spool)."""
    done, problems = [], []
    for path in spooling.pending(root):
        try:
            head = spooling.head(path)
            if head.store == store.identity() and not spooling.writer_alive(head.owner) \
                    and (r := replay(store, path, by)) is not None:
                done.append(r)
        except (OSError, ValueError, StoreError) as e:
            problems.append(f"{path}: {e}")
    return done, problems


def replay_named(store: Store, paths: list[Path], by: str
                 ) -> tuple[list[Replayed], list[str]]:
    """The spools named (a run's folder or its spool file) into ``store``."""
    done, problems = [], []
    for path in paths:
        spool = path / spooling.NAME if path.is_dir() else path
        try:
            r = replay(store, spool, by)
        except (OSError, ValueError, StoreError) as e:
            problems.append(f"{spool}: {getattr(e, 'strerror', None) or e}")
            continue
        if r is None:
            problems.append(f"{spool}: its harness still writes it, or another stores it "
                            "now")
        else:
            done.append(r)
    return done, problems


def waiting(store: Store) -> list[str]:
    """A line for each run of ``store`` that waits in its spool."""
    out = []
    for path in spooling.pending(store.artifacts_root()):
        try:
            head = spooling.head(path)
        except (OSError, ValueError, StoreError) as e:
            out.append(f"{path}: unreadable spool ({e})")
            continue
        if head.store == store.identity():
            out.append(f"run {head.record.run_id} waits in its spool {path}: 'harness store "
                       "replay-spool' stores it")
    return out


def ended_in_spool(store: Store, run_id: str) -> str | None:
    """How the spool of ``run_id`` says the run ended (its status), if it waits in one
    that holds its end: its harness ended it, and the store could not take that."""
    path = store.artifacts_root() / "runs" / run_id / spooling.NAME
    try:
        run = spooling.read(path)
    except (OSError, ValueError, StoreError):
        return None
    if run.store != store.identity() or run.end is None:
        return None
    return run.end.status
