"""What an SSB run measured, typed: its flights (each query's seconds, what the flight
did in the buffer pool), how cold the cold one was, and each query's result
fingerprint. The plugin writes a run's figures from these and reads them back through
:meth:`SsbFigures.of`, whatever harness stored them (a field it lacks takes its
default; one it does not know is left)."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from ..jsonvalue import JsonDict
from ..store import RunSummary

__all__ = ["Cold", "Flight", "QueryTime", "SsbFigures"]


class _Figures(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class QueryTime(_Figures):
    seconds: float
    rows: int = 0
    pages_read: float | None = None  # Innodb_buffer_pool_reads over the query
    read_requests: float | None = None


class Flight(_Figures):
    """One flight: every query once, in order."""

    flight: str  # cold, run1, run2 ...
    seconds: float  # the queries' own, summed
    wall_s: float | None = None
    queries: dict[str, QueryTime] = {}
    pages_read: float | None = None
    read_requests: float | None = None
    read_ahead: float | None = None
    hit_ratio: float | None = None
    made_young: float | None = None
    not_made_young: float | None = None

    def counters(self) -> JsonDict:
        """What the flight did in the buffer pool, as its flight_end event says it."""
        return self.model_dump(mode="json", exclude={"queries"})


class Cold(_Figures):
    """How cold the cold flight really was: measured, not assumed."""

    page_cache_dropped: bool
    page_cache_why_not: str | None = None
    server_uptime_s: float | None = None
    pool_pages_at_start: int = 0
    pool_pages_total: int = 0


class SsbFigures(_Figures):
    queries: list[str] = []
    flights: list[Flight] = []
    cold: Cold | None = None
    cold_s: float | None = None
    warm_s: list[float] = []
    warm_median_s: float | None = None
    digests: dict[str, str] = {}  # each query's result fingerprint

    @classmethod
    def of(cls, summary: RunSummary) -> SsbFigures:
        return cls.model_validate(summary.measured)

    @property
    def warm(self) -> list[Flight]:
        return [f for f in self.flights if f.flight != "cold"]

    def to_json(self) -> JsonDict:
        return self.model_dump(mode="json")
