"""The parsers of the commands that run: run, validate, nightly."""
from __future__ import annotations

import argparse

from ...analysis.defaults import COUNTED_WINDOWS
from .common import (
    AGAINST_HELP,
    COUNTER_HELP,
    MEASURE_LOCK_HELP,
    NOTIFY_HELP,
    SERVER_REF,
    Command,
    port,
    positive,
    results_arg,
)


def add_run(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    r = sub.add_parser("run", help="run a scenario: every server x variant x repetition",
                       description="Run a scenario file. Prints run ids, progress while "
                                   "preparing and running, and a summary table.")
    r.add_argument("scenario", help="scenario YAML file (see scenarios/)")
    r.add_argument("--server", action="append", metavar="NAME|FILE|DIR",
                   help="run on this build instead of the scenario's servers "
                        f"(repeatable): {SERVER_REF}")
    r.add_argument("--basedir", action="append", metavar="DIR",
                   help="run on an unpacked MySQL, Percona Server or MariaDB tarball "
                        "(repeatable; with --server, replaces the scenario's servers)")
    r.add_argument("--variant", action="append", metavar="NAME",
                   help="run only this variant (repeatable)")
    r.add_argument("--repetitions", type=int, metavar="N", help="override the scenario's")
    r.add_argument("--target", default="local",
                   help="where servers run: local (sandboxes on this host, the default), "
                        "docker (a container per server, from the images of 'harness images "
                        "build'; dockerd is started when none runs), or ansible:INVENTORY "
                        "(lab hosts, by the playbooks in ansible/; the servers are spread "
                        "over the hosts of its mysql_servers group and run in parallel; "
                        "ansible:INVENTORY@HOST pins one host)")
    r.add_argument("--run-set", help=argparse.SUPPRESS)  # a lab host's share of a matrix
    r.add_argument("--fail-fast", action="store_true", help="stop at the first failed run")
    r.add_argument("--keep", action="store_true",
                   help="leave each sandbox running at the end, to inspect it (prints how "
                        "to connect; 'harness sandboxes list|stop|remove' manage them; not "
                        "after Ctrl-C)")
    r.add_argument("--interleave", action="store_true",
                   help="run every cell once, then again in reverse (A B, B A, A B ...), so "
                        "drift of the machine hits every variant alike (the scenario's "
                        "interleave: true)")
    r.add_argument("--scale", type=float, metavar="F",
                   help="multiply the scenario's sizes by F for larger hardware: datasets, "
                        "buffer pool and redo log sizes, the memory limit, the swap file, "
                        "the balloon, side-load sizes, vm.*_bytes and expectations marked "
                        "scaled "
                        "(durations, threads and IO limits stay)")
    r.add_argument("--no-measure-lock", action="store_true", help=MEASURE_LOCK_HELP)
    _counted(r)
    r.add_argument("--i-know-this-is-disposable", action="store_true",
                   help="allow prepare, DROP TABLE, SET GLOBAL and write workloads on the "
                        "external servers (host: ...) that the scenario marks disposable: "
                        "true, and swap and vm.* sysctls on this host when its host: "
                        "says disposable: true; without both, the harness only reads from "
                        "servers it did not create and leaves the host alone")
    r.add_argument("--resume", metavar="RUN_SET",
                   help="complete an interrupted or partly failed run set: run only the "
                        "server x variant x repetition cells that have no ok run in it")
    _outputs(r)
    r.add_argument("--against", metavar="REFERENCE", help=AGAINST_HELP)
    r.add_argument("--json", action="store_true", help="print the results as JSON")
    r.add_argument("--quiet", action="store_true", help="no progress output")
    results_arg(r)
    r.set_defaults(func=Command("run", "cmd_run"))


def add_validate(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    v = sub.add_parser("validate", help="check scenario files; report every problem")
    v.add_argument("files", nargs="+")
    v.add_argument("--target", default="local",
                   help="where the scenario would run (as for 'run'): a host_profile is "
                        "tried there, on each lab host of ansible:INVENTORY")
    v.set_defaults(func=Command("validate", "cmd_validate"))


def add_nightly(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    ni = sub.add_parser(
        "nightly", help="the lab's nightly: its scenarios, then regress from the night's "
                        "start (exit 3: a new regression; 1: a run failed; 7: both)",
        description="Each scenario by a harness run of its own, one after another (a "
                    "failed one does not stop the next, and is posted to the webhook); "
                    "with --target ansible:INVENTORY, the same on every host of its "
                    "mysql_servers group at once, into one store. Then harness regress "
                    "--since the night's start. Every scenario file is read before any "
                    "server starts.")
    ni.add_argument("scenarios", nargs="*", metavar="SCENARIO",
                    help="scenario files (default: the checkout's scenarios/nightly/*.yaml)")
    ni.add_argument("--target", default="local",
                    help="local (the default), docker, ansible:INVENTORY (every host at "
                         "once) or ansible:INVENTORY@HOST")
    ni.add_argument("--notify", metavar="URL|@FILE", help=NOTIFY_HELP + ", when a run "
                    "fails or a regression is new")
    ni.add_argument("--no-regress", action="store_true",
                    help="run the scenarios only (a lab host's share of a night)")
    ni.add_argument("--count-instructions", action="store_true",
                    help="after each scenario's run, a counted run of it (harness run "
                         "--measure instructions): mysqld's instructions per transaction "
                         "per cell beside its tps, which regress follows too (changes from "
                         "0.2%%); local sandboxes only")
    ni.add_argument("--i-know-this-is-disposable", action="store_true",
                    help="passed to each harness run")
    results_arg(ni)
    ni.set_defaults(func=Command("run", "cmd_nightly"))


def _outputs(r: argparse.ArgumentParser) -> None:
    """What a run gives beside its store: live metrics and the HTML report."""
    r.add_argument("--no-collectors", action="store_true",
                   help="sample nothing but the workload (to measure collector overhead)")
    r.add_argument("--metrics-port", type=port, metavar="PORT",
                   help="serve live Prometheus metrics on 127.0.0.1:PORT/metrics during the run")
    r.add_argument("--pushgateway", metavar="URL",
                   help="also push the live metrics to this Prometheus Pushgateway every 10 s")
    r.add_argument("--html", action="store_true",
                   help="write the HTML report (results/reports/RUN_SET/report.html) for a "
                        "scenario without expected findings too (an experiment always "
                        "writes it; harness nightly asks for it, so the history site links "
                        "each run to its report)")


def _counted(r: argparse.ArgumentParser) -> None:
    """A counted run: instructions per transaction instead of time."""
    r.add_argument("--measure", choices=("time", "instructions"),
                   help="instructions: each server and variant's mysqld under callgrind "
                        "(valgrind) for one lifetime, a warm-up window and --windows "
                        "judged ones of --events transactions on 1 client thread; the run's "
                        "figure is instructions per transaction (TPC-C: each type too), "
                        "which harness regress follows as it follows tps. Local sandboxes "
                        "of sysbench and TPC-C scenarios. Default: the scenario's "
                        "measure:, else time")
    r.add_argument("--events", type=positive, metavar="N",
                   help="--measure instructions: transactions a window (default 10000 for "
                        "oltp_point_select, 1000 for other sysbench tests, 100 New-Orders "
                        "for TPC-C)")
    r.add_argument("--windows", type=positive, default=COUNTED_WINDOWS, metavar="N",
                   help="--measure instructions: judged windows a run (default 4)")
    r.add_argument("--counter", choices=("auto", "callgrind", "perf"), default="auto",
                   help=COUNTER_HELP)
