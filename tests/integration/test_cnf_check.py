"""harness cnf check on files nobody here wrote, each option judged by the build's own
mysqld: Oracle's my-innodb-heavy-4G.cnf (the 5.5 tarball's support-files, 2004-era
names: `myisam_recover`, a prefix; `thread_concurrency`; the query cache) on MariaDB,
which takes prefixes, MySQL 5.6, which takes them with a warning, and MySQL 5.7,
which refuses them; Debian's MariaDB 50-server.cnf and MySQL mysqld.cnf, fetched from
the archive at test time; the my.cnf Testcontainers mounts into docker-library's mysql
image (Maven Central); and the issue's own lines (`thread_cache = 8`)."""
from __future__ import annotations

import json
import os
import re
import zipfile
from pathlib import Path

import pytest

from harness import proc
from harness.server import catalog, cnfcheck, debroot, optionfile, osuser
from harness.server.mycnf import judged, server_takes

from ..conftest import harness, seeds
from ..schemas import conform

pytestmark = pytest.mark.integration

# How each build takes `myisam_recover` (a prefix of myisam_recover_options): MariaDB
# always, MySQL 5.6 with a deprecation warning, 5.7 not at all (full names only).
TAKEN_AS_PREFIX = {"mariadb-10.11": True, "mysql-5.6.24": True, "mysql-5.7.29": False}
REMOVED = {"mariadb-10.11": {"innodb_additional_mem_pool_size"}, "mysql-5.6.24": set(),
           "mysql-5.7.29": {"innodb_additional_mem_pool_size", "thread_concurrency"}}


def _sample() -> Path:
    build = catalog.resolve("mysql-5.5.55")  # from the tarball mirror, as a lab installs it
    return build.root / "support-files" / "my-innodb-heavy-4G.cnf"


def _taken_whole(name: str, lines: list[str]) -> tuple[int, str]:
    """The build's mysqld reading these [mysqld] lines at once (--validate-config or
    --verbose --help): exit code, stderr."""
    out = judged(catalog.resolve(name), lines)
    return out.returncode, out.stderr


def _translated(verdicts: list[dict]) -> list[str]:
    """The lines the check says this build takes: renamed ones under their new name,
    removed ones gone."""
    lines = []
    for v in verdicts:
        if v["status"] == "removed":
            continue
        name, value = (v["new_name"], v.get("new_value")) if v["status"] == "renamed" \
            else (v["option"], v.get("value"))
        lines.append(name if value is None else f"{name} = {value}")
    return lines


@pytest.mark.parametrize("seed", seeds("mysql-5.5.55"))
@pytest.mark.parametrize("name", list(TAKEN_AS_PREFIX))
def test_a_5_5_sample_file_is_judged_by_each_server(name, seed):
    sample = _sample()
    p = harness("cnf", "check", str(sample), "--server", name, "--from", seed, "--json")
    assert p.returncode in (0, 8), p.stdout + p.stderr
    verdicts = json.loads(p.stdout)["servers"][name]
    by = {v["option"]: v for v in verdicts}
    # No false "unknown": every line is a real option of some MySQL.
    assert not [v for v in verdicts if v["status"] == "unknown"], verdicts
    recover = by["myisam_recover"]
    if TAKEN_AS_PREFIX[name]:
        assert recover["status"] in ("accepted", "default differs"), recover
        assert recover["resolved"] == "myisam_recover_options", recover
    else:
        assert (recover["status"], recover["new_name"]) == ("renamed", "myisam_recover_options")
    # MariaDB starts with options it removed and says they do nothing: dead lines.
    dead = {v["option"] for v in verdicts if v["status"] == "ignored"}
    assert ("innodb_thread_concurrency" in dead) == name.startswith("mariadb"), verdicts
    # A removed option names the builds that take it (the 5.5 the file was written for).
    gone = [v for v in verdicts if v["status"] == "removed"]
    assert {v["option"] for v in gone} == REMOVED[name], gone
    assert all(seed in v["note"] for v in gone), gone
    # The oracle: the build's own mysqld reads the file as the check says it takes it.
    code, err = _taken_whole(name, _translated(verdicts))
    assert code == 0, err[-2000:]
    # What the upgrade changes without a line of the file: defaults that moved.
    moved = {m["option"]: m for m in json.loads(p.stdout)["new_defaults"][name]}
    assert "innodb_buffer_pool_size" not in moved  # the file sets it
    assert moved["innodb_file_per_table"]["reference_default"] == "FALSE"  # 5.5: off


def test_the_issues_lines_resolve_as_each_server_reads_them(tmp_path):
    f = tmp_path / "old.cnf"
    f.write_text("[mysqld]\nthread_cache = 8\nkey_buffer = 16M\nmax_allowed_packet = 64M\n")
    p = harness("cnf", "check", str(f), "--server", "mariadb-10.11", "--server",
                "mysql-5.7.29", "--from", "mysql-5.6.24")
    assert p.returncode == 8, p.stdout + p.stderr  # 5.7 needs the full names
    assert "thread_cache_size: default here 151, there 9" in p.stdout, p.stdout
    assert "thread_cache_size = 8" in p.stdout  # 5.7's translation
    assert "takes no option prefixes" in p.stdout
    # Defaults in the file's own unit: 64M written, 16M here, 4M on 5.6.
    assert "default here 16M, there 4M" in p.stdout, p.stdout
    # A prefix is a name too (thread_cach is thread_cache_size to MariaDB); a typo is not,
    # and the server's own words say so.
    f.write_text("[mysqld]\nthread_cahce_size = 8\n")
    p = harness("cnf", "check", str(f), "--server", "mariadb-10.11")
    assert p.returncode == 8 and "unknown" in p.stdout, p.stdout
    assert "unknown variable 'thread_cahce_size=8'" in p.stdout, p.stdout
    assert "did you mean thread_cache_size?" in p.stdout, p.stdout


def _debian_server_cnf(into: Path) -> Path:
    """MariaDB's own Debian 50-server.cnf, from the archive's mariadb-server package (the
    file a DBA on Debian or Ubuntu starts from)."""
    out = proc.run(["apt-get", "download", "mariadb-server"], cwd=into, timeout=300,
                   check=False)
    debs = list(into.glob("mariadb-server_*.deb"))
    assert debs, f"apt-get download mariadb-server: {out.stderr[-500:]}"
    proc.run(["dpkg-deb", "-x", str(debs[0]), str(into / "x")], timeout=120)
    return into / "x" / "etc" / "mysql" / "mariadb.conf.d" / "50-server.cnf"


# Testcontainers' MySQL module, from Maven Central, pinned: the jar holds the my.cnf it
# mounts into docker-library's mysql image for every test container it starts.
TESTCONTAINERS = ("org.testcontainers:mysql:1.21.4",
                  "b6767b4c4d221b1750f0d5d6ca6a23de93113933bddbba1e8d7c7664d71eb971")


def _testcontainers_cnf(into: Path) -> Path:
    """mysql-default-conf/my.cnf of Testcontainers' MySQL module: a descendant of the 5.x
    samples (a 5M redo log, a 16M pool) with docker-library's host_cache_size = 0 and
    skip-name-resolve."""
    artifact, pin = TESTCONTAINERS
    proc.run([proc.which("mvn"), "-q", "-B", "dependency:copy", f"-Dartifact={artifact}",
              f"-DoutputDirectory={into}"], timeout=600)
    (jar,) = into.glob("mysql-*.jar")
    assert debroot.sha256(jar) == pin, jar
    with zipfile.ZipFile(jar) as z:
        text = z.read("mysql-default-conf/my.cnf")
    out = into / "testcontainers-my.cnf"
    out.write_bytes(text)
    return out


@pytest.fixture(scope="module")
def field_files(tmp_path_factory) -> list[Path]:
    """my.cnf files nobody here wrote: Oracle's five 5.5 samples (the tarball's
    support-files), Debian's MariaDB server file and Testcontainers' MySQL file."""
    samples = sorted(_sample().parent.glob("my-*.cnf"))
    assert len(samples) == 5, samples
    return [*samples, _debian_server_cnf(tmp_path_factory.mktemp("deb")),
            _testcontainers_cnf(tmp_path_factory.mktemp("tc"))]


@pytest.mark.parametrize("name", ["mariadb-10.11", "mysql-5.7.29", "mysql-9.7"])
def test_the_fields_own_files_hold_no_false_typo(name, field_files):
    build = catalog.resolve(name)
    for path in field_files:
        read = optionfile.read(path, build)
        assert read.options, path
        judged, refusal = cnfcheck.values_read(build, cnfcheck.judge(
            build, dict(read.options), cnfcheck.installed_knows(build)))
        verdicts = [v.to_json() for v in judged]
        wrong = [v for v in verdicts if v["status"] in ("unknown", "invalid value")]
        assert not wrong and refusal is None, (path.name, wrong, refusal)
        # the oracle: the build's mysqld reads the file as the check says it takes it
        code, err = _taken_whole(name, _translated(verdicts))
        assert code == 0, (path.name, err[-2000:])


def test_testcontainers_file_on_9_7_in_its_own_units(field_files):
    (path,) = [p for p in field_files if p.name == "testcontainers-my.cnf"]
    build = catalog.resolve("mysql-9.7")
    read = optionfile.read(path, build)
    assert {"user", "datadir", "port", "skip-name-resolve"} <= set(read.set_aside)
    by = {j["option"]: j for j in (v.to_json() for v in cnfcheck.values_read(
        build, cnfcheck.judge(build, dict(read.options), cnfcheck.installed_knows(build)))[0])}
    assert by["host_cache_size"]["status"] == "accepted", by
    # 9.7 sizes its redo log by capacity: 2 files of 5M, written as the file writes sizes
    redo = by["innodb_log_file_size"]
    assert (redo["status"], redo["new_name"], redo["new_value"]) == (
        "renamed", "innodb_redo_log_capacity", "10M"), redo
    assert _taken_whole("mysql-9.7", ["innodb_log_file_size = 5M"])[0] != 0
    assert _taken_whole("mysql-9.7", ["innodb_redo_log_capacity = 10M"])[0] == 0


def _debian_mysql_cnf(into: Path) -> Path:
    """MySQL's own Debian mysqld.cnf (bind-address, mysqlx-bind-address, key_buffer_size,
    myisam-recover-options, log_error, max_binlog_size), from unstable's mysql-server
    package: the suite the catalog's MySQL 9.7 comes from, and this host's apt sources
    have no MySQL. apt fetches it with a sources list of its own: the suite's Release
    file checked against Debian's archive keyring, the package against the index's
    SHA256 (an unsigned or altered answer is an error, as for debootstrap)."""
    (into / "lists" / "partial").mkdir(parents=True)
    (into / "cache" / "archives" / "partial").mkdir(parents=True)
    sources = into / "sources.list"
    sources.write_text(f"deb [signed-by={KEYRING}] {debroot.MIRROR} sid main\n")
    apt = ["apt-get", "-q", "-o", f"Dir::Etc::SourceList={sources}",
           "-o", "Dir::Etc::SourceParts=/dev/null", "-o", f"Dir::State::Lists={into}/lists",
           "-o", f"Dir::Cache={into}/cache", "-o", "APT::Architectures=amd64",
           "-o", "Acquire::Languages=none", "-o", "APT::Sandbox::User=root",
           "-o", "Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false"]
    proc.run([*apt, "update", "--error-on=any"], timeout=600)
    proc.run([*apt, "download", "mysql-server"], timeout=600, cwd=into)
    (deb,) = into.glob("mysql-server_*.deb")
    proc.run(["dpkg-deb", "-x", str(deb), str(into / "x")], timeout=120)
    return into / "x" / "etc" / "mysql" / "mysql.conf.d" / "mysqld.cnf"


KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"


@pytest.fixture(scope="module")
def debian_mysql_cnf(tmp_path_factory) -> Path:
    return _debian_mysql_cnf(tmp_path_factory.mktemp("mysqldeb"))


# The X protocol's bind address is a 9.x option (8.0.21 on); 5.7 and MariaDB have none:
# the line must go from the file there, and the check names the build that takes it
# (on 5.7, a newer MySQL: added since; on MariaDB, MySQL's own): not in this build.
NOT_TAKEN = {"mysql-9.7": {}, "mysql-5.7.29": {"mysqlx-bind-address": (
    "added after mysql-5.7.29; mysql-8.0.31, mysql-9.7 take it; mysql-5.7.29 does not")},
    "mariadb-10.11": {"mysqlx-bind-address": (
        "MySQL's, not MariaDB's; mysql-8.0.31, mysql-9.7 take it; mariadb-10.11 does "
        "not")}}


@pytest.mark.parametrize("name", list(NOT_TAKEN))
def test_mysqls_own_debian_file_is_taken_where_the_server_takes_it(name, debian_mysql_cnf):
    build = catalog.resolve(name)
    read = optionfile.read(debian_mysql_cnf, build)
    # what the sandbox sets itself is set aside (its address, account, error log)
    assert set(read.set_aside) == {"user", "bind-address", "log_error"}, read.set_aside
    assert {"key_buffer_size", "myisam-recover-options", "max_binlog_size"} <= set(
        read.options), read.options
    judged_ = [v.to_json() for v in cnfcheck.values_read(build, cnfcheck.judge(
        build, dict(read.options), cnfcheck.installed_knows(build)))[0]]
    not_taken = {v["option"]: v for v in judged_ if v["status"] != "accepted"}
    assert set(not_taken) == set(NOT_TAKEN[name]), judged_
    for name_, v in not_taken.items():  # not a typo: another build takes it, named
        assert v["status"] == "not in this build" and v["note"] == NOT_TAKEN[name][name_], v
    # the oracle: the build's mysqld takes the rest of the file whole, and not that line
    code, err = _taken_whole(name, _translated([v for v in judged_
                                                if v["option"] not in not_taken]))
    assert code == 0, err[-2000:]
    if NOT_TAKEN[name]:
        assert _taken_whole(name, ["mysqlx-bind-address = 127.0.0.1"])[0] != 0


@pytest.mark.parametrize("name", ["mariadb-10.11", "mysql-5.7.29", "mysql-9.7"])
def test_a_value_the_server_refuses_is_named_with_its_words(name, tmp_path):
    # Names every build knows, two values none takes (MariaDB's --help says so of
    # InnoDB's option and goes on, exit 0); mysqld stops at the first, the check finds both.
    f = tmp_path / "values.cnf"
    f.write_text("[mysqld]\nbinlog_format = ROWS\nmax_connections = 20\n"
                 "innodb_buffer_pool_size = 12X\nsort_buffer_size = 2M\n")
    p = harness("cnf", "check", str(f), "--server", name, "--json")
    assert p.returncode == 8, p.stdout + p.stderr
    conform("cnf-check", json.loads(p.stdout))
    out = json.loads(p.stdout)
    by = {v["option"]: v for v in out["servers"][name]}
    assert by["binlog_format"]["status"] == "invalid value", by
    assert "'ROWS' to 'binlog_format'" in by["binlog_format"]["note"], by
    assert by["innodb_buffer_pool_size"]["status"] == "invalid value", by
    assert "12X" in by["innodb_buffer_pool_size"]["note"], by
    assert {by[k]["status"] for k in ("max_connections", "sort_buffer_size")} == {"accepted"}
    assert out["refused"] == {}, out
    # the oracle: the rest is what the server starts with
    code, err = _taken_whole(name, ["max_connections = 20", "sort_buffer_size = 2M"])
    assert code == 0, err[-2000:]
    code, _ = _taken_whole(name, ["binlog_format = ROWS"])
    assert code != 0


# What each build says of `user = <an account that does not exist>` in the line it
# judges: run as root it would switch to it and stop (MySQL: "Fatal error: Can't change
# to run as user"); run unprivileged, MariaDB and 5.6 say so and 5.7 takes it silently.
NOT_ROOT_WORDS = {"mariadb-10.11": "only use the --user switch if running as root",
                  "mysql-5.6.24": "only use the --user switch if running as root",
                  "mysql-5.7.29": ""}


@pytest.mark.skipif(os.geteuid() != 0, reason="the harness runs mysqld as itself when not root")
@pytest.mark.parametrize("name", list(NOT_ROOT_WORDS))
def test_the_mysqld_that_judges_a_line_of_the_users_file_is_never_root(name):
    # The line is the user's (MariaDB's --help loads the plugins plugin_load_add names):
    # the server that reads it runs as the account its sandboxes run as.
    build = catalog.resolve(name)
    taken = server_takes(build, "user", "no_such_account_here")
    assert taken.ok, taken
    assert NOT_ROOT_WORDS[name] in taken.said, taken
    account = osuser.mysqld_account()
    assert account is not None
    out = proc.run(["sh", "-c", "id -u; id -G"], as_user=(account.uid, account.gid))
    assert out.stdout.split() == [str(account.uid), str(account.gid)]


# percona-docker's replication my.cnf sets the two repositories: 5.6 added them and 9.0
# removed them, so each side of that span gets its own reason (Percona Server's 5.6
# counts in MySQL's line).
REPOSITORY = {"mysql-5.5.55": ("not in this build", "added after mysql-5.5.55"),
              "percona-5.5.52": ("not in this build", "added after percona-5.5.52"),
              "mysql-9.7": ("removed", "9.0: always TABLE")}


@pytest.mark.parametrize("name", list(REPOSITORY))
def test_an_option_added_later_is_not_called_removed(name):
    build = catalog.resolve(name)
    (v,) = cnfcheck.judge(build, {"master_info_repository": "TABLE"},
                          cnfcheck.installed_knows(build))
    status, why = REPOSITORY[name]
    assert v.status == status and v.note.startswith(why + ";"), v
    assert _taken_whole(name, ["master_info_repository = TABLE"])[0] != 0


def test_skip_host_cache_becomes_the_value_9_7_takes():
    """docker-library's and percona-docker's docker.cnf set skip-host-cache, which 8.4
    removed: the check gives what takes its place, and 9.7's mysqld agrees."""
    build = catalog.resolve("mysql-9.7")
    (v,) = [x.to_json() for x in cnfcheck.judge(build, {"skip-host-cache": None},
                                                 cnfcheck.installed_knows(build))]
    assert (v["status"], v["new_name"], v["new_value"]) == ("renamed", "host_cache_size", 0)
    assert _translated([v]) == ["host_cache_size = 0"]
    assert _taken_whole("mysql-9.7", _translated([v]))[0] == 0
    assert _taken_whole("mysql-9.7", ["skip-host-cache"])[0] != 0


@pytest.mark.parametrize("line, taken", [
    (b"innodb_buffer_pool_size\xc2\xa0= 64M\n", False),  # a UTF-8 no-break space
    (b"max_connections = 10\x85\n", False),  # a raw 0x85
    (b"innodb_io_capacity\xa0= 400\n", True)])  # latin1's 0xA0: a space to the server
def test_bytes_that_are_not_utf8_are_read_as_the_server_reads_them_never_a_traceback(
        line, taken, tmp_path):
    """A DBA's my.cnf with a UTF-8 no-break space, a raw 0x85 or a latin1 0xA0: read as
    the server's option reader reads it (its 0xA0 is a space, so the UTF-8 no-break
    space leaves a stray 0xC2 in the name) and refused naming the file and the byte,
    or taken as the server takes it; never a traceback from decoding what it echoed."""
    f = tmp_path / "my.cnf"
    f.write_bytes(b"[mysqld]\n" + line)
    p = harness("cnf", "check", "--server", "mariadb-10.11", str(f))
    assert "Traceback" not in p.stderr, p.stderr
    if taken:
        assert p.returncode == 0 and "innodb_io_capacity  400" in p.stdout, p.stdout
    else:
        assert p.returncode == 8 and str(f) in p.stderr, (p.returncode, p.stdout, p.stderr)


# Another flavor's option: no build of the build's own line ever took it, so not
# "removed" (Percona Server's userstat and thread_statistics on Oracle MySQL; MariaDB
# has userstat too, not thread_statistics).
FLAVORS_OWN = {
    ("mysql-9.7", "thread_statistics"): "Percona Server's, not MySQL's",
    ("mysql-5.7.29", "userstat"): "MariaDB and Percona Server's, not MySQL's",
    ("mariadb-10.11", "mysqlx-bind-address"): "MySQL's, not MariaDB's"}


@pytest.mark.parametrize(("name", "option"), list(FLAVORS_OWN))
def test_another_flavors_option_is_not_in_this_build(name, option):
    build = catalog.resolve(name)
    (v,) = cnfcheck.judge(build, {option: "1"}, cnfcheck.installed_knows(build))
    assert v.status == "not in this build", v
    assert v.note.startswith(FLAVORS_OWN[(name, option)] + ";"), v
    assert cnfcheck.translate([v]) == {}  # dropped, as a removed one is
    assert _taken_whole(name, [f"{option} = 1"])[0] != 0  # and the server refuses it


def test_the_values_each_server_holds_and_the_memory_the_file_asks_for(tmp_path):
    """What each build will use of the file, read from its own mysqld after it read the
    file: sizes in bytes, the numbers it adjusts with both (thread_cache_size to its
    maximum, max_connections to what the open-files limit allows), the memory summed
    against this host's, and the item of a list value a build refuses."""
    host = next(int(ln.split()[1]) * 1024 for ln in open("/proc/meminfo")
                if ln.startswith("MemTotal:"))
    pool_g = host // (1 << 30) + 2  # more than this host has
    cnf = tmp_path / "big.cnf"
    cnf.write_text(f"[mysqld]\ninnodb_buffer_pool_size = {pool_g}G\nmax_connections = 100000\n"
                   "thread_cache_size = 100000\nsort_buffer_size = 64M\n"
                   "sql_mode = STRICT_TRANS_TABLES,NO_AUTO_CREATE_USER\n")
    p = harness("cnf", "check", str(cnf), "--server", "mysql-9.7", "--server",
                "mariadb-10.11", "--json")
    assert p.returncode == 8, p.stderr  # 9.7 refuses a sql_mode item
    conform("cnf-check", json.loads(p.stdout))
    out = json.loads(p.stdout)
    for name in ("mysql-9.7", "mariadb-10.11"):
        by = {v["option"]: v for v in out["servers"][name]}
        assert by["innodb_buffer_pool_size"]["uses"] == str(pool_g << 30)
        assert by["sort_buffer_size"]["uses"] == str(64 << 20)
        assert by["thread_cache_size"]["adjusted"] == "100000 -> 16384", by
        asked, held = by["max_connections"]["adjusted"].split(" -> ")
        assert asked == "100000" and 0 < int(held) < 100000
        m = out["memory"][name]
        assert m["connections"] == int(held) and m["host"] == host
        assert m["server_buffers"] >= pool_g << 30 and m["per_connection"] >= 64 << 20
        assert m["at_most"] == m["server_buffers"] + m["per_connection"] * m["connections"]
    on97 = {v["option"]: v for v in out["servers"]["mysql-9.7"]}
    assert on97["sql_mode"]["status"] == "invalid value"
    assert on97["sql_mode"]["note"].startswith("NO_AUTO_CREATE_USER refused in sql_mode; ")
    text = harness("cnf", "check", str(cnf), "--server", "mariadb-10.11").stdout
    assert "mariadb-10.11 adjusts: max_connections 100000 -> " in text, text
    assert re.search(r"memory on mariadb-10\.11 \(summed as MySQLTuner does\): buffers "
                     r"[\d.]+ GiB .* the buffers alone are more", text), text


def test_compare_runs_where_the_last_cnf_check_judged_the_file(tmp_path, results):
    """compare with two my.cnf files and no --server: the builds the DBA last checked the
    candidate on (by its bytes: a copy is the same file, an edited one is not), said."""
    from harness.paths import AB_DIR
    from harness.runner.request import CompareRequest

    (tmp_path / "current.cnf").write_text("[mysqld]\ninnodb_buffer_pool_size = 128M\n")
    new = tmp_path / "new.cnf"
    new.write_text("[mysqld]\ninnodb_buffer_pool_size = 64M\n# the DBA's own\n")

    def chosen(candidate: Path) -> CompareRequest:
        req = CompareRequest(scenario=str(AB_DIR / "oltp_read_write.yaml"), quiet=True,
                             baseline=str(tmp_path / "current.cnf"), candidate=str(candidate))
        req.choose_servers()
        return req

    assert chosen(new).servers == [] and "the shipped workload's" in chosen(new).notes[0]
    p = harness("cnf", "check", str(new), "--server", "mysql-9.7", check=True)
    assert f"remembered: 'harness compare' of {new} with a shipped workload runs on " \
           "mysql-9.7" in p.stderr, p.stderr  # the check says what it leaves behind
    req = chosen(new)
    assert req.servers == ["mysql-9.7"], req.notes
    assert req.notes[0].startswith(f"server: mysql-9.7, the build(s) the last 'harness cnf "
                                   f"check' of {new} judged it on"), req.notes
    copy = tmp_path / "elsewhere.cnf"
    copy.write_bytes(new.read_bytes())
    assert chosen(copy).servers == ["mysql-9.7"]
    copy.write_text(new.read_text() + "max_connections = 50\n")
    assert chosen(copy).servers == []


def test_the_servers_own_deprecation_warnings_are_kept(tmp_path):
    """MySQL 9.7's mysqld says which lines are deprecated and what to use instead, when
    it validates the file at warning verbosity; the check keeps its words."""
    cnf = tmp_path / "old.cnf"
    cnf.write_text("[mysqld]\nbinlog_format = ROW\nsync_master_info = 10000\n"
                   "character_set_server = utf8mb3\ninnodb_buffer_pool_size = 64M\n")
    p = harness("cnf", "check", str(cnf), "--server", "mysql-9.7", "--json", check=True)
    said = {v["option"]: v.get("deprecated") for v in json.loads(p.stdout)["servers"][
        "mysql-9.7"]}
    assert said == {"binlog_format": "deprecated",
                    "sync_master_info": "deprecated -> sync_source_info",
                    "character_set_server": "deprecated (the character set UTF8MB3) -> "
                                            "UTF8MB4",
                    "innodb_buffer_pool_size": None}, said
    text = harness("cnf", "check", str(cnf), "--server", "mysql-9.7").stdout
    assert "mysql-9.7 says sync_master_info is deprecated -> sync_source_info" in text
