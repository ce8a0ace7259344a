"""A my.cnf written for one server version, checked and translated for another.

Each option is judged against the target build's own ``mysqld --verbose --help``
(:mod:`harness.server.mycnf` caches it per binary), and a name that list does not hold
is put to the build itself (its mysqld reading an option file of that one line):
- accepted: the build takes it as written (with its default on that build, and the
  reference build's, when one is given and they differ); a name the build takes for
  another (an unambiguous prefix, ``thread_cache``, on MariaDB and MySQL before 5.7; an
  old name it still maps) is shown resolved;
- renamed: the build does not take the name, but takes the new name of :data:`RENAMES`
  or of the replication renames of MySQL 8.0.26 (slave -> replica, master -> source);
  the value is converted where the unit changed;
- ignored: the build starts with it but says it does nothing (a removed option kept for
  old files: MariaDB's ``innodb_thread_concurrency``); the file runs, the line is dead;
- removed: the build does not take it and has no new name for it, but an earlier build of
  its line took it (the reference, or any installed catalog build: named);
- not in this build: another flavor's option (Percona Server's ``userstat`` on Oracle
  MySQL, MariaDB's on either), or one its line added later: no build of its own took it;
- unknown: no build knows it: a typo, or an option of a plugin;
- invalid value: the build knows it but its mysqld refuses the value, reading the file
  as judged all at once (``binlog_format = ROWS``, a size with an unknown suffix).

Translation (``harness cnf check``, and ``translate: true`` in a scenario) rewrites the
renamed options and drops the removed, not-in-this-build and ignored ones, and says so
for each; an unknown option is
never dropped, it stays an error.
"""
from __future__ import annotations

import difflib
import functools
import re
import socket
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, replace

from ..errors import CatalogError
from ..jsonvalue import JsonDict
from .catalog import Build, get_entry, version_tuple
from .mycnf import (
    MANAGED,
    Refusal,
    Taken,
    Value,
    file_refusal,
    fmt_value,
    known_options,
    norm,
    option_defaults,
    parse_size,
    prefix_of,
    server_takes,
    shown_like,
)


class Dropped(Exception):
    """A rename whose value has no meaning on the target (said why)."""


@dataclass(frozen=True)
class Rename:
    new: str
    convert: Callable[[Value | None, Mapping[str, Value | None]], Value | None]
    why: str


def _same(v: Value | None, _opts: Mapping[str, Value | None]) -> Value | None:
    return v


def _get(opts: Mapping[str, Value | None], name: str) -> Value | None:
    return next((v for k, v in opts.items() if norm(k) == name), None)


def _redo_capacity(v: Value | None, opts: Mapping[str, Value | None]) -> Value | None:
    size = parse_size(v)
    files = int(str(_get(opts, "innodb_log_files_in_group") or 2))
    if size is None:
        raise Dropped(f"'{v}' is not a size")
    return shown_like(str(size * files), v)  # in the file's unit: 5M -> 10M


def _log_file_size(v: Value | None, _opts: Mapping[str, Value | None]) -> Value | None:
    size = parse_size(v)
    if size is None:
        raise Dropped(f"'{v}' is not a size")
    # innodb_log_files_in_group defaults to 2 where it exists; in the file's unit
    return shown_like(str(size // 2), v)


def _slow_log_file(v: Value | None, _opts: Mapping[str, Value | None]) -> Value | None:
    if v is None or v is True:
        raise Dropped("without a file name: write slow_query_log = 1 instead")
    return v


def _days_to_seconds(v: Value | None, _opts: Mapping[str, Value | None]) -> Value | None:
    return int(float(str(v))) * 86400


def _seconds_to_days(v: Value | None, _opts: Mapping[str, Value | None]) -> Value | None:
    return -(-int(float(str(v))) // 86400)


def _warnings_to_verbosity(v: Value | None, _opts: Mapping[str, Value | None]) -> Value | None:
    level = 1 if v is None else int(str(v))  # a bare --log-warnings is level 1
    return 1 if level <= 0 else 2 if level == 1 else 3


def _auth_policy(v: Value | None, _opts: Mapping[str, Value | None]) -> Value | None:
    if str(v) == "mysql_native_password":
        raise Dropped("mysql_native_password is not built in from MySQL 9.0")
    return f"{v},,"


# The documented renames (old name -> new name on the builds that dropped the old one).
# The replication renames of 8.0.26 (slave -> replica, master -> source) are found by
# rule, not listed. Each line: MySQL release notes of the version that removed the name.
RENAMES: dict[str, Rename] = {
    "innodb_log_file_size": Rename(
        "innodb_redo_log_capacity", _redo_capacity,
        "8.0.30: the redo log is sized by innodb_redo_log_capacity = innodb_log_file_size "
        "x innodb_log_files_in_group"),
    "innodb_redo_log_capacity": Rename(
        "innodb_log_file_size", _log_file_size,
        "before 8.0.30 the redo log is innodb_log_files_in_group (2) files of "
        "innodb_log_file_size"),
    "expire_logs_days": Rename(
        "binlog_expire_logs_seconds", _days_to_seconds,
        "8.0: expire_logs_days became binlog_expire_logs_seconds (days x 86400)"),
    "binlog_expire_logs_seconds": Rename(
        "expire_logs_days", _seconds_to_days,
        "before 8.0 binary logs expire in whole days (rounded up)"),
    "log_warnings": Rename(
        "log_error_verbosity", _warnings_to_verbosity,
        "8.0: log_warnings became log_error_verbosity (0 -> 1, 1 -> 2, 2+ -> 3)"),
    "tx_isolation": Rename("transaction_isolation", _same, "MySQL 8.0, MariaDB 11.1: renamed"),
    "tx_read_only": Rename("transaction_read_only", _same, "MySQL 8.0, MariaDB 11.1: renamed"),
    "innodb_undo_logs": Rename("innodb_rollback_segments", _same, "8.0: renamed"),
    # Names of MySQL 5.0/5.1 that 5.5/5.6 dropped (sample files of that age still carry them).
    "table_cache": Rename("table_open_cache", _same,
                          "5.1.3: renamed table_open_cache, the old name later removed"),
    "default_character_set": Rename("character_set_server", _same,
                                    "5.5: the server's default-character-set removed"),
    "locking": Rename("external_locking", _same,
                      "5.5: skip-locking removed, skip-external-locking"),
    "log_bin_trust_routine_creators": Rename(
        "log_bin_trust_function_creators", _same, "5.0.16: renamed, the old name later removed"),
    "log_slow_queries": Rename(
        "slow_query_log_file", _slow_log_file,
        "5.6: log-slow-queries removed: slow_query_log = 1, its file slow_query_log_file"),
    "default_authentication_plugin": Rename(
        "authentication_policy", _auth_policy,
        "8.4: the default plugin is the first element of authentication_policy"),
}

# A skip-X flag a build dropped for a value of another option (docker-library's and
# percona-docker's docker.cnf carry skip-host-cache): X -> (option, value, why).
SKIP_RENAMES: dict[str, tuple[str, int, str]] = {
    "host_cache": ("host_cache_size", 0, "8.0.30 deprecated skip-host-cache, 8.4 removed "
                                         "it: host_cache_size = 0 turns the cache off"),
}

# Removed without a successor, with the reason a DBA wants to read.
REMOVED_WHY = {
    "innodb_log_files_in_group": "MySQL 8.0.30 folded it into innodb_redo_log_capacity; "
                                 "MariaDB 10.5+ writes one redo file",
    "query_cache_size": "8.0: the query cache is gone",
    "query_cache_type": "8.0: the query cache is gone",
    "query_cache_limit": "8.0: the query cache is gone",
    "query_cache_min_res_unit": "8.0: the query cache is gone",
    "query_cache_wlock_invalidate": "8.0: the query cache is gone",
    "innodb_file_format": "8.0 / MariaDB 10.6: Barracuda is the only format",
    "innodb_file_format_max": "8.0 / MariaDB 10.6: Barracuda is the only format",
    "innodb_large_prefix": "8.0 / MariaDB 10.6: large prefixes are always on",
    "innodb_support_xa": "8.0: XA support is always on",
    "innodb_locks_unsafe_for_binlog": "8.0: use READ COMMITTED instead",
    "master_info_repository": "9.0: always TABLE",
    "thread_concurrency": "MySQL 5.7 removed it (it only ever acted on Solaris)",
    "innodb_additional_mem_pool_size": "MySQL 5.7 and MariaDB 10.2 removed it (InnoDB "
                                       "allocates from the system)",
    "master_host": "5.5: replication is set with CHANGE MASTER TO",
    "master_user": "5.5: replication is set with CHANGE MASTER TO",
    "master_password": "5.5: replication is set with CHANGE MASTER TO",
    "master_port": "5.5: replication is set with CHANGE MASTER TO",
    "master_connect_retry": "5.5: replication is set with CHANGE MASTER TO",
    "relay_log_info_repository": "9.0: always TABLE",
}

NO_DEFAULT = "(no default)"
ACCEPTED, DEFAULT_DIFFERS, IGNORED, RENAMED, REMOVED, UNKNOWN, INVALID = (
    "accepted", "default differs", "ignored", "renamed", "removed", "unknown", "invalid value")
NOT_IN_BUILD = "not in this build"
# the build does not start with the line
NOT_TAKEN = frozenset({RENAMED, REMOVED, NOT_IN_BUILD, UNKNOWN})
# another build takes it, this one has no line for it: a translation drops it
DROPPED = frozenset({REMOVED, NOT_IN_BUILD})


@dataclass(frozen=True)
class Verdict:
    """What one option of a my.cnf becomes on one build."""

    option: str  # as written
    value: Value | None
    status: str
    new_name: str | None = None
    new_value: Value | None = None
    default: str | None = None  # on this build
    reference_default: str | None = None
    note: str = ""
    resolved: str | None = None  # the option the build takes this name for
    uses: str | None = None  # the value the build will hold, as its mysqld prints it
    adjusted: str | None = None  # "asked -> held" where the build changed the number
    deprecated: str | None = None  # the build's own warning: "deprecated -> new_name"

    def to_json(self) -> JsonDict:
        return {k: v for k, v in asdict(self).items() if v not in (None, "")}


_ROLE_WORDS = (("slave", "replica"), ("master", "source"))


def _replication_rename(name: str, known: set[str]) -> str | None:
    """MySQL 8.0.26's new name for a slave/master option, if this build has it."""
    new = name
    for old, word in _ROLE_WORDS:
        new = new.replace(old, word)
    return new if new != name and new in known else None


def _base(name: str) -> tuple[str, str]:
    """(prefix, option) of a written name: loose-/skip-/enable-/disable- apart."""
    n = norm(name)
    m = re.match(r"^(loose_|skip_|enable_|disable_)?(.*)$", n)
    assert m is not None
    return m.group(1) or "", m.group(2)


@dataclass(frozen=True)
class _Judging:
    """One file's options judged on one build: what every option's verdict reads."""
    build: Build
    options: Mapping[str, Value | None]
    known: set[str]
    defaults: dict[str, str | None]
    reference: Build | None
    ref_known: set[str]
    ref_defaults: dict[str, str | None]
    elsewhere: Callable[[str], list[str]]

    def takers(self, name: str) -> list[str]:
        """The other builds that take ``name``, the reference among them."""
        ref = [self.reference.name] if self.reference and name in self.ref_known else []
        return sorted({*self.elsewhere(name), *ref})


def judge(build: Build, options: Mapping[str, Value | None],
          elsewhere: Callable[[str], list[str]] = lambda _n: [],
          reference: Build | None = None) -> list[Verdict]:
    """A verdict per option of ``options`` on ``build``. ``elsewhere(name)`` names the
    other builds that take the name (to tell removed from unknown); ``reference``, the
    build the file was written for, adds its defaults."""
    j = _Judging(build, options, known_options(build), option_defaults(build), reference,
                 known_options(reference) if reference else set(),
                 option_defaults(reference) if reference else {}, elsewhere)
    return [_judge_one(j, raw, value) for raw, value in options.items()]


def _judge_one(j: _Judging, raw: str, value: Value | None) -> Verdict:
    prefix, name = _base(raw)
    resolved = None
    if name not in j.known and norm(raw) not in j.known:
        taken = _asked(j.build, raw, value)
        if taken is None or not taken.ok:
            return _missing(j, raw, value, taken.said if taken else "")
        resolved = taken.resolved(name, j.known)
        if resolved is None:
            return _unlisted(raw, value, prefix, j.build.name, taken.said)
    return _accepted(j, raw, value, resolved or name, resolved)


def _accepted(j: _Judging, raw: str, value: Value | None, key: str,
              resolved: str | None) -> Verdict:
    """An option the build takes (as ``key``), with its default there and, when it
    differs, on the reference build."""
    here, there = j.defaults.get(key), j.ref_defaults.get(key)
    differs = j.reference is not None and key in j.ref_known and here != there
    return Verdict(raw, value, DEFAULT_DIFFERS if differs else ACCEPTED,
                   default=here or NO_DEFAULT,
                   reference_default=(there or NO_DEFAULT) if differs else None,
                   resolved=resolved,
                   note=f"{j.build.name} takes it as {resolved}" if resolved else "")


def _unlisted(raw: str, value: Value | None, prefix: str, here: str, said: str) -> Verdict:
    """An option the build takes but does not list: ignored when its mysqld says the
    option does nothing (MariaDB keeps removed names "only for compatibility with old
    my.cnf files"), else accepted as a name it maps."""
    if prefix == "loose_":
        return _loose(raw, value)
    if re.search(r"does nothing|was removed|has no effect", said, re.I):
        return Verdict(raw, value, IGNORED, note=f"{here}: {said}")
    return Verdict(raw, value, ACCEPTED, note=f"{here} takes it without listing it" + (
        f": {said}" if said else " (an old name it maps)"))


def _loose(raw: str, value: Value | None) -> Verdict:
    return Verdict(raw, value, ACCEPTED, note="loose-: ignored where unknown, by design")


def _never_here(build: Build, takers: list[str]) -> tuple[str, str] | None:
    """(not in this build, why) when no earlier build of this one's own line took the
    option: only other flavors' builds do (Percona Server's userstat on Oracle MySQL), or
    only newer builds of its line (an option added since: a file for 9.x on 5.7), so
    "removed" is not the word; None where an earlier one took it, or none is known."""
    try:
        entries = [get_entry(t) for t in takers]
    except CatalogError:
        return None
    own = [e for e in entries if e.flavor in _OWN[build.flavor]]
    if not entries or any(version_tuple(e.version) <= build.version_tuple for e in own):
        return None
    if own:
        return NOT_IN_BUILD, f"added after {build.name}"
    flavors = sorted({_TITLE[e.flavor] for e in entries})
    return NOT_IN_BUILD, f"{' and '.join(flavors)}'s, not {_TITLE[build.flavor]}'s"


# The flavors whose options a build of each has by descent: Percona Server is MySQL
# with more; MySQL has none of Percona Server's own.
_OWN = {"mysql": ("mysql",), "percona": ("mysql", "percona"), "mariadb": ("mariadb",)}
_TITLE = {"mysql": "MySQL", "percona": "Percona Server", "mariadb": "MariaDB"}


def _asked(build: Build, raw: str, value: Value | None) -> Taken | None:
    """The build's own word on one option line (None: no binary to ask)."""
    if build.init_method == "external":
        return None
    return server_takes(build, raw, value)


def _missing(j: _Judging, raw: str, value: Value | None, said: str) -> Verdict:
    """The verdict on an option the build does not take (``said``: what this build's
    mysqld said of it): renamed, removed (other builds take it), or unknown."""
    prefix, name = _base(raw)
    renamed = _renamed(j, raw, value)
    if renamed is not None:
        return renamed
    here, takers = j.build.name, j.takers(name)
    if name in REMOVED_WHY or takers:
        where = f"{', '.join(takers)} take{'s' if len(takers) == 1 else ''} it" if takers \
            else ""
        status, why = _never_here(j.build, takers) or (REMOVED, REMOVED_WHY.get(name, ""))
        return Verdict(raw, value, status, note="; ".join(
            x for x in (why, where, f"{here} does not") if x))
    if prefix == "loose_":
        return _loose(raw, value)
    near = difflib.get_close_matches(name, j.known | j.ref_known, n=1, cutoff=0.8)
    what = f"did you mean {near[0]}?" if near else "a typo, or a plugin's option?"
    return Verdict(raw, value, UNKNOWN, note=f"no build knows this option: {what}" +
                   (f" ({here}: {said})" if said else ""))


def _renamed(j: _Judging, raw: str, value: Value | None) -> Verdict | None:
    """The verdict on an option this build knows under another name (a rename of the
    catalog's, replica/source, a prefix spelled out); None when it knows none."""
    prefix, name = _base(raw)
    skipped = SKIP_RENAMES.get(name) if prefix == "skip_" else None
    if skipped is not None and skipped[0] in j.known:
        return Verdict(raw, value, RENAMED, new_name=skipped[0], new_value=skipped[1],
                       note=skipped[2])
    rename = RENAMES.get(name)
    if rename is not None and rename.new in j.known:
        try:
            new_value = rename.convert(value, j.options)
        except (Dropped, ValueError) as e:
            return Verdict(raw, value, REMOVED, note=f"{rename.why}; not translated: {e}")
        return Verdict(raw, value, RENAMED, new_name=prefix.replace("loose_", "") + rename.new,
                       new_value=new_value, note=rename.why)
    spelled = prefix_of(name, j.known)
    new = _replication_rename(name, j.known) or spelled
    if new is None:
        return None
    why = ("8.0.26: replication options say replica/source" if new != spelled
           else f"{j.build.name} takes no option prefixes (MySQL 5.7 removed them): the full "
                "name")
    return Verdict(raw, value, RENAMED, new_name=prefix + new, new_value=value, note=why)


def new_defaults(build: Build, reference: Build, options: Mapping[str, Value | None]
                 ) -> list[tuple[str, str, str]]:
    """(option, default on ``build``, default on ``reference``) for the options both
    builds take, the file leaves out and whose defaults differ (as MySQL Shell's upgrade
    checker lists sysVarsNewDefaults); paths, the version and the sandbox's own options
    left out (they differ by where a build lives, not by what it does)."""
    here, there = option_defaults(build), option_defaults(reference)
    written = {_base(k)[1] for k in options}
    written |= {r for k in written if k not in here and (r := prefix_of(k, set(here)))}
    both = sorted(set(here) & set(there) - written - set(MANAGED))
    return [(k, here[k] or NO_DEFAULT, there[k] or NO_DEFAULT) for k in both
            if _says_what_it_does(k, here[k], there[k])]


# One value, said two ways by two builds' --help: a switch's words, and "no limit" as
# the largest number of the option's type (32-bit on one build, 64-bit on another).
_SWITCH = {"on": "1", "true": "1", "yes": "1", "off": "0", "false": "0", "no": "0"}
_NO_LIMIT = {str(2 ** 32 - 1), str(2 ** 64 - 1), str(2 ** 63 - 1), str(2 ** 31 - 1)}


def _one_value(here: str | None, there: str | None) -> bool:
    """Two defaults that are one value said two ways."""
    a, b = ((v or "").strip().lower() for v in (here, there))
    return _SWITCH.get(a, a) == _SWITCH.get(b, b) or {a, b} <= _NO_LIMIT


def _says_what_it_does(name: str, here: str | None, there: str | None) -> bool:
    """Two defaults that differ by what a build does, not by where it lives (a path,
    the version, the plugin folder, a name made of the host's), nor by how its --help
    says a value (ON against TRUE, 32- against 64-bit maxima)."""
    host = re.compile(rf"^{re.escape(socket.gethostname().split('.')[0])}[-.]", re.I)
    return not _one_value(here, there) and not any("/" in (v or "") for v in (here, there)) \
        and not any(host.match(v or "") for v in (here, there)) \
        and not name.startswith(("version", "character_sets_dir", "plugin"))


def values_read(build: Build, verdicts: list[Verdict]
                ) -> tuple[list[Verdict], Refusal | None]:
    """The verdicts once the build's mysqld has read the file as they say it takes it,
    all of it at once, values too (``--help`` and ``--validate-config`` refuse a value
    the option's type cannot take: ``binlog_format = ROWS``, ``sort_buffer_size = 2Q``):
    each option whose value it refuses becomes INVALID with its words (asked again
    without it, as mysqld stops at the first); and its refusal when it names no option
    of the file (None: it reads the rest)."""
    out = list(verdicts)
    if build.init_method == "external":
        return out, None
    live = {i: line for i, v in enumerate(out) if (line := line_read(v)) is not None}
    while live:
        refusal = file_refusal(build, list(live.values()))
        if refusal is None:
            return out, None
        at = next((i for i in live if refusal.option in names_of(out[i])), None)
        if at is None:
            return out, refusal
        out[at] = replace(out[at], status=INVALID,
                          note=_tokens_refused(build, out[at]) + f"{build.name}: {refusal.said}")
        del live[at]
    return out, None


def _tokens_refused(build: Build, v: Verdict) -> str:
    """Which items of a list value the build refuses (``sql_mode``'s
    NO_AUTO_CREATE_USER, gone in 8.0), each put to its mysqld alone; "" for one value,
    or where each item alone is taken."""
    name = v.new_name if v.status == RENAMED and v.new_name else v.option
    items = [x.strip() for x in str(v.value or "").split(",") if x.strip()]
    if len(items) < 2:
        return ""
    refused = [x for x in items if file_refusal(build, [f"{name} = {x}"]) is not None]
    return f"{', '.join(refused)} refused in {name}; " if refused else ""


def fmt_line(name: str, value: Value | None) -> str:
    """An option line as a my.cnf writes it."""
    return name if value is None else f"{name} = {fmt_value(value)}"


def line_read(v: Verdict) -> str | None:
    """The line the build reads for this verdict (None: it reads none)."""
    if v.status in (*DROPPED, UNKNOWN, INVALID):
        return None
    name, value = (v.new_name, v.new_value) if v.status == RENAMED else (v.option, v.value)
    return name if value is None else f"{name} = {fmt_value(value)}"


def names_of(v: Verdict) -> set[str]:
    """Every name the server may give the option of this verdict."""
    return {norm(n) for n in (v.option, _base(v.option)[1], v.resolved, v.new_name) if n}


def translate(verdicts: Iterable[Verdict]) -> dict[str, Value | None]:
    """The options a build takes: renamed ones under their new name, removed ones and
    those it ignores gone. Unknown options stay (the caller reports them as errors)."""
    out: dict[str, Value | None] = {}
    for v in verdicts:
        if v.status == RENAMED:
            assert v.new_name is not None
            out[v.new_name] = v.new_value
        elif v.status not in (*DROPPED, IGNORED):
            out[v.option] = v.value
    return out


def installed_knows(exclude: Build) -> Callable[[str], list[str]]:
    """``elsewhere`` for :func:`judge`: the other installed catalog builds that take the
    name (asked lazily: each build's option list is cached after its first --help)."""
    def knows(name: str) -> list[str]:
        return sorted(build for build, opts in _installed_options().items()
                      if build != exclude.name and name in opts)
    return knows


@functools.cache
def _installed_options() -> dict[str, frozenset[str]]:
    """The option names of every installed catalog build, read once per process (each
    detection runs mysqld --version; a scenario with many refused options asked ~50
    times)."""
    from . import catalog

    return {e.name: frozenset(known_options(catalog.detect_build(e.install_dir, e.name)))
            for e in catalog.entries() if catalog.is_installed(e)}
