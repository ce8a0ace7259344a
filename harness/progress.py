"""Progress lines on stderr: redrawn in place on a terminal, throttled lines otherwise."""
from __future__ import annotations

import sys
import threading
import time
from typing import TextIO


class Progress:
    def __init__(self, stream: TextIO | None = None, quiet: bool = False,
                 every_s: float = 10.0):
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.quiet = quiet
        self.every_s = every_s
        self.prefix = ""
        self._last = 0.0
        self._width = 0
        self._lock = threading.Lock()

    def update(self, msg: str) -> None:
        """A transient status line (redrawn on a tty, printed every ``every_s`` otherwise)."""
        if self.quiet:
            return
        line = f"{self.prefix}{msg}"
        with self._lock:
            if self.tty:
                pad = max(0, self._width - len(line))
                self.stream.write("\r" + line + " " * pad)
                self._width = len(line)
                self.stream.flush()
            elif time.monotonic() - self._last >= self.every_s:
                self.stream.write(line + "\n")
                self.stream.flush()
                self._last = time.monotonic()

    def log(self, msg: str) -> None:
        """A permanent line."""
        if self.quiet:
            return
        with self._lock:
            if self.tty and self._width:
                self.stream.write("\r" + " " * self._width + "\r")
                self._width = 0
            self.stream.write(msg + "\n")
            self.stream.flush()
            self._last = 0.0
