"""SHOW GLOBAL STATUS every second, named as mysqld_exporter names it, and SHOW GLOBAL
VARIABLES once at start (into the run's artifacts and as samples at t=start)."""
from __future__ import annotations

import json
import re
from collections.abc import Iterable

from .base import MB, Line, Panel, Point, PolledCollector

PREFIX = "mysql_global_status_"
_GROUPS = re.compile(r"^(com|handler|connection_errors|innodb_buffer_pool_pages|innodb_rows|"
                     r"performance_schema)_(.*)$")


def _number(value: object) -> float | None:
    if value is None:
        return None
    text = str(value).strip()
    if text in ("ON", "YES"):
        return 1.0
    if text in ("OFF", "NO"):
        return 0.0
    try:
        return float(text)
    except ValueError:
        return None  # text status values (versions, uuids) are not samples


def status_points(rows: Iterable[tuple[str, object]]) -> list[Point]:
    out: list[Point] = []
    for key, raw in rows:
        value = _number(raw)
        if value is None:
            continue
        key = key.lower()
        m = _GROUPS.match(key)
        if not m:
            out.append((PREFIX + key, value, None))
            continue
        group, rest = m.groups()
        if group == "com":
            out.append((PREFIX + "commands_total", value, {"command": rest}))
        elif group == "handler":
            out.append((PREFIX + "handlers_total", value, {"handler": rest}))
        elif group == "connection_errors":
            out.append((PREFIX + "connection_errors_total", value, {"error": rest}))
        elif group == "innodb_buffer_pool_pages":
            if rest in ("data", "dirty", "free", "misc"):
                out.append((PREFIX + "buffer_pool_pages", value, {"state": rest}))
            else:
                out.append((PREFIX + "buffer_pool_page_changes_total", value,
                            {"operation": rest}))
        elif group == "innodb_rows":
            out.append((PREFIX + "innodb_row_ops_total", value, {"operation": rest}))
        else:
            out.append((PREFIX + "performance_schema_lost_total", value,
                        {"instrumentation": rest}))
    return out


class GlobalStatus(PolledCollector):
    name = "global_status"
    panels = (
        Panel("InnoDB data reads and writes per s", (
            Line("global_status", "mysql_global_status_innodb_data_reads", "reads", rate=True),
            Line("global_status", "mysql_global_status_innodb_data_writes", "writes",
                 rate=True))),
        Panel("pages flushed per s (flush list, LRU)", (
            Line("global_status", "mysql_global_status_buffer_pool_page_changes_total",
                 "flush list", rate=True, labels=(("operation", "flushed"),)),
            Line("global_status", "mysql_global_status_buffer_pool_page_changes_total",
                 "LRU", rate=True, labels=(("operation", "lru_flushed"),)))),
        Panel("dirty pages in the buffer pool", (
            Line("global_status", "mysql_global_status_buffer_pool_pages",
                 labels=(("state", "dirty"),)),)),
        Panel("redo written (MB/s)", (Line(
            "global_status", "mysql_global_status_innodb_os_log_written", rate=True,
            scale=1 / MB),)))
    server_access = "reads"
    default_interval_s = 1.0

    def setup(self) -> None:
        self.snapshot_variables("start")

    def snapshot_variables(self, why: str) -> None:
        """SHOW GLOBAL VARIABLES: the full text to artifacts, numbers as samples."""
        rows = self.query("SHOW GLOBAL VARIABLES")
        t = self.ctx.clock()
        (self.ctx.artifacts / f"variables-{why}.json").write_text(
            json.dumps({k: v for k, v in rows}, indent=2, default=str))
        for key, raw in rows:
            value = _number(raw)
            if value is not None:
                self.ctx.sample(t, self.name, "mysql_global_variables_" + key.lower(), value,
                                None)

    def collect(self) -> Iterable[Point]:
        points = status_points(self.query("SHOW GLOBAL STATUS"))
        points.append(("mysql_up", 1.0, None))
        return points


PLUGIN = GlobalStatus
