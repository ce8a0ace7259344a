"""Where mysqld's CPU per transaction went, by function, between two builds: each
perf sample's leaf frame (the function on the CPU) as a share of the build's samples,
times the build's mysqld CPU microseconds per transaction. Two different builds' stacks
do not line up (thread names, entry points and call paths differ from one version to
the next, so a differential flame graph of them is red from the root), but the
functions at the leaves do, and their microseconds add up to the whole difference:
Mark Callaghan's "CPU per query", spent function by function."""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ..collectors.base import PROFILING
from ..store import RunReader, StoredRun

TOP = 12


def folded_texts(store: RunReader, run_ids: Sequence[str], artifact: str) -> list[str]:
    """The folded stacks each of ``run_ids`` stored as ``artifact``, of those that did."""
    return [b.decode(errors="replace") for r in run_ids if (b := store.artifact(r, artifact))]


def profiled(store: RunReader, run: StoredRun, artifact: str) -> tuple[float, float] | None:
    """The stretch of ``run`` its profiler recorded ``artifact`` over, when it recorded
    only part of the run (``threads:``): its first start to its last stop on the run
    clock. None when it recorded all along (it says nothing then) or never."""
    marks = [e for e in store.events(run.run_id) if e.kind == PROFILING
             and e.detail.get("artifact") == artifact]
    starts = [e.t for e in marks if e.name == "start"]
    stops = [e.t for e in marks if e.name == "stop"]
    return (min(starts), max(stops)) if starts and stops else None


def leaf_shares(folded: str) -> dict[str, float]:
    """``thread;root;...;leaf count`` lines -> each leaf function's share of the
    samples."""
    leaves: Counter[str] = Counter()
    for line in folded.splitlines():
        stack, _, count = line.rpartition(" ")
        if stack and count.isdigit():
            leaves[stack.rpartition(";")[2]] += int(count)
    total = sum(leaves.values())
    return {name: n / total for name, n in leaves.items()} if total else {}


@dataclass(frozen=True)
class FunctionCost:
    function: str
    baseline_us: float  # microseconds on the CPU per transaction
    candidate_us: float

    @property
    def change_us(self) -> float:
        return self.candidate_us - self.baseline_us


UNKNOWN = "[unknown]"  # a frame perf found no symbol for (a static function, a stripped
# library): no name to compare by, so it is counted apart


def by_function(base: str, base_us: float, cand: str, cand_us: float, top: int = TOP
                ) -> tuple[list[FunctionCost], FunctionCost]:
    """The named functions whose CPU per transaction moved most between two profiles
    (folded stacks) of ``base_us`` and ``cand_us`` mysqld CPU microseconds per
    transaction, largest change first; and the frames without a name, together."""
    a, b = leaf_shares(base), leaf_shares(cand)
    costs = [FunctionCost(f, a.get(f, 0.0) * base_us, b.get(f, 0.0) * cand_us)
             for f in a.keys() | b.keys()]
    unknown = next((c for c in costs if c.function == UNKNOWN), FunctionCost(UNKNOWN, 0, 0))
    named = sorted((c for c in costs if c.function != UNKNOWN),
                   key=lambda c: (-abs(c.change_us), c.function))
    return named[:top], unknown
