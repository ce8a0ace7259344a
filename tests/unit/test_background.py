"""Which servers can name InnoDB's background threads, and what a missing one says."""
from __future__ import annotations

import pytest

from harness.host.background import BackgroundThreadsError, _by_kind, unsupported


@pytest.mark.parametrize(("flavor", "version", "kinds", "refused"), [
    ("mysql", (5, 6, 24), ["purge"], "THREAD_OS_ID from MySQL 5.7"),
    ("percona", (5, 5, 62), ["page_cleaner"], "THREAD_OS_ID from MySQL 5.7"),
    ("mysql", (5, 7, 29), ["purge", "page_cleaner", "master"], None),
    ("mysql", (9, 7, 0), ["purge"], None),
    ("mariadb", (10, 2, 11), ["page_cleaner"], "before 10.5"),
    ("mariadb", (10, 11, 6), ["page_cleaner"], None),
    ("mariadb", (11, 8, 3), ["purge", "page_cleaner"], "InnoDB's purge as tasks"),
])
def test_servers_that_cannot_name_the_threads_are_refused(flavor, version, kinds, refused):
    why = unsupported(flavor, version, kinds)
    assert (why is None) == (refused is None)
    if refused:
        assert refused in why


def test_threads_are_grouped_by_kind_and_a_missing_kind_is_named():
    rows = [("thread/innodb/srv_purge_thread", 12), ("thread/innodb/srv_worker_thread", 14),
            ("thread/innodb/srv_worker_thread", 13), ("thread/innodb/page_flush_thread", 20),
            ("thread/innodb/page_flush_coordinator_thread", 19)]
    assert _by_kind(rows, ["purge", "page_cleaner"], "s") == {
        "purge": [12, 13, 14], "page_cleaner": [19, 20]}
    with pytest.raises(BackgroundThreadsError, match="no master thread in performance_schema"
                       ".threads on mariadb-10.11"):
        _by_kind(rows, ["purge", "master"], "mariadb-10.11")


@pytest.mark.parametrize(("cpus", "quota"), [(0.05, (5000, 100_000)), (2.0, (200_000, 100_000)),
                                             (0.005, (1000, 200_000)),
                                             (0.001, (1000, 1_000_000))])
def test_a_small_cpu_share_gets_a_longer_period_not_a_quota_the_kernel_refuses(cpus, quota):
    from harness.host.profile import cfs_quota

    assert cfs_quota(cpus) == quota
