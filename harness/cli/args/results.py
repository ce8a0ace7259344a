"""The parsers of the commands that read the store: runs, show, report, reference,
regress, notify, history, export, artifacts, store."""
from __future__ import annotations

import argparse

from .common import (
    AGAINST_HELP,
    NOTIFY_HELP,
    REGRESS_METRICS,
    Command,
    positive,
    probability,
    results_arg,
    since,
)


def add_runs(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    rs = sub.add_parser("runs", help="list stored runs")
    rs.add_argument("--scenario")
    rs.add_argument("--run-set")
    rs.add_argument("--json", action="store_true")
    results_arg(rs)
    rs.set_defaults(func=Command("quick", "cmd_runs"))


def add_show(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sh = sub.add_parser("show", help="one run: summary, events, details")
    sh.add_argument("run_id", help="a run id (or an unambiguous prefix)")
    sh.add_argument("--json", action="store_true")
    results_arg(sh)
    sh.set_defaults(func=Command("results", "cmd_show"))


def add_report(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    rp = sub.add_parser("report", help="plots and a self-contained HTML report of run sets "
                        "or runs, with the phase table and expected findings")
    rp.add_argument("ids", nargs="+", metavar="RUN_SET_OR_RUN_ID",
                    help="run sets (printed by harness run) and/or run ids")
    rp.add_argument("-o", "--output", metavar="DIR",
                    help="where PNGs and report.html go (default results/reports/RUN_SET/)")
    rp.add_argument("--no-plots", action="store_true", help="only the phase table")
    rp.add_argument("--judge", metavar="SCENARIO",
                    help="judge the runs' stored series again with this scenario file's "
                         "metric: series expectations (e.g. after changing a threshold); "
                         "printed, not stored")
    rp.add_argument("--plan", action="store_true",
                    help="from the spread of each expected finding's values over these "
                         "run sets (repeats of one experiment), how many runs a cell it "
                         "needs to be decided in 19 of 20 repeats")
    rp.add_argument("--against", metavar="REFERENCE", help=AGAINST_HELP)
    results_arg(rp)
    rp.set_defaults(func=Command("results", "cmd_report"))


def add_reference(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    rf = sub.add_parser(
        "reference", help="an experiment's reference file from stored run sets: the "
                          "findings with values and intervals, each cell's figures, the host",
        description="Write the reference that 'harness report --against' and 'harness run "
                    "--against' hold a reproduction against (scenarios/reference/ ships one "
                    "per experiment). The run sets must be of one scenario.")
    rf.add_argument("ids", nargs="+", metavar="RUN_SET_OR_RUN_ID")
    rf.add_argument("-o", "--output", metavar="FILE", help="default: stdout")
    results_arg(rf)
    rf.set_defaults(func=Command("results", "cmd_reference"))


def add_regress(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    rg = sub.add_parser(
        "regress", help="find change points in the stored history (nightly regressions)",
        description="One value per ok run and metric (the figures each workload declares: "
                    f"{', '.join(REGRESS_METRICS)}) per history: runs of one "
                    "scenario, server, variant, target and host in start order. Change points "
                    "by Apache Otava's E-divisive with t-test merge. Each expected finding "
                    "whose decided outcome changed along a history is listed too "
                    "(reproduced <-> not reproduced; inconclusive verdicts are passed over). "
                    "Exit code 3 when a new regression or a newly lost finding is found "
                    "(its first run after the change started at or after --since; without "
                    "--since, any).")
    rg.add_argument("--scenario", metavar="NAME", help="only this scenario's runs")
    rg.add_argument("--include-compare", action="store_true",
                    help="count the runs harness compare made (left out by default: a "
                         "comparison's sides are not a history, and a switchback's tps mixes "
                         "both)")
    rg.add_argument("--since", metavar="DATE", type=since,
                    help="ISO date or time: only changes whose first run after started "
                         "then or later are new")
    rg.add_argument("--metric", action="append",
                    choices=list(REGRESS_METRICS),
                    help="metric(s) to check (default all; a run is in the histories of "
                         "the metrics its workload reports)")
    rg.add_argument("--window", type=positive, default=30, help="E-divisive split window in runs "
                    "(default 30)")
    rg.add_argument("--p-value", type=probability, default=0.001,
                    help="significance (default 0.001)")
    rg.add_argument("--min-points", type=positive, default=5,
                    help="runs needed before and after a change (default 5)")
    rg.add_argument("--min-magnitude", type=float, metavar="PCT",
                    help="smallest change reported, percent (default: twice the history's "
                         "run-to-run noise, at least 2)")
    rg.add_argument("--json", action="store_true", help="print the change points as JSON")
    rg.add_argument("--notify", metavar="URL|@FILE", help=NOTIFY_HELP + ", when a "
                    "regression is new (a failed post is said on stderr; the exit code "
                    "stays 3)")
    results_arg(rg)
    rg.set_defaults(func=Command("results", "cmd_regress"))


def add_notify(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    no = sub.add_parser("notify", help="post a message to the nightly's webhook (as "
                                       "regress --notify does for a new regression)",
                        description="Post {\"text\": MESSAGE} (Slack's incoming-webhook "
                                    "shape) to the webhook; make nightly does when a run "
                                    "fails. Without a webhook configured it says so and "
                                    "posts nothing (exit 0); a failed post exits 6.")
    no.add_argument("message")
    no.add_argument("--notify", metavar="URL|@FILE", help=NOTIFY_HELP)
    no.set_defaults(func=Command("results", "cmd_notify"))


def add_history(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    hi = sub.add_parser(
        "history", help="each stored history (scenario x server x variant x target x "
                        "host): its latest values and open regressions; --html: the site",
        description="Each history as harness regress reads it. With --html DIR, a static "
                    "site (no script, opens offline): an index of the histories, newest "
                    "first, with trend lines and open regressions; a page per history "
                    "with each metric's runs as points linked to their reports, the noise "
                    "band, change points with their size, 95% interval and what differed, "
                    "and what the history can see. Runs made by harness compare are left "
                    "out unless --include-compare.")
    hi.add_argument("--html", metavar="DIR", help="write the site here (DIR/index.html)")
    hi.add_argument("--scenario", help="only this scenario's histories")
    hi.add_argument("--title", default="benchmark history", help="the site's title")
    hi.add_argument("--include-compare", action="store_true",
                    help="count the runs harness compare made (A/B and switchback)")
    results_arg(hi)
    hi.set_defaults(func=Command("results", "cmd_history"))


def add_export(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    ex = sub.add_parser("export", help="a run's samples in long format "
                                       "(run_id,t,time,source,metric,labels,value; t on the "
                                       "run clock, time the wall clock, UTC)")
    ex.add_argument("run_id")
    ex.add_argument("--format", choices=["csv"], default="csv")
    ex.add_argument("-o", "--output", metavar="FILE", help="default: stdout")
    results_arg(ex)
    ex.set_defaults(func=Command("results", "cmd_export"))


def add_artifacts(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    af = sub.add_parser("artifacts", help="a run's files, from the store itself (my.cnf, "
                                          "error log, variables, tool output)",
                        description="List the files stored with a run, print one, or write "
                                    "them all to a folder. They come from the store, so a "
                                    "shared store has them on every machine.")
    af.add_argument("run_id")
    af.add_argument("name", nargs="?", help="print this file (as 'list' names it)")
    af.add_argument("-o", "--output", metavar="DIR", help="write every file under DIR")
    results_arg(af)
    af.set_defaults(func=Command("results", "cmd_artifacts"))


def add_store(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    st = sub.add_parser("store", help="results store maintenance")
    st.add_argument("action", choices=["check", "migrate", "replay-spool"],
                    help="check: integrity of the store, runs left 'running' by a dead "
                         "harness process and runs waiting in their spool; migrate: "
                         "upgrade a store of an older format version in place; "
                         "replay-spool: store the runs a store that was away could not "
                         "take, from their spools (every run of this store whose harness "
                         "is gone, or the run folders or spool files named)")
    st.add_argument("spools", nargs="*", metavar="PATH",
                    help="replay-spool: a run's folder or its spool.jsonl.gz")
    st.add_argument("--repair", action="store_true",
                    help="check: mark the runs whose harness process is gone 'interrupted'")
    st.add_argument("--salvage", metavar="NEW.db",
                    help="check: copy every run still readable in a damaged SQLite store "
                         "into a new store file (a run with any unreadable row is left "
                         "out, and named)")
    results_arg(st)
    st.set_defaults(func=Command("results", "cmd_store"))
