"""What a replay measured per query digest, typed: its statements, their time and
share, latency percentiles, errors by code and, with checksums on, its results'
checksum and sample. The plugin writes each digest from :class:`Digest` and reads a
run's back through :meth:`ReplayFigures.of`."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from ..jsonvalue import JsonDict
from ..store import RunSummary

__all__ = ["Digest", "ReplayFigures"]


class Digest(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    fingerprint: str
    count: int
    rows: int = 0
    errors: dict[str, int] = {}  # by the server's error code
    total_s: float = 0.0
    share: float = 0.0  # of the measured part's statement time
    p50_ms: float | None = None
    p95_ms: float | None = None
    p99_ms: float | None = None
    example: str | None = None
    # checksums: true
    checksum: str | None = None
    checked: int | None = None
    checksum_sample: dict[str, tuple[str, str]] | None = None

    @property
    def mean_ms(self) -> float:
        return self.total_s * 1000 / self.count if self.count else 0.0

    def to_json(self) -> JsonDict:
        """As a run's summary keeps it: the checksum fields only where they were kept."""
        return self.model_dump(mode="json", exclude={
            k for k in ("checksum", "checked", "checksum_sample") if getattr(self, k) is None})


class ReplayFigures(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    digests: dict[str, Digest] = {}  # the top ones by time

    @classmethod
    def of(cls, summary: RunSummary) -> ReplayFigures:
        return cls.model_validate(summary.measured)
