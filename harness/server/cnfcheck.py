"""A my.cnf written for one server version, checked and translated for another.

Each option is judged against the target build's own ``mysqld --verbose --help``
(:mod:`harness.server.mycnf` caches it per binary):
- accepted: the build takes it as written (with its default on that build, and the
  reference build's, when one is given and they differ);
- renamed: the build does not take the name, but takes the new name of :data:`RENAMES`
  or of the replication renames of MySQL 8.0.26 (slave -> replica, master -> source);
  the value is converted where the unit changed;
- removed: the build does not take it and has no new name for it, but another build does
  take it (the reference, or any installed catalog build);
- unknown: no build knows it: a typo, or an option of a plugin.

Translation (``harness cnf check``, and ``translate: true`` in a scenario) rewrites the
renamed options and drops the removed ones, and says so for each; an unknown option is
never dropped, it stays an error.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass

from .catalog import Build
from .mycnf import Value, known_options, norm, option_defaults, parse_size


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
    return size * files


def _log_file_size(v: Value | None, _opts: Mapping[str, Value | None]) -> Value | None:
    size = parse_size(v)
    if size is None:
        raise Dropped(f"'{v}' is not a size")
    return size // 2  # innodb_log_files_in_group defaults to 2 where it exists


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
    "default_authentication_plugin": Rename(
        "authentication_policy", _auth_policy,
        "8.4: the default plugin is the first element of authentication_policy"),
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
    "relay_log_info_repository": "9.0: always TABLE",
}

NO_DEFAULT = "(no default)"
ACCEPTED, DEFAULT_DIFFERS, RENAMED, REMOVED, UNKNOWN = (
    "accepted", "default differs", "renamed", "removed", "unknown")


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

    def to_json(self) -> dict[str, object]:
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


def judge(build: Build, options: Mapping[str, Value | None],
          elsewhere: Callable[[str], bool] = lambda _n: False,
          reference: Build | None = None) -> list[Verdict]:
    """A verdict per option of ``options`` on ``build``. ``elsewhere(name)`` says whether
    another build takes the name (to tell removed from unknown); ``reference``, the build
    the file was written for, adds its defaults."""
    known = known_options(build)
    defaults = option_defaults(build)
    ref_known = known_options(reference) if reference else set()
    ref_defaults = option_defaults(reference) if reference else {}
    out = []
    for raw, value in options.items():
        prefix, name = _base(raw)
        if name in known or norm(raw) in known:
            here, there = defaults.get(name), ref_defaults.get(name)
            differs = reference is not None and name in ref_known and here != there
            out.append(Verdict(raw, value, DEFAULT_DIFFERS if differs else ACCEPTED,
                               default=here or NO_DEFAULT,
                               reference_default=(there or NO_DEFAULT) if differs else None))
            continue
        out.append(_missing(raw, value, prefix, name, known, options,
                            elsewhere(name) or name in ref_known))
    return out


def _missing(raw: str, value: Value | None, prefix: str, name: str, known: set[str],
             options: Mapping[str, Value | None], exists_elsewhere: bool) -> Verdict:
    """The verdict on an option the build does not take."""
    rename = RENAMES.get(name)
    if rename is not None and rename.new in known:
        try:
            new_value = rename.convert(value, options)
        except (Dropped, ValueError) as e:
            return Verdict(raw, value, REMOVED, note=f"{rename.why}; not translated: {e}")
        return Verdict(raw, value, RENAMED, new_name=prefix.replace("loose_", "") + rename.new,
                       new_value=new_value, note=rename.why)
    new = _replication_rename(name, known)
    if new is not None:
        return Verdict(raw, value, RENAMED, new_name=prefix + new, new_value=value,
                       note="8.0.26: replication options say replica/source")
    if name in REMOVED_WHY or exists_elsewhere:
        return Verdict(raw, value, REMOVED, note=REMOVED_WHY.get(name, "another build takes "
                                                                       "it, this one does not"))
    if prefix == "loose_":
        return Verdict(raw, value, ACCEPTED, note="loose-: ignored where unknown, by design")
    return Verdict(raw, value, UNKNOWN, note="no build knows this option: a typo, or a "
                                             "plugin's option?")


def translate(verdicts: Iterable[Verdict]) -> dict[str, Value | None]:
    """The options a build takes: renamed ones under their new name, removed ones gone.
    Unknown options stay (the caller reports them as errors)."""
    out: dict[str, Value | None] = {}
    for v in verdicts:
        if v.status == RENAMED:
            assert v.new_name is not None
            out[v.new_name] = v.new_value
        elif v.status != REMOVED:
            out[v.option] = v.value
    return out


def installed_knows(exclude: Build) -> Callable[[str], bool]:
    """``elsewhere`` for :func:`judge`: does any other installed catalog build take the
    name (asked lazily: each build's option list is cached after its first --help)?"""
    def knows(name: str) -> bool:
        return any(name in opts for build, opts in _installed_options().items()
                   if build != exclude.name)
    return knows


@functools.cache
def _installed_options() -> dict[str, frozenset[str]]:
    """The option names of every installed catalog build, read once per process (each
    detection runs mysqld --version; a scenario with many refused options asked ~50
    times)."""
    from . import catalog

    return {e.name: frozenset(known_options(catalog.detect_build(e.install_dir, e.name)))
            for e in catalog.CATALOG.values() if catalog.is_installed(e)}
