"""``kind: ssb``: Star Schema Benchmark flights as a side load (on an SSB dataset)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field

from ..model import Ident, SideLoadModel
from ..workloads.ssb import QUERIES, SSB_QUERIES


class SsbLoad(SideLoadModel):
    """SSB queries as a side load: each pass is one flight (``queries`` in order, on
    one connection), each query timed."""

    kind: Literal["ssb"] = "ssb"
    dataset_kind: ClassVar[str | None] = "ssb"
    example: ClassVar[dict[str, Any]] = {"queries": ["Q1.1"], "start": 1}
    database: Ident = "ssb"
    queries: list[Literal[SSB_QUERIES]] = Field(  # type: ignore[valid-type]
        default_factory=lambda: list(SSB_QUERIES), min_length=1)

    def writes(self, base: Path) -> list[str]:
        return []  # the SSB SELECTs

    def dataset_database(self) -> str | None:
        return self.database

    def run_pass(self, load: Any, p: Any) -> None:
        load.queries(p, self.database, [(q, QUERIES[q]) for q in self.queries])


PLUGIN = SsbLoad
