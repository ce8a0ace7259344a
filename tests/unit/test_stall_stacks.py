"""The stall rule and pt-pmp's stacks folded (collectors/stall_stacks.py); the collector
on a real stall is in tests/integration/test_stall_stacks.py."""
from __future__ import annotations

import shutil

from harness.collectors.stall_stacks import StallWatch, folded


def test_a_stall_is_a_tenth_of_the_rate_with_statements_waiting():
    w = StallWatch()
    assert not any(w.add(0.0, 1) for _ in range(5))  # idle before the workload: no stall
    assert not any(w.add(1000.0 + i, 3) for i in range(20))
    assert w.add(50.0, 4) is False and w.add(20.0, 4) is True  # two in a row: it starts
    assert w.baseline == 1007.0  # the median of the 25 normal samples, idle ones included
    assert w.add(10.0, 4) is False  # once per stall
    assert w.add(900.0, 3) is False and w.low == 0  # over
    assert not any(w.add(0.0, 1) for _ in range(5))  # the workload ended: nothing running


def test_no_stall_before_the_rate_is_known():
    w = StallWatch(warm=10)
    assert not any(w.add(v, 5) for v in (1000, 1000, 1, 1, 1, 1))


def test_pt_pmps_stacks_fold_root_first_under_the_stall():
    # pt-pmp 3.2.1's own output on a sleeping process (gdb's noise line included)
    out = ("Fri Nov 27 16:12:55 UTC 2026\n"
           "71\t../sysdeps/unix/sysv/linux/clock_nanosleep.c: No such file or directory.\n"
           "      1 __GI___clock_nanosleep,__GI___nanosleep,::??,__libc_start_main_impl\n"
           "     12 pthread_cond_wait,MDL_wait::timed_wait,lock_table_names,do_command\n")
    assert folded(out, "stall 1 at 9 s") == {
        "stall 1 at 9 s;__libc_start_main_impl;::??;__GI___nanosleep;__GI___clock_nanosleep":
            1,
        "stall 1 at 9 s;do_command;lock_table_names;MDL_wait::timed_wait;pthread_cond_wait":
            12}


def test_pt_pmp_on_a_real_process_folds():
    from harness import proc
    assert shutil.which("pt-pmp") and shutil.which("gdb"), "make setup installs both"
    with proc.popen(["sleep", "30"]) as p:
        try:
            out = proc.run(["pt-pmp", "--pid", str(p.pid), "--iterations", "1"],
                           timeout=60, check=False).stdout
        finally:
            p.kill()
    stacks = folded(out, "s")
    assert sum(stacks.values()) == 1
    (stack,) = stacks
    assert "nanosleep" in stack.rsplit(";", 1)[1], stack
