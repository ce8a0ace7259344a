"""Collectors sample the server and the OS while workloads run. One module per source,
each declaring its collector class as ``PLUGIN`` (its name, the series it stores, its
report panels, whether it only reads the server, a one-off capture once all have
stopped); this registry finds them, and nothing else names one. Helpers that are not
collectors (``base``, ``procfile``) declare none. ``HARNESS_COLLECTORS_OFF`` leaves
named collectors off where a scenario does not name them."""
from __future__ import annotations

import os
from contextlib import ExitStack
from typing import Any

from ..errors import InputError
from ..model import discover
from .base import Collector, CollectorContext, PolledCollector, Unsupported


def _name(cls: Any) -> str | None:
    return cls.name if isinstance(cls, type) and issubclass(cls, Collector) else None


# name -> class, in module order; on by default (all but those off unless enabled), at
# its default interval.
REGISTRY: dict[str, type[Collector]] = discover(__name__, __path__, _name)


OFF_ENV = "HARNESS_COLLECTORS_OFF"


def off_by_environment() -> frozenset[str]:
    """The collectors ``HARNESS_COLLECTORS_OFF`` (names, comma-separated) leaves off where
    a scenario does not name them: a pipeline's cheaper runs (the Percona Toolkit
    fingerprint costs ~2 CPU-seconds a cell). An unknown name is refused."""
    names = frozenset(n.strip() for n in os.environ.get(OFF_ENV, "").split(",") if n.strip())
    unknown = sorted(names - set(REGISTRY))
    if unknown:
        raise InputError(f"{OFF_ENV}: unknown collector(s) {', '.join(unknown)}; known: "
                         f"{', '.join(REGISTRY)}")
    return names


def enabled(settings: dict[str, Any]) -> list[tuple[type[Collector], Any]]:
    """Each collector the settings leave on (its own default where unnamed, unless
    :data:`OFF_ENV` names it), with its spec from the scenario (None when unnamed)."""
    off = off_by_environment()
    return [(cls, settings.get(name)) for name, cls in REGISTRY.items()
            if (cls.on_by_default and name not in off if settings.get(name) is None
                else settings[name].enabled)]


def start_all(ctx: CollectorContext, settings: dict[str, Any] | None = None
              ) -> tuple[ExitStack, list[Collector]]:
    """Enter every enabled collector; the returned stack stops them all.

    ``settings`` maps a collector name to an object with ``enabled`` and ``interval_s``
    (the scenario's ``collectors:`` block); unnamed collectors run at their defaults.
    """
    stack = ExitStack()
    started: list[Collector] = []
    off = sorted(n for n in off_by_environment() if n not in (settings or {}))
    if off:
        ctx.notes.append(f"{', '.join(off)}: off by {OFF_ENV}")
    try:
        for cls, spec in enabled(settings or {}):
            c = cls(ctx, getattr(spec, "interval_s", None))
            if cls.hz_default:
                c.hz = getattr(spec, "hz", None) or cls.hz_default
                c.only_threads = frozenset(getattr(spec, "threads", None) or ())
            c.configure(spec)
            stack.enter_context(c)
            started.append(c)
    except BaseException:
        stack.close()
        raise
    return stack, started


def start_options(settings: dict[str, Any], flavor: str, version: tuple[int, ...]
                  ) -> dict[str, str]:
    """The mysqld options the enabled collectors need from start-up on a server the
    harness starts (``settings`` as for :func:`start_all`)."""
    out: dict[str, str] = {}
    for cls, spec in enabled(settings):
        out.update(cls.start_options(flavor, version, spec))
    return out


__all__ = ["Collector", "CollectorContext", "PolledCollector", "REGISTRY", "Unsupported",
           "enabled", "start_all", "start_options"]
