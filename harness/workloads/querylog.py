"""A DBA's capture, whichever log it is: a general log when its first lines are a
general log's command lines, else a slow log (which refuses a file that is neither).
A general log whose tabs became spaces (copied through a terminal or an editor) is
refused by name: both logs open with the same banner, and it would otherwise read as a
slow log of no statement."""
from __future__ import annotations

import re
from pathlib import Path

from ..errors import InputError
from .generallog import GeneralLog, looks_general
from .slowlog import SNIFF_LINES, CapturedLog, SlowLog, first_lines_match, open_bytes

__all__ = ["CapturedLog", "open_log"]

# A general log's command line with spaces where the server wrote tabs.
_UNTABBED = re.compile(rb"(?:\d{4}-\d\d-\d\dT\S+|\d{6} +\d+:\d\d:\d\d)? +\d+ "
                       rb"(?:Query|Connect|Quit|Init DB|Execute|Prepare|Close stmt) +\S")
_SLOW_HEADER = re.compile(rb"# (?:Time|User@Host|Thread_id|Query_time):")


def open_log(path: Path) -> CapturedLog:
    with open_bytes(path) as f:
        general = first_lines_match(f, looks_general)
        untabbed = not general and first_lines_match(f, lambda line: _UNTABBED.match(line)
                                                     is not None)
        slow = untabbed and first_lines_match(f, lambda line: _SLOW_HEADER.match(line)
                                              is not None)
    if untabbed and not slow:
        raise InputError(f"{path}: a general query log whose tab after each thread id is "
                         "gone (spaces instead: copied through a terminal or an editor?); "
                         f"its first {SNIFF_LINES} lines have no '<time>\\t<id> Command\\t"
                         "...' line: give the log as the server wrote it")
    return GeneralLog(path) if general else SlowLog(path)
