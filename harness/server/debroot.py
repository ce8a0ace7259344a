"""Debian root filesystems made with debootstrap: the base of container images, and the
server builds that only a newer Debian suite has (MySQL 9.7 and MariaDB 11.8 from sid
need a newer glibc than this host's).

A server build from such a root runs outside any chroot: each of its programs gets a
small wrapper script that execs the root's own loader with the root's libraries
(``libexec/mysqld --library-path ... ROOT/usr/sbin/mysqld``). The loader is execed under
the program's own name (``libexec/`` holds it hard-linked once per program): the kernel
names a process after the file it execs, so ps, pgrep -x, pidof and the Percona
Toolkit (pt-pmp, pt-stalk, pt-summary) see ``mysqld`` or ``mariadbd``, not
``ld-linux-x86-64``. The wrappers find the build relative to themselves, so a build
directory can be copied elsewhere (into a container image) and still run.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from .. import proc
from ..errors import BuildUnavailableError, CatalogError, MissingToolError

MIRROR = "http://deb.debian.org/debian"
ARCH = "amd64"
LOADER = "lib64/ld-linux-x86-64.so.2"
# How lay_out makes a build's programs; another value reinstalls the builds made before
# (1: the loader under its own name; 2: under each program's name, in libexec/).
LAYOUT = 2
LIBRARY_PATH = ("lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu")


def debootstrap(suite: str, dest: Path, include: Iterable[str] = (),
                log: Callable[[str], None] = print) -> None:
    """Make a ``--variant=minbase`` root of ``suite`` in ``dest`` (which must not exist),
    with the packages of ``include`` and their dependencies. The .debs stay in the root's
    apt cache for :func:`check_pins`."""
    deb = shutil.which("debootstrap") or "/usr/sbin/debootstrap"
    if not Path(deb).exists():
        raise MissingToolError("debootstrap is not installed: apt-get install debootstrap "
                               "(or: make setup)")
    packages = list(include)
    extra = [f"--include={','.join(packages)}"] if packages else []
    log(f"debootstrap --variant=minbase {' '.join(extra)} {suite} (~30 s) into {dest}")
    proc.run([deb, "--variant=minbase", *extra, suite, str(dest), MIRROR], timeout=1800,
             log_dir=dest.parent / f"{dest.name}.log", name="debootstrap",
             what=f"debootstrap {suite}")


# Package: mysql-server-core
# Status: install ok installed
# ...
# Version: 9.7.4-2
def installed_packages(root: Path) -> dict[str, str]:
    """Package -> version of every package installed in ``root`` (its dpkg status)."""
    text = (root / "var/lib/dpkg/status").read_text(errors="replace")
    out = {}
    for block in text.split("\n\n"):
        fields = dict(re.findall(r"^([A-Za-z-]+): (.*)$", block, re.M))
        if "Package" in fields and fields.get("Status", "").endswith(" installed"):
            out[fields["Package"]] = fields.get("Version", "")
    return out


def _deb_file(root: Path, package: str, version: str) -> Path:
    # apt's archive names escape the epoch's colon: mariadb-server-core_1%3a11.8.9+ds-4_amd64.deb
    quoted = version.replace(":", "%3a")
    cache = root / "var/cache/apt/archives"
    for arch in (ARCH, "all"):
        p = cache / f"{package}_{quoted}_{arch}.deb"
        if p.exists():
            return p
    raise BuildUnavailableError(f"{root}: no .deb of {package} {version} in {cache} to check")


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def check_pins(root: Path, pins: Mapping[str, tuple[str, str]], what: str) -> list[str]:
    """Every pinned package is installed in ``root`` at its pinned version, from a .deb
    with the pinned sha256; or, where the archive has moved on (a point release), at a
    newer version of the pinned one's upstream series (10.11.19 pinned, 10.11.20 served),
    taken with a note: the archive's signature vouches for it and its version is recorded
    with the build. Anything else (older, another series, nothing) raises
    :class:`CatalogError` naming what the mirror served. Returns the notes."""
    installed = installed_packages(root)
    notes = []
    for package, (version, digest) in pins.items():
        got = installed.get(package)
        if got == version:
            actual = sha256(_deb_file(root, package, version))
            if actual != digest:
                raise BuildUnavailableError(f"{what}: {package} {version}: checksum mismatch: the "
                                            f".deb has sha256 {actual}, the catalog pins {digest}")
        elif got and series(got) == series(version) and newer(got, version):
            notes.append(
                f"{what}: the Debian mirror served {package} {got}, newer than the pinned "
                f"{version} in its {series(version)} series (the archive moved on): taken, "
                f"its version recorded with the build (.deb sha256 "
                f"{sha256(_deb_file(root, package, got))})")
        else:
            raise BuildUnavailableError(
                f"{what}: the Debian mirror served {package} {got or '(nothing)'}, the "
                f"catalog pins {version}" + (f" (a newer {series(version)} would do)"
                                             if got else "") + ". A result of another "
                "build must not carry this name: update the pin in "
                "harness/server/catalog.py (version and the .deb's sha256) once you have "
                "checked the new build")
    return notes


def series(version: str) -> str:
    """A Debian version's upstream major.minor: '1:10.11.19-0+deb12u1' -> '10.11'."""
    upstream = version.partition(":")[2] if ":" in version else version
    m = re.match(r"(\d+)\.(\d+)", upstream)
    return f"{m.group(1)}.{m.group(2)}" if m else upstream


def newer(a: str, b: str) -> bool:
    """Debian version ``a`` is later than ``b``, as dpkg orders them."""
    r = proc.run(["dpkg", "--compare-versions", a, "gt", b], check=False, timeout=30,
                 what="dpkg --compare-versions")
    return r.returncode == 0


def drop_device_nodes(root: Path) -> None:
    """debootstrap makes /dev/zero, /dev/random and friends in the root; its programs run
    outside it and never use them, and anything that copies the build by reading files
    (an image build) would read /dev/zero forever."""
    for p in (root / "dev").rglob("*"):
        if not (p.is_symlink() or p.is_dir() or p.is_file()):
            p.unlink()


def regular_only(directory: str, names: list[str]) -> list[str]:
    """A ``shutil.copytree`` ignore: device nodes, fifos and sockets are not copied."""
    out = []
    for n in names:
        p = Path(directory) / n
        if not (p.is_symlink() or p.is_dir() or p.is_file()):
            out.append(n)
    return out


def drop_package_cache(root: Path) -> None:
    """The .debs are no longer needed once checked (~40% of the root's size)."""
    for deb in (root / "var/cache/apt/archives").glob("*.deb"):
        deb.unlink()


def package_files(root: Path, package: str) -> list[str]:
    """Paths (absolute inside the root) that ``package`` installed."""
    listing = root / "var/lib/dpkg/info" / f"{package}.list"
    if not listing.exists():
        listing = root / "var/lib/dpkg/info" / f"{package}:{ARCH}.list"
    return listing.read_text().splitlines() if listing.exists() else []


def is_elf(path: Path) -> bool:
    """A file that starts as an ELF binary does."""
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def _inside(root: Path, path: Path) -> Path | None:
    """The file ``path`` (in ``root``) is or links to, following links inside the root
    only; None for a link that leaves it or leads nowhere."""
    for _ in range(8):
        if not path.is_symlink():
            return path if path.is_file() else None
        link = Path(path.readlink())
        path = (root / str(link).lstrip("/")) if link.is_absolute() else path.parent / link
    return None


# The wrapper of one program: the build is .. from the wrapper's folder, its root
# ../root, and the loader under the program's name ../libexec/NAME.
_WRAPPER = """\
#!/bin/sh
# {program} of the Debian root beside this folder, run outside any chroot with the
# root's own loader and libraries (written by mysql-harness; see harness/server/debroot.py).
build=$(cd "$(dirname "$0")/.." && pwd -P) || exit 127
root="$build/root"
exe="$root{program}"
exec "$build/libexec/{name}" --library-path "{library_path}" --argv0 "$exe" "$exe" "$@"
"""


def wrapper_text(program: str) -> str:
    """The wrapper script that runs ``program`` (a path inside the root)."""
    library_path = ":".join(f"$root/{p}" for p in LIBRARY_PATH)
    return _WRAPPER.format(program=program, name=Path(program).name,
                           library_path=library_path)


def _loader_named(root: Path, dest: Path, name: str) -> None:
    """``dest/libexec/NAME``: the root's loader under a program's name (one file, a
    hard link per name; a copy where links cannot be made)."""
    libexec = dest / "libexec"
    one = libexec / ".ld-linux"
    if not one.exists():
        real = _inside(root, root / LOADER)
        if real is None:
            raise CatalogError(f"{root}: no loader at {LOADER}")
        libexec.mkdir(exist_ok=True)
        shutil.copy2(real, one)
        one.chmod(0o755)
    target = libexec / name
    target.unlink(missing_ok=True)
    try:
        os.link(one, target)
    except OSError:
        shutil.copy2(one, target)


def lay_out(root: Path, dest: Path, packages: Iterable[str]) -> list[str]:
    """Make ``dest`` a build directory over ``root`` (which must be ``dest/root``):
    ``bin/`` and ``sbin/`` with a wrapper per program of ``packages`` (shell scripts are
    copied: they run with the host's shell and find the wrappers by --basedir),
    ``share/<name>`` linked to the root's ``usr/share/mysql`` or ``usr/share/mariadb``,
    and ``plugin/`` (the root's plugin folder, or an empty one so the host's plugins of
    another version are never loaded). Returns the programs made."""
    assert root == dest / "root"
    made = []
    for package in packages:
        for path in package_files(root, package):
            m = re.fullmatch(r"/usr/(s?bin)/([^/]+)", path)
            real = _inside(root, root / path.lstrip("/")) if m else None
            if m is None or real is None:
                continue
            target = dest / m.group(1) / m.group(2)
            target.parent.mkdir(parents=True, exist_ok=True)
            if is_elf(real):
                program = "/" + str(real.relative_to(root))
                target.write_text(wrapper_text(program))
                _loader_named(root, dest, Path(program).name)
            else:
                shutil.copyfile(real, target)
            target.chmod(0o755)
            made.append(f"{m.group(1)}/{m.group(2)}")
    (dest / "share").mkdir(exist_ok=True)
    for name in ("mysql", "mariadb"):
        if (root / "usr/share" / name).is_dir():
            (dest / "share" / name).symlink_to(Path("../root/usr/share") / name)
    plugins = root / "usr/lib/mysql/plugin"
    if plugins.is_dir():
        (dest / "plugin").symlink_to(Path("root/usr/lib/mysql/plugin"))
    else:
        (dest / "plugin").mkdir()
    return made
