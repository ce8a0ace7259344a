"""information_schema.INNODB_METRICS (MySQL 5.6+, MariaDB 10.x), named as
mysqld_exporter names them: ``mysql_info_schema_innodb_metrics_<subsystem>_<name>``,
``_total`` only for counters."""
from __future__ import annotations

import re
from collections.abc import Iterable

from .base import Line, Panel, Point, PolledCollector, Unsupported

PREFIX = "mysql_info_schema_innodb_metrics_"
_BUFFER_PAGE_IO = re.compile(r"^buffer_page_(read|written)_(.*)$")
_BUFFER_POOL_PAGES = re.compile(r"^buffer_pool_pages_(.*)$")


def metric_points(rows: Iterable[tuple[str, str, str, float]]) -> list[Point]:
    """(name, subsystem, type, count) rows -> points, with mysqld_exporter's rules."""
    out: list[Point] = []
    for name, subsystem, mtype, count in rows:
        value = float(count)
        if subsystem == "buffer_page_io":
            m = _BUFFER_PAGE_IO.match(name)
            if m:
                out.append((f"{PREFIX}buffer_page_{m.group(1)}_total", value,
                            {"type": m.group(2)}))
            continue
        if subsystem == "buffer":
            m = _BUFFER_POOL_PAGES.match(name)
            if m:
                state = m.group(1)
                if state == "total":
                    continue  # the sum of the others
                if state == "dirty":
                    out.append((f"{PREFIX}buffer_pool_dirty_pages", value, None))
                else:
                    out.append((f"{PREFIX}buffer_pool_pages", value, {"state": state}))
                continue
        metric = f"{PREFIX}{subsystem}_{name}"
        # bugs.mysql.com/75966: some "counters" go negative; those are gauges.
        if mtype in ("counter", "status_counter") and value >= 0:
            metric += "_total"
        out.append((metric, value, None))
    return out


class InnodbMetrics(PolledCollector):
    name = "innodb_metrics"
    panels = (
        Panel("flushed by adaptive / sync / background flushing, pages per s", (
            Line("innodb_metrics", PREFIX + "buffer_buffer_flush_adaptive_total_pages",
                 "adaptive", rate=True),
            Line("innodb_metrics", PREFIX + "buffer_buffer_flush_sync_total_pages", "sync",
                 rate=True),
            Line("innodb_metrics", PREFIX + "buffer_buffer_flush_background_total_pages",
                 "background", rate=True))),
        Panel("purge: undo log pages purged and purge batches per s", (
            Line("innodb_metrics", PREFIX + "purge_purge_undo_log_pages_total", "undo pages",
                 rate=True),
            Line("innodb_metrics", PREFIX + "purge_purge_invoked_total", "batches", rate=True))))
    default_interval_s = 1.0
    server_access = "adapts"  # enables every counter on a server the harness owns only

    def setup(self) -> None:
        cols = {r[0].lower() for r in self.query(
            "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = "
            "'information_schema' AND TABLE_NAME = 'INNODB_METRICS'")}
        if not cols:
            raise Unsupported("information_schema.INNODB_METRICS does not exist "
                              "(MySQL 5.5 and Percona Server 5.5 have no such table)")
        # MySQL says STATUS='enabled'; MariaDB 10.x says ENABLED=1.
        self.where = "STATUS = 'enabled'" if "status" in cols else "ENABLED = 1"
        self.disabled = [r[0] for r in self.query(
            f"SELECT NAME FROM information_schema.INNODB_METRICS WHERE NOT ({self.where})")]
        if not self.ctx.owned:
            if self.disabled:
                self.ctx.notes.append(
                    f"innodb_metrics: {len(self.disabled)} counters are disabled on this "
                    "server and were not read (the harness enables counters only on a "
                    f"server it owns): {', '.join(self.disabled[:8])}"
                    + (" ..." if len(self.disabled) > 8 else ""))
            return
        with self.connect().cursor() as cur:
            cur.execute("SET GLOBAL innodb_monitor_enable = 'all'")

    def teardown(self) -> None:
        """The counters that were disabled are disabled again (their values stay)."""
        if not self.ctx.owned or not getattr(self, "disabled", None):
            return
        with self.connect().cursor() as cur:
            for name in self.disabled:
                cur.execute("SET GLOBAL innodb_monitor_disable = %s", (name,))

    def collect(self) -> Iterable[Point]:
        rows = self.query(f"SELECT NAME, SUBSYSTEM, TYPE, COUNT FROM "
                          f"information_schema.INNODB_METRICS WHERE {self.where}")
        return metric_points(rows)


PLUGIN = InnodbMetrics
