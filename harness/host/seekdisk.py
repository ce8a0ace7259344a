"""A disk that charges seeks: a hard drive's service time, in front of a fast one.

A blkio throttle prices every request alike: a random 16 KB read and a read-ahead
request that continues the last one cost one IO each. A hard drive charges the first a
seek and a half rotation (~8 ms on a 7,200 rpm SATA disk) and the second only its
transfer (~0.1 ms at 120 MB/s). The posts' experiments ran on such disks, and their
findings live in that difference: a scan's read-ahead is cheap, the point selects that
wait behind it are not.

The model, one actuator serving requests in arrival order (a disk without command
queueing, behind the loop device's single queue): a request that starts where the last
one ended costs its transfer time (``size / mbps``); one further ahead costs the time
for the platter to pass over the gap, at most a seek; any other costs ``seek_ms``. A
request completes at ``max(now, when the disk is free) + its service time``; its thread
does the real IO on the backing file and sleeps until then. A reply later than the model
says (the real IO took longer, or the thread woke late) is the model's error, measured
(``late_us``).

How it is mounted (``SeekDisk``): this module is the FUSE daemon of one file (it speaks
the kernel's FUSE protocol on /dev/fuse itself: no libfuse, standard library only);
every open of it is direct IO, so each request of a loop device on that file reaches
the model; ext4 on the loop device holds the datadir. The model is off (requests pass
straight through) until the harness turns it on for the measured part (SIGUSR1; SIGUSR2
off again), so a prepare or a snapshot copy is not slowed. Counters and its own CPU go
to a JSON file on SIGUSR1/SIGUSR2 and at exit.
"""
from __future__ import annotations

import ctypes
import errno
import json
import os
import resource
import signal
import stat
import struct
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from .. import proc  # standard library only, as this module
from ..paths import write_json

# --- the model ----------------------------------------------------------------------------

# Drives of the posts' era (average seek plus half a rotation, sequential rate).
PROFILES: dict[str, tuple[float, float]] = {
    "sata-7200": (8.0, 120.0),    # 7,200 rpm SATA: 4.2 ms half rotation + ~4 ms seek
    "sas-15k": (3.5, 200.0),      # 15,000 rpm SAS: 2 ms + 1.5 ms
    "laptop-5400": (12.0, 90.0),  # 5,400 rpm 2.5": 5.6 ms + ~6 ms
}


@dataclass(frozen=True)
class Geometry:
    seek_ms: float
    mbps: float


class Actuator:
    """One head: when each request completes, in arrival order (thread-safe)."""

    def __init__(self, g: Geometry):
        self.seek_s = g.seek_ms / 1000
        self.bytes_per_s = g.mbps * 1_000_000
        self.on = False
        self.lock = threading.Lock()
        self.free_at = 0.0
        self.head = 0
        self.counts = {"requests": 0, "seeks": 0, "bytes": 0, "busy_s": 0.0,
                       "late_us_sum": 0.0, "late_us_max": 0.0, "passthrough": 0}

    def service_s(self, offset: int, size: int) -> tuple[float, bool]:
        """(service time, whether it seeks) of a request at ``offset`` after the last."""
        gap = offset - self.head
        transfer = size / self.bytes_per_s
        if gap == 0:
            return transfer, False
        if 0 < gap and gap / self.bytes_per_s < self.seek_s:
            return gap / self.bytes_per_s + transfer, False
        return self.seek_s + transfer, True

    def admit(self, offset: int, size: int) -> float | None:
        """When this request completes (monotonic), or None with the model off."""
        with self.lock:
            if not self.on:
                self.counts["passthrough"] += 1
                self.head = offset + size
                return None
            svc, seeks = self.service_s(offset, size)
            done = max(time.monotonic(), self.free_at) + svc
            self.free_at, self.head = done, offset + size
            c = self.counts
            c["requests"] += 1
            c["seeks"] += seeks
            c["bytes"] += size
            c["busy_s"] += svc
            return done

    def late(self, us: float) -> None:
        with self.lock:
            self.counts["late_us_sum"] += us
            self.counts["late_us_max"] = max(self.counts["late_us_max"], us)


# --- the FUSE protocol (include/uapi/linux/fuse.h) -----------------------------------------

IN_HEADER = struct.Struct("<IIQQIIIHH")  # len opcode unique nodeid uid gid pid extlen pad
OUT_HEADER = struct.Struct("<IiQ")        # len error unique
ATTR = struct.Struct("<QQQQQQIIIIIIIIII")  # fuse_attr, 88 bytes
ROOT, FILE = 1, 2
NAME = b"disk"
LOOKUP, FORGET, GETATTR, SETATTR, OPEN, READ, WRITE = 1, 2, 3, 4, 14, 15, 16
STATFS, RELEASE = 17, 18
FSYNC, FLUSH, INIT, OPENDIR, READDIR, RELEASEDIR, FSYNCDIR = 20, 25, 26, 27, 28, 29, 30
ACCESS, INTERRUPT, DESTROY, BATCH_FORGET = 34, 36, 38, 42
NO_REPLY = (FORGET, INTERRUPT, BATCH_FORGET)
FOPEN_DIRECT_IO = 1
FUSE_ASYNC_READ, FUSE_BIG_WRITES, FUSE_MAX_PAGES = 1 << 0, 1 << 5, 1 << 22
MAX_WRITE = 1 << 20
FATTR_SIZE = 1 << 3


class Daemon:
    """The FUSE file system of one file, ``disk``, backed by ``backing``."""

    def __init__(self, fd: int, backing: Path, actuator: Actuator):
        self.fd = fd
        self.backing = os.open(backing, os.O_RDWR)
        self.act = actuator
        self.minor = 0

    def _attr(self, node: int) -> bytes:
        now = int(time.time())
        if node == ROOT:
            return ATTR.pack(ROOT, 0, 0, now, now, now, 0, 0, 0, stat.S_IFDIR | 0o755, 2,
                             0, 0, 0, 4096, 0)
        size = os.fstat(self.backing).st_size
        return ATTR.pack(FILE, size, size // 512, now, now, now, 0, 0, 0,
                         stat.S_IFREG | 0o600, 1, 0, 0, 0, 4096, 0)

    def serve(self) -> None:
        """Requests until the file system is unmounted (one thread of several)."""
        while True:
            try:
                buf = os.read(self.fd, MAX_WRITE + 4096)
            except OSError as e:
                if e.errno in (errno.EINTR, errno.EAGAIN):
                    continue
                if e.errno == errno.ENODEV:  # unmounted
                    return
                raise
            length, opcode, unique, node, *_ = IN_HEADER.unpack_from(buf)
            body = memoryview(buf)[IN_HEADER.size:length]
            if opcode in NO_REPLY:
                continue
            try:
                err, out = self.handle(opcode, node, body)
            except OSError as e:
                err, out = -(e.errno or errno.EIO), b""
            self._reply(unique, err, out)
            if opcode == DESTROY:
                return

    def _reply(self, unique: int, err: int, out: bytes) -> None:
        try:
            os.write(self.fd, OUT_HEADER.pack(OUT_HEADER.size + len(out), err, unique) + out)
        except OSError as e:
            if e.errno not in (errno.ENOENT, errno.ENODEV):  # interrupted, or unmounted
                raise

    def handle(self, op: int, node: int, body: memoryview) -> tuple[int, bytes]:
        """(error, reply body) for one request."""
        if op in (RELEASE, RELEASEDIR, FLUSH, FSYNCDIR, ACCESS, DESTROY):
            return 0, b""
        fn = {READ: self._read, WRITE: self._write, INIT: self._init, LOOKUP: self._lookup,
              GETATTR: self._getattr, SETATTR: self._setattr, OPEN: self._open,
              OPENDIR: self._open, READDIR: self._readdir, STATFS: self._statfs,
              FSYNC: self._fsync}.get(op)
        if fn is None:
            return -errno.ENOSYS, b""
        return fn(op, node, body)

    def _lookup(self, op: int, node: int, body: memoryview) -> tuple[int, bytes]:
        if node != ROOT or bytes(body).rstrip(b"\0") != NAME:
            return -errno.ENOENT, b""
        return 0, struct.pack("<QQQQII", FILE, 0, 3600, 3600, 0, 0) + self._attr(FILE)

    def _getattr(self, op: int, node: int, body: memoryview) -> tuple[int, bytes]:
        return 0, struct.pack("<QII", 1, 0, 0) + self._attr(node)

    def _setattr(self, op: int, node: int, body: memoryview) -> tuple[int, bytes]:
        valid, _pad, _fh, size = struct.unpack_from("<IIQQ", body)
        if valid & FATTR_SIZE:
            os.ftruncate(self.backing, size)
        return self._getattr(op, node, body)

    def _open(self, op: int, node: int, body: memoryview) -> tuple[int, bytes]:
        return 0, struct.pack("<QII", 0, FOPEN_DIRECT_IO if op == OPEN else 0, 0)

    def _statfs(self, op: int, node: int, body: memoryview) -> tuple[int, bytes]:
        blocks = os.fstat(self.backing).st_size // 4096
        return 0, struct.pack("<QQQQQIIII6I", blocks, 0, 0, 1, 0, 4096, 255, 4096, 0,
                              *[0] * 6)

    def _fsync(self, op: int, node: int, body: memoryview) -> tuple[int, bytes]:
        os.fdatasync(self.backing)
        return 0, b""

    def _init(self, op: int, node: int, body: memoryview) -> tuple[int, bytes]:
        major, minor, readahead, _flags = struct.unpack_from("<IIII", body)
        self.minor = min(minor, 31)
        flags = FUSE_ASYNC_READ | FUSE_BIG_WRITES | FUSE_MAX_PAGES
        if self.minor < 23:
            return 0, struct.pack("<IIIIHHI", 7, self.minor, readahead, flags, 16, 12,
                                  MAX_WRITE)
        return 0, struct.pack("<IIIIHHIIHHI7I", 7, self.minor, readahead, flags, 16, 12,
                              MAX_WRITE, 1, MAX_WRITE // 4096, 0, 0, *[0] * 7)

    def _readdir(self, op: int, node: int, body: memoryview) -> tuple[int, bytes]:
        _fh, offset, _size = struct.unpack_from("<QQI", body)
        out = b""
        for i, (ino, name, kind) in enumerate(((ROOT, b".", 4), (ROOT, b"..", 4),
                                               (FILE, NAME, 8)), 1):
            if i <= offset:
                continue
            entry = struct.pack("<QQII", ino, i, len(name), kind) + name
            out += entry + b"\0" * (-len(entry) % 8)
        return 0, out

    def _read(self, op: int, node: int, body: memoryview) -> tuple[int, bytes]:
        _fh, offset, size = struct.unpack_from("<QQI", body)
        done = self.act.admit(offset, size)
        data = os.pread(self.backing, size, offset)
        self._until(done)
        return 0, data

    def _write(self, op: int, node: int, body: memoryview) -> tuple[int, bytes]:
        _fh, offset, size = struct.unpack_from("<QQI", body)
        done = self.act.admit(offset, size)
        n = os.pwrite(self.backing, body[40:40 + size], offset)
        self._until(done)
        return 0, struct.pack("<II", n, 0)

    def _until(self, done: float | None) -> None:
        """Sleep until the model's completion time (the real IO, done first, is inside
        it); how late the reply is beyond it is the model's error."""
        if done is None:
            return
        delay = done - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        self.act.late(max(0.0, time.monotonic() - done) * 1e6)


# --- the disk, as the harness mounts it --------------------------------------------------

STATE = "seekdisk.json"  # in the disk's folder: what to take down (also after a SIGKILL)


class SeekDiskError(Exception):
    """The model disk could not be set up (named step and why)."""


def _run(argv: list[str], what: str) -> str:
    r = proc.run(argv, timeout=300, check=False)
    if r.returncode:
        raise SeekDiskError(f"seek disk: {what}: {' '.join(argv)}: "
                            f"{(r.stderr or r.stdout).strip()}")
    return r.stdout.strip()


class SeekDisk:
    """A model disk in ``where``: the daemon's FUSE mount (``fuse/disk``, backed by the
    sparse ``backing.img``), a loop device on that file and ext4 on the loop device,
    mounted at ``fs``. :meth:`attach`, :meth:`model` on and off, :meth:`detach` (or
    :func:`teardown` of the folder, after a harness was killed)."""

    def __init__(self, where: Path, geometry: Geometry, size: int):
        self.where, self.geometry, self.size = where, geometry, size
        self.fs = where / "fs"
        self.state: dict[str, object] = {}
        self.daemon: subprocess.Popen[bytes] | None = None

    def _save(self, **kw: object) -> None:
        self.state.update(kw)
        write_json(self.where / STATE, self.state)

    def attach(self) -> Path:
        """Everything up, the model off; the ext4 mount point."""
        fuse = self.where / "fuse"
        for d in (self.where, fuse, self.fs):
            d.mkdir(parents=True, exist_ok=True)
        backing = self.where / "backing.img"
        with open(backing, "wb") as f:
            f.truncate(self.size)
        try:
            self._start_daemon(fuse, backing)
            loop = _run(["losetup", "--find", "--show", str(fuse / NAME.decode())],
                        "a loop device on the model's file")
            self._save(loop=loop)
            _run(["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0",
                  loop], "ext4 on it")
            _run(["mount", "-o", "noatime", loop, str(self.fs)], "mounting it")
            self._save(fs=str(self.fs))
        except BaseException:
            self.detach()
            raise
        return self.fs

    def _start_daemon(self, fuse: Path, backing: Path) -> None:
        """The daemon in a session of its own (a Ctrl-C of the harness is not its), not
        dying with the harness: a killed harness's mysqld may still be writing, and the
        next harness takes the disk down (:func:`teardown`)."""
        g = self.geometry
        log = self.where / "daemon.log"
        self.daemon = proc.spawn_daemon(
            [sys.executable, "-m", "harness.host.seekdisk", fuse, backing, str(g.seek_ms),
             str(g.mbps), self.where / "stats.json"], log, outlive=True)
        self._save(daemon=self.daemon.pid, fuse=str(fuse))
        deadline = time.monotonic() + 30
        while not os.path.ismount(fuse):
            if self.daemon.poll() is not None or time.monotonic() > deadline:
                raise SeekDiskError("seek disk: the FUSE daemon did not start: "
                                    + log.read_text(errors="replace").strip()[-2000:])
            time.sleep(0.02)

    def model(self, on: bool) -> dict[str, float]:
        """The model on (the measured part) or off; the daemon's counters until now.
        Before it goes on, what the file system still holds dirty (a snapshot just
        copied in) is written out, so the measured part does not pay for it."""
        if on:
            _syncfs(self.fs)
        pid = int(self.state["daemon"])  # type: ignore[call-overload]
        stats = self.where / "stats.json"
        before = stats.stat().st_mtime_ns if stats.exists() else 0
        os.kill(pid, signal.SIGUSR1 if on else signal.SIGUSR2)
        if not proc.wait_until(lambda: stats.exists() and stats.stat().st_mtime_ns != before,
                               5, 0.01):
            raise SeekDiskError(f"seek disk: the daemon (pid {pid}) did not answer")
        return dict(json.loads(stats.read_text()))

    def detach(self) -> list[str]:
        """Everything down; what was taken down."""
        done = teardown(self.where)
        if self.daemon is not None:
            try:
                self.daemon.wait(10)
            except subprocess.TimeoutExpired:
                self.daemon.kill()
                self.daemon.wait(10)
            self.daemon = None
        return done


def _syncfs(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        if ctypes.CDLL(None, use_errno=True).syncfs(fd) != 0:
            e = ctypes.get_errno()
            raise SeekDiskError(f"seek disk: syncfs {path}: {os.strerror(e)}")
    finally:
        os.close(fd)


def unavailable() -> str | None:
    """Why this host cannot run a model disk, or None."""
    import shutil
    if os.geteuid() != 0:
        return "it mounts file systems: the harness must run as root"
    if not Path("/dev/fuse").exists():
        return "this kernel has no /dev/fuse (modprobe fuse)"
    missing = [t for t in ("losetup", "mkfs.ext4", "mount", "umount") if not shutil.which(t)]
    if missing:
        return f"{', '.join(missing)} not found (util-linux, e2fsprogs)"
    return None


def measured(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """What the model did between two of its counters: per request, per second."""
    d = {k: after.get(k, 0.0) - before.get(k, 0.0) for k in
         ("requests", "passthrough", "seeks", "bytes", "busy_s", "late_us_sum", "cpu_s",
          "wall_s")}
    secs = max(d["wall_s"], 1e-9)
    n = max(d["requests"] + d["passthrough"], 1)  # the CPU served both
    return {"requests": int(d["requests"]), "passthrough": int(d["passthrough"]),
            "seeks": int(d["seeks"]),
            "seeks_per_s": round(d["seeks"] / secs, 1),
            "mb_per_s": round(d["bytes"] / secs / 1e6, 2),
            "busy": round(d["busy_s"] / secs, 3),
            "late_us_mean": round(d["late_us_sum"] / max(d["requests"], 1), 1),
            "late_us_max": round(after.get("late_us_max", 0.0), 1),
            "cpu_us_per_request": round(d["cpu_s"] / n * 1e6, 1),
            "cpu_share": round(d["cpu_s"] / secs, 4)}


def _umount(path: str) -> bool:
    """Unmount ``path`` (lazily if it is busy); whether it was mounted."""
    if not os.path.ismount(path):
        return False
    if proc.run(["umount", path], timeout=60, check=False).returncode:
        proc.run(["umount", "-l", path], timeout=60, check=False)
    return True


def teardown(where: Path) -> list[str]:
    """Take down the model disk a :data:`STATE` file in ``where`` describes: ext4, the
    loop device, the FUSE mount (which ends the daemon), the daemon if it lingers."""
    try:
        state = json.loads((where / STATE).read_text())
    except (OSError, ValueError):
        return []
    done = []
    if state.get("fs") and _umount(str(state["fs"])):
        done.append(f"unmounted {state['fs']}")
    loop = state.get("loop")
    if loop and proc.run(["losetup", "-d", loop], timeout=60, check=False).returncode == 0:
        done.append(f"detached {loop}")
        _wait_released(str(loop))
    if state.get("fuse") and _umount(str(state["fuse"])):
        done.append(f"unmounted {state['fuse']}")
    pid = state.get("daemon")
    if pid and not proc.wait_until(lambda: not _is_daemon(int(pid)), 5):
        os.kill(int(pid), signal.SIGKILL)
        done.append(f"killed the model's daemon (pid {pid})")
    (where / STATE).unlink(missing_ok=True)
    return done


def _wait_released(loop: str, timeout_s: float = 10.0) -> None:
    """Until the kernel lets go of the loop device's file (a detach is asynchronous): the
    FUSE mount is not busy then, and unmounting it ends the daemon."""
    backing = Path("/sys/block") / Path(loop).name / "loop" / "backing_file"
    proc.wait_until(lambda: not backing.exists(), timeout_s, 0.02)


def _is_daemon(pid: int) -> bool:
    return proc.runs(pid, "seekdisk")


# --- the daemon process --------------------------------------------------------------------

MS_NOSUID, MS_NODEV = 2, 4
THREADS = 8


def mount_fuse(mountpoint: Path) -> int:
    """/dev/fuse opened and mounted at ``mountpoint``; the fd to serve it on."""
    fd = os.open("/dev/fuse", os.O_RDWR)
    libc = ctypes.CDLL(None, use_errno=True)
    opts = f"fd={fd},rootmode=40000,user_id=0,group_id=0,allow_other,max_read={MAX_WRITE}"
    if libc.mount(b"seekdisk", str(mountpoint).encode(), b"fuse.seekdisk",
                  MS_NOSUID | MS_NODEV, opts.encode()) != 0:
        e = ctypes.get_errno()
        os.close(fd)
        raise OSError(e, f"mounting FUSE at {mountpoint}: {os.strerror(e)}")
    return fd


def _stats(act: Actuator, out: Path, t0: float) -> None:
    r = resource.getrusage(resource.RUSAGE_SELF)
    with act.lock:
        c = dict(act.counts, model_on=act.on)
    c["cpu_s"] = r.ru_utime + r.ru_stime
    c["wall_s"] = time.monotonic() - t0
    write_json(out, c)


def main(argv: list[str]) -> int:
    """``seekdisk MOUNTPOINT BACKING SEEK_MS MBPS STATS``: serve until unmounted; prints
    "ready" once mounted."""
    mnt, backing, stats = Path(argv[0]), Path(argv[1]), Path(argv[4])
    act = Actuator(Geometry(float(argv[2]), float(argv[3])))
    t0 = time.monotonic()

    def switch(on: bool) -> None:
        act.on = on
        _stats(act, stats, t0)
    signal.signal(signal.SIGUSR1, lambda *_: switch(True))
    signal.signal(signal.SIGUSR2, lambda *_: switch(False))
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # unmounting ends it, not a signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    daemon = Daemon(mount_fuse(mnt), backing, act)
    print("ready", flush=True)  # into daemon.log
    threads = [threading.Thread(target=daemon.serve, daemon=True) for _ in range(THREADS)]
    for t in threads:
        t.start()
    threads[0].join()  # any thread returns once the file system is unmounted
    _stats(act, stats, t0)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
