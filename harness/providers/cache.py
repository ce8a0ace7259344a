"""The cache's budget over everything it counts: the dataset snapshots and this owner's
stopped kept sandboxes (:mod:`harness.server.cache` holds the rule)."""
from __future__ import annotations

from collections.abc import Callable, Iterable

from .. import locks
from ..server import cache, snapshot
from . import kept


def prune(budget: int | None = None, dry_run: bool = False, keep: Iterable[str] = (),
          say: Callable[[str], None] | None = locks.to_stderr) -> cache.Pruned:
    """Prune the cache to ``budget`` bytes (default: ``HARNESS_CACHE_BUDGET``), least
    recently used first; ``keep``: snapshot keys never pruned (the one just saved)."""
    everything = snapshot.cache_entries() + kept.prunable()
    return cache.prune(everything, cache.budget_bytes() if budget is None else budget,
                       dry_run=dry_run, keep=keep, say=say)
