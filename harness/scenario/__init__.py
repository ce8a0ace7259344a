"""Scenario files: YAML validated by pydantic v2 models.

Every model forbids unknown keys so a typo is an error, and :func:`load_scenario`
reports every problem at once, each with the file, the field path and the line:
``scenarios/x.yaml:12: workload.duraton_s: Extra inputs are not permitted``.

The models by concern: :mod:`.servers` (builds, variants, options), :mod:`.host` (host
settings and profiles), :mod:`.expectation` (findings), :mod:`.model` (the scenario and
its cross-field rules); :mod:`.scaling` (``--scale``) and :mod:`.loading` (the file).
"""
from __future__ import annotations

from ..model import DatasetModel, Start
from .expectation import METRIC_NAMES, PHASE_METRICS, WORKLOAD_METRICS, Expectation
from .host import (
    SYSCTL_PAIRS,
    BackgroundCpu,
    BalloonModel,
    CpuPlacement,
    DiskModel,
    HostProfile,
    HostTuning,
)
from .loading import (
    MAX_SCENARIO_BYTES,
    LoadedScenario,
    load_scenario,
    parse_scenario,
)
from .model import CollectorSpec, Scenario
from .scaling import SCALED_OPTIONS
from .servers import ConfigChange, Options, OptionValue, ServerSpec, Variant

__all__ = [
    "MAX_SCENARIO_BYTES", "METRIC_NAMES", "PHASE_METRICS", "SCALED_OPTIONS", "SYSCTL_PAIRS",
    "WORKLOAD_METRICS", "BackgroundCpu", "BalloonModel", "CollectorSpec", "ConfigChange",
    "CpuPlacement", "DatasetModel", "DiskModel", "Expectation", "HostProfile", "HostTuning",
    "LoadedScenario", "OptionValue", "Options", "Scenario", "ServerSpec", "Start", "Variant",
    "load_scenario", "parse_scenario",
]
