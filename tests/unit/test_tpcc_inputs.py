"""TPC-C's client side without a server: NURand, the terminals' inputs, the mix."""
from __future__ import annotations

import collections
from pathlib import Path

import pytest

from harness.errors import ScenarioError
from harness.scenario import parse_scenario
from harness.workloads import tpcc_sql as sql
from harness.workloads.tpcc import CALLS, TRANSACTIONS, Inputs, Mix


def test_nurand_stays_in_range_and_is_skewed():
    i = Inputs(1, 1, 1, Mix())
    xs = [i.nurand(1023, 1, 3000, sql.C_ID) for _ in range(30_000)]
    assert min(xs) >= 1 and max(xs) <= 3000
    counts = collections.Counter(xs)
    # NURand is non-uniform: the most common ids come up far more than 1/3000 of draws
    assert counts.most_common(1)[0][1] > 5 * len(xs) / 3000


def test_last_names_are_three_syllables_of_the_loaders_thousand():
    i = Inputs(2, 1, 1, Mix())
    names = {i.customer()[1] for _ in range(5000)} - {""}
    assert names and all(4 <= len(n) <= 15 for n in names)
    every = {"".join(sql.SYLLABLES[int(d)] for d in f"{n:03d}") for n in range(1000)}
    assert names <= every


def test_the_mix_and_each_transactions_inputs():
    i = Inputs(3, 2, 4, Mix())
    picks = [i.pick() for _ in range(23 * 800)]
    # clause 5.2.4.2's deck: every 23 draws are the deck, 10/10/1/1/1, in a new order
    for k in range(0, len(picks), 23):
        assert collections.Counter(picks[k:k + 23]) == {
            "new_order": 10, "payment": 10, "order_status": 1, "delivery": 1,
            "stock_level": 1}
    assert picks[:23] != picks[23:46]  # shuffled again
    # so any stretch of draws holds the minimums, however it is cut, once it is long
    for start in (0, 7, 500, 4001):
        part = collections.Counter(picks[start:start + 2300])
        assert part["payment"] / 2300 >= 0.43 and min(
            part[t] for t in ("order_status", "delivery", "stock_level")) / 2300 >= 0.04
    for kind in TRANSACTIONS:
        args = i.args(kind)
        assert CALLS[kind].count("%s") == len(args)
        assert args[0] == 2  # the terminal's home warehouse
    remote = [a for a in (i.args("payment") for _ in range(5000)) if a[2] != 2]
    assert 0.10 < len(remote) / 5000 < 0.20 and all(1 <= a[2] <= 4 for a in remote)
    rollbacks = sum(i.args("new_order")[4] for _ in range(20_000))
    assert 100 < rollbacks < 300  # 1%
    one = Inputs(3, 1, 1, Mix())  # one warehouse: every payment is local
    assert all(one.args("payment")[2] == 1 for _ in range(2000))


def _mix(mix: str) -> Mix:
    return parse_scenario(Path("t.yaml"), f"""\
name: t
dataset: {{kind: tpcc, warehouses: 1}}
workload: {{kind: tpcc, duration_s: 5, mix: {mix}}}
""").model.workload.mix


def test_a_mix_below_the_minimums_is_refused_naming_each_shortfall():
    with pytest.raises(ScenarioError) as e:
        _mix("{new_order: 96, payment: 1, order_status: 1, delivery: 1, stock_level: 1}")
    assert "workload" in str(e.value) and "below TPC-C's minimum mix (clause 5.2.3), so " \
        "not tpmC: payment 1.00% (at least 43%), order_status 1.00% (at least 4%)" \
        in str(e.value), str(e.value)
    with pytest.raises(ScenarioError, match="payment 15.87% .at least 43%."):
        _mix("{new_order: 50}")  # the others keep the deck's 10/1/1/1
    at_the_minimums = _mix("{new_order: 45, payment: 43, order_status: 4, delivery: 4, "
                           "stock_level: 4}")  # a 100-card deck
    assert len(at_the_minimums.deck()) == 100 and at_the_minimums.shares()["payment"] == 0.43


def test_the_loader_sql_covers_every_table():
    text = " ".join([sql.load_items(), *sql.load_warehouse(3)])
    for table in set(sql.TABLES) - {"tpcc_seq", "item"}:
        assert f"INSERT INTO {table} " in text
