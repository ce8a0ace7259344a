"""The ``harness`` command line: every sub-command, its flags and help (the reference in
the docs is generated from it). Each group of commands declares its sub-parsers in
:mod:`.args` (run, servers, results, compare), with nothing of the commands' code:
--help loads none of it."""
from __future__ import annotations

import argparse
import textwrap

from .. import __version__, exits
from ..server import cache
from .args import compare, results, run, servers
from .args.common import REGRESS_METRICS

__all__ = ["REGRESS_METRICS", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="harness",
        description="Benchmark MySQL, Percona Server and MariaDB builds in sandboxes with\n"
                    "sysbench, and keep every number in a results store.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=exits.table().replace("%", "%%") + "\n\n" + textwrap.fill(
               "Results default to harness.db in the checkout's results/ (else "
               "/var/lib/mysql-harness/results for root, ~/.local/share/mysql-harness/"
               "results for others), from any folder; HARNESS_RESULTS moves it. "
               "Server builds and sandboxes live under ~/.cache/mysql-harness, or "
               "/var/cache/mysql-harness for root (HARNESS_CACHE); its snapshots and "
               "stopped kept sandboxes are pruned past HARNESS_CACHE_BUDGET (default "
               f"{cache.DEFAULT_BUDGET}). Two harness runs on one host share the cache "
               "through locks, and measure one at a time (the measurement lock in "
               "/run/lock; HARNESS_MEASURE_LOCK moves it, =off or --no-measure-lock "
               "measures beside anything; a run waits for it up to its own length, "
               "HARNESS_MEASURE_LOCK_WAIT_S sets the bound).", 92, break_on_hyphens=False))
    p.add_argument("--version", action="version", version=f"harness {__version__}")
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND")
    # in the order --help lists them
    commands = (
        run.add_run, run.add_validate, servers.add_servers, servers.add_sandboxes,
        servers.add_capture, servers.add_cnf, servers.add_images, results.add_runs,
        results.add_show, results.add_report, results.add_reference, compare.add_compare,
        results.add_regress, run.add_nightly, results.add_notify, results.add_history,
        servers.add_snapshots, results.add_export, results.add_artifacts, results.add_store,
    )
    for add in commands:
        add(sub)
    return p
