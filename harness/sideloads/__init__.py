"""Side loads: work that runs next to the main workload on the same server. One module
per kind, each with its model (a :class:`~harness.model.SideLoadModel` that declares
what it reads, writes and starts, and runs one pass) as ``PLUGIN``; the thread all of
them run in is :mod:`harness.sideloads.thread`. This registry finds the kinds; the
scenario's union is built from it and nothing else names a kind.
"""
from __future__ import annotations

from typing import Any

from ..model import SideLoadModel, discover
from .thread import Pass, SideLoad, count_rows_in


def _kind(model: Any) -> str | None:
    if isinstance(model, type) and issubclass(model, SideLoadModel):
        return str(model.model_fields["kind"].default)
    return None


PLUGINS: dict[str, type[SideLoadModel]] = discover(__name__, __path__, _kind)

__all__ = ["PLUGINS", "Pass", "SideLoad", "count_rows_in"]
