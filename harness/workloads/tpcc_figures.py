"""What a TPC-C run measured per transaction, typed: how many ran, their share of the
measured part, and their latency percentiles; and the consistency conditions checked
after it. The plugin writes them from these and reads a run's back through
:meth:`TpccFigures.of`."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from ..jsonvalue import JsonDict
from ..store import RunSummary

__all__ = ["TpccFigures", "Transaction"]


class Transaction(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    count: int
    share: float
    p50_ms: float | None = None
    p90_ms: float | None = None
    p95_ms: float | None = None
    p99_ms: float | None = None
    max_ms: float | None = None

    def to_json(self) -> JsonDict:
        return self.model_dump(mode="json")


class TpccFigures(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    tpmc: float | None = None
    nopm: float | None = None
    tps_median: float | None = None
    latency_p95_ms: float | None = None
    transactions: dict[str, Transaction] = {}
    consistency: dict[str, int] = {}  # condition: warehouses or districts that break it

    @classmethod
    def of(cls, summary: RunSummary) -> TpccFigures:
        return cls.model_validate(summary.measured)

    @property
    def broken(self) -> list[str]:
        return [name for name, bad in self.consistency.items() if bad]
