"""What reports and analysis read of a results store: its runs, their series, events
and files. ``Store`` is one; a test's stand-in may be another. Nothing here writes."""
from __future__ import annotations

from pathlib import Path
from typing import Protocol

from .db import Series
from .event import Event
from .run import StoredRun


class RunReader(Protocol):
    def runs(self, scenario: str | None = None, run_set: str | None = None,
             since: str | None = None) -> list[StoredRun]: ...

    def get_run(self, run_id: str) -> StoredRun | None: ...

    def series(self, run_id: str, source: str | None = None,
               metric: str | None = None) -> list[Series]: ...

    def events(self, run_id: str) -> list[Event]: ...

    def artifact(self, run_id: str, name: str) -> bytes | None: ...

    def artifacts_root(self) -> Path: ...
