"""The counted verdict's arithmetic (analysis/counted.py) and callgrind's files read
as callgrind_annotate reads them: dumps made here by valgrind itself on a real
program, cut by the same function triggers mysqld's windows use."""
from __future__ import annotations

import math
import random
import subprocess
from pathlib import Path

import pytest

from harness.analysis import counted
from harness.analysis.counted import FunctionMove, Window
from harness.counted import callgrind


def _windows(sides: str, per_tx: dict[str, float], noise: float, seed: int = 1,
             lifetimes: bool = False) -> list[Window]:
    rng = random.Random(seed)
    out = []
    for i, side in enumerate(sides):
        n = 10_000
        instr = round(per_tx[side] * n * math.exp(rng.gauss(0, noise)))
        out.append(Window(i + 1, side, i + 1 if lifetimes else 1, instr, n, 1.0))
    return out


def test_a_one_percent_change_is_called_worse_at_the_first_look():
    ws = _windows("ABBABAAB", {"A": 40_000, "B": 40_400}, noise=0.0004)
    got = counted.look(ws, 1, by_lifetime=False, alpha=0.05)
    assert got is not None and got.verdict == counted.WORSE
    assert 1.008 < got.ratio < 1.012
    assert got.interval[0] > 1.0


def test_identical_sides_sit_inside_the_band():
    ws = _windows("ABBABAAB", {"A": 40_000, "B": 40_000}, noise=0.0004)
    got = counted.look(ws, 1, by_lifetime=False, alpha=0.05)
    assert got is not None and got.verdict == counted.SAME


def test_a_change_inside_the_band_is_not_called_however_sure():
    # x1.003, counted exactly: the interval excludes 1, but 0.3% is under the 0.5% band
    ws = _windows("ABBABAABABBA", {"A": 40_000, "B": 40_120}, noise=0.0001)
    got = counted.look(ws, 1, by_lifetime=False, alpha=0.05)
    assert got is not None and got.interval[0] > 1.0
    assert got.verdict == counted.SAME
    assert counted.look(ws, 1, False, 0.05, band=0.001).verdict == counted.WORSE


def test_noisy_windows_go_on_rather_than_decide():
    ws = _windows("ABBA", {"A": 40_000, "B": 40_400}, noise=0.02)
    got = counted.look(ws, 1, by_lifetime=False, alpha=0.05)
    assert got is not None and got.verdict is None
    v = counted.verdict(ws, [got], False, 0.05)
    assert v.verdict == counted.UNTOLD and v.exit_code == 4
    assert "changes under" in v.line()


def test_lifetimes_are_the_unit_of_a_restart_design():
    # two judged windows a lifetime, far apart between lifetimes: the lifetime's mean
    # is one unit, so four lifetimes make two pairs; their windows are no pairs at all
    ws = []
    for life, side in enumerate("ABBA", start=1):
        for _ in range(2):
            ws.append(Window(len(ws) + 1, side, life, 40_000 * 10_000, 10_000, 1.0))
    assert len(counted.pairs(ws, by_lifetime=True)) == 2
    with pytest.raises(ValueError, match="out of pairs"):
        counted.pairs(ws, by_lifetime=False)


def test_unjudged_windows_are_left_out():
    ws = _windows("ABBA", {"A": 40_000, "B": 40_000}, noise=0.0)
    warm = Window(99, "A", 1, 90_000 * 10_000, 10_000, 1.0, judged=False)
    assert counted.pairs([warm, *ws], False) == counted.pairs(ws, False)


def test_looks_are_stricter_as_they_go():
    ws = _windows("ABBABAAB", {"A": 40_000, "B": 40_000}, noise=0.001)
    first, fifth = (counted.look(ws, k, False, 0.05) for k in (1, 5))
    assert first is not None and fifth is not None
    assert fifth.level > first.level
    assert fifth.interval[1] - fifth.interval[0] > first.interval[1] - first.interval[0]


def _typed(sides: str, per_tx: dict[str, dict[str, float]], noise: float) -> list[Window]:
    """Windows of two classes a window (index shared), as TPC-C's are."""
    rng = random.Random(3)
    out = []
    for i, side in enumerate(sides):
        for cls, n in (("new_order", 100), ("payment", 100), ("delivery", 10)):
            instr = round(per_tx[cls][side] * n * math.exp(rng.gauss(0, noise)))
            out.append(Window(i + 1, side, 1, instr, n, 1.0, True, cls))
    return out


def test_the_mix_weighs_each_type_by_its_share_and_each_type_is_judged_alone():
    # New-Order 5% dearer, Payment and Delivery the same: the mix moves by the
    # New-Order's share of its instructions, and only New-Order is called worse
    per_tx = {"new_order": {"A": 800_000, "B": 840_000}, "payment": {"A": 200_000,
              "B": 200_000}, "delivery": {"A": 3_000_000, "B": 3_000_000}}
    weights = {"new_order": 10 / 21, "payment": 10 / 21, "delivery": 1 / 21}
    ws = _typed("ABBABAAB", per_tx, noise=0.0005)
    mix = counted.mixed(ws, weights)
    assert len(mix) == 8 and {w.cls for w in mix} == {""}
    a = (10 * 800_000 + 10 * 200_000 + 3_000_000) / 21
    assert mix[0].side == "A" and abs(mix[0].per_tx / a - 1) < 0.003
    got = counted.look(mix, 1, by_lifetime=False, alpha=0.05)
    expected = (10 * 840_000 + 10 * 200_000 + 3_000_000) / 21 / a  # x1.0308
    assert got is not None and got.verdict == counted.WORSE
    assert abs(got.ratio - expected) < 0.002
    each = {c.cls: c for c in counted.by_class(ws, list(weights), 1, False, 0.05)}
    assert each["new_order"].verdict == counted.WORSE
    assert abs(each["new_order"].look.ratio - 1.05) < 0.002
    assert each["payment"].verdict == each["delivery"].verdict == counted.SAME
    assert each["new_order"].text().startswith("new_order: 799,") and "-> 840," in \
        each["new_order"].text()


def test_one_class_is_left_as_it_is():
    ws = _windows("ABBA", {"A": 40_000, "B": 40_000}, noise=0.0004)
    assert counted.mixed(ws, {"": 1.0}) == ws
    assert counted.by_class(ws, [""], 1, False, 0.05) == []


def test_a_window_s_transactions_follow_the_mix():
    from harness.workloads.tpcc import Mix, TpccCounted, TpccDataset, TpccWorkload
    probe = TpccCounted(TpccWorkload(kind="tpcc", mix=Mix()), TpccDataset(kind="tpcc"))
    assert probe.events(100) == {"new_order": 100, "payment": 100, "order_status": 10,
                                 "delivery": 10, "stock_level": 10}
    assert abs(sum(probe.weights().values()) - 1) < 1e-12
    other = TpccCounted(TpccWorkload(kind="tpcc", mix=Mix(new_order=0, payment=46,
                                                           order_status=18, delivery=18,
                                                           stock_level=18)),
                        TpccDataset(kind="tpcc"))
    assert "new_order" not in other.classes and other.events(20)["payment"] == 20


def test_what_moved_names_the_deepest_function_of_a_chain():
    total = 40_000.0
    base = {"do_command": 39_000, "mysql_execute_command": 30_000, "log_slow": 100,
            "write_log_row": 50, "row_search_mvcc": 8_000}
    # the slow log costs 1,000 more: its chain carries it whole up to the command
    cand = {"do_command": 40_000, "mysql_execute_command": 31_000, "log_slow": 1_100,
            "write_log_row": 1_040, "row_search_mvcc": 8_001}
    got = counted.moved(base, cand, total)
    names = [m.function for m in got]
    # write_log_row carries 990 of log_slow's 1,000: the deeper one is named
    assert names[0] == "write_log_row" and "log_slow" not in names
    assert "do_command" not in names  # an entry point holds nearly all of the count
    assert "mysql_execute_command" not in names  # carries log_slow's change whole
    assert "row_search_mvcc" not in names  # 1 instruction: below what is shown
    assert got[0].text(total).startswith("+2.48% of the total in write_log_row")


def test_a_function_name_is_shown_without_its_arguments():
    m = FunctionMove("row_search_mvcc(unsigned char*, page_cur_mode_t)", 8_000, 8_400)
    assert "in row_search_mvcc (8,000 -> 8,400" in m.text(40_000)


@pytest.fixture(scope="module")
def dumps(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """A real program under callgrind with the launcher's options and a window cut by
    function triggers as a connection's is: zeroed at getenv, dumped before exit."""
    d = tmp_path_factory.mktemp("cg")
    argv = [x for x in callgrind.launcher(d) if "acl_authenticate" not in x
            and "end_connection" not in x]
    argv += ["--zero-before=getenv", "--dump-before=exit"]
    subprocess.run([*argv, "/usr/bin/printenv", "HOME"], check=True, capture_output=True,
                   timeout=120)
    return sorted(callgrind.dumps(d), key=lambda p: callgrind.dumps(d)[p])


def test_a_dump_is_read_as_callgrind_annotate_totals_it(dumps, tmp_path):
    assert dumps, "callgrind wrote no dump at the trigger"
    for p in dumps:
        d = callgrind.read_dump(p)
        assert d is not None and d.instructions > 0
        out = subprocess.run(["callgrind_annotate", str(p)], capture_output=True,
                             text=True, check=True).stdout
        total = next(line for line in out.splitlines() if "PROGRAM TOTALS" in line)
        assert int(total.split()[0].replace(",", "")) == d.instructions


def test_functions_are_callgrind_annotates_inclusive_counts(dumps, tmp_path):
    fns = callgrind.functions(dumps[-1], tmp_path)
    assert fns, "no function read"
    d = callgrind.read_dump(dumps[-1])
    assert d is not None
    # the program's entry holds the whole count (a function's inclusive count may pass
    # it by a few instructions where callgrind_annotate counts a cycle twice)
    assert fns["(below main)"] == d.instructions
    assert max(fns.values()) <= d.instructions * 1.001
    assert not any("[" in name or name.startswith("???") for name in fns)


def test_a_dump_still_being_written_is_not_read(tmp_path):
    p = tmp_path / "callgrind.out.1.2-3"
    p.write_text("# callgrind format\nversion: 1\npart: 2\nthread: 3\nsummary: 10\n")
    assert callgrind.read_dump(p) is None
    p.write_text(p.read_text() + "totals: 12\n")
    d = callgrind.read_dump(p)
    assert d is not None and (d.part, d.thread, d.instructions) == (2, 3, 10)


def test_a_size_reads_as_mycnf_writes_it():
    assert [callgrind.mycnf_size(x) for x in ("128M", "1G", "134217728", "1.5k")] == \
        [128 << 20, 1 << 30, 134217728, 1536]
