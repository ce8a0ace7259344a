"""A DBA's capture, whichever log it is: a general log when its first lines are a
general log's command lines, else a slow log (which refuses a file that is neither)."""
from __future__ import annotations

from pathlib import Path

from .generallog import GeneralLog, looks_general
from .slowlog import CapturedLog, SlowLog, first_lines_match, open_bytes

__all__ = ["CapturedLog", "open_log"]


def open_log(path: Path) -> CapturedLog:
    with open_bytes(path) as f:
        general = first_lines_match(f, looks_general)
    return GeneralLog(path) if general else SlowLog(path)
