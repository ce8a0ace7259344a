"""The Debian packages ``make setup`` needs, installed without touching what the host has.

``python3 -m harness.server.aptsetup PKG...`` (standard library only: it runs before the
virtualenv exists) installs the packages that are missing, once a dry run
(``apt-get install -s``) shows that no installed package would be removed or replaced
by them. Otherwise it installs nothing, names what would go and exits 3: a lab host's
Oracle MySQL, Percona Server or time daemon is not the harness's to displace. The
server builds themselves never come from the host's packages (see harness/server/catalog.py).

Services in these packages are not started by their install (a policy-rc.d is in place
for its duration only): the harness starts what it needs, as its own processes.
"""
from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from pathlib import Path

from .. import proc  # standard library only too
from ..errors import ToolError
from ..exits import Exit

POLICY = Path("/usr/sbin/policy-rc.d")
_REMOVED = re.compile(r"^Remv (\S+)")


def missing(packages: Sequence[str]) -> list[str]:
    """The packages of ``packages`` that dpkg does not have installed."""
    out = []
    for p in packages:
        r = proc.run(["dpkg-query", "-W", "-f=${Status}", p], check=False)
        if "install ok installed" not in r.stdout:
            out.append(p)
    return out


def removals(packages: Sequence[str]) -> list[str]:
    """Installed packages that installing ``packages`` would remove (apt's dry run)."""
    r = proc.run(["apt-get", "install", "-s", "-y", *packages], check=False,
                 env={"LC_ALL": "C"})
    if r.returncode != 0:
        raise SystemExit(f"error: apt-get cannot install {' '.join(packages)}:\n"
                         + r.stderr.strip()[-2000:])
    return [m.group(1) for line in r.stdout.splitlines() if (m := _REMOVED.match(line))]


def install(packages: Sequence[str]) -> None:
    added = not POLICY.exists()
    if added:  # no service starts during the install
        POLICY.write_text("#!/bin/sh\nexit 101\n")
        POLICY.chmod(0o755)
    try:
        with proc.LineStream(["apt-get", "install", "-y", "-qq", *packages], _show,
                             env={"DEBIAN_FRONTEND": "noninteractive"},
                             what="apt-get install") as p:
            p.wait()
    finally:
        if added:
            POLICY.unlink(missing_ok=True)


def _show(line: str) -> None:
    """apt's output, without dpkg's percentages (a terminal overwrote them in place)."""
    if not re.match(r"^\(Reading database \.\.\. *\d+%", line):
        print(line, flush=True)


def main(argv: Sequence[str]) -> int:
    try:
        return _setup(argv)
    except ToolError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


def _setup(argv: Sequence[str]) -> int:
    need = missing(argv)
    if not need:
        return 0
    print("Debian packages to install:", " ".join(need), flush=True)
    proc.run(["apt-get", "update", "-qq"], what="apt-get update")
    gone = removals(need)
    if gone:
        print(f"error: installing {' '.join(need)} would remove {', '.join(gone)} from this "
              "host; the harness never displaces a host's packages. Install what is "
              "missing by hand in a way that keeps them, or run the harness from another "
              "machine (lab hosts only need what the Ansible roles install).",
              file=sys.stderr)
        return Exit.REFUSED
    install(need)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
