"""A /proc file read and parsed at every tick: on this machine, or on a lab host over
its connection (the file printed there once per interval). The base of the /proc
collectors."""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from .. import proc
from .base import CollectorContext, Point, PolledCollector, Unsupported

_BLOCK_END = "--harness-block-end--"


def elsewhere(ctx: CollectorContext) -> str:
    return (f"mysqld runs on {ctx.remote_host}, and this collector reads this machine's "
            "OS")


class ProcFile(PolledCollector):
    """A /proc file read and parsed at every tick."""

    path = ""

    @staticmethod
    def parse(text: str) -> list[Point]:
        raise NotImplementedError

    stream: proc.LineStream | None = None

    def setup(self) -> None:
        if self.ctx.remote_host and self.ctx.remote is None:
            raise Unsupported(elsewhere(self.ctx))
        if self.ctx.remote is not None:
            # The file read there once per interval, over one connection.
            self._block: list[str] = []
            self._latest: str | None = None
            every = max(1, int(self.interval_s))
            self.stream = proc.LineStream(self.ctx.remote.wrap([
                "sh", "-c", f"while :; do cat {self.path}; echo {_BLOCK_END}; "
                            f"sleep {every}; done"]), self._on_line,
                what=f"{self.name} on {self.ctx.remote.where}", grace_s=1.0)
            self.stream.__enter__()
            self.ctx.notes.append(f"{self.name}: sampled on {self.ctx.remote.where} over "
                                  "its connection")

    def _on_line(self, line: str) -> None:
        if line.strip() == _BLOCK_END:
            self._latest, self._block = "".join(self._block), []
        else:
            self._block.append(line if line.endswith("\n") else line + "\n")

    def collect(self) -> Iterable[Point]:
        if self.stream is None:
            return self.parse(Path(self.path).read_text())
        return self.parse(self._latest) if self._latest is not None else []

    def teardown(self) -> None:
        if self.stream is not None:
            self.stream.__exit__(None, None, None)
