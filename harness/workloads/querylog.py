"""A DBA's capture, whichever log it is: a general log when its first lines are a
general log's command lines, else a slow log (which refuses a file that is neither)."""
from __future__ import annotations

from pathlib import Path

from .generallog import GeneralLog, looks_general
from .slowlog import SNIFF_LINES, CapturedLog, SlowLog, open_bytes

__all__ = ["CapturedLog", "open_log"]


def open_log(path: Path) -> CapturedLog:
    with open_bytes(path) as f:
        for n, line in enumerate(f):
            if n >= SNIFF_LINES or b"\0" in line:
                break
            if looks_general(line.rstrip(b"\r\n")):
                return GeneralLog(path)
    return SlowLog(path)
