"""What a JSON document holds, as a type.

A record the harness writes as JSON (a verdict's ``to_json``, a section of
results/bench.json) is built of :data:`Json` values, so mypy checks that nothing else
goes in (a Path, a dataclass, a set) and that a reader narrows a value before it uses
it. A record that crosses between parts of the harness is a dataclass; this type is
for the document made of it at the edge, where it is saved or printed.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

__all__ = ["Json", "JsonDict", "number"]

Json: TypeAlias = "str | int | float | bool | None | Sequence[Json] | Mapping[str, Json]"
JsonDict: TypeAlias = "dict[str, Json]"  # a JSON object being built


def number(v: Json) -> float | None:
    """``v`` as a number; None when it is not one (absent, a word, a list, a flag)."""
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None
