"""One expected finding judged: the verdict every kind of finding stores (phases,
series, a workload's own, servers against a baseline)."""
from __future__ import annotations

from typing import Any


def verdict(e: Any, value: float | None, why: str | None, server: str, variant: str,
            **fields: Any) -> dict[str, Any]:
    """``e`` (an Expectation) judged at ``value``: reproduced when it lies within
    [min, max]; ``why`` says why there is no value; ``fields`` are the finding's own
    (its phase, series, interval, ...)."""
    held = value is not None and (e.min is None or value >= e.min) and \
        (e.max is None or value <= e.max)
    return {"name": e.name, "metric": e.metric,
            "value": None if value is None else round(value, 4), "min": e.min,
            "max": e.max, "reproduced": bool(held), "why_not": why, "server": server,
            "variant": variant, **fields}
