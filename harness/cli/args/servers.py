"""The parsers of the commands about servers: servers, sandboxes, capture, cnf,
images, snapshots."""
from __future__ import annotations

import argparse

from ...server import cache
from .common import (
    SERVER_REF,
    Command,
)


def add_servers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    s = sub.add_parser("servers", help="the server catalog (no action: list it)")
    s.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    ssub = s.add_subparsers(dest="servers_cmd", metavar="ACTION")
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
    s.set_defaults(func=Command("servers", "cmd_servers"))


def add_sandboxes(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
    sb.set_defaults(func=Command("servers", "cmd_sandboxes"))


def add_capture(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
    cp.set_defaults(func=Command("servers", "cmd_capture"))


def add_cnf(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
                    "Exit codes, a rollout gate's: 0 every option is taken as written on "
                    "every build; 8 the file needs a change: an option no build knows (a "
                    "typo: the near name said), a value a build refuses, an option renamed "
                    "or removed on a build (a scenario with 'translate: true' rewrites or "
                    "drops those, and says so); 9 could not check (no such file, a build "
                    "not reachable); 2 usage.")
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
                         "it like a --server). mysql-8.4, which no binary here runs: the "
                         "file held to the 8.4 manual's removed options and changed "
                         "defaults, each row naming its page, and no file written")
    cc.add_argument("-o", "--output", metavar="FILE",
                    help="with --to: write that file here (default: after the report)")
    cc.add_argument("--json", action="store_true")
    cn.set_defaults(func=Command("servers", "cmd_cnf"))


def add_images(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
    im.set_defaults(func=Command("servers", "cmd_images"))


def add_snapshots(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
    sn.set_defaults(func=Command("servers", "cmd_snapshots"))
