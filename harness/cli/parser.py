"""The ``harness`` command line: every sub-command, its flags and help (the reference in
the docs is generated from it)."""
from __future__ import annotations

import argparse
import importlib
import os
from datetime import UTC, datetime

from .. import __version__, exits
from ..analysis.defaults import MAX_CV as MAX_CV_DEFAULT
from ..analysis.defaults import NOISE as NOISE_DEFAULT
from ..analysis.defaults import WINDOW_S, WINDOWS
from ..paths import ab_workloads
from ..server import cache

# regress's figures, by name (analysis/figures.py's REGRESS_METRICS, from the workload
# plugins; named here so that --help loads no plugin: a unit test holds them equal).
REGRESS_METRICS = ("tps", "p95_ms", "rows_per_s", "statements_per_s", "ssb_warm_s", "tpmc")


class _Command:
    """A sub-command's function, by module and name, imported when the command runs:
    the parser and --help load none of the commands' code."""

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def __call__(self, a: argparse.Namespace) -> int:
        module = importlib.import_module(f"harness.cli.{self.module}")
        return int(getattr(module, self.name)(a))


def _upgrade_args(cp: argparse.ArgumentParser) -> None:
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


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port}: a port is 1 to 65535")
    return port


def _since(text: str) -> str:
    """An ISO date or time, as the store's started_at compares (UTC when no zone)."""
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an ISO date or time (2026-11-24, 2026-11-24T06:00)") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC).isoformat()


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{n}: at least 1")
    return n


def _probability(text: str) -> float:
    try:
        p = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < p < 1:
        raise argparse.ArgumentTypeError(f"{p}: between 0 and 1")
    return p


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="harness",
        description="Benchmark MySQL, Percona Server and MariaDB builds in sandboxes with "
                    "sysbench, and keep every number in a results store.",
        epilog=exits.table().replace("%", "%%") + " "
               "Results default to harness.db in the checkout's results/ (else "
               "/var/lib/mysql-harness/results for root, ~/.local/share/mysql-harness/"
               "results for others), from any folder; HARNESS_RESULTS moves it. "
               "Server builds and sandboxes live under ~/.cache/mysql-harness, or "
               "/var/cache/mysql-harness for root (HARNESS_CACHE); its snapshots and "
               "stopped kept sandboxes are pruned past HARNESS_CACHE_BUDGET (default "
               f"{cache.DEFAULT_BUDGET}). Two harness runs on one host share the cache "
               "through locks, and measure one at a time (the measurement lock in "
               "/run/lock; HARNESS_MEASURE_LOCK moves it, =off or --no-measure-lock "
               "measures beside anything).")
    p.add_argument("--version", action="version", version=f"harness {__version__}")
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND")

    def results_arg(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--results", metavar="URL", default=os.environ.get("HARNESS_STORE"),
                        help="results store: any SQLAlchemy URL, e.g. "
                             "mysql+pymysql://user@host/db (default: $HARNESS_STORE, else "
                             "harness.db in the results folder); prefer HARNESS_STORE for "
                             "URLs with a "
                             "password, so it stays out of the process list")

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
    r.add_argument("--i-know-this-is-disposable", action="store_true",
                   help="allow prepare, DROP TABLE, SET GLOBAL and write workloads on the "
                        "external servers (host: ...) that the scenario marks disposable: "
                        "true, and swap and vm.* sysctls on this host when its host: "
                        "says disposable: true; without both, the harness only reads from "
                        "servers it did not create and leaves the host alone")
    r.add_argument("--resume", metavar="RUN_SET",
                   help="complete an interrupted or partly failed run set: run only the "
                        "server x variant x repetition cells that have no ok run in it")
    r.add_argument("--no-collectors", action="store_true",
                   help="sample nothing but the workload (to measure collector overhead)")
    r.add_argument("--metrics-port", type=_port, metavar="PORT",
                   help="serve live Prometheus metrics on 127.0.0.1:PORT/metrics during the run")
    r.add_argument("--pushgateway", metavar="URL",
                   help="also push the live metrics to this Prometheus Pushgateway every 10 s")
    r.add_argument("--html", action="store_true",
                   help="write the HTML report (results/reports/RUN_SET/report.html) for a "
                        "scenario without expected findings too (an experiment always "
                        "writes it; harness nightly asks for it, so the history site links "
                        "each run to its report)")
    r.add_argument("--against", metavar="REFERENCE", help=AGAINST_HELP)
    r.add_argument("--json", action="store_true", help="print the results as JSON")
    r.add_argument("--quiet", action="store_true", help="no progress output")
    results_arg(r)
    r.set_defaults(func=_Command("run", "cmd_run"))

    v = sub.add_parser("validate", help="check scenario files; report every problem")
    v.add_argument("files", nargs="+")
    v.add_argument("--target", default="local",
                   help="where the scenario would run (as for 'run'): a host_profile is "
                        "tried there, on each lab host of ansible:INVENTORY")
    v.set_defaults(func=_Command("run", "cmd_validate"))

    s = sub.add_parser("servers", help="the server catalog")
    ssub = s.add_subparsers(dest="servers_cmd", required=True, metavar="ACTION")
    sl = ssub.add_parser("list", help="list catalog servers and whether they are installed")
    sl.add_argument("--json", action="store_true")
    si = ssub.add_parser("install", help="install catalog servers into the cache (from "
                                         "HARNESS_MIRROR first), or a tarball by path")
    si.add_argument("names", nargs="+", metavar="NAME|FILE.tar.gz",
                    help="a catalog name, or a vendor tarball's path: installed as the "
                         "catalog build whose pinned checksum it has; one nobody pins, with "
                         "--trust-unpinned, as the build its own mysqld --version says it "
                         "is (run as mysqld's account): the catalog's of that flavor and "
                         "version, else a build of its own under that name (mysql-8.4.9), "
                         "which --server then takes")
    si.add_argument("--force", action="store_true", help="reinstall")
    si.add_argument("--trust-unpinned", action="store_true",
                    help="install a file the catalog pins no checksum for (a vendor "
                         "tarball, a lab mirror's file): without it such a file is "
                         "refused before anything of it is unpacked or run, with its sha256 "
                         "to check against the vendor's published one; a mirror's own "
                         "NAME.sha256 is evidence, never trust")
    s.set_defaults(func=_Command("servers", "cmd_servers"))

    sb = sub.add_parser("sandboxes", help="sandboxes kept by 'harness run --keep', and "
                                          "those a killed harness left")
    sbsub = sb.add_subparsers(dest="sandboxes_cmd", required=True, metavar="ACTION")
    sbl = sbsub.add_parser("list", help="kept sandboxes: who kept them, build, port, "
                                        "running or stopped, how to connect; and orphans, "
                                        "left by a harness that was killed")
    sbl.add_argument("--json", action="store_true")
    for action, what in (("stop", "shut mysqld down cleanly (the datadir stays)"),
                         ("remove", "stop it and remove its folder, datadir included")):
        sp = sbsub.add_parser(action, help=what)
        sp.add_argument("names", nargs="*", metavar="NAME", help="as 'list' shows them")
        sp.add_argument("--all", action="store_true", help="every sandbox you kept")
        sp.add_argument("--any-owner", action="store_true",
                        help="also those another user kept (with --all: everyone's)")
        if action == "remove":
            sp.add_argument("--orphans", action="store_true",
                            help="the sandboxes killed harnesses left (as the next run "
                                 "removes them)")
    sb.set_defaults(func=_Command("servers", "cmd_sandboxes"))

    cp = sub.add_parser(
        "capture", help="the statements that capture every statement of a server of yours "
                        "in its slow log, for a replay",
        description="Print the SET GLOBAL statements that turn a server's slow log into a "
                    "capture of every statement (long_query_time = 0, and the version's "
                    "log_slow_* options), and those that turn it off. Nothing is run: on "
                    "a server the harness creates, a scenario's collectors: {slow_log: "
                    "{enabled: true}} captures the run itself into the run's slow.log.")
    cp.add_argument("--server", metavar="NAME", help="a catalog server (its version)")
    cp.add_argument("--flavor", choices=["mysql", "mariadb"], default="mysql",
                    help="your server's flavor (Percona Server: mysql)")
    cp.add_argument("--version", metavar="X.Y.Z", help="your server's version")
    cp.add_argument("--file", default="capture-slow.log",
                    help="the slow log file (default: %(default)s, in the datadir)")
    cp.set_defaults(func=_Command("servers", "cmd_capture"))

    cn = sub.add_parser("cnf", help="a my.cnf written for one version, on others")
    csub = cn.add_subparsers(dest="cnf_cmd", required=True, metavar="ACTION")
    cc = csub.add_parser(
        "check", help="each option mysqld reads from FILE, on each --server: accepted, "
                      "renamed (to what), removed, unknown, or an invalid value",
        description="Judge each option a server build's mysqld reads from a my.cnf (its "
                    "groups: [mysqld], [server], [mysqld-X.Y], MariaDB's [mariadb...]; "
                    "!include and !includedir followed, relative ones from the file's "
                    "folder; read by the build's my_print_defaults and checked against its "
                    "mysqld --print-defaults), from the "
                    "build's own mysqld --verbose --help and a short table of renames "
                    "(harness/server/cnfcheck.py); then the build's mysqld reads the file "
                    "as judged, all at once, and refuses a value its option cannot take. "
                    "Exit codes: 0 every option is taken as written; "
                    "3 some option is renamed or removed on a build (a scenario with "
                    "'translate: true' rewrites or drops them, and says so); 2 an option "
                    "no build knows (a typo?), a value a build refuses, or bad input.")
    cc.add_argument("file", help="the my.cnf")
    cc.add_argument("--server", action="append", metavar="NAME|FILE|DIR",
                    help=f"a build to check it on (repeatable; at least one): {SERVER_REF}")
    cc.add_argument("--basedir", action="append", dest="server", metavar="DIR",
                    help="an unpacked MySQL, Percona Server or MariaDB tarball: the same "
                         "as --server DIR")
    cc.add_argument("--from", dest="from_server", metavar="NAME|FILE|DIR",
                    help="the build the file was written for: adds where its "
                         "defaults differ from each --server's")
    cc.add_argument("--to", metavar="NAME|FILE|DIR",
                    help="also write the file this build takes: renamed options under "
                         "their new names, removed and unknown ones left as comments "
                         "saying why, and with --from the defaults that moved (checked on "
                         "it like a --server)")
    cc.add_argument("-o", "--output", metavar="FILE",
                    help="with --to: write that file here (default: after the report)")
    cc.add_argument("--json", action="store_true")
    cn.set_defaults(func=_Command("servers", "cmd_cnf"))

    im = sub.add_parser("images", help="container images of catalog servers for --target "
                                       "docker")
    isub = im.add_subparsers(dest="images_cmd", required=True, metavar="ACTION")
    ib = isub.add_parser("build", help="build local images without a registry: a Debian "
                                       "minbase root (debootstrap, once) plus the catalog "
                                       "build and the libraries it loads")
    ib.add_argument("--server", action="append", metavar="NAME",
                    help="catalog server (repeatable; default: mariadb-10.11 and "
                         "mysql-5.7.29)")
    isub.add_parser("list", help="images the Docker provider can use here, and the official "
                                 "images it knows")
    im.set_defaults(func=_Command("servers", "cmd_images"))

    rs = sub.add_parser("runs", help="list stored runs")
    rs.add_argument("--scenario")
    rs.add_argument("--run-set")
    rs.add_argument("--json", action="store_true")
    results_arg(rs)
    rs.set_defaults(func=_Command("results", "cmd_runs"))

    sh = sub.add_parser("show", help="one run: summary, events, details")
    sh.add_argument("run_id", help="a run id (or an unambiguous prefix)")
    sh.add_argument("--json", action="store_true")
    results_arg(sh)
    sh.set_defaults(func=_Command("results", "cmd_show"))

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
    rp.set_defaults(func=_Command("results", "cmd_report"))

    rf = sub.add_parser(
        "reference", help="an experiment's reference file from stored run sets: the "
                          "findings with values and intervals, each cell's figures, the host",
        description="Write the reference that 'harness report --against' and 'harness run "
                    "--against' hold a reproduction against (scenarios/reference/ ships one "
                    "per experiment). The run sets must be of one scenario.")
    rf.add_argument("ids", nargs="+", metavar="RUN_SET_OR_RUN_ID")
    rf.add_argument("-o", "--output", metavar="FILE", help="default: stdout")
    results_arg(rf)
    rf.set_defaults(func=_Command("results", "cmd_reference"))

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
    _upgrade_args(cp)
    cp.add_argument("--repetitions", type=int, default=5, metavar="N",
                    help="runs per side (default 5; at least 4 for a verdict)")
    cp.add_argument("--metric", action="append",
                    metavar="[SOURCE/]METRIC[:rate|median]:higher|lower",
                    help="also judge a stored series over the measured part: its rate per "
                         "second (a counter; the default for *_total names) or its median "
                         "(a gauge), e.g. global_status/mysql_global_status_innodb_data_reads"
                         ":rate:lower (the scenario's compare_metrics are added)")
    cp.add_argument("--noise", type=float, default=100 * NOISE_DEFAULT, metavar="PCT",
                    help="changes smaller than this are never called (default %(default)s)")
    cp.add_argument("--max-cv", type=float, default=100 * MAX_CV_DEFAULT, metavar="PCT",
                    help="no verdict when a side's coefficient of variation (its outliers "
                         "left out) is above this, unless the sides are far apart "
                         "(default %(default)s)")
    cp.add_argument("--alpha", type=float, default=0.05,
                    help="significance level of the verdict's test: Mann-Whitney on "
                         "runs, the randomisation test on switchback quads (default 0.05)")
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
    cp.add_argument("--design", choices=("auto", "interleaved", "switchback"),
                    default="auto",
                    help="switchback: A and B alternate by SET GLOBAL on one running "
                         "server in --windows windows (quads ABBA or BAAB), judged on adjacent "
                         "windows paired; interleaved: whole runs, A B, B A, ...; auto "
                         "(default): switchback when every option that differs can change "
                         "at run time (the server refuses a static one at the first window "
                         "and interleaved runs follow), else interleaved")
    cp.add_argument("--window-s", type=_positive, default=WINDOW_S, metavar="S",
                    help=f"switchback: seconds per window (default {WINDOW_S}; longer for "
                         "an option whose effect takes more than half a window to settle)")
    cp.add_argument("--windows", type=_positive, default=WINDOWS, metavar="N",
                    help=f"switchback: windows, a multiple of 4, at least 24 (default "
                         f"{WINDOWS}: {WINDOWS // 4} quads, each ABBA or BAAB at random, "
                         f"{WINDOWS * WINDOW_S / 60:.1f} minutes at the default --window-s; "
                         "on this project's 2-core VM it found a 3%% tps change in 94.5-"
                         "95.5%% of trials in two noisy hours and in 45%% in one whose "
                         "throughput swung 2x for minutes, identical sides called different "
                         "in 3.5-8%%: make bench-switchback. Each comparison prints its own "
                         "reach: the smallest change it could have seen)")
    cp.add_argument("--no-measure-lock", action="store_true", help=MEASURE_LOCK_HELP)
    cp.add_argument("--i-know-this-is-disposable", action="store_true",
                    help="as for 'harness run' (external servers marked disposable)")
    cp.add_argument("--json", action="store_true", help="print the verdicts as JSON")
    cp.add_argument("--quiet", action="store_true", help="no progress output")
    results_arg(cp)
    cp.set_defaults(func=_Command("compare", "cmd_compare"))

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
    rg.add_argument("--since", metavar="DATE", type=_since,
                    help="ISO date or time: only changes whose first run after started "
                         "then or later are new")
    rg.add_argument("--metric", action="append",
                    choices=list(REGRESS_METRICS),
                    help="metric(s) to check (default all; a run is in the histories of "
                         "the metrics its workload reports)")
    rg.add_argument("--window", type=_positive, default=30, help="E-divisive split window in runs "
                    "(default 30)")
    rg.add_argument("--p-value", type=_probability, default=0.001,
                    help="significance (default 0.001)")
    rg.add_argument("--min-points", type=_positive, default=5,
                    help="runs needed before and after a change (default 5)")
    rg.add_argument("--min-magnitude", type=float, metavar="PCT",
                    help="smallest change reported, percent (default: twice the history's "
                         "run-to-run noise, at least 2)")
    rg.add_argument("--json", action="store_true", help="print the change points as JSON")
    rg.add_argument("--notify", metavar="URL|@FILE", help=NOTIFY_HELP + ", when a "
                    "regression is new (a failed post is said on stderr; the exit code "
                    "stays 3)")
    results_arg(rg)
    rg.set_defaults(func=_Command("results", "cmd_regress"))

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
    ni.add_argument("--i-know-this-is-disposable", action="store_true",
                    help="passed to each harness run")
    results_arg(ni)
    ni.set_defaults(func=_Command("run", "cmd_nightly"))

    no = sub.add_parser("notify", help="post a message to the nightly's webhook (as "
                                       "regress --notify does for a new regression)",
                        description="Post {\"text\": MESSAGE} (Slack's incoming-webhook "
                                    "shape) to the webhook; make nightly does when a run "
                                    "fails. Without a webhook configured it says so and "
                                    "posts nothing (exit 0); a failed post exits 6.")
    no.add_argument("message")
    no.add_argument("--notify", metavar="URL|@FILE", help=NOTIFY_HELP)
    no.set_defaults(func=_Command("results", "cmd_notify"))

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
    hi.set_defaults(func=_Command("results", "cmd_history"))

    sn = sub.add_parser("snapshots", help="dataset snapshots kept after a first prepare")
    sn.add_argument("action", choices=["list", "remove", "prune"], nargs="?", default="list",
                    help="list; remove (one, or all; one in use is kept); prune: remove the "
                         "least recently used snapshots and your stopped kept sandboxes "
                         "until the rest fit the budget")
    sn.add_argument("key", nargs="?", help="remove: one snapshot (default: all)")
    sn.add_argument("--budget", metavar="SIZE",
                    help="prune: the size to fit (like 20G; default HARNESS_CACHE_BUDGET, or "
                         f"{cache.DEFAULT_BUDGET})")
    sn.add_argument("--dry-run", action="store_true", help="prune: say what would go")
    sn.set_defaults(func=_Command("servers", "cmd_snapshots"))

    ex = sub.add_parser("export", help="a run's samples in long format "
                                       "(run_id,t,time,source,metric,labels,value; t on the "
                                       "run clock, time the wall clock, UTC)")
    ex.add_argument("run_id")
    ex.add_argument("--format", choices=["csv"], default="csv")
    ex.add_argument("-o", "--output", metavar="FILE", help="default: stdout")
    results_arg(ex)
    ex.set_defaults(func=_Command("results", "cmd_export"))

    af = sub.add_parser("artifacts", help="a run's files, from the store itself (my.cnf, "
                                          "error log, variables, tool output)",
                        description="List the files stored with a run, print one, or write "
                                    "them all to a folder. They come from the store, so a "
                                    "shared store has them on every machine.")
    af.add_argument("run_id")
    af.add_argument("name", nargs="?", help="print this file (as 'list' names it)")
    af.add_argument("-o", "--output", metavar="DIR", help="write every file under DIR")
    results_arg(af)
    af.set_defaults(func=_Command("results", "cmd_artifacts"))

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
    st.set_defaults(func=_Command("results", "cmd_store"))
    return p
