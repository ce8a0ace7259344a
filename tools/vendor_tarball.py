"""Repack the catalog's MySQL 9.7 (Debian's build, installed in a root of its own) as a
tarball laid out like Oracle's generic Linux tarballs, to prove here what MySQL 8.0/8.4
and Percona Server 8.x tarballs go through: the mirror, ``servers install FILE``,
``--server FILE`` and ``--basedir DIR``.

    python tools/vendor_tarball.py OUT_DIR     # prints the file it wrote

The file is ``mysql-9.7.4-linux-glibc2.28-x86_64.tar.xz``: one top folder of that name
with ``bin/`` (mysqld, mysql, mysqldump, mysqladmin, my_print_defaults), ``lib/plugin/``,
``lib/private/``, ``share/english/errmsg.sys`` and the other languages and charsets,
``docs/README``. One difference, said in each program and the README: Debian sid's
binaries need a newer glibc than this host's (a vendor's are built against glibc 2.28),
so each ``bin/NAME`` is a shell script that runs the program through the loader and
libraries in ``lib/private`` (the loader copied as ``libexec/NAME``, so the process is
still called mysqld). Nothing else of the root goes in.
"""
from __future__ import annotations

import io
import re
import sys
import tarfile
from pathlib import Path

from harness import proc
from harness.server import catalog, debroot

PROGRAMS = ("usr/sbin/mysqld", "usr/bin/mysql", "usr/bin/mysqldump", "usr/bin/mysqladmin",
            "usr/bin/my_print_defaults")

WRAPPER = """\
#!/bin/sh
# {name} of a vendor-layout tarball repacked from Debian's MySQL build (mysql-harness,
# tools/vendor_tarball.py): the program needs a newer glibc than a vendor's build, so it
# runs through the loader and libraries in lib/private.
base=$(cd "$(dirname "$0")/.." && pwd -P) || exit 127
exec "$base/libexec/{name}" --library-path "$base/lib/private" --argv0 "$base/bin/{name}" \\
    "$base/lib/private/programs/{name}" "$@"
"""

README = """\
MySQL {version}, Debian's build (package mysql-server-core {package}), repacked by
mysql-harness's tools/vendor_tarball.py in the layout of Oracle's generic Linux
tarballs: bin/, lib/plugin/, lib/private/, share/. bin/* are scripts that run the
programs in lib/private/programs through the loader beside them. For tests only.
"""


def libraries(root: Path, program: Path) -> list[Path]:
    """The shared libraries ``program`` (inside ``root``) loads, as the root's loader
    resolves them."""
    search = ":".join(str(root / p) for p in debroot.LIBRARY_PATH)
    listed = proc.run([root / debroot.LOADER, "--library-path", search, "--list", program],
                      what=f"ld.so --list {program.name}").stdout
    return [Path(m.group(1)) for m in re.finditer(r"=> (/\S+) \(", listed)
            if not m.group(1).endswith("ld-linux-x86-64.so.2")]


def _add_file(tar: tarfile.TarFile, src: Path, arcname: str, mode: int) -> None:
    info = tar.gettarinfo(str(src.resolve()), arcname)
    info.mode, info.uid, info.gid, info.uname, info.gname = mode, 0, 0, "root", "root"
    info.mtime = 1_700_000_000
    with open(src.resolve(), "rb") as f:
        tar.addfile(info, f)


def _add_text(tar: tarfile.TarFile, text: str, arcname: str, mode: int) -> None:
    data = text.encode()
    info = tarfile.TarInfo(arcname)
    info.size, info.mode, info.mtime = len(data), mode, 1_700_000_000
    tar.addfile(info, io.BytesIO(data))


def _add_dir(tar: tarfile.TarFile, arcname: str) -> None:
    info = tarfile.TarInfo(arcname)
    info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, 1_700_000_000
    tar.addfile(info)


def repack(out_dir: Path) -> Path:
    """Write the tarball into ``out_dir`` (kept when there already); its path."""
    build = catalog.resolve("mysql-9.7")
    root = build.root / "root"
    version = build.version
    top = f"mysql-{version}-linux-glibc2.28-x86_64"
    target = out_dir / f"{top}.tar.xz"
    if target.exists():
        return target
    out_dir.mkdir(parents=True, exist_ok=True)
    part = target.with_name(target.name + ".part")
    with tarfile.open(part, "w:xz", preset=1) as tar:
        for d in ("", "/bin", "/libexec", "/lib", "/lib/plugin", "/lib/private",
                  "/lib/private/programs", "/share", "/docs"):
            _add_dir(tar, top + d)
        libs: dict[str, Path] = {}
        for rel in PROGRAMS:
            program = root / rel
            name = program.name
            _add_file(tar, program, f"{top}/lib/private/programs/{name}", 0o755)
            _add_file(tar, root / debroot.LOADER, f"{top}/libexec/{name}", 0o755)
            _add_text(tar, WRAPPER.format(name=name), f"{top}/bin/{name}", 0o755)
            libs.update({lib.name: lib for lib in libraries(root, program)})
        for name, lib in sorted(libs.items()):
            _add_file(tar, lib, f"{top}/lib/private/{name}", 0o644)
        share = root / "usr/share/mysql"
        for f in sorted(share.rglob("*")):
            if f.is_dir():
                _add_dir(tar, f"{top}/share/{f.relative_to(share)}")
            elif f.is_file():
                _add_file(tar, f, f"{top}/share/{f.relative_to(share)}", 0o644)
        package = catalog.CATALOG["mysql-9.7"].pins["mysql-server-core"][0]
        _add_text(tar, README.format(version=version, package=package), f"{top}/docs/README",
                  0o644)
    part.rename(target)
    return target


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    print(repack(Path(sys.argv[1])))
