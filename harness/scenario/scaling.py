"""--scale: a scenario's sizes multiplied for a bigger (or smaller) machine."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..server.mycnf import parse_size

# Size options that --scale multiplies (a page size or a buffer per connection does not
# grow with the machine's memory).
SCALED_OPTIONS = ("innodb_buffer_pool_size", "innodb_log_file_size")
def scale_sizes(d: dict[str, Any], factor: float) -> None:
    """``factor`` times the sizes of a dumped scenario ``d``, in place: buffer pool and
    redo log options wherever they are set, vm.*_bytes sysctls, the profile's memory,
    the swap file, the balloon, side loads' sizes."""
    variants = list((d.get("variants") or {}).values())
    host = d.get("host") or {}
    for opts in (d.get("mysqld"), d.get("prepare_mysqld"),
                 *[v.get("mysqld") for v in variants],
                 *[ch.get("set_global") for ch in d.get("config_changes") or []]):
        _scale_keys(opts or {}, lambda k: k.replace("-", "_") in SCALED_OPTIONS, factor)
    for sysctls in (host.get("sysctls"), *[v.get("sysctls") for v in variants]):
        _scale_keys(sysctls or {}, lambda k: k.endswith("_bytes"), factor)
    _scale_memory(d, host, factor)


def _scale_memory(d: dict[str, Any], host: dict[str, Any], factor: float) -> None:
    """The profile's memory, the swap file, the balloon and side loads' sizes."""
    balloon = host.get("balloon") or {}
    for holder, key in ((d.get("host_profile") or {}, "memory"), (host, "swap_file"),
                        (balloon, "size"), (balloon, "leave"),
                        *[(ld, "size") for ld in d.get("side_loads") or []]):
        if holder.get(key):
            holder[key] = str(_scaled_size(holder[key], factor))


def _scale_keys(values: dict[str, Any], sized: Callable[[str], bool], factor: float
                ) -> None:
    """``factor`` times each value of ``values`` whose key is ``sized``, in place."""
    for k in [k for k in values if sized(k)]:
        values[k] = _scaled_size(values[k], factor)


def _scaled_size(v: Any, factor: float) -> Any:
    n = parse_size(v)
    return v if n is None or isinstance(v, bool) else int(n * factor)


