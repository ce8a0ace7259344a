"""One event of a run's timeline: a phase's start or end, a config change, a stall, a
collector's note. Its ``detail`` is the event kind's own (a warmup's seconds, the
options a change set), stored as JSON."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..jsonvalue import JsonDict

__all__ = ["Event"]


@dataclass(frozen=True)
class Event:
    t: float  # on the run clock
    kind: str  # phase_start, phase_end, config, server_stall, note ...
    name: str
    detail: JsonDict = field(default_factory=dict)

    def to_json(self) -> JsonDict:
        return {"t": self.t, "kind": self.kind, "name": self.name, "detail": self.detail}
