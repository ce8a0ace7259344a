"""The mysqldump side load's allow-list held against the real tools: every reading and
formatting option it takes is one that MariaDB's mysqldump (Debian's client) or MySQL
9.7's knows, so a DBA's option is not refused for a name nobody uses; and what it refuses
for what the client would do as root are real options of those tools, not guesses."""
from __future__ import annotations

import re
import shutil

import pytest

from harness import proc
from harness.server import catalog
from harness.sideloads.mysqldump import _DUMP_READS, REFUSED, mysqldump_flag

pytestmark = pytest.mark.integration


def _options(argv: list[str]) -> set[str]:
    """The long options a mysqldump lists in its --help."""
    out = proc.run([*argv, "--help"], timeout=30, what="mysqldump --help").stdout
    return set(re.findall(r"^\s+(?:-\w, )?--([a-z][a-z0-9-]*)", out, re.M))


def test_the_allow_list_is_the_real_tools_and_the_refusals_are_real_dangers():
    client = shutil.which("mysqldump")
    assert client, "make setup-runtime installs mariadb-client"
    mariadb = _options([client])
    mysql = _options([str(catalog.resolve("mysql-9.7").root / "bin" / "mysqldump")])
    assert len(mariadb) > 50 and len(mysql) > 50
    unknown = [o for o in _DUMP_READS
               if o.removeprefix("skip-") not in mariadb | mysql]
    assert not unknown, unknown
    # (--debug too, on a debug build; a release build's mysqldump has none)
    for danger in ("plugin-dir", "default-auth", "log-error", "where", "character-sets-dir"):
        assert danger in mariadb or danger in mysql, danger  # a real option of the tool
        kind, why = mysqldump_flag(f"--{danger}=x")
        assert kind == REFUSED and why and why.startswith(f"--{danger} is not one"), why
