"""make setup's packages: never at the cost of what the host has."""
from __future__ import annotations

import pytest

from harness.server import aptsetup, catalog

pytestmark = pytest.mark.integration


def test_a_package_that_would_displace_one_of_the_host_is_not_installed(capsys):
    # chrony replaces systemd-timesyncd: a real displacement, seen in apt's dry run
    if aptsetup.missing(["systemd-timesyncd"]) or not aptsetup.missing(["chrony"]):
        pytest.skip("this host has no systemd-timesyncd, or has chrony")
    assert aptsetup.removals(["chrony"]) == ["systemd-timesyncd"]
    assert aptsetup.main(["chrony"]) == 5  # refused to change the host
    err = capsys.readouterr().err
    assert "would remove systemd-timesyncd" in err and "never displaces" in err
    assert aptsetup.missing(["chrony", "systemd-timesyncd"]) == ["chrony"]
    # what is installed already costs nothing: no dry run, no apt-get update
    assert aptsetup.missing(["sysbench", "debootstrap"]) == []
    assert aptsetup.main(["sysbench"]) == 0


def test_the_default_server_is_no_host_package():
    # the embedded default runs from its own Debian root, whatever MariaDB or MySQL
    # package the host has (or not)
    build = catalog.resolve(catalog.DEFAULT_SERVER)
    assert build.own_root
    assert build.mysqld.resolve().is_relative_to(catalog.get_entry(build.name).install_dir)
