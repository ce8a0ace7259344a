"""Side loads: work that runs next to the main workload on the same server. One module
per kind, each with its model (a :class:`~harness.model.SideLoadModel` that declares
what it reads, writes and starts, and runs one pass) as ``PLUGIN``; the thread all of
them run in is :mod:`harness.sideloads.thread`. This registry finds the kinds; the
scenario's union is built from it and nothing else names a kind.
"""
from __future__ import annotations

import importlib
import pkgutil

from ..model import SideLoadModel
from .thread import Pass, SideLoad, count_rows_in


def _discover() -> dict[str, type[SideLoadModel]]:
    found: dict[str, type[SideLoadModel]] = {}
    for m in pkgutil.iter_modules(__path__):
        model = getattr(importlib.import_module(f"{__name__}.{m.name}"), "PLUGIN", None)
        if isinstance(model, type) and issubclass(model, SideLoadModel):
            found[str(model.model_fields["kind"].default)] = model
    return found


PLUGINS = _discover()

__all__ = ["PLUGINS", "Pass", "SideLoad", "count_rows_in"]
