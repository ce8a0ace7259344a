"""The results store: runs, time series samples (in compressed chunks) and events.

``open_store(url)`` takes any SQLAlchemy URL; ``None`` means the embedded default,
a SQLite file under ``results/`` that needs no server.
"""
from __future__ import annotations

from .db import Sample, SampleWriter, Series, Store, default_url, open_store
from .event import Event
from .finding import Finding
from .reader import RunReader
from .run import RunRecord, StoredRun
from .summary import RunSummary

__all__ = ["Event", "Finding", "RunReader", "RunRecord", "RunSummary", "Sample", "SampleWriter",
           "Series", "Store", "StoredRun", "default_url", "open_store"]
