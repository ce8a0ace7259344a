"""The sysbench client's split of a captured log: every statement of a session in one
client's file, in its captured order, after the session's connect and with its digest's
number; a Quit closes the session and its next statement connects again. Read back as
replay.lua reads it. (The replay itself runs on a real server in
tests/integration/test_own_workload.py.)"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from pydantic import ValidationError

from harness import locks
from harness.workloads.fingerprint import fingerprint
from harness.workloads.querylog import open_log
from harness.workloads.replay import ReplayWorkload, Tally
from harness.workloads.replay_sysbench import SPLIT_LOCK, split_log

DATA = Path(__file__).parent.parent / "data"


def _records(path: Path) -> list[tuple[str, int, int | None, bytes]]:
    """(kind, session, digest number or None, body) as replay.lua reads them."""
    out = []
    with open(path, "rb") as f:
        while header := f.readline():
            kind, session, *rest = header.decode().split()
            n = int(rest[-1]) if kind != "X" else 0
            body = f.read(n) if kind != "X" else b""
            if kind != "X":
                assert f.read(1) == b"\n"
            out.append((kind, int(session), int(rest[0]) if kind == "Q" else None, body))
    return out


@pytest.mark.parametrize("name", ["slowlog-mysql-5.7.29.log", "generallog-mariadb-10.11.log"])
def test_each_session_is_in_one_file_in_its_order_after_its_connect(name, tmp_path,
                                                                    monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path))
    entries = list(open_log(DATA / name))
    split = split_log(iter(entries), 3, "sbtest", Tally(), lambda _m: None)
    try:
        files = [_records(split.folder / f"client-{k}.bin") for k in range(3)]
    finally:
        shutil.rmtree(split.folder)
    by_session: dict[int, list[tuple[str, int | None, bytes]]] = {}
    for k, records in enumerate(files):
        for kind, session, d, body in records:
            assert session % 3 == k, "a session always on the same client"
            by_session.setdefault(session, []).append((kind, d, body))
    statements = [e for e in entries if not e.admin]
    assert split.statements == len(statements)
    for session, records in by_session.items():
        assert records[0][0] == "C", "a session connects before its first statement"
        mine = [e for e in statements if e.session == session]
        sent = [r for r in records if r[0] == "Q"]
        assert [r[2].decode("utf-8", "surrogateescape") for r in sent] == [e.sql for e in mine]
        assert [split.digests[r[1]][0] for r in sent] == [fingerprint(e.sql) for e in mine]
        # after a quit, the next statement connects again
        kinds = [r[0] for r in records]
        for i, kind in enumerate(kinds[:-1]):
            if kind == "X":
                assert kinds[i + 1] == "C"
    assert len({fp for fp, _ in split.digests}) == len(split.digests)


def test_the_sysbench_client_cannot_pace_or_checksum():
    with pytest.raises(ValidationError, match="client: sysbench replays as fast as possible"):
        ReplayWorkload(kind="replay", database="d", log="x.log", client="sysbench", speed=1)
    assert ReplayWorkload(kind="replay", database="d", log="x.log").compiled()
    assert not ReplayWorkload(kind="replay", database="d", log="x.log",
                              checksums=True).compiled()
    assert not ReplayWorkload(kind="replay", database="d", log="x.log", speed=2).compiled()


def test_a_split_left_by_a_killed_harness_is_removed_by_the_next(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path))
    orphan = tmp_path / "replay" / "split-999999999-abc"  # no such process
    # a pid the kernel gave again (ours): nobody holds its split, so it is an orphan too
    reused = tmp_path / "replay" / f"split-{os.getpid()}-ghi"
    live = tmp_path / "replay" / "split-999999998-def"  # held by a run (this one)
    for d in (orphan, reused, live):
        d.mkdir(parents=True)
    held = locks.try_hold(live / SPLIT_LOCK)
    try:
        split = split_log(iter(open_log(DATA / "slowlog-mariadb-10.11.log")), 2, "sbtest",
                          Tally(), lambda _m: None)
    finally:
        os.close(held)
    assert not orphan.exists() and not reused.exists() and live.exists()
    assert split.folder.name.startswith(f"split-{os.getpid()}-") and split.statements > 0
    # the new split is held while in use: another run leaves it alone
    assert locks.try_hold(split.folder / SPLIT_LOCK) is None
    split.remove()
    assert not split.folder.exists()
