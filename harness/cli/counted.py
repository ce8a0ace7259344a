"""``harness compare --measure instructions``: the counted comparison run, its verdict
printed and saved (compare.json and its page, as a timed comparison's are)."""
from __future__ import annotations

import argparse
import json

from ..analysis.counted import BAND
from ..errors import InputError
from ..report import compare_html, counted_html
from ..report.select import report_dir
from ..runner.counted import CountedResult, counted_compare
from ..runner.designs import CnfChange
from ..runner.request import CompareRequest
from ..store import open_store


def cmd_counted(a: argparse.Namespace, req: CompareRequest,
                changes: list[CnfChange] | None) -> int:
    store = open_store(a.results)
    band = BAND if a.noise is None else a.noise / 100
    result = counted_compare(req, store, band)
    out = result.to_json()
    out["exit_code"] = result.verdict.exit_code
    if changes is not None:
        out["cnf_diff"] = [c.to_json() for c in changes]
    saved = compare_html.save(out, report_dir(store, result.run_set),
                              page_of=counted_html.render)
    if a.json:
        print(json.dumps(out, indent=2))
    else:
        _print(result)
        print(f"saved: {saved.json}, {saved.html} (the latest also as "
              f"{saved.latest_json.name} and {saved.latest_html.name})")
    return result.verdict.exit_code


def check_flags(a: argparse.Namespace) -> None:
    """The flags a counted comparison cannot take, refused before anything runs."""
    clashes = [flag for flag, given in (
        ("--run-sets", a.run_sets), ("--metric", a.metric), ("--watch", a.watch),
        ("--repetitions", a.repetitions != 5)) if given]
    if clashes:
        raise InputError(f"--measure instructions counts two option sets or two builds: not "
                         f"with {', '.join(clashes)}")


def _print(r: CountedResult) -> None:
    p, v = r.plan, r.verdict
    print()
    print(f"counter: {p.counter.name} ({r.counter}), {p.counter.threads}'s instructions "
          f"(the hardware counter here: {r.hardware})")
    print(f"design: {p.design}; {p.events:,} transactions a window of {p.probe.name}, "
          f"1 client thread; {len({w.index for w in r.windows if w.judged})} windows judged "
          f"in {r.minutes:.1f} min")
    for side, needs in zip(p.names, r.server_options, strict=False):
        if needs:
            print(f"under the counter ({side}): " + ", ".join(f"{k}={v}" for k, v in
                                                              needs.items()))
    _print_levels(r)
    print(v.line())


def _print_levels(r: CountedResult) -> None:
    """Each side's count a transaction, its spread, what moved and each class's."""
    p, v = r.plan, r.verdict
    if v.per_tx:
        print(f"  {p.names[0]}: {v.per_tx[0]:,.1f} instructions a transaction")
        print(f"  {p.names[1]}: {v.per_tx[1]:,.1f} instructions a transaction")
    if v.cv:
        print(f"  spread of the judged units (CV): {v.cv[0]:.3%} and {v.cv[1]:.3%}")
    if r.moved:
        total = v.per_tx[0] if v.per_tx else 1.0
        print("what moved, by function (inclusive instructions a transaction):")
        for m in r.moved:
            print("  " + m.text(total))
    if r.classes:
        print("by transaction type (instructions a transaction, baseline -> candidate):")
        for c in r.classes:
            print("  " + c.text())
