"""Star Schema Benchmark data, generated in-process: the five tables of O'Neil, O'Neil
and Chen's specification (revision 3, 2009) at any scale factor, deterministic for a
seed, written as '|'-separated files for LOAD DATA.

Row counts (SF = scale factor; below 1 every count scales linearly, as dbgen does):

    lineorder  ~ SF x 6,000,000: SF x 1,500,000 orders of 1 to 7 lines (uniform)
    customer     SF x 30,000
    supplier     SF x 2,000
    part         200,000 x floor(1 + log2 SF)
    date         2,556 (1992-01-01 .. 1998-12-30: dbgen's seven "years" of 365 days)

Value domains follow the specification (which takes most of them from TPC-H): 25
nations in 5 regions, cities as the first 9 letters of the nation plus a digit,
customers with orders only where the key is not a multiple of 3, order dates up to
151 days before the end of the date range, commit dates 30-90 days after the order,
prices in cents from the part key as TPC-H's retail price, revenue and supply cost
derived from them. Money columns are integers in cents (dbgen writes them so too).

Lineorder is generated and written in fixed chunks of orders, so memory stays flat at
any scale and the bytes do not depend on anything but the seed and the scale factor.
"""
from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

NATIONS = [  # TPC-H's nations and their regions
    ("ALGERIA", "AFRICA"), ("ARGENTINA", "AMERICA"), ("BRAZIL", "AMERICA"),
    ("CANADA", "AMERICA"), ("EGYPT", "MIDDLE EAST"), ("ETHIOPIA", "AFRICA"),
    ("FRANCE", "EUROPE"), ("GERMANY", "EUROPE"), ("INDIA", "ASIA"), ("INDONESIA", "ASIA"),
    ("IRAN", "MIDDLE EAST"), ("IRAQ", "MIDDLE EAST"), ("JAPAN", "ASIA"),
    ("JORDAN", "MIDDLE EAST"), ("KENYA", "AFRICA"), ("MOROCCO", "AFRICA"),
    ("MOZAMBIQUE", "AFRICA"), ("PERU", "AMERICA"), ("CHINA", "ASIA"), ("ROMANIA", "EUROPE"),
    ("SAUDI ARABIA", "MIDDLE EAST"), ("VIETNAM", "ASIA"), ("RUSSIA", "EUROPE"),
    ("UNITED KINGDOM", "EUROPE"), ("UNITED STATES", "AMERICA")]
SEGMENTS = ["AUTOMOBILE", "BUILDING", "FURNITURE", "MACHINERY", "HOUSEHOLD"]
PRIORITIES = ["1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECI", "5-LOW"]
SHIPMODES = ["REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"]
COLORS = [
    "almond", "antique", "aquamarine", "azure", "beige", "bisque", "black", "blanched",
    "blue", "blush", "brown", "burlywood", "burnished", "chartreuse", "chiffon", "chocolate",
    "coral", "cornflower", "cornsilk", "cream", "cyan", "dark", "deep", "dim", "dodger",
    "drab", "firebrick", "floral", "forest", "frosted", "gainsboro", "ghost", "goldenrod",
    "green", "grey", "honeydew", "hot", "indian", "ivory", "khaki", "lace", "lavender",
    "lawn", "lemon", "light", "lime", "linen", "magenta", "maroon", "medium", "metallic",
    "midnight", "mint", "misty", "moccasin", "navajo", "navy", "olive", "orange", "orchid",
    "pale", "papaya", "peach", "peru", "pink", "plum", "powder", "puff", "purple", "red",
    "rose", "rosy", "royal", "saddle", "salmon", "sandy", "seashell", "sienna", "sky",
    "slate", "smoke", "snow", "spring", "steel", "tan", "thistle", "tomato", "turquoise",
    "violet", "wheat", "white", "yellow"]
TYPE_1 = ["STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO"]
TYPE_2 = ["ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED"]
TYPE_3 = ["TIN", "NICKEL", "BRASS", "STEEL", "COPPER"]
CONTAINER_1 = ["SM", "LG", "MED", "JUMBO", "WRAP"]
CONTAINER_2 = ["CASE", "BOX", "BAG", "JAR", "PKG", "PACK", "CAN", "DRUM"]
DATE_START = dt.date(1992, 1, 1)
DATE_ROWS = 2556
ORDER_DATE_SPAN = DATE_ROWS + 1 - 151  # order dates end 151 days before the range does
HOLIDAYS = {(1, 1), (2, 14), (5, 31), (7, 4), (9, 7), (11, 26), (12, 24), (12, 25), (12, 31)}
ORDERS_PER_CHUNK = 250_000
TABLES = ("date", "customer", "supplier", "part", "lineorder")
WRITE = pacsv.WriteOptions(include_header=False, delimiter="|", quoting_style="none")


@dataclass(frozen=True)
class Counts:
    customer: int
    supplier: int
    part: int
    date: int
    orders: int

    @property
    def lineorder_expected(self) -> int:
        return self.orders * 4  # 1..7 lines per order, uniform


def counts(sf: float) -> Counts:
    """Rows per table for scale factor ``sf`` (lineorder: its orders)."""
    def lin(base: int) -> int:
        return max(1, int(round(base * sf)))
    part = 200_000 * int(math.floor(1 + math.log2(sf))) if sf >= 1 else lin(200_000)
    return Counts(customer=lin(30_000), supplier=lin(2_000), part=part, date=DATE_ROWS,
                  orders=lin(1_500_000))


def _rng(seed: int, table: str) -> np.random.Generator:
    # One stream per table: a table's rows do not depend on the others' sizes.
    return np.random.Generator(np.random.PCG64([seed, TABLES.index(table)]))


def _pick(rng: np.random.Generator, choices: list[str], n: int) -> pa.Array:
    return pa.array(choices).take(pa.array(rng.integers(0, len(choices), n)))


def _address(rng: np.random.Generator, n: int) -> pa.Array:
    """Random text of 10-25 letters, digits and spaces (TPC-H's V-string, shortened)."""
    alphabet = np.frombuffer(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                             b"0123456789 ,.", dtype=np.uint8)
    lengths = rng.integers(10, 26, n)
    chars = alphabet[rng.integers(0, len(alphabet), int(lengths.sum()))]
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets.tobytes()),
                                       pa.py_buffer(chars.tobytes()))


def _ints(a: np.ndarray) -> list[int]:
    """An integer array as Python ints (its ``tolist``, typed)."""
    return cast(list[int], a.tolist())


def _geo(rng: np.random.Generator, n: int) -> tuple[pa.Array, pa.Array, pa.Array, pa.Array]:
    """city, nation, region and phone of ``n`` customers or suppliers."""
    nation = rng.integers(0, len(NATIONS), n)
    digit = rng.integers(0, 10, n)
    city = [NATIONS[k][0][:9].ljust(9) + str(d) for k, d in zip(_ints(nation),
                                                               _ints(digit), strict=True)]
    local = rng.integers(0, 10**10, n)
    phone = [f"{k + 10}-{x // 10**7:03d}-{x // 10**4 % 1000:03d}-{x % 10**4:04d}"
             for k, x in zip(_ints(nation), _ints(local), strict=True)]
    names = pa.array([nm for nm, _ in NATIONS]).take(pa.array(nation))
    regions = pa.array([rg for _, rg in NATIONS]).take(pa.array(nation))
    return pa.array(city), names, regions, pa.array(phone)


def _parties(rng: np.random.Generator, n: int, prefix: str, who: str) -> dict[str, Any]:
    """The columns customers and suppliers share: key, name, address, geography."""
    key = np.arange(1, n + 1, dtype=np.int32)
    city, nation, region, phone = _geo(rng, n)
    return {f"{prefix}_{'custkey' if prefix == 'c' else 'suppkey'}": key,
            f"{prefix}_name": pa.array([f"{who}#{k:09d}" for k in _ints(key)]),
            f"{prefix}_address": _address(rng, n), f"{prefix}_city": city,
            f"{prefix}_nation": nation, f"{prefix}_region": region, f"{prefix}_phone": phone}


def customer(c: Counts, seed: int) -> pa.Table:
    rng = _rng(seed, "customer")
    cols = _parties(rng, c.customer, "c", "Customer")
    return pa.table({**cols, "c_mktsegment": _pick(rng, SEGMENTS, c.customer)})


def supplier(c: Counts, seed: int) -> pa.Table:
    return pa.table(_parties(_rng(seed, "supplier"), c.supplier, "s", "Supplier"))


def retail_price(partkey: np.ndarray) -> np.ndarray:
    """TPC-H's P_RETAILPRICE, in cents."""
    k = partkey.astype(np.int64)
    return 90000 + (k // 10) % 20001 + 100 * (k % 1000)


def part(c: Counts, seed: int) -> pa.Table:
    rng = _rng(seed, "part")
    n = c.part
    key = np.arange(1, n + 1, dtype=np.int32)
    mfgr = rng.integers(1, 6, n)
    cat = rng.integers(1, 6, n)
    brand = rng.integers(1, 41, n)
    c1, c2 = rng.integers(0, len(COLORS), n), rng.integers(0, len(COLORS), n)
    t1, t2, t3 = (rng.integers(0, len(x), n) for x in (TYPE_1, TYPE_2, TYPE_3))
    k1, k2 = rng.integers(0, len(CONTAINER_1), n), rng.integers(0, len(CONTAINER_2), n)
    m, ca, b = _ints(mfgr), _ints(cat), _ints(brand)
    return pa.table({
        "p_partkey": key,
        "p_name": pa.array([f"{COLORS[x]} {COLORS[y]}" for x, y in zip(_ints(c1), _ints(c2),
                                                                       strict=True)]),
        "p_mfgr": pa.array([f"MFGR#{x}" for x in m]),
        "p_category": pa.array([f"MFGR#{x}{y}" for x, y in zip(m, ca, strict=True)]),
        "p_brand": pa.array([f"MFGR#{x}{y}{z}" for x, y, z in zip(m, ca, b, strict=True)]),
        "p_color": pa.array(COLORS).take(pa.array(c1)),
        "p_type": pa.array([f"{TYPE_1[x]} {TYPE_2[y]} {TYPE_3[z]}" for x, y, z in
                            zip(_ints(t1), _ints(t2), _ints(t3), strict=True)]),
        "p_size": rng.integers(1, 51, n).astype(np.int8),
        "p_container": pa.array([f"{CONTAINER_1[x]} {CONTAINER_2[y]}" for x, y in
                                 zip(_ints(k1), _ints(k2), strict=True)])})


def _season(d: dt.date) -> str:
    if d.month == 12:
        return "Christmas"
    return {1: "Winter", 2: "Winter", 3: "Spring", 4: "Spring", 5: "Spring", 6: "Summer",
            7: "Summer", 8: "Summer"}.get(d.month, "Fall")


def date_keys() -> np.ndarray:
    days = [DATE_START + dt.timedelta(days=i) for i in range(DATE_ROWS)]
    return np.array([d.year * 10000 + d.month * 100 + d.day for d in days], dtype=np.int32)


def date(c: Counts, seed: int) -> pa.Table:
    rows = []
    for i in range(c.date):
        d = DATE_START + dt.timedelta(days=i)
        nxt = d + dt.timedelta(days=1)
        doy = d.timetuple().tm_yday
        rows.append((d.year * 10000 + d.month * 100 + d.day,
                     f"{d:%B} {d.day}, {d.year}", f"{d:%A}", f"{d:%B}", d.year,
                     d.year * 100 + d.month, f"{d:%b}{d.year}", d.isoweekday() % 7 + 1,
                     d.day, doy, d.month, (doy - 1) // 7 + 1, _season(d),
                     int(d.isoweekday() == 6), int(nxt.month != d.month),
                     int((d.month, d.day) in HOLIDAYS), int(d.isoweekday() <= 5)))
    names = ["d_datekey", "d_date", "d_dayofweek", "d_month", "d_year", "d_yearmonthnum",
             "d_yearmonth", "d_daynuminweek", "d_daynuminmonth", "d_daynuminyear",
             "d_monthnuminyear", "d_weeknuminyear", "d_sellingseason", "d_lastdayinweekfl",
             "d_lastdayinmonthfl", "d_holidayfl", "d_weekdayfl"]
    return pa.table({n: [r[i] for r in rows] for i, n in enumerate(names)})


def lineorder_chunks(c: Counts, seed: int):  # -> Iterator[pa.Table]
    """Lineorder in chunks of ``ORDERS_PER_CHUNK`` orders."""
    rng = _rng(seed, "lineorder")
    keys = date_keys()
    with_orders = np.array([k for k in range(1, c.customer + 1) if k % 3 or c.customer < 3],
                           dtype=np.int32)
    for first in range(0, c.orders, ORDERS_PER_CHUNK):
        no = min(ORDERS_PER_CHUNK, c.orders - first)
        lines = rng.integers(1, 8, no)
        n = int(lines.sum())
        order_ix = np.repeat(np.arange(no), lines)
        starts = np.concatenate([[0], np.cumsum(lines)[:-1]])
        linenumber = (np.arange(n) - np.repeat(starts, lines) + 1).astype(np.int8)
        # TPC-H numbers orders sparsely: 8 keys used of every 32.
        ok = first + np.arange(no, dtype=np.int64)
        orderkey = (ok // 8 * 32 + ok % 8 + 1)[order_ix]
        custkey = with_orders[rng.integers(0, len(with_orders), no)][order_ix]
        oday = rng.integers(0, ORDER_DATE_SPAN, no)
        priority = rng.integers(0, len(PRIORITIES), no)[order_ix]
        partkey = rng.integers(1, c.part + 1, n, dtype=np.int32)
        suppkey = rng.integers(1, c.supplier + 1, n, dtype=np.int32)
        quantity = rng.integers(1, 51, n)
        discount = rng.integers(0, 11, n)
        tax = rng.integers(0, 9, n)
        commit = oday[order_ix] + rng.integers(30, 91, n)
        shipmode = rng.integers(0, len(SHIPMODES), n)
        price = retail_price(partkey)
        extended = quantity * price
        revenue = extended * (100 - discount) // 100
        line_total = extended * (100 + tax) * (100 - discount) // 10000
        total = np.add.reduceat(line_total, starts)[order_ix]
        yield pa.table({
            "lo_orderkey": orderkey, "lo_linenumber": linenumber, "lo_custkey": custkey,
            "lo_partkey": partkey, "lo_suppkey": suppkey,
            "lo_orderdate": keys[np.minimum(oday[order_ix], len(keys) - 1)],
            "lo_orderpriority": pa.array(PRIORITIES).take(pa.array(priority)),
            "lo_shippriority": pa.array(["0"] * n),
            "lo_quantity": quantity.astype(np.int8), "lo_extendedprice": extended,
            "lo_ordtotalprice": total, "lo_discount": discount.astype(np.int8),
            "lo_revenue": revenue, "lo_supplycost": price * 6 // 10,
            "lo_tax": tax.astype(np.int8),
            "lo_commitdate": keys[np.minimum(commit, len(keys) - 1)],
            "lo_shipmode": pa.array(SHIPMODES).take(pa.array(shipmode))})


def generate(sf: float, seed: int, out: Path,
             progress: Callable[[str], None] = lambda _m: None) -> dict[str, list[Path]]:
    """Write every table as ``TABLE.tbl`` (lineorder as ``lineorder.N.tbl``, one file a
    chunk, so loading can stream them); return the files per table and their rows."""
    out.mkdir(parents=True, exist_ok=True)
    c = counts(sf)
    files: dict[str, list[Path]] = {}
    for name, make in (("date", date), ("customer", customer), ("supplier", supplier),
                       ("part", part)):
        progress(f"generating {name}")
        path = out / f"{name}.tbl"
        pacsv.write_csv(make(c, seed), path, WRITE)
        files[name] = [path]
    files["lineorder"] = []
    for i, chunk in enumerate(lineorder_chunks(c, seed)):
        progress(f"generating lineorder: {min((i + 1) * ORDERS_PER_CHUNK, c.orders)}"
                 f"/{c.orders} orders")
        path = out / f"lineorder.{i}.tbl"
        pacsv.write_csv(chunk, path, WRITE)
        files["lineorder"].append(path)
    return files
