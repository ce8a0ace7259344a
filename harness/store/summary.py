"""The summary of one stored run, typed and versioned.

What every run has is a field: the workload that ran, its window on the run clock, the
samples stored, the prepare it did, its side loads and config changes, phases, findings
and a failure. What the workload measured is ``measured``, by key, as its plugin wrote
it (``tps_median``, ``flights``, ``transactions`` ...); the plugin's ``figures`` say
which keys are its figures, and ``figure()`` reads one as a number.

Stored as JSON with ``version``. Version 1 (before 2026-11-25) was one flat dict with
the workload's keys beside the rest; it is read as it is, so a store of any age reads
alike. A version newer than this harness knows is refused with a message, rather than
read wrongly.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from ..errors import StoreError
from ..jsonvalue import JsonDict, number
from .activity import Collected, ConfigChangeRun, SideLoadRun
from .finding import Finding, RunStat
from .phase import Phase
from .prepared import Prepared

__all__ = ["VERSION", "RunSummary"]

VERSION = 2

# The workload's keys that every workload writes, read as fields (the rest stays in
# ``measured``).
_FROM_WORKLOAD = ("workload", "threads", "duration_s", "warmup_s", "workload_start_s",
                  "workload_end_s", "headline")


@dataclass
class RunSummary:
    workload: str = ""  # its plugin's kind first: "sysbench oltp_read_only", "tpcc"
    samples: int = 0  # time series samples stored for the run
    measured: JsonDict = field(default_factory=dict)  # the workload's, by key
    headline: str | None = None  # the workload's own one-line result, if it words one
    threads: int | None = None
    duration_s: float | None = None
    warmup_s: float | None = None
    workload_start_s: float | None = None  # on the run clock
    workload_end_s: float | None = None
    main_window: list[float] | None = None  # the measured window, [start, end] s
    prepare: list[Prepared] = field(default_factory=list)  # when this run prepared
    collectors: Collected = field(default_factory=Collected)  # what each collector did
    side_loads: list[SideLoadRun] = field(default_factory=list)
    config_changes: list[ConfigChangeRun] = field(default_factory=list)
    phases: list[Phase] | None = None  # per phase, when there are side loads
    series_stats: dict[str, RunStat] = field(default_factory=dict)  # for run-set findings
    expectations: list[Finding] = field(default_factory=list)  # verdicts
    workload_failure: str | None = None  # why a finished workload's result is invalid
    # the server answered nothing for a good part of the measured window: its figures
    # are a stalled server's ("mysqld answered nothing for 20 s of the 40 s measured")
    stall: str | None = None
    version: int = VERSION

    @classmethod
    def of_workload(cls, measured: dict[str, Any], **core: Any) -> RunSummary:
        """A new run's summary: what its workload returned, and the runner's fields."""
        own = dict(measured)
        lifted = {k: own.pop(k) for k in _FROM_WORKLOAD if k in own}
        return cls(measured=own, **lifted, **core)

    def figure(self, key: str) -> float | None:
        """One of the workload's figures as a number (None: not measured, or not one)."""
        return number(self.measured.get(key))

    @property
    def start_s(self) -> float:
        """Where the workload started on the run clock (0 when not known)."""
        return float(self.workload_start_s or 0.0)

    def but(self, **changes: Any) -> RunSummary:
        """A copy with ``changes``; this one is left as it is."""
        return dataclasses.replace(self, **changes)

    def to_json(self) -> JsonDict:
        """The stored shape, each nested record written once by its own ``to_json``."""
        return {
            "workload": self.workload, "samples": self.samples,
            "measured": self.measured, "headline": self.headline, "threads": self.threads,
            "duration_s": self.duration_s, "warmup_s": self.warmup_s,
            "workload_start_s": self.workload_start_s,
            "workload_end_s": self.workload_end_s,
            "main_window": None if self.main_window is None else list(self.main_window),
            "prepare": [p.to_json() for p in self.prepare],
            "collectors": self.collectors.to_json(),
            "side_loads": [x.to_json() for x in self.side_loads],
            "config_changes": [x.to_json() for x in self.config_changes],
            "phases": None if self.phases is None else [p.to_json() for p in self.phases],
            "series_stats": {k: x.to_json() for k, x in self.series_stats.items()},
            "expectations": [x.to_json() for x in self.expectations],
            "workload_failure": self.workload_failure, "stall": self.stall,
            "version": self.version,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any] | None, where: str = "a run") -> RunSummary:
        """A stored summary of any version this harness knows; ``where`` names the run
        in the error for one it does not."""
        d = dict(d or {})
        version = d.pop("version", 1)
        if version == 1:
            return cls._from_v1(d)
        if version != VERSION:
            raise StoreError(f"{where}: summary version {version} is newer than this harness "
                             f"reads (up to {VERSION}): upgrade the harness to read it")
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - names)
        if unknown:
            raise StoreError(f"{where}: summary version {VERSION} with unknown fields "
                             f"{unknown}: the store was written by another harness")
        return cls(**_typed(d))

    @classmethod
    def _from_v1(cls, d: dict[str, Any]) -> RunSummary:
        """Version 1: one flat dict, the workload's keys beside the runner's."""
        names = {f.name for f in dataclasses.fields(cls)} - {"measured", "version"}
        core = {k: d.pop(k) for k in list(d) if k in names}
        for k in ("prepare", "side_loads", "config_changes", "expectations"):
            core[k] = core.get(k) or []  # None or absent in early stores
        for k in ("collectors", "series_stats"):
            core[k] = core.get(k) or {}
        return cls(measured=d, **_typed(core))


def _typed(d: dict[str, Any]) -> dict[str, Any]:
    """``d`` with each stored record read as its type (:class:`Finding`, :class:`Phase`,
    :class:`Prepared`, the side loads', config changes' and collectors')."""
    phases = d.get("phases")
    return {**d, **_activity(d),
            "expectations": [Finding.from_json(x) for x in d.get("expectations") or []],
            "phases": None if phases is None else [Phase.from_json(p) for p in phases],
            "prepare": [Prepared.from_json(p) for p in d.get("prepare") or []],
            "series_stats": {k: RunStat.from_json(x)
                             for k, x in (d.get("series_stats") or {}).items()}}


def _activity(d: dict[str, Any]) -> dict[str, Any]:
    """What ran beside the workload, as stored in ``d``, typed."""
    return {"collectors": Collected.from_json(d.get("collectors") or {}),
            "side_loads": [SideLoadRun.from_json(x) for x in d.get("side_loads") or []],
            "config_changes": [ConfigChangeRun.from_json(x)
                               for x in d.get("config_changes") or []]}
