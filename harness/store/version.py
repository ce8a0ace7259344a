"""The store's format version, in a module of its own: the quick listing reads it
without loading SQLAlchemy (schema.py writes it into ``harness_meta``)."""
from __future__ import annotations

FORMAT_VERSION = 3
