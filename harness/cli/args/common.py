"""What the sub-commands' parsers share: the command a sub-parser runs (imported
when it runs), argument types, help texts said by several, the store's flag."""
from __future__ import annotations

import argparse
import importlib
import os
from datetime import UTC, datetime

# regress's figures, by name, each with the run summary's key it reads
# (analysis/figures.py's REGRESS_METRICS, from the workload plugins; named here so that
# --help and `harness runs` load no plugin: a unit test holds them equal).
REGRESS_KEYS = {"tps": "tps_median", "p95_ms": "latency_p95_ms",
                "rows_per_s": "rows_per_s_median", "statements_per_s": "statements_per_s",
                "ssb_warm_s": "warm_median_s", "tpmc": "tpmc",
                "instructions": "instructions_per_transaction"}
REGRESS_METRICS = tuple(REGRESS_KEYS)


class Command:
    """A sub-command's function, by module and name, imported when the command runs:
    the parser and --help load none of the commands' code."""

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def __call__(self, a: argparse.Namespace) -> int:
        module = importlib.import_module(f"harness.cli.{self.module}")
        return int(getattr(module, self.name)(a))


SERVER_REF_SHORT = "a catalog name, a vendor tarball's path or an unpacked folder"

SERVER_REF = ("a catalog name ('harness servers list'), the path of a vendor's tarball "
              "(one the catalog pins, or one installed once with 'harness servers install "
              "FILE --trust-unpinned'), or the folder of one unpacked")

MEASURE_LOCK_HELP = (
    "measure even while another harness run measures on this host (by default each "
    "measured part waits for the host's measurement lock, saying for whom; the scenario's "
    "measure_lock: false, or HARNESS_MEASURE_LOCK=off, does the same)")


AGAINST_HELP = ("hold the findings against an experiment's reference file "
                "(scenarios/reference/, or one 'harness reference' wrote): each finding "
                "agrees when both reach the same outcome and their 95%% intervals "
                "overlap, else DIFFERS (exit 3); not comparable when the reference's "
                "interval holds the finding's bound; "
                "figures shown as ratios to the reference's, with both hosts")


NOTIFY_HELP = ("post a JSON message to this webhook (Slack's shape: text, and the details "
               "under harness); @FILE reads the URL from a file, and HARNESS_NOTIFY_URL "
               "says it when the flag is not given: a webhook's URL is its secret, and a "
               "command line is visible to every user of the host")


def port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port}: a port is 1 to 65535")
    return port


def since(text: str) -> str:
    """An ISO date or time, as the store's started_at compares (UTC when no zone)."""
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an ISO date or time (2026-11-24, 2026-11-24T06:00)") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC).isoformat()


def positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{n}: at least 1")
    return n


def probability(text: str) -> float:
    try:
        p = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < p < 1:
        raise argparse.ArgumentTypeError(f"{p}: between 0 and 1")
    return p


def results_arg(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--results", metavar="URL", default=os.environ.get("HARNESS_STORE"),
                    help="results store: any SQLAlchemy URL, e.g. "
                         "mysql+pymysql://user@host/db, or a path (a folder: its "
                         "harness.db; a file ending .db) (default: $HARNESS_STORE, else "
                         "harness.db in the results folder); prefer HARNESS_STORE for "
                         "URLs with a password, so it stays out of the process list")

COUNTER_HELP = ("--measure instructions: what counts them - callgrind (valgrind: the "
                "connection thread's, exact, ~8-30x slower, functions named), perf (the "
                "hardware counter by perf stat -p: every mysqld thread, native speed, no "
                "functions; where the host's PMU answers) or auto (the default: perf where "
                "the hardware counts, else callgrind)")
