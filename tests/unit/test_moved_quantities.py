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


def test_a_quantity_from_nothing_ranks_by_how_much_not_first():
    """0 on one side has no ratio; it ranks by its change per transaction against one
    unit, so a thousandth of a read from nothing does not outrank reads that tripled,
    and five writes a transaction from nothing ranks as a fivefold change would."""
    from harness.analysis.moved import _moved, ranked

    tiny = _moved("tiny from none", [0.0] * 4, [0.001, 0.0011, 0.0012, 0.001], 0.0, 0.00105, 0)
    tripled = _moved("reads from disk", [1.0, 1.1, 0.9, 1.0], [2.9, 3.0, 2.8, 2.9], 1.0, 2.9, 0)
    five = _moved("writes from none", [0.0] * 4, [5.0, 5.1, 4.9, 5.0], 0.0, 5.0, 0)
    assert tiny[0] and tripled[0] and five[0]  # each apart: every run above every other
    order = [m.quantity for m in ranked([tiny, tripled, five])]
    assert order == ["writes from none", "reads from disk", "tiny from none"], order
