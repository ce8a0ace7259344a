"""The parser of compare: two option sets, two builds or two variants, judged."""
from __future__ import annotations

import argparse

from ...analysis.defaults import COUNT_BAND, WINDOW_S, WINDOWS
from ...analysis.defaults import MAX_CV as MAX_CV_DEFAULT
from ...analysis.defaults import NOISE as NOISE_DEFAULT
from ...paths import ab_workloads
from .common import (
    COUNTER_HELP,
    MEASURE_LOCK_HELP,
    SERVER_REF,
    SERVER_REF_SHORT,
    Command,
    positive,
    results_arg,
)


def upgrade_args(cp: argparse.ArgumentParser) -> None:
    """compare's upgrade: one my.cnf on two builds."""
    cp.add_argument("--baseline-server", metavar="NAME|FILE|DIR",
                    help="an upgrade: the build you run now (with --candidate-server, the "
                         "one you move to); runs of the two interleaved, each on a new "
                         "sandbox from the same data, judged by the same rules: "
                         f"{SERVER_REF_SHORT}")
    cp.add_argument("--candidate-server", metavar="NAME|FILE|DIR",
                    help="an upgrade: the build you move to")
    cp.add_argument("--cnf", metavar="MY_CNF",
                    help="an upgrade's my.cnf ([mysqld]), read by each build as it reads "
                         "it: a renamed option translated, a removed one left out, each "
                         "said (without it: the scenario's one variant)")


def add_compare(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cp = sub.add_parser(
        "compare", help="A/B verdict: is a candidate my.cnf better, worse or the same?",
        description="Run baseline and candidate on the scenario's servers - by switchback "
                    "on one running server when every option that differs takes effect at "
                    "once, else (a static option, or a cache or log size slow to settle) "
                    "as whole runs interleaved (A B, B A, ...) - or read two stored run "
                    "sets, then judge each metric: interleaved runs by the median ratio "
                    "with a bootstrap 95% CI and a Mann-Whitney p-value; switchback "
                    "windows by the paired ratio with a randomisation test on the quads' "
                    "random orientations and its interval. "
                    "The CPUs are kept awake during runs unless the scenario sets "
                    "cpu_keepalive; each comparison says where its runs' noise is and "
                    "whether more or longer runs would help. "
                    "One verdict: with --budget the sequential rule's (the fixed-size "
                    "statistics on the same runs are shown, not counted); the text's last "
                    "line, the exit code, the JSON's top-level verdict and compare.html "
                    "agree, each with the smallest change its intervals could have seen "
                    "(reach). Exit code 0: better, or no significant difference (every "
                    "interval inside the noise band); 3: the candidate is worse on some "
                    "metric, or stalls where the baseline does not; 4: no verdict (too few "
                    "runs, or too noisy), or could not tell (an interval wider than the "
                    "noise band).")
    _sides(cp)
    _judging(cp)
    _sequential(cp)
    _design(cp)
    _measure(cp)
    cp.add_argument("--no-measure-lock", action="store_true", help=MEASURE_LOCK_HELP)
    cp.add_argument("--i-know-this-is-disposable", action="store_true",
                    help="as for 'harness run' (external servers marked disposable)")
    cp.add_argument("--json", action="store_true", help="print the verdicts as JSON")
    cp.add_argument("--quiet", action="store_true", help="no progress output")
    results_arg(cp)
    cp.set_defaults(func=Command("compare", "cmd_compare"))


def _sides(cp: argparse.ArgumentParser) -> None:
    """What is compared: a scenario or a shipped workload, two my.cnf files, two
    variants or two stored run sets, on which builds."""
    cp.add_argument("scenario", nargs="?",
                    help="scenario YAML file (its workload and data); with --baseline and "
                         "--candidate it may be left out: --workload picks a shipped one")
    cp.add_argument("--workload", choices=ab_workloads(),
                    help="with --baseline/--candidate and no scenario: the shipped workload "
                         "to run (scenarios/ab/: sysbench on 4 tables of 100,000 rows, 4 "
                         "threads, or TPC-C on 1 warehouse; default oltp_read_write) on the "
                         "embedded default server or --server")
    cp.add_argument("--baseline", metavar="MY_CNF", help="the current my.cnf ([mysqld])")
    cp.add_argument("--candidate", metavar="MY_CNF", help="the proposed my.cnf")
    cp.add_argument("--variants", nargs=2, metavar=("BASELINE", "CANDIDATE"),
                    help="two variants of the scenario (or of the stored run set)")
    cp.add_argument("--run-sets", nargs="+", metavar="RUN_SET",
                    help="compare stored runs instead: two run sets, or one with --variants")
    cp.add_argument("--server", action="append", metavar="NAME|FILE|DIR",
                    help="run on this build instead of the scenario's (repeatable): "
                         f"{SERVER_REF}. Without it: the scenario's servers, else the "
                         "builds the last 'harness cnf check' of the candidate (or "
                         "baseline) file judged it on, else the build the my.cnf files' "
                         "version groups name ([mysqld-8.4], [mariadb-10.11]), else the "
                         "embedded default, said as such")
    cp.add_argument("--basedir", action="append", dest="server", metavar="DIR",
                    help="an unpacked MySQL, Percona Server or MariaDB tarball: the same "
                         "as --server DIR")
    upgrade_args(cp)


def _judging(cp: argparse.ArgumentParser) -> None:
    """How each metric is judged: runs a side, extra series, noise band, spread and
    test level."""
    cp.add_argument("--repetitions", type=int, default=5, metavar="N",
                    help="runs per side (default 5; at least 4 for a verdict)")
    cp.add_argument("--metric", action="append",
                    metavar="[SOURCE/]METRIC[:rate|median]:higher|lower",
                    help="also judge a stored series over the measured part: its rate per "
                         "second (a counter; the default for *_total names) or its median "
                         "(a gauge), e.g. global_status/mysql_global_status_innodb_data_reads"
                         ":rate:lower (the scenario's compare_metrics are added)")
    cp.add_argument("--noise", type=float, metavar="PCT",
                    help=f"changes smaller than this are never called (default "
                         f"{100 * NOISE_DEFAULT:g}; {100 * COUNT_BAND:g} with --measure "
                         "instructions)")
    cp.add_argument("--max-cv", type=float, default=100 * MAX_CV_DEFAULT, metavar="PCT",
                    help="no verdict when a side's coefficient of variation (its outliers "
                         "left out) is above this, unless the sides are far apart "
                         "(default %(default)s)")
    cp.add_argument("--alpha", type=float, default=0.05,
                    help="significance level of the verdict's test: Mann-Whitney on "
                         "runs, the randomisation test on switchback quads (default 0.05)")


def _sequential(cp: argparse.ArgumentParser) -> None:
    """--budget: rounds until the interval decides."""
    cp.add_argument("--budget", metavar="DURATION",
                    help="sequential: run rounds (one run of each side, back to back, "
                         "A B then B A; each round a pair) until the tps "
                         "interval decides - better, worse, or no change larger than "
                         "--effect - or another round would not fit in DURATION (15m, "
                         "900s, 1h); the error rate holds however often it looks. Exit 4 "
                         "when undecided, with the power the last look had")
    cp.add_argument("--effect", type=float, default=3.0, metavar="PCT",
                    help="with --budget: the smallest change worth finding (default 3)")
    cp.add_argument("--watch", metavar="FIGURE",
                    help="with --budget: the figure the rounds stop on, by its regress "
                         "name (tps, p95_ms, statements_per_s ...); default the "
                         "workload's headline")


def _design(cp: argparse.ArgumentParser) -> None:
    """Switchback or interleaved runs, and the switchback's windows."""
    cp.add_argument("--design", choices=("auto", "interleaved", "switchback"),
                    default="auto",
                    help="switchback: A and B alternate by SET GLOBAL on one running "
                         "server in --windows windows (quads ABBA or BAAB), judged on adjacent "
                         "windows paired; interleaved: whole runs, A B, B A, ...; auto "
                         "(default): switchback when every option that differs can change "
                         "at run time (the server refuses a static one at the first window "
                         "and interleaved runs follow), else interleaved")
    cp.add_argument("--aa", action="store_true",
                    help="compare two my.cnf files that the server reads the same, on "
                         "purpose (an A/A run: how often this host calls the same thing "
                         "different); without it such a pair is said at once, nothing run")
    cp.add_argument("--window-s", type=positive, default=WINDOW_S, metavar="S",
                    help=f"switchback: seconds per window (default {WINDOW_S}; longer for "
                         "an option whose effect takes more than half a window to settle)")
    cp.add_argument("--windows", type=positive, default=WINDOWS, metavar="N",
                    help=f"switchback: windows, a multiple of 4, at least 24 (default "
                         f"{WINDOWS}: {WINDOWS // 4} quads, each ABBA or BAAB at random, "
                         f"{WINDOWS * WINDOW_S / 60:.1f} minutes at the default --window-s; "
                         "on a 2-core VM it found a 3%% tps change in 94.5-"
                         "95.5%% of trials in two noisy hours and in 45%% in one whose "
                         "throughput swung 2x for minutes, identical sides called different "
                         "in 3.5-4.5%%: make bench-switchback. Each comparison prints its own "
                         "reach: the smallest change it could have seen)")


def _measure(cp: argparse.ArgumentParser) -> None:
    """What is measured: time (tps, latency, CPU seconds) or counted instructions."""
    cp.add_argument("--measure", choices=("time", "instructions"),
                    help="instructions: each side's mysqld under callgrind (valgrind), a "
                         "fixed number of transactions a window on 1 client thread, judged "
                         "on instructions per transaction of the connection thread - "
                         "exact where time is noisy (a 1%% change found in minutes on a VM "
                         "without hardware counters), blind to waits, I/O and the kernel; "
                         "windows by SET GLOBAL in one lifetime where the options allow, "
                         "else restarts; quads until the interval decides or --budget "
                         "(15m if not given) runs out; names the functions that moved. With "
                         "--workload oltp_point_select, the count's probe. Default: the "
                         "scenario's measure:, else time")
    cp.add_argument("--events", type=positive, metavar="N",
                    help="--measure instructions: transactions a window (default 10000 "
                         "for oltp_point_select, 1000 for other sysbench tests, 100 "
                         "New-Orders for TPC-C, each type in a connection of its own)")
    cp.add_argument("--counter", choices=("auto", "callgrind", "perf"), default="auto",
                    help=COUNTER_HELP)
