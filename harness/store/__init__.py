"""The results store: runs, time series samples (in compressed chunks) and events.

``open_store(url)`` takes any SQLAlchemy URL; ``None`` means the embedded default,
a SQLite file under ``results/`` that needs no server.

The names below are loaded when first used, so that a module of the package that needs
none of them (``listing``: ``harness runs`` at once) loads no SQLAlchemy.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .db import Sample, SampleWriter, Series, Store, open_store
    from .event import Event
    from .finding import Finding
    from .reader import RunReader
    from .run import RunRecord, StoredRun
    from .summary import RunSummary
    from .url import default_url

_WHERE = {"Sample": "db", "SampleWriter": "db", "Series": "db", "Store": "db",
          "open_store": "db", "default_url": "url", "Event": "event", "Finding": "finding",
          "RunReader": "reader", "RunRecord": "run", "StoredRun": "run",
          "RunSummary": "summary"}

__all__ = ["Event", "Finding", "RunReader", "RunRecord", "RunSummary", "Sample", "SampleWriter",
           "Series", "Store", "StoredRun", "default_url", "open_store"]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
