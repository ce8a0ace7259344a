"""Which runs a run set makes, in which order: cell-major by default, balanced
repetition-major with interleave, and without the repetitions a resumed run set has."""
from __future__ import annotations

from ..errors import InputError, UnavailableError
from ..store import Store
from .plan import Cell


def run_order(cells: list[Cell], reps: int, interleave: bool) -> list[tuple[Cell, int]]:
    """Cell-major (every repetition of a cell, then the next) by default; with
    interleave, repetition-major in balanced order (A B, B A, A B, ...) so drift hits
    both sides alike and a linear one cancels over two rounds."""
    if interleave:
        return [(c, r) for r in range(1, reps + 1) for c in (cells if r % 2 else cells[::-1])]
    return [(c, r) for c in cells for r in range(1, reps + 1)]


def done_before(store: Store, run_set: str, scenario: str) -> set[tuple[str, str, int]]:
    """The cells' repetitions a run set being resumed already has ok: (server,
    variant, repetition); refused when it is no run set of ``scenario``."""
    previous = store.runs(run_set=run_set)
    if not previous:
        raise UnavailableError(f"--resume {run_set}: no such run set in the store")
    if {r.scenario for r in previous} != {scenario}:
        raise InputError(f"--resume {run_set}: that run set is of scenario "
                         f"{previous[0].scenario}, not {scenario}")
    return {(r.server, r.variant, r.repetition) for r in previous if r.status == "ok"}
