"""How a run was made, stored with it (``runs.details``, one JSON object): the scenario
file and scale, the build, the options and the host's facts, then what the runner
learned while it ran (the server's state, the host profile, the wake-up probe, the CPU
keep-alive, stalls ...). Written and read through :class:`RunDetails`, each field typed;
a field a newer harness wrote and this one does not know is kept as it was (``extra``)
and written back unchanged. A field never set is not stored ("each where it applies")."""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from .hints import Hints

JSONObject = dict[str, Any]  # a nested record of its own (host facts, a profile's limits)


@dataclass
class RunDetails:
    # what the run was asked
    scenario_file: str | None = None
    scale: float | None = None
    report: Hints | None = None  # what its reports take from its scenario
    purpose: str | None = None  # "run", or "compare" (a side of a comparison)
    # the build and its options
    version_string: str | None = None
    build_root: str | None = None
    options: JSONObject | None = None
    my_cnf: JSONObject | None = None  # the variant's file as this build read it
    cnf_translation: list[JSONObject] | None = None  # what translate: true changed
    # where it ran
    host: JSONObject | None = None  # this machine's facts (host.facts)
    lab_host: JSONObject | None = None  # a lab host's, from its playbook
    workload_client: str | None = None
    host_tuning: JSONObject | None = None
    host_profile: JSONObject | None = None
    disk: JSONObject | None = None  # the model disk's counters
    cpu_placement: JSONObject | None = None
    # what the runner learned while it ran
    server_state: JSONObject | None = None  # how the server was made ready, its notes
    snapshot_saved_s: float | None = None
    measure_lock: JSONObject | None = None
    wakeup_probe: JSONObject | None = None
    cpu_keepalive: str | bool | None = None  # the method that kept CPUs awake, or False
    clock_origin: float | None = None  # t = 0 of the run clock, epoch seconds
    server_stalls: list[JSONObject] | None = None
    spool_gaps: list[JSONObject] | None = None  # times its spool's disk refused it
    artifacts_only_in_folder: list[str] | None = None
    stored_from_spool: JSONObject | None = None
    extra: JSONObject = field(default_factory=dict)  # fields this harness does not know

    def note_state(self, note: str) -> None:
        """A note on how the server was made ready (stored with server_state)."""
        if self.server_state is None:
            self.server_state = {}
        self.server_state.setdefault("notes", []).append(note)

    @property
    def host_facts(self) -> JSONObject:
        """The facts of the host mysqld ran on: the lab host's, else this machine's."""
        return self.lab_host or self.host or {}

    def to_json(self) -> JSONObject:
        out: JSONObject = {}
        for f in _FIELDS:
            v = getattr(self, f)
            if v is not None:
                out[f] = v.to_json() if isinstance(v, Hints) else v
        return {**out, **self.extra}

    @classmethod
    def from_json(cls, d: JSONObject | None) -> RunDetails:
        d = dict(d or {})
        known = {k: d.pop(k) for k in _FIELDS if k in d}
        if isinstance(known.get("report"), dict):
            known["report"] = Hints.from_json(known["report"])
        return cls(**known, extra=d)


_FIELDS = tuple(f.name for f in fields(RunDetails) if f.name != "extra")
