"""``harness validate``: scenario files checked as far as this host can, without
loading the runner, the reports or the store (the scenario model and the plan's
checks are all it uses)."""
from __future__ import annotations

import argparse
import sys
from typing import Any

from ..errors import HarnessError
from ..exits import Exit
from ..runner.guard import check_static
from ..runner.options import RunOptions
from ..runner.plan import check_cells, check_profile, options_read, select_servers, select_variants
from ..scenario import load_scenario
from ..server import catalog


def cmd_validate(a: argparse.Namespace) -> int:
    """Every file checked, every problem said; 8 when a file is wrong, else the first
    other refusal's code (9: a file not there)."""
    codes = []
    for f in a.files:
        try:
            _validate(f, a.target)
        except HarnessError as e:
            codes.append(Exit(e.exit_code))
            print(f"error: {e}", file=sys.stderr)
    return Exit.FINDING if Exit.FINDING in codes else codes[0] if codes else Exit.OK


def _validate(f: str, target: str) -> None:
    """One scenario file checked as far as this host can: its options against each
    installed build, the guard's static checks, the host profile where it would run."""
    sc = load_scenario(f)
    specs = select_servers(sc, RunOptions())
    installed, builds = _installed(specs)
    external = [s.title for s in specs if s.external]
    variants = select_variants(sc, RunOptions())
    cells = check_cells(sc, builds, variants)
    check_static(sc, specs, options_read(sc, cells, variants))
    skipped = [s.title for s in specs if s.name not in installed and not s.external]
    profile = check_profile(sc, [catalog.get_entry(s.name) for s in specs if s.name],
                            target, bool(external))
    print(f"{f}: ok{_not_checked(skipped, external)}")
    for line in profile:
        print(f"  host_profile applies {line}")
    for i, d in enumerate(sc.model.dataset):
        for line in d.content_summary():
            print(f"  dataset[{i}]: {line}")
    for line in sc.model.workload.content_summary():
        print(f"  workload: {line}")
    print_my_cnf_reading(cells)


def _installed(specs: list[Any]) -> tuple[list[str], list[Any]]:
    """The catalog servers among ``specs`` installed here, and their builds."""
    names = [s.name for s in specs if s.name and catalog.is_installed(catalog.get_entry(s.name))]
    return names, [catalog.detect_build(catalog.get_entry(n).install_dir, name=n)
                   for n in names]


def _not_checked(skipped: list[str], external: list[str]) -> str:
    """What validate could not check: builds not installed, external servers."""
    note = (f" (options not checked against {', '.join(skipped)}: not installed; "
            "'harness servers install NAME' first)") if skipped else ""
    if external:
        note += (f" (external {', '.join(external)}: not contacted; 'harness run' checks "
                 "their variables and what the harness may do there)")
    return note


def print_my_cnf_reading(cells: list[Any]) -> None:
    """How each build read each variant's my.cnf: what it took, what was set aside."""
    for c in cells:
        if not c.my_cnf:
            continue
        aside = c.my_cnf.set_aside
        print(f"  variants.{c.variant}.my_cnf on {c.build.name}: {len(c.options)} options "
              f"from {len(c.my_cnf.files)} file(s)"
              + (f"; set aside (the sandbox's own apply): {', '.join(aside)}" if aside else ""))
        for n in c.my_cnf.notes:
            if not n.endswith("the sandbox sets it"):
                print(f"    {n}")
