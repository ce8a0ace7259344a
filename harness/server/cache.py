"""The cache's size budget: snapshots and the stopped sandboxes one kept with ``--keep``
count against ``HARNESS_CACHE_BUDGET`` (default 20G); past it, they are pruned least
recently used first, skipping what is in use. The entries come from the modules that own
them (:func:`harness.server.snapshot.cache_entries`, :func:`harness.providers.kept.prunable`);
:func:`harness.providers.cache.prune` gathers them after each save and for
``harness snapshots prune``."""
from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from .. import locks
from ..errors import InputError

DEFAULT_BUDGET = "20G"

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$", re.I)


def parse_size(text: str, what: str = "size") -> int:
    """``20G``, ``500M``, ``1.5T`` or bytes, as bytes (powers of 1024)."""
    m = _SIZE.match(text)
    if not m:
        raise InputError(f"{what}: {text!r} is not a size (like 20G, 500M)")
    return int(float(m.group(1)) * 1024 ** " kmgt".index(m.group(2).lower() or " "))


def budget_bytes() -> int:
    return parse_size(os.environ.get("HARNESS_CACHE_BUDGET", DEFAULT_BUDGET),
                      "HARNESS_CACHE_BUDGET")


@dataclass
class Entry:
    """Something the budget may prune: a snapshot or a stopped kept sandbox."""
    kind: str  # snapshot | sandbox
    name: str
    path: Path
    bytes: int
    last_used: float
    remove: Callable[[], bool]  # False: in use now, kept


@dataclass
class Pruned:
    removed: list[Entry]
    in_use: list[Entry]
    total: int  # bytes of what the budget counts, after the prune
    budget: int

    @property
    def over(self) -> bool:
        return self.total > self.budget


def prune(everything: list[Entry], budget: int, dry_run: bool = False,
          keep: Iterable[str] = (),
          say: Callable[[str], None] | None = locks.to_stderr) -> Pruned:
    """Remove the least recently used of ``everything`` until the rest fit ``budget``;
    what is in use now (and the snapshots named in ``keep``: the one just saved) is
    skipped. Says what it removed, and when the cache stays over budget."""
    everything = sorted(everything, key=lambda e: e.last_used)
    found = [e for e in everything if not (e.kind == "snapshot" and e.name in set(keep))]
    total = sum(e.bytes for e in everything)
    removed, in_use = [], []
    for e in found:
        if total <= budget:
            break
        if dry_run or e.remove():
            removed.append(e)
            total -= e.bytes
        else:
            in_use.append(e)
    result = Pruned(removed, in_use, total, budget)
    if say is not None:
        _say_pruned(result, dry_run, say)
    return result


def _say_pruned(result: Pruned, dry_run: bool, say: Callable[[str], None]) -> None:
    for e in result.removed:
        say(f"cache: {'would remove' if dry_run else 'removed'} {e.kind} {e.name} "
            f"({size_text(e.bytes)}, last used "
            f"{datetime.fromtimestamp(e.last_used):%Y-%m-%d %H:%M})")
    if result.over:
        say(f"warning: the cache's snapshots and kept sandboxes take "
            f"{size_text(result.total)}, past the budget of {size_text(result.budget)} "
            f"(HARNESS_CACHE_BUDGET); {len(result.in_use)} in use now, kept")


def size_text(n: int) -> str:
    return f"{n / 2**30:.1f} GB" if n >= 2**30 else f"{n / 2**20:.0f} MB"
