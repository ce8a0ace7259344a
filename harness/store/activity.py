"""What ran beside the main workload in a run, as its summary keeps it: each side
load's passes and volume, each config change, and what each collector did. Stored as
JSON in the shape they always had; read back typed, whatever harness wrote them."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from ..jsonvalue import JsonDict

__all__ = ["Collected", "ConfigChangeRun", "PassRun", "PollStats", "SideLoadRun"]


def _known(cls: type, d: dict[str, Any]) -> dict[str, Any]:
    """Of a stored record, the fields ``cls`` has (a newer harness's others left)."""
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in d.items() if k in names}


@dataclass
class PassRun:
    """One pass of a side load (a dump, one run of its queries)."""

    n: int
    start_s: float
    end_s: float = 0.0
    status: str = "running"  # ok | failed | stopped
    rc: int | None = None
    bytes: int = 0
    rows: int = 0
    error: str | None = None
    # its kind's own: a dump's file, a split's chunks, each query's seconds
    extra: JsonDict = field(default_factory=dict)
    query_seconds: dict[str, float] = field(default_factory=dict)
    queries: int = 0

    @property
    def seconds(self) -> float:
        return round(self.end_s - self.start_s, 3)

    def to_json(self) -> JsonDict:
        out: JsonDict = {k: v for k, v in asdict(self).items()
                         if k not in ("query_seconds", "queries")}
        own: JsonDict = {**self.extra}
        if self.query_seconds:
            own["query_seconds"] = self.query_seconds
        if self.queries:
            own["queries"] = self.queries
        return {**out, "extra": own, "seconds": self.seconds}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> PassRun:
        extra = dict(d.get("extra") or {})
        return cls(**{**_known(cls, d), "extra": extra,
                      "query_seconds": extra.pop("query_seconds", {}),
                      "queries": extra.pop("queries", 0)})


@dataclass(frozen=True)
class SideLoadRun:
    name: str
    kind: str
    status: str
    start_s: float | None = None
    end_s: float | None = None
    seconds: float | None = None
    passes: list[PassRun] = field(default_factory=list)
    passes_ok: int = 0
    bytes: int = 0
    rows: int = 0
    mb_per_s: float | None = None  # over the passes' own seconds
    rows_per_s: float | None = None
    pass_seconds_median: float | None = None
    error: str | None = None
    deadline_hit: bool = False  # still running long after the main workload: stopped

    def to_json(self) -> JsonDict:
        out: JsonDict = {**asdict(self), "passes": [p.to_json() for p in self.passes]}
        if not self.deadline_hit:
            del out["deadline_hit"]
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> SideLoadRun:
        return cls(**{**_known(cls, d),
                      "passes": [PassRun.from_json(p) for p in d.get("passes") or []]})


@dataclass(frozen=True)
class ConfigChangeRun:
    """One config change as it ran: when (None: its start never came), what it set and
    set back, and the server's refusal."""

    name: str | None
    t: float | None
    set_global: dict[str, Any]
    error: str | None = None
    reset: dict[str, str] | None = None

    def to_json(self) -> JsonDict:
        out: JsonDict = {"name": self.name, "t": self.t, "set_global": self.set_global,
                         "error": self.error}
        if self.reset:
            out["reset"] = self.reset
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> ConfigChangeRun:
        return cls(**_known(cls, d))


@dataclass(frozen=True)
class PollStats:
    """A polling collector's samples and what they cost: its interval, the polls that
    failed, how long a poll took and how late it started."""

    interval_s: float | None = None
    samples: int | None = None
    failures: int | None = None
    duration_ms_median: float | None = None
    duration_ms_p99: float | None = None
    lateness_ms_p99: float | None = None


@dataclass(frozen=True)
class Collected:
    """What the collectors said of a run: their notes, and each polling one's stats
    (stored as one object: ``notes`` beside each collector's name)."""

    notes: list[str] = field(default_factory=list)
    polled: dict[str, PollStats] = field(default_factory=dict)

    def to_json(self) -> JsonDict:
        return {"notes": self.notes, **{n: asdict(s) for n, s in self.polled.items()}}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Collected:
        return cls(list(d.get("notes") or []),
                   {n: PollStats(**_known(PollStats, s)) for n, s in d.items()
                    if n != "notes" and isinstance(s, dict)})
