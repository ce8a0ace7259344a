"""The Debian packages ``make setup`` needs, installed without touching what the host has.

``python3 -m harness.aptsetup PKG...`` (standard library only: it runs before the
virtualenv exists) installs the packages that are missing, once a dry run
(``apt-get install -s``) shows that no installed package would be removed or replaced
by them. Otherwise it installs nothing, names what would go and exits 3: a lab host's
Oracle MySQL, Percona Server or time daemon is not the harness's to displace. The
server builds themselves never come from the host's packages (see harness/catalog.py).

Services in these packages are not started by their install (a policy-rc.d is in place
for its duration only): the harness starts what it needs, as its own processes.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

POLICY = Path("/usr/sbin/policy-rc.d")
_REMOVED = re.compile(r"^Remv (\S+)")


def missing(packages: Sequence[str]) -> list[str]:
    """The packages of ``packages`` that dpkg does not have installed."""
    out = []
    for p in packages:
        r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", p], capture_output=True,
                           text=True, check=False)
        if "install ok installed" not in r.stdout:
            out.append(p)
    return out


def removals(packages: Sequence[str]) -> list[str]:
    """Installed packages that installing ``packages`` would remove (apt's dry run)."""
    r = subprocess.run(["apt-get", "install", "-s", "-y", *packages], capture_output=True,
                       text=True, check=False, env={**os.environ, "LC_ALL": "C"})
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
        subprocess.run(["apt-get", "install", "-y", "-qq", *packages], check=True,
                       env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
    finally:
        if added:
            POLICY.unlink(missing_ok=True)


def main(argv: Sequence[str]) -> int:
    need = missing(argv)
    if not need:
        return 0
    print("Debian packages to install:", " ".join(need), flush=True)
    subprocess.run(["apt-get", "update", "-qq"], check=True)
    gone = removals(need)
    if gone:
        print(f"error: installing {' '.join(need)} would remove {', '.join(gone)} from this "
              "host; the harness never displaces a host's packages. Install what is "
              "missing by hand in a way that keeps them, or run the harness from another "
              "machine (lab hosts only need what the Ansible roles install).",
              file=sys.stderr)
        return 3
    install(need)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
