"""Files a user names (a scenario, a my.cnf, a side load's SQL or backup file, a captured
log), opened for what they are before anything is read from them.

Only a regular file is read: a FIFO would hang the reader, a device (``/dev/zero``)
never ends, a directory is not a file. The check is made on the open file itself
(``fstat``), opened without blocking, so nothing changes between the check and the
read. Each kind has a size limit (None: read as a stream, in bounded pieces), and a
refusal names the kind, the path as given and as resolved, and why - never the file's
contents.
"""
from __future__ import annotations

import fcntl
import os
import stat
from pathlib import Path
from typing import BinaryIO

from ..errors import InputError
from ..exits import Exit

MiB = 1 << 20
LIMITS: dict[str, int | None] = {
    "scenario": 1 * MiB, "my.cnf": 1 * MiB, "sql file": 64 * MiB,
    "backup file": None, "captured log": None, "input file": None,
}
_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a directory"),
          (stat.S_ISSOCK, "a socket"))


class InputFileError(InputError):
    """A file named as input that is not one, or too large for its kind (what was given
    is wrong: exit 8); ``missing``: not there or not readable (nothing checked: 9)."""

    def __init__(self, what: str, path: Path, why: str, missing: bool = False):
        self.why = why
        self.exit_code = Exit.CANNOT_CHECK if missing else Exit.FINDING
        shown = f"{path}" + (f" (resolved: {real})" if (real := _resolved(path)) != str(path)
                             else "")
        super().__init__(f"{what} {shown}: {why}")


def _resolved(path: Path) -> str:
    try:
        return str(path.resolve())
    except (OSError, RuntimeError):
        return str(path)


def _size_text(n: int) -> str:
    return f"{n / MiB:.1f} MiB" if n >= MiB else f"{n} bytes"


class NotRegular(OSError):
    """An open file that is not a regular file: ``kind`` says what it is."""

    def __init__(self, kind: str):
        super().__init__(f"{kind}, not a regular file")
        self.kind = kind


def open_regular(path: Path, follow: bool = True) -> tuple[BinaryIO, os.stat_result]:
    """``path`` opened for reading, with its ``fstat``, when it is a regular file:
    opened without blocking (a FIFO would), and without following a final link unless
    ``follow``. OSError when it cannot be opened, :class:`NotRegular` when it is not one."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    fd = os.open(path, flags if follow else flags | os.O_NOFOLLOW)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegular(next((name for test, name in _KINDS if test(st.st_mode)),
                                  "not a regular file"))
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        return os.fdopen(fd, "rb"), st
    except BaseException:
        os.close(fd)
        raise


def open_input(path: Path, what: str, limit: int | None = None) -> BinaryIO:
    """``path`` opened for reading when it is a regular file of at most ``limit``
    bytes (default: the kind's limit in LIMITS); else :class:`InputFileError`."""
    limit = LIMITS.get(what) if limit is None else limit
    try:
        f, st = open_regular(path)
    except NotRegular as e:
        raise InputFileError(what, path, str(e)) from None
    except FileNotFoundError:
        raise InputFileError(what, path, "file not found", missing=True) from None
    except OSError as e:
        raise InputFileError(what, path, e.strerror or str(e), missing=True) from None
    if limit is not None and st.st_size > limit:
        f.close()
        raise InputFileError(what, path, f"{_size_text(st.st_size)}, more than the "
                             f"{_size_text(limit)} a {what} may be")
    return f


def read_text(path: Path, what: str, limit: int | None = None, errors: str = "strict"
              ) -> str:
    """A regular UTF-8 text file of at most ``limit`` bytes, read whole (``errors``:
    as for bytes.decode; "replace" for a file whose comments may be in any encoding)."""
    limit = LIMITS.get(what) if limit is None else limit
    with open_input(path, what, limit) as f:
        data = f.read() if limit is None else f.read(limit + 1)
    if limit is not None and len(data) > limit:  # it grew after the check
        raise InputFileError(what, path, f"more than the {_size_text(limit)} a {what} may be")
    try:
        return data.decode("utf-8", errors)
    except UnicodeDecodeError:
        raise InputFileError(what, path, "not a text file (not UTF-8)") from None


def problem(path: Path, what: str, limit: int | None = None) -> str | None:
    """Why ``path`` cannot be read as a ``what`` (None: it can), for validate."""
    try:
        open_input(path, what, limit).close()
    except InputFileError as e:
        return str(e)
    return None
