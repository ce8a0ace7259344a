"""provision -> prepare -> workload -> teardown -> store, for every cell of a scenario.

A cell is one server x one variant; each repetition of a cell is one stored run. The
whole matrix is checked before anything starts (unknown servers, variants and options
unknown to a server version are bad input, reported at once), a failed cell is stored
as failed with its cause and the next cell goes on (unless ``fail_fast``), and Ctrl-C
stores the current run as interrupted and removes its sandbox.

The stages, each its own module: ``plan`` (the matrix resolved and checked),
``lifecycle`` (the server each run starts on), ``measure`` (one run's timeline with
its collectors) and ``judge`` (the findings of a run and of the run set); ``runset``'s
Runner runs them in order, with ``order``, ``hostwork`` and ``records`` beside it.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .options import RunOptions, RunResult, World
    from .runset import Runner
    from .tables import headline, summary_table

# Loaded when first used: a stage's module (``plan``, for validate) loads without the
# Runner and all it runs.
_WHERE = {"RunOptions": "options", "RunResult": "options", "World": "options",
          "Runner": "runset", "headline": "tables", "summary_table": "tables"}

__all__ = ["Runner", "RunOptions", "RunResult", "World", "summary_table", "headline", "new_id"]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)


def new_id() -> str:
    """A new run set's id: its start, to the second, and four hex digits."""
    from .options import World

    return World().new_id()
