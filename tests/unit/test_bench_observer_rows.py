"""make bench-observer-windows with OBSERVERS= or OBSERVER_SERVERS= measures part of its
section: the rows it did not measure stay as stored, each saying its own windows."""
import subprocess
import sys

import pytest

from harness.bench.observers import merged

# as the section was stored before rows said their sizes (results/bench.json, 2026-11-28)
EARLIER = {
    "test": "oltp_read_only", "threads": 1, "windows": 48, "window_s": 6, "warmup_s": 20,
    "goals": {"cpu_profile": 0.98, "wait_events": 0.99},
    "mariadb-10.11": {"cpu_profile": {"tps": {"ratio": 0.997}},
                      "wait_events": {"tps": {"ratio": 0.989}}},
    "mysql-5.7.29": {"cpu_profile": {"tps": {"ratio": 0.993}},
                     "wait_events": {"tps": {"ratio": 1.001}}},
}


def test_a_run_of_one_observer_keeps_the_others_rows_with_their_sizes():
    now = {"test": "oltp_read_only", "warmup_s": 20,
           "goals": {"cpu_profile": 0.98, "wait_events": 0.99},
           "mariadb-10.11": {"wait_events": {"tps": {"ratio": 1.004}, "windows": 200,
                                             "window_s": 6, "threads": 2}}}
    out = merged(EARLIER, now)
    maria = out["mariadb-10.11"]
    assert maria["wait_events"] == {"tps": {"ratio": 1.004}, "windows": 200, "window_s": 6,
                                    "threads": 2}
    assert maria["cpu_profile"] == {"tps": {"ratio": 0.997}, "windows": 48, "window_s": 6,
                                    "threads": 1}
    assert out["mysql-5.7.29"]["wait_events"]["tps"]["ratio"] == 1.001
    assert out["mysql-5.7.29"]["wait_events"]["windows"] == 48
    # no section-wide size left to contradict a row's
    assert not {"windows", "window_s", "threads"} & set(out)
    assert EARLIER["mariadb-10.11"]["cpu_profile"] == {"tps": {"ratio": 0.997}}  # not mutated


def test_with_nothing_stored_the_run_is_the_section():
    now = {"test": "oltp_read_only", "mariadb-10.11": {"cpu_profile": {"windows": 48}}}
    assert merged(None, now) == now


def bench(*args):
    return subprocess.run([sys.executable, "-m", "harness.bench", "--only",
                           "observer_windows", *args, "--out", "/nonexistent/bench.json"],
                          capture_output=True, text=True)


@pytest.mark.parametrize("text", ["0", "6", "-4", "x"])
def test_windows_come_in_quads(text):
    p = bench(f"--observer-windows={text}")
    assert p.returncode == 2
    assert "--observer-windows" in p.stderr


@pytest.mark.parametrize("text", ["0", "-1", "two"])
def test_the_streams_threads_are_a_count(text):
    p = bench(f"--observer-threads={text}")
    assert p.returncode == 2
    assert "--observer-threads" in p.stderr


def test_an_unknown_observer_is_refused_by_name():
    p = bench("--observer", "perf")
    assert p.returncode == 2
    assert "--observer" in p.stderr and "'perf'" in p.stderr


def test_wait_instruments_are_put_back_as_the_server_started_them():
    from harness.bench.observers import instrument_groups
    rows = [("wait/io/file/sql/binlog", "YES", "YES"),
            ("wait/synch/mutex/innodb/buf_pool_mutex", "NO", "NO"),
            ("wait/lock/table/sql/handler", "YES", "YES"),
            ("wait/synch/rwlock/innodb/hash_table_locks", "NO", "NO"),
            ("wait/io/socket/sql/client_connection", "NO", "YES")]
    groups = instrument_groups(rows)
    # the rows already enabled and timed stay so when every one is switched on
    assert groups == {
        ("NO", "NO"): ["wait/synch/mutex/innodb/buf_pool_mutex",
                       "wait/synch/rwlock/innodb/hash_table_locks"],
        ("NO", "YES"): ["wait/io/socket/sql/client_connection"]}
    # every other row in exactly one statement
    assert sorted(n for ns in groups.values() for n in ns) == sorted(
        r[0] for r in rows if r[1:] != ("YES", "YES"))


def test_the_wait_instruments_observer_is_a_choice():
    p = bench("--observer", "wait_instrument")
    assert p.returncode == 2 and "wait_instruments" in p.stderr
