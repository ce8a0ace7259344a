"""The SSB generator against the specification: row counts, keys, value domains, and
byte-identical output for a seed."""
import datetime as dt
import hashlib

import numpy as np
import pytest

from harness.workloads import ssb_gen as g


def _rows(path):
    return [line.split("|") for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    out = tmp_path_factory.mktemp("ssb")
    files = g.generate(0.02, 7, out)
    return out, files, {t: [r for p in ps for r in _rows(p)] for t, ps in files.items()}


def test_counts_follow_the_specification():
    assert g.counts(1) == g.Counts(customer=30_000, supplier=2_000, part=200_000, date=2556,
                                   orders=1_500_000)
    # part grows with log2 of the scale factor
    assert g.counts(2).part == 400_000 and g.counts(4).part == 600_000
    assert g.counts(10).part == 200_000 * 4 and g.counts(10).customer == 300_000
    assert g.counts(0.1).customer == 3_000 and g.counts(0.1).part == 20_000


def test_row_counts_at_a_scale(data):
    _, _, rows = data
    c = g.counts(0.02)
    assert len(rows["customer"]) == c.customer == 600
    assert len(rows["supplier"]) == c.supplier == 40
    assert len(rows["part"]) == c.part == 4_000
    assert len(rows["date"]) == 2556
    orders = {r[0] for r in rows["lineorder"]}
    assert len(orders) == c.orders == 30_000
    # 1..7 lines an order, uniform: 4 on average
    assert abs(len(rows["lineorder"]) / c.orders - 4) < 0.05
    lines = {}
    for r in rows["lineorder"]:
        lines.setdefault(r[0], []).append(int(r[1]))
    assert all(sorted(v) == list(range(1, len(v) + 1)) and len(v) <= 7
               for v in lines.values())


def test_every_fact_row_finds_its_dimension_rows(data):
    _, _, rows = data
    keys = {t: {r[0] for r in rows[t]} for t in ("customer", "supplier", "part", "date")}
    lo = rows["lineorder"]
    assert {r[2] for r in lo} <= keys["customer"]
    assert {r[3] for r in lo} <= keys["part"]
    assert {r[4] for r in lo} <= keys["supplier"]
    assert {r[5] for r in lo} <= keys["date"] and {r[15] for r in lo} <= keys["date"]
    # customers with orders: keys not divisible by 3 (TPC-H's rule)
    assert all(int(r[2]) % 3 for r in lo)


def test_value_domains(data):
    _, _, rows = data
    lo = rows["lineorder"]
    q = np.array([int(r[8]) for r in lo])
    disc = np.array([int(r[11]) for r in lo])
    tax = np.array([int(r[14]) for r in lo])
    assert (q.min(), q.max()) == (1, 50) and (disc.min(), disc.max()) == (0, 10)
    assert (tax.min(), tax.max()) == (0, 8)
    for r in lo[:2000]:
        price = int(g.retail_price(np.array([int(r[3])]))[0])
        assert int(r[9]) == int(r[8]) * price  # extended price
        assert int(r[12]) == int(r[9]) * (100 - int(r[11])) // 100  # revenue
        assert int(r[13]) == price * 6 // 10  # supply cost
        od = dt.datetime.strptime(r[5], "%Y%m%d").date()
        cd = dt.datetime.strptime(r[15], "%Y%m%d").date()
        assert 30 <= (cd - od).days <= 90
        assert od <= dt.date(1998, 8, 2)
        assert r[6] in g.PRIORITIES and r[16] in g.SHIPMODES
    nations = dict(g.NATIONS)
    for c in rows["customer"]:
        assert nations[c[4]] == c[5]  # the nation's region
        assert c[3][:9] == c[4][:9].ljust(9) and c[3][9].isdigit()
        assert c[6].startswith(f"{[n for n, _ in g.NATIONS].index(c[4]) + 10}-")
    for p in rows["part"]:
        assert p[3].startswith(p[2]) and p[4].startswith(p[3])
        assert 1 <= int(p[4][len(p[3]):]) <= 40 and 1 <= int(p[7]) <= 50
    d = rows["date"]
    assert d[0][0] == "19920101" and d[-1][0] == "19981230"
    assert d[0][2] == "Wednesday" and d[0][6] == "Jan1992"


def _digest(files):
    h = hashlib.sha256()
    for t in sorted(files):
        for p in files[t]:
            h.update(p.read_bytes())
    return h.hexdigest()


def test_same_seed_same_bytes_other_seed_other_bytes(data, tmp_path):
    _, files, _ = data
    again = g.generate(0.02, 7, tmp_path / "again")
    other = g.generate(0.02, 8, tmp_path / "other")
    assert _digest(again) == _digest(files)
    assert _digest(other) != _digest(files)
