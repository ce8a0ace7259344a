"""Plain-text tables and blocks the commands print: a table (and one turned on its side),
a run's summary and the conditions it ran under, how each build read a my.cnf, and a
my.cnf judged per build."""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from .. import workloads
from ..analysis.phases import describe
from ..server.mycnf import shown_like
from ..store import RunSummary
from ..store.activity import Collected
from ..store.details import RunDetails
from ..table import print_table


def print_columns(rows: list[dict[str, Any]], cols: list[str]) -> None:
    """A wide table turned on its side: one line per column, one column per row."""
    def fmt(v: Any) -> str:
        return "-" if v is None else f"{v:.2f}" if isinstance(v, float) else str(v)
    heads = [f"{r['server']} / {r['variant']}" for r in rows]
    left = max(len(c) for c in cols)
    widths = [max(len(h), *(len(fmt(r.get(c))) for c in cols)) for h, r in
              zip(heads, rows, strict=True)]
    print(" " * left + "  " + "  ".join(h.rjust(w) for h, w in zip(heads, widths,
                                                                    strict=True)))
    for c in cols[2:]:
        print(c.ljust(left) + "  " + "  ".join(fmt(r.get(c)).rjust(w) for r, w in
                                               zip(rows, widths, strict=True)))


def _structured(v: Any) -> bool:
    """A mapping, or a list of them: lines of their own (or a report's), not one line."""
    return isinstance(v, dict) or (isinstance(v, list) and any(isinstance(x, dict)
                                                                for x in v))


def print_summary(summary: RunSummary) -> None:
    """A run's summary: its figures, then its prepare, side loads, its workload's own
    lines (SSB's flights, TPC-C's transactions), phases and expected findings a line
    each."""
    print("\nsummary:")
    for k, v in [*summary.to_json().items(), *summary.measured.items()]:
        if v is not None and not _structured(v):
            print(f"  {k:>32}: {v}")
    for label, text in _summary_lines(summary):
        print(f"  {label:>32}: {text}")


def _summary_lines(summary: RunSummary) -> list[tuple[str, str]]:
    """(label, text) of each of a run's prepares, side loads, its workload's own lines,
    phases and expected findings."""
    lines = [(f"prepare {p.database}", f"{p.rows} rows in {p.seconds} s{p.own_text()}")
             for p in summary.prepare]
    lines += [(f"side load {x.name}", f"{x.kind} {x.status}, {x.seconds} s, "
               f"{len(x.passes)} pass(es), {x.bytes} bytes, {x.rows} rows"
               + (f"; {x.error}" if x.error else "")) for x in summary.side_loads]
    plugin = workloads.of_summary(summary)
    lines += plugin.show(summary) if plugin else []
    lines += [(f"phase {ph.phase}", f"{ph.seconds} s, main tps "
               f"{ph.tps_median_inside} inside vs {ph.tps_median_outside} outside")
              for ph in summary.phases or []]
    return lines + [("expected", describe(x)) for x in summary.expectations]


def print_conditions(details: RunDetails, collectors: Collected) -> None:
    """What a reader of a run needs beside its figures: how the server was made ready,
    the my.cnf reading, the CPU wake-up probe, and what each collector did or did not."""
    lines = [*_server_lines(details), *_cpu_lines(details), *_collector_lines(collectors)]
    if lines:
        print("\nconditions:")
        for line in lines:
            print(f"  {line}")


def _server_lines(details: RunDetails) -> list[str]:
    """How the server was made ready, and how it read the my.cnf."""
    lines = []
    state = details.server_state or {}
    if state:
        lines.append(f"server: {state.get('how')} ({state.get('seconds')} s)")
        lines += [f"server: {n}" for n in state.get("notes", [])]
    return lines + [f"my.cnf: {n}" for n in (details.my_cnf or {}).get("notes", [])]


def _cpu_lines(details: RunDetails) -> list[str]:
    """The CPU wake-up probe, keep-alive and placement."""
    lines = []
    probe = details.wakeup_probe
    if probe:
        lines.append(f"wake-up probe: {probe['idle_tps']} tps idle, {probe['one_core_busy_tps']}"
                     f" with one core kept busy (x{probe['ratio']})"
                     + ("; idle CPUs wake slowly here" if probe.get("large") else ""))
    if details.cpu_keepalive:
        lines.append(f"cpu keep-alive: {details.cpu_keepalive}")
    place = details.cpu_placement
    if place:
        lines.append(f"cpu placement: mysqld ({place['mysqld_threads']} threads) on CPUs "
                     f"{place['server']}, the client on {place['client']}")
    return lines


def _collector_lines(collectors: Collected) -> list[str]:
    """What each collector did: its notes, then its samples and cost."""
    lines = [f"collector note: {n}" for n in collectors.notes]
    for name, c in collectors.polled.items():
        lines.append(f"collector {name}: {c.samples} samples every {c.interval_s} s, "
                     f"{c.failures} failed, {c.duration_ms_median} ms each (p99 "
                     f"{c.duration_ms_p99} ms)")
    return lines


def print_cnf_report(path: Path, report: dict[str, list[Any]], ref: str | None,
                      files: dict[str, Any], memory: dict[str, Any]) -> None:
    for name, verdicts in report.items():
        print(f"{path} on {name}" + (f" (written for {ref})" if ref else "") + ":")
        for note in files[name].notes:
            print(f"  note: {note}")
        rows = [{"option": v.option, "value": "" if v.value is None else v.value,
                 "status": v.status, "becomes": _becomes(v), "uses": _uses(v),
                 "why": v.note} for v in verdicts]
        print_table(rows, ["option", "value", "status", "becomes", "uses", "why"])
        counts = Counter(v.status for v in verdicts)
        print("  " + ", ".join(f"{n} {s}" for s, n in counts.items()))
        for line in _what_it_holds(name, verdicts, memory.get(name)):
            print(f"  {line}")
        print()


def print_manual(path: Path, m: Any) -> None:
    """A file held to a series' manual (no binary of it runs here): each of its lines the
    manual lists, then the defaults that changed for what it leaves out; each row names
    the page it was read from."""
    s = m.series
    print(f"{path} on {s.name}, read from the {s.title} manual (no {s.title} mysqld runs "
          f"here: the file read as {s.reader} reads it, held to the manual's rows of what "
          f"changed since {s.since}; what {s.since} changed: --server {s.reader}):")
    if m.lines:
        print_table([{"option": o, "value": "" if v is None else v, "status": r.change,
                      "why": r.note if r.change == "removed" else
                      f"the file's value holds ({s.title}'s default {r.now}, was {r.was})",
                      "page": r.page}
                     for o, v, r in m.lines], ["option", "value", "status", "why", "page"])
    else:
        print("  no line of the file is among the manual's rows")
    if m.unset:
        print(f"  not set here, defaults {s.title} changed from {s.since}:")
        print_table([{"option": r.option, s.title: r.now, s.since: r.was, "page": r.page}
                     for r in m.unset], ["option", s.title, s.since, "page"])
    print()


def _what_it_holds(name: str, verdicts: list[Any], memory: Any) -> list[str]:
    """Under a build's table: the numbers it adjusts, its deprecation warnings, and the
    memory the file asks of it."""
    adjusted = [f"{v.option} {v.adjusted}" for v in verdicts if v.adjusted]
    return ([f"{name} adjusts: {', '.join(adjusted)}"] if adjusted else []) + \
        [f"{name} says {v.option} is {v.deprecated}" for v in verdicts if v.deprecated] + \
        ([memory.line(name)] if memory is not None else [])


def _uses(v: Any) -> str:
    """The value the build will hold of the line (cnf check's "uses"), where it says
    more than the line: a size in bytes, a number it adjusted."""
    if v.uses is None or str(v.uses) == str(v.new_value if v.new_name else v.value):
        return ""
    return f"{v.uses} (adjusted)" if v.adjusted else str(v.uses)


def _becomes(v: Any) -> str:
    """What an option of the file becomes on the build (cnf check's "becomes")."""
    if v.status == "default differs":
        return ((f"{v.resolved}: " if v.resolved else "") +
                f"default here {shown_like(v.default, v.value)}, there "
                f"{shown_like(v.reference_default, v.value)}")
    if v.new_name:
        return str(v.new_name) + ("" if v.new_value is None else f" = {v.new_value}")
    if v.status in ("removed", "not in this build"):
        return "(dropped)"
    return f"{v.resolved} (as the server reads it)" if v.resolved else ""


def print_new_defaults(name: str, ref: str, moved: list[tuple[str, str, str]]) -> None:
    """The defaults that differ between the two builds for options the file leaves out."""
    print(f"{name}: {len(moved)} default(s) differ from {ref} for options the file leaves "
          "out (what the upgrade changes without a line of the file):")
    def cut(v: str) -> str:
        return v if len(v) <= 60 else v[:57] + "..."
    print_table([{"option": o, name: cut(d), ref: cut(r)} for o, d, r in moved],
                ["option", name, ref])
    print()


def host_line(host: dict[str, Any]) -> str:
    """One host as the reports name it: machine, kernel, the memory settings that move
    InnoDB's numbers, and the harness commit that measured (a fact missing: ?)."""
    h = {k: "?" if v is None else v for k, v in host.items()}
    return (f"{h.get('hostname', '?')}: {h.get('cpus', '?')} x {h.get('cpu_model', '?')}, "
            f"{h.get('mem_total_mb', '?')} MB, kernel {h.get('kernel', '?')}, THP "
            f"{h.get('thp', '?')}, swappiness {h.get('swappiness', '?')}, harness "
            f"{h.get('harness_commit', '?')}")


def print_against(ref: Any, held: Any, path: str) -> None:
    """A run set held against an experiment's reference (analysis/reference.py): each
    finding, then each figure's ratio, then the tally."""
    print(f"\nagainst the reference {path} (run sets {', '.join(ref.run_sets)}, "
          f"{ref.made_at}, harness {ref.harness}; host {ref.host.get('cpu_model')}, "
          f"{ref.host.get('cpus')} CPUs, {ref.host.get('mem_total_mb')} MB):")
    for note in held.notes:
        print(f"  note: {note}")
    for a in held.agreements:
        print("  " + a.text())
    rows = [{"server": f.server, "variant": f.variant, "figure": f.key,
             "reference": f.median, "range": f"{f.low:.2f}-{f.high:.2f}",
             "yours / reference": None if r is None else f"x{r:.3f}"}
            for f, r in held.figures]
    if rows:
        print("  figures (the hardware's as much as the finding's; they decide nothing):")
        print_table(rows, ["server", "variant", "figure", "reference", "range",
                           "yours / reference"], indent="    ")
    print(f"  {held.tally()}")
