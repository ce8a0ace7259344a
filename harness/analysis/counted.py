"""Counted CPU: instructions per transaction, baseline against candidate, decided as
the windows come.

A counter (callgrind, harness/counted/) gives each window of a fixed number of
transactions its exact count of the instructions mysqld's connection thread retired.
The count does not follow wall time, a neighbour or the CPU's clock: measured here it
repeats to a CV of 0.02-0.05% within a server's lifetime and 0.04% across restarts
(docs/measurements/instructions.md), so a 1% change stands twenty deviations clear.

Windows come in quads, ABBA or BAAB at random: within one lifetime for options that
change at run time (SET GLOBAL, a short settle run after each switch), else one
lifetime a window, each a restart from the same data. The unit is a pair: adjacent A
and B windows (a lifetime's value is the mean log of its measured windows), the log of
B over A. After each quad the rule looks (analysis/sequential.py's confidence
sequence: look ``k`` at level ``1 - alpha * 6 / (pi^2 k^2)``, so looking after every
quad keeps the false-alarm rate at ``alpha``) with a t interval on the pairs' mean:

- ``worse`` (more instructions) or ``better``: the interval excludes 1 and the ratio
  is further from 1 than the band (``--noise``, 0.5% by default for counts);
- ``no significant difference``: the whole interval lies inside the band;
- else the next quad, until the budget would be exceeded: ``could not tell``, with
  the reach (the smallest change the interval could tell from none).

Pure arithmetic on windows; the driver (harness/runner/counted.py) cuts them.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from ..jsonvalue import JsonDict
from ..stats.interval import reach, reach_text
from ..stats.logratio import paired_log_ratio
from . import defaults
from .ab_verdict import BETTER, SAME, UNTOLD, WORSE
from .sequential import look_alpha

__all__ = ["BAND", "BETTER", "SAME", "UNTOLD", "WORSE", "ClassVerdict", "CountedVerdict",
           "FunctionMove", "Look", "Window", "by_class", "decide", "look", "mixed", "moved",
           "pairs", "verdict"]

BAND = defaults.COUNT_BAND  # changes under 0.5% of the count are not called
MIN_PAIRS = 2  # a variance needs two


@dataclass(frozen=True)
class Window:
    """One counted window: a connection of ``transactions`` transactions."""

    index: int
    side: str  # A (the baseline) or B
    lifetime: int  # the server's start it ran in (1, 2, ...)
    instructions: int  # the connection thread's, from its first login to its end
    transactions: int
    seconds: float  # wall time under the counter (slow, and meaning nothing)
    judged: bool = True  # False: a warm-up or settle run, counted but not judged
    cls: str = ""  # its class of transaction (TPC-C's type), "" where there is one

    @property
    def per_tx(self) -> float:
        return self.instructions / self.transactions

    def to_json(self) -> JsonDict:
        return {**asdict(self), "per_tx": self.per_tx}


@dataclass(frozen=True)
class Look:
    """What look ``k`` saw: the ratio B / A of instructions per transaction."""

    k: int
    pairs: int
    ratio: float
    interval: tuple[float, float]
    level: float
    verdict: str | None  # None: go on

    def text(self) -> str:
        lo, hi = self.interval
        return (f"look {self.k} ({self.pairs} pairs): x{self.ratio:.4f} [{lo:.4f}, "
                f"{hi:.4f}] at {self.level:.2%}: {self.verdict or 'go on'}")

    def to_json(self) -> JsonDict:
        return asdict(self)


MIX_TRANSACTIONS = 1_000_000  # a mixed window's nominal size: its count to 1e-6


def mixed(windows: Sequence[Window], weights: dict[str, float]) -> list[Window]:
    """The windows as the mix sees them: where a window has a connection per class
    (TPC-C's types, one index), one window whose count a transaction is the classes'
    counts a transaction weighted by their shares of the mix; one class's windows as
    they are."""
    if set(weights) == {""}:
        return list(windows)
    out = []
    for index in dict.fromkeys(w.index for w in windows):
        group = [w for w in windows if w.index == index]
        per_tx = math.fsum(weights[w.cls] * w.per_tx for w in group)
        first = group[0]
        out.append(Window(index, first.side, first.lifetime,
                          round(per_tx * MIX_TRANSACTIONS), MIX_TRANSACTIONS,
                          math.fsum(w.seconds for w in group), first.judged))
    return out


@dataclass(frozen=True)
class ClassVerdict:
    """One class's instructions a transaction, baseline against candidate, judged at
    the level of the comparison's last look (the mix decides when the windows stop)."""

    cls: str
    per_tx: tuple[float, float] | None
    look: Look | None

    @property
    def verdict(self) -> str:
        return (self.look.verdict if self.look and self.look.verdict else UNTOLD)

    def text(self) -> str:
        if self.per_tx is None or self.look is None:
            return f"{self.cls}: fewer than {MIN_PAIRS} pairs of windows"
        lo, hi = self.look.interval
        return (f"{self.cls}: {self.per_tx[0]:,.0f} -> {self.per_tx[1]:,.0f} a "
                f"transaction, x{self.look.ratio:.4f} [{lo:.4f}, {hi:.4f}]: {self.verdict}")

    def to_json(self) -> JsonDict:
        return {"class": self.cls, "verdict": self.verdict,
                "per_tx": list(self.per_tx) if self.per_tx else None,
                "ratio": self.look.ratio if self.look else None,
                "interval": list(self.look.interval) if self.look else None}


def by_class(windows: Sequence[Window], classes: Sequence[str], k: int, by_lifetime: bool,
             alpha: float, band: float = BAND) -> list[ClassVerdict]:
    """Each class's verdict, at look ``k``'s level (none where there is one class)."""
    if len(classes) < 2:
        return []
    out = []
    for c in classes:
        mine = [w for w in windows if w.cls == c]
        out.append(ClassVerdict(c, _levels(mine), look(mine, max(k, 1), by_lifetime, alpha,
                                                      band)))
    return out


def pairs(windows: Sequence[Window], by_lifetime: bool) -> list[tuple[float, float]]:
    """(log A, log B) of adjacent judged units in run order: windows, or with
    ``by_lifetime`` each lifetime's mean log over its judged windows."""
    units = _units(windows, by_lifetime)
    out = []
    for first, second in zip(units[::2], units[1::2], strict=False):
        if {first[0], second[0]} != {"A", "B"}:
            raise ValueError(f"units out of pairs: {first[0]} then {second[0]}")
        a, b = (first, second) if first[0] == "A" else (second, first)
        out.append((a[1], b[1]))
    return out


def _units(windows: Sequence[Window], by_lifetime: bool) -> list[tuple[str, float]]:
    """(side, log per transaction) of each judged unit, in run order."""
    judged = [w for w in windows if w.judged]
    if not by_lifetime:
        return [(w.side, math.log(w.per_tx)) for w in judged]
    units = []
    for life in sorted({w.lifetime for w in judged}):
        ws = [w for w in judged if w.lifetime == life]
        units.append((ws[0].side, math.fsum(math.log(w.per_tx) for w in ws) / len(ws)))
    return units


def look(windows: Sequence[Window], k: int, by_lifetime: bool, alpha: float,
         band: float = BAND) -> Look | None:
    """Look ``k`` at the windows so far (None: fewer than two pairs)."""
    ps = pairs(windows, by_lifetime)
    if len(ps) < MIN_PAIRS:
        return None
    a_k = look_alpha(alpha, k)
    ratio, lo, hi, _ = paired_log_ratio([a for a, _ in ps], [b for _, b in ps], a_k)
    return Look(k, len(ps), ratio, (lo, hi), 1 - a_k, decide(ratio, (lo, hi), band))


def decide(ratio: float, ci: tuple[float, float], band: float) -> str | None:
    """The words for a ratio of instructions (more is worse), or None to go on."""
    lo, hi = ci
    if lo > 1 and ratio > 1 + band:
        return WORSE
    if hi < 1 and ratio < 1 - band:
        return BETTER
    if 1 - band <= lo and hi <= 1 + band:
        return SAME
    return None


@dataclass
class CountedVerdict:
    """The counted comparison's verdict: the last look's, or could not tell."""

    verdict: str
    ratio: float | None
    interval: tuple[float, float] | None
    band: float
    alpha: float
    looks: list[Look] = field(default_factory=list)
    per_tx: tuple[float, float] | None = None  # the sides' geometric means
    cv: tuple[float, float] | None = None  # the sides' judged units' CVs

    @property
    def reach(self) -> float | None:
        return reach(self.interval)

    @property
    def exit_code(self) -> int:
        return 3 if self.verdict == WORSE else 4 if self.verdict == UNTOLD else 0

    def line(self) -> str:
        head = {WORSE: "WORSE", BETTER: "BETTER", SAME: "NO SIGNIFICANT DIFFERENCE",
                UNTOLD: "COULD NOT TELL"}[self.verdict]
        if self.ratio is None or self.interval is None:
            return f"verdict: {head} (fewer than {MIN_PAIRS} pairs of windows)"
        lo, hi = self.interval
        reached = self.reach
        told = self.verdict in (WORSE, BETTER)
        return (f"verdict: {head}: instructions per transaction x{self.ratio:.4f} "
                f"[{lo:.4f}, {hi:.4f}], {self.looks[-1].level:.2%} interval "
                f"(band +-{self.band:.2%})"
                + ("" if told or reached is None else f"; {reach_text(reached)}"))

    def to_json(self) -> JsonDict:
        return {"verdict": self.verdict, "ratio": self.ratio,
                "interval": list(self.interval) if self.interval else None,
                "reach": self.reach, "band": self.band, "alpha": self.alpha,
                "per_tx": list(self.per_tx) if self.per_tx else None,
                "cv": list(self.cv) if self.cv else None,
                "looks": [x.to_json() for x in self.looks]}


def verdict(windows: Sequence[Window], looks: list[Look], by_lifetime: bool,
            alpha: float, band: float = BAND) -> CountedVerdict:
    """The verdict of the looks taken (the last decides; none decided: could not
    tell), with each side's level and spread."""
    last = looks[-1] if looks else None
    words = last.verdict if last is not None and last.verdict else UNTOLD
    return CountedVerdict(words, last.ratio if last else None,
                          last.interval if last else None, band, alpha, list(looks),
                          _levels(windows), _cvs(windows, by_lifetime))


def _levels(windows: Sequence[Window]) -> tuple[float, float] | None:
    sides = [[math.log(w.per_tx) for w in windows if w.judged and w.side == s]
             for s in "AB"]
    if not all(sides):
        return None
    a, b = (math.exp(math.fsum(x) / len(x)) for x in sides)
    return a, b


def _cvs(windows: Sequence[Window], by_lifetime: bool) -> tuple[float, float] | None:
    try:
        ps = pairs(windows, by_lifetime)
    except ValueError:
        return None
    if len(ps) < 2:
        return None
    out = []
    for side in (0, 1):
        xs = [p[side] for p in ps]
        mean = math.fsum(xs) / len(xs)
        out.append(math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (len(xs) - 1)))
    return out[0], out[1]


@dataclass(frozen=True)
class FunctionMove:
    """One function's inclusive instructions per transaction on each side (callgrind's
    own costs: the function and everything it called)."""

    function: str
    baseline: float
    candidate: float

    @property
    def change(self) -> float:
        return self.candidate - self.baseline

    def text(self, total: float) -> str:
        """``+1.25% of the total in set_parameters (142 -> 674 a transaction)``."""
        name = self.function.split("(", 1)[0]
        return (f"{self.change / total:+.2%} of the total in {name} "
                f"({self.baseline:,.0f} -> {self.candidate:,.0f} a transaction)")

    def to_json(self) -> JsonDict:
        return {"function": self.function, "baseline": self.baseline,
                "candidate": self.candidate, "change": self.change}


# A function whose inclusive count is most of the total (the thread's entry points,
# do_command ...) moves by the whole change; the ranking skips those that only carry it.
CARRIER_SHARE = 0.9


def moved(base: dict[str, float], cand: dict[str, float], total: float, top: int = 8
          ) -> list[FunctionMove]:
    """The functions whose inclusive instructions per transaction moved most between
    the sides (``total``: the baseline's per transaction), largest first. A change
    carried whole up a chain of callers is named once, at the deepest function that
    carries it (the smallest inclusive count among those with the same change, within
    2%); the thread's entry points (nearly all of its count) and code without a symbol
    (an address: a stripped build's static functions, whose change its named callers
    carry) are left out."""
    rows = [FunctionMove(f, base.get(f, 0.0), cand.get(f, 0.0))
            for f in {*base, *cand} if not f.startswith("0x")
            and max(base.get(f, 0.0), cand.get(f, 0.0)) < CARRIER_SHARE * total]
    rows.sort(key=lambda r: (-abs(r.change), r.function))
    kept: list[FunctionMove] = []
    for r in rows:
        if abs(r.change) < 0.0005 * total:
            break
        same = next((i for i, k in enumerate(kept)
                     if abs(r.change - k.change) <= 0.02 * abs(k.change)), None)
        if same is None:
            kept.append(r)
        elif _size(r) < _size(kept[same]):
            kept[same] = r
    return sorted(kept, key=lambda r: (-abs(r.change), r.function))[:top]


def _size(r: FunctionMove) -> float:
    return max(r.baseline, r.candidate)
