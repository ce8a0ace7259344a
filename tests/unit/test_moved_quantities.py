"""The quantities what-moved ranks, from what the runs stored: one per wait instrument
(time, in microseconds), one per InnoDB latch (waits counted, as stored) and one per
client program, beside the fixed counters."""
from __future__ import annotations

from types import SimpleNamespace

from harness.analysis.moved import QUANTITIES, StoredSeries, quantities
from harness.collectors.wait_events import MUTEX, SECONDS


class _Store:
    """Series as a store gives them, by (source, metric): their label sets."""

    def __init__(self, labelled: dict[tuple[str, str], list[dict[str, str]]]):
        self.labelled = labelled

    def series(self, run_id: str, source: str, metric: str) -> list[SimpleNamespace]:
        return [SimpleNamespace(labels=lab) for lab in self.labelled.get((source, metric), [])]


def test_innodbs_latches_counted_are_quantities_beside_the_timed_waits():
    # MySQL 5.7.8+ by default: file I/O timed by performance_schema, InnoDB's latches
    # counted by SHOW ENGINE INNODB MUTEX; both are what a comparison can rank
    log_file = "wait/io/file/innodb/innodb_log_file"
    store = _Store({("wait_events", SECONDS): [{"event_name": log_file}],
                    ("wait_events", MUTEX): [{"name": "LOG_SYS"}, {"name": "TRX_SYS"}]})
    got = {q.name: q for q in quantities(StoredSeries(store), [SimpleNamespace(run_id="r1")])}
    assert len(got) == len(QUANTITIES) + 3, sorted(got)
    timed = got[f"wait {log_file} (microseconds)"]
    assert timed.scale == 1e6  # stored in seconds
    latch = got["InnoDB latch LOG_SYS waits"]
    assert (latch.metric, latch.labels, latch.scale) == (MUTEX, (("name", "LOG_SYS"),), 1.0)
    assert "InnoDB latch TRX_SYS waits" in got
