"""Nothing from an archive runs before its trust is decided. A tarball the catalog pins no
checksum for is refused by `harness servers install FILE` before anything of it is
unpacked or run, with its sha256 to check against the vendor's; with --trust-unpinned its
mysqld is asked what it is as mysqld's unprivileged account, never as root. (The mirror's
own checksum files: tests/integration/test_sandbox.py.)"""
from __future__ import annotations

import hashlib
import io
import json
import os
import pwd
import shutil
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..conftest import MIRROR, harness, seeds

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(os.geteuid() != 0, reason="the unprivileged account "
                                 "exists under root only")]

TOP = "mysql-9.9.9-linux-glibc2.36-x86_64"


@pytest.fixture
def world() -> Iterator[Path]:
    """A folder mysqld's account can reach and write (its marker goes there), and the
    harness's cache beside it."""
    d = Path(tempfile.mkdtemp(prefix="trust-", dir="/tmp"))
    d.chmod(0o777)
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def _tarball(world: Path, leaves: str = "") -> Path:
    """A server tarball whose mysqld, run, writes who ran it (and runs ``leaves``)."""
    script = (f"#!/bin/sh\nid -u >> {world}/ran-as\n{leaves}"
              "echo \"$0  Ver 9.9.9 for Linux on x86_64 (MySQL Community Server - GPL)\"\n")
    path = world / f"{TOP}.tar.gz"
    with tarfile.open(path, "w:gz") as t:
        for name, data, mode in ((f"{TOP}/bin/mysqld", script.encode(), 0o755),
                                 (f"{TOP}/share/english/errmsg.sys", b"msgs", 0o644)):
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), mode
            t.addfile(info, io.BytesIO(data))
    return path


def test_an_unpinned_tarball_is_refused_unrun_and_trusted_runs_unprivileged(world):
    tarball = _tarball(world)
    checksum = hashlib.sha256(tarball.read_bytes()).hexdigest()
    env = {"HARNESS_CACHE": str(world / "cache")}
    p = harness("servers", "install", str(tarball), env=env)
    assert p.returncode == 8, p.stderr
    assert f"nobody pins this file (sha256 {checksum}); nothing of it was unpacked or run" \
        in p.stderr, p.stderr
    assert f"'harness servers install {tarball} --trust-unpinned'" in p.stderr
    assert not (world / "ran-as").exists()  # its mysqld never ran
    downloads = world / "cache" / "downloads"
    assert not downloads.exists() or not list(downloads.iterdir())  # nor was it unpacked
    p = harness("servers", "install", str(tarball), "--trust-unpinned", env=env)
    # trusted: asked what it is as mysqld's account (its first run), then installed as
    # that build (one the catalog does not have), pinned to the checksum it was trusted
    # with; once trusted it is run as any installed build is
    ran_as = [int(x) for x in (world / "ran-as").read_text().split()]
    account = pwd.getpwnam(os.environ.get("HARNESS_MYSQLD_USER", "mysql")).pw_uid
    assert ran_as and set(ran_as) == {account}, ran_as  # every run of it, never uid 0
    assert not list(downloads.glob(".identify-*"))  # its private folder removed
    assert p.returncode == 0, p.stderr
    assert f"installed as mysql-9.9.9, the build its mysqld says it is, trusted as " \
        f"--trust-unpinned asks (sha256 {checksum})" in p.stderr, p.stderr
    built = json.loads((world / "cache/servers/mysql-9.9.9/BUILD.json").read_text())
    assert (built["entry"]["source"], built["sha256"]) == ("file", checksum)
    # given by path again: the build it was installed as, without asking for trust (its
    # stand-in mysqld cannot judge a file: what matters is that it was reached)
    cnf = world / "my.cnf"
    cnf.write_text("[mysqld]\nmax_connections = 10\n")
    again = harness("cnf", "check", str(cnf), "--server", str(tarball), env=env)
    assert "nobody pins" not in again.stderr and "mysql-9.9.9" in again.stdout + \
        again.stderr, again.stdout + again.stderr
    # the same path with other bytes is another file: refused again
    with open(tarball, "ab") as f:
        f.write(b"\0" * 1024)
    other = harness("cnf", "check", str(cnf), "--server", str(tarball), env=env)
    assert other.returncode == 8 and "nobody pins this file" in other.stderr, other.stderr


def _exchange(a: Path, b: Path) -> None:
    """Swap two names at once (renameat2 RENAME_EXCHANGE): each name always holds a
    whole file, one or the other."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    at_fdcwd, rename_exchange = -100, 2
    if libc.renameat2(at_fdcwd, bytes(a), at_fdcwd, bytes(b), rename_exchange) != 0:
        raise OSError(ctypes.get_errno(), "renameat2", str(a))


@pytest.mark.parametrize("name", seeds("percona-5.5.52"))
def test_a_file_swapped_over_the_pinned_one_while_it_installs_never_runs(name, world):
    """The attack on hash-then-reopen: while `servers install FILE` reads a file the
    catalog pins, a writer swaps another tarball (whose mysqld, run, writes who ran it)
    and the genuine one under its name, again and again. Whatever moment the harness
    opens it, what it hashes is what it unpacks: the genuine build is installed, or the
    file is refused unrun; the other's mysqld never runs."""
    import threading

    from harness.server import catalog
    (ours, pin), = catalog.CATALOG[name].mirror_files.items()
    given = world / ours
    shutil.copy(MIRROR / ours, given)
    spare = _tarball(world)
    env = {"HARNESS_CACHE": str(world / "cache")}
    stop = threading.Event()
    swaps = 0

    def swapper() -> None:
        nonlocal swaps
        while not stop.is_set():
            _exchange(given, spare)
            swaps += 1
    outcomes = []
    for _round in range(3):
        t = threading.Thread(target=swapper)
        t.start()
        try:
            p = harness("servers", "install", str(given), env=env, timeout=600)
        finally:
            stop.set()
            t.join()
            stop.clear()
        outcomes.append(p.returncode)
        print(f"round {_round}: exit {p.returncode} after {swaps} swaps")
        assert not (world / "ran-as").exists(), "the swapped-in mysqld ran"
        assert "Traceback" not in p.stderr, p.stderr
        if p.returncode == 0:
            built = json.loads((world / "cache/servers" / name / "BUILD.json").read_text())
            assert built["sha256"] == pin and "Ver 5.5.52-38.3" in built["version_string"], \
                built
            shutil.rmtree(world / "cache/servers" / name)
        else:
            assert p.returncode == 8 and ("nobody pins this file" in p.stderr or
                                          "changed while it was being read" in p.stderr), \
                p.stderr
    assert swaps > 100, swaps


def test_what_a_trusted_tarballs_mysqld_leaves_running_ends_with_the_step(world):
    """Its mysqld forks a process of its own in a new session and exits: every step
    that runs it (asked what it is, then its build read) kills what it left."""
    tarball = _tarball(world, leaves="setsid sleep 987.6 </dev/null >/dev/null 2>&1 &\n")
    env = {"HARNESS_CACHE": str(world / "cache")}
    p = harness("servers", "install", str(tarball), "--trust-unpinned", env=env)
    assert p.returncode == 0, p.stderr
    ran = (world / "ran-as").read_text().split()
    assert len(ran) >= 2, ran  # the identity step and the build's detection at least
    from harness import proc
    left = [argv for _pid, argv in proc.processes() if "987.6" in " ".join(argv)]
    assert left == [], left
