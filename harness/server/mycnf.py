"""my.cnf rendering and version-aware option checking.

The build itself says which options it accepts: ``mysqld --no-defaults --verbose
--help`` prints every option with its value. That list is cached per binary, so a
tarball nobody catalogued is checked the same way as a catalogued build.
"""
from __future__ import annotations

import hashlib
import json
import re
import subprocess
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from .. import proc
from ..errors import ToolError
from ..paths import cache_dir
from . import osuser
from .catalog import Build

# Options the sandbox sets itself (every provider's base options); a scenario that sets
# them would break the sandbox, a DBA's my.cnf that has them gets them set aside.
MANAGED = frozenset({
    "datadir", "socket", "port", "bind_address", "pid_file", "log_error", "basedir",
    "lc_messages_dir", "secure_file_priv", "user", "tmpdir", "skip_name_resolve",
    "init_file", "plugin_dir", "mysqlx", "symbolic_links",
})

# Options no sandbox starts with, whoever asks, and why.
NEVER = {"skip_grant_tables": "it turns password checks off (every login would succeed)"}
OFF_LIMITS = MANAGED | frozenset(NEVER)  # what no scenario or variant may set

Value = str | int | float | bool


def norm(name: str) -> str:
    """my.cnf treats '-' and '_' alike in option names."""
    return name.strip().lower().replace("-", "_")


def base_name(name: str) -> str:
    """A my.cnf name, normalised, without the ``loose-`` prefix mysqld reads past."""
    return norm(name).removeprefix("loose_")


# my_getopt's modifiers: a name it does not take whole is looked up again without one
# (skip-/disable- set the option off, enable- on, maximum- a session variable's ceiling).
_MODIFIERS = ("skip_", "disable_", "enable_", "maximum_")


def takes_prefixes(build: Build) -> bool:
    """Whether ``build``'s mysqld takes an unambiguous prefix of an option's name for the
    option (MariaDB; MySQL and Percona Server before 5.7)."""
    return build.flavor == "mariadb" or build.version_tuple < (5, 7)


def taken_as(build: Build, raw: str) -> str:
    """The option a my.cnf name sets on ``build``, resolved as its mysqld's option
    reader resolves it: ``loose-`` aside, the name itself when the build lists it, else
    the listed option it is an unambiguous prefix of (where the build takes prefixes),
    else the same without a modifier (``enable-skip-grant`` is ``skip_grant_tables``
    on MariaDB); the name, normalised, when none (the build refuses it at start), or
    for an external server (no binary to ask). What the sandbox manages or never takes
    is judged on this, not on the spelling."""
    name = base_name(raw)
    if build.init_method == "external":
        return name
    known = known_options(build)
    prefixes = takes_prefixes(build)
    for cand in (name, *(name[len(m):] for m in _MODIFIERS if name.startswith(m))):
        if cand in known:
            return cand
        if prefixes and (whole := prefix_of(cand, known)) is not None:
            return whole
    return name


def read_as(build: Build, raw: str) -> tuple[str, str]:
    """:func:`taken_as`'s option for ``raw``, and what a message puts after the name as
    written when the build reads it as another option (``loose-`` aside): for
    ``bind_addr`` on MariaDB, `` (bind_address, as mariadb-10.11 reads it)``."""
    key = taken_as(build, raw)
    same = key == base_name(raw)
    return key, "" if same else f" ({key}, as {build.name} reads it)"


def never_why(key: str) -> str | None:
    """Why no sandbox starts with option ``key`` (as :func:`taken_as` gives it), or None."""
    return f"a sandbox never starts with it: {NEVER[key]}" if key in NEVER else None


def _cache_key(build: Build) -> str:
    st = build.mysqld.resolve().stat()
    raw = f"{build.mysqld.resolve()}:{st.st_size}:{st.st_mtime_ns}"
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


# Lines of the option table, after the header "Variables (--variable-name=value)":
# innodb-buffer-pool-size                                      134217728
_OPT_LINE = re.compile(r"^([a-z0-9][a-z0-9_-]*)\s")
# The header's second line, "and boolean options {FALSE|TRUE}  Value (after reading options)":
# not an option named "and".
_HEADER_TAIL = "and boolean options"
HELP_CACHE_VERSION = 3


def parse_help_options(text: str) -> set[str]:
    """Option names from ``mysqld --verbose --help`` output (the variables table and flags)."""
    names: set[str] = set()
    in_table = False
    for line in text.splitlines():
        if line.startswith("Variables (--variable-name=value)"):
            in_table = True
            continue
        if in_table:
            if line.startswith(("---", _HEADER_TAIL)):
                continue
            m = _OPT_LINE.match(line)
            if m:
                names.add(norm(m.group(1)))
            elif not line.strip():
                in_table = False
        else:
            # --innodb-old-blocks-time=# or --skip-name-resolve: flags without a table
            # row; "-u, --user=name": an option with a short form (no row either)
            for m in re.finditer(r"^\s+(?:-[A-Za-z#?], )?--([a-z0-9][a-z0-9_-]*)", line):
                names.add(norm(m.group(1)))
    return names


def parse_help_defaults(text: str) -> dict[str, str | None]:
    """Option -> default value from the variables table of ``mysqld --verbose --help``
    (None where the table says "(No default value)")."""
    out: dict[str, str | None] = {}
    table = text.split("Variables (--variable-name=value)", 1)
    for line in table[1].splitlines()[1:] if len(table) == 2 else []:
        if line.startswith(("---", _HEADER_TAIL)):
            continue
        if not line.strip():
            break
        name, _, value = line.partition(" ")
        value = value.strip()
        out[norm(name)] = None if value == "(No default value)" else value
    return out


def _help(build: Build) -> dict[str, object]:
    """Names and defaults from this build's ``mysqld --verbose --help``, cached per binary."""
    cache = cache_dir() / "options" / f"{_cache_key(build)}.json"
    if cache.exists():
        data = json.loads(cache.read_text())
        if isinstance(data, dict) and data.get("version") == HELP_CACHE_VERSION:
            return data  # older caches: only the names, or the header read as an option
    with tempfile.TemporaryDirectory(prefix="harness-help-") as tmp:
        argv = _help_argv(build, Path(tmp))
        out = _run_unprivileged(build, Path(tmp), argv, "--verbose --help")
    names = parse_help_options(out.stdout)
    if out.returncode != 0 or "innodb_buffer_pool_size" not in names:
        raise ToolError([str(a) for a in argv], out.returncode,
                        out.stdout[-1000:] + out.stderr[-2000:],
                        f"{build.name}: mysqld --verbose --help did not list its options")
    data = {"version": HELP_CACHE_VERSION, "names": sorted(names),
            "defaults": parse_help_defaults(out.stdout)}
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(data))
    return data


def _help_argv(build: Build, tmp: Path, defaults_file: Path | None = None
               ) -> list[str | Path]:
    """``mysqld --verbose --help`` reading no option file, or only ``defaults_file``."""
    # 5.7 aborts --help (listing only some options) when its compiled-in
    # secure-file-priv directory does not exist; give it one that does.
    argv: list[str | Path] = [
        build.mysqld, f"--defaults-file={defaults_file}" if defaults_file else "--no-defaults",
        "--verbose", "--help", f"--lc-messages-dir={build.share_dir}", f"--basedir={build.root}",
        f"--secure-file-priv={tmp}", f"--datadir={tmp}", f"--tmpdir={tmp}"]
    return argv


def _run_unprivileged(build: Build, tmp: Path, argv: list[str | Path], what: str
                      ) -> subprocess.CompletedProcess[str]:
    """Run the build's mysqld as the account its servers run as, never as root: it
    reads a line of the user's my.cnf (MariaDB's ``--help`` loads the plugins that
    line names), and ``tmp`` (its datadir, tmpdir, option file) becomes that
    account's. The harness not being root, as the harness's own user."""
    account = osuser.mysqld_account()
    if account is not None:
        osuser.require_reachable(build.mysqld, account, "the build's mysqld")
        osuser.hand_over(tmp, account, 0o700)
    return proc.run(argv, env=build.env(), timeout=60, check=False,
                    what=f"{build.name} mysqld {what}", contained=True,
                    as_user=(account.uid, account.gid) if account else None)


def judging_argv(build: Build, tmp: Path, cnf: Path) -> list[str | Path]:
    """The build's mysqld reading ``cnf`` and stopping there, refusing what the server
    would refuse: ``--validate-config`` where it has it (MySQL 8.0.16+: its ``--help``
    takes any option without a word), else ``--verbose --help``."""
    argv = _help_argv(build, tmp, cnf)
    if validates(build):
        argv = [a for a in argv if a not in ("--verbose", "--help")]
        argv.insert(2, "--validate-config")
    return argv


_JUDGED: dict[tuple[str, str, tuple[str, ...]], subprocess.CompletedProcess[str]] = {}


def judged(build: Build, lines: list[str]) -> subprocess.CompletedProcess[str]:
    """The build's mysqld reading these lines as a [mysqld] group and stopping there
    (:func:`judging_argv`), as mysqld's unprivileged account; once per binary and lines
    in this process. ``--validate-config`` runs at warning verbosity (the file's own
    setting after it wins), so its deprecation warnings come with its verdict."""
    if validates(build):
        lines = ["log_error_verbosity = 2", *lines]
    key = (str(build.mysqld.resolve()), build.name, tuple(lines))
    if key not in _JUDGED:
        with tempfile.TemporaryDirectory(prefix="harness-help-") as tmp:
            cnf = Path(tmp) / "judged.cnf"
            cnf.write_text("[mysqld]\n" + "".join(f"{ln}\n" for ln in lines))
            argv = judging_argv(build, Path(tmp), cnf)
            _JUDGED[key] = _run_unprivileged(build, Path(tmp), argv,
                                             " ".join(str(a) for a in argv[2:4]))
    return _JUDGED[key]


def values_after(build: Build, lines: list[str]) -> tuple[dict[str, str | None], str]:
    """Every variable as the build's mysqld holds it after reading these [mysqld] lines
    (its ``--verbose --help`` table: sizes in bytes, each value as the server adjusted
    it, the rest at their defaults), and what it said meanwhile (its warnings: MySQL 8.0.16
    and later from ``--validate-config`` at warning verbosity, where its ``--help`` says
    none), as mysqld's unprivileged account; nothing for an external server."""
    if build.init_method == "external":
        return {}, ""
    with tempfile.TemporaryDirectory(prefix="harness-help-") as tmp:
        cnf = Path(tmp) / "values.cnf"
        cnf.write_text("[mysqld]\n" + "".join(f"{ln}\n" for ln in lines))
        argv = _help_argv(build, Path(tmp), cnf)
        out = _run_unprivileged(build, Path(tmp), argv, "--verbose --help (the file's values)")
    said = judged(build, lines).stderr if validates(build) else out.stderr
    return (parse_help_defaults(out.stdout) if out.returncode == 0 else {}), said


@dataclass(frozen=True)
class Taken:
    """What a build's mysqld says of one option line of a [mysqld] group: whether it
    starts with it, the option it takes the name for when that is another (a prefix, an
    old name it still maps), and its own words."""

    ok: bool
    as_name: str | None
    said: str

    def resolved(self, name: str, known: set[str]) -> str | None:
        """The listed option it takes ``name`` for: the one its warning named, else
        the one ``name`` is an unambiguous prefix of; None when neither (an old name it
        maps without a word)."""
        return self.as_name or prefix_of(name, known)


# MySQL 5.5.33+/5.6.13+: "Using unique option prefix myisam-recover instead of
# myisam-recover-options is deprecated ..."; MariaDB takes a prefix without a word.
_PREFIX_WARNING = re.compile(r"unique option prefix '?([\w-]+)'? instead of '?([\w-]+)'?")
_TAKEN: dict[tuple[str, str, str], Taken] = {}


def server_takes(build: Build, raw: str, value: Value | None) -> Taken:
    """Ask the build: ``mysqld --validate-config`` where it has it, else ``mysqld
    --verbose --help``, with an option file that holds only this line under [mysqld]
    (cached per binary and line in this process), run as mysqld's unprivileged account."""
    line = raw if value is None else f"{raw} = {fmt_value(value)}"
    key = (str(build.mysqld.resolve()), line, build.name)
    if key not in _TAKEN:
        out = judged(build, [line])
        said = _server_words(out.stderr, raw)
        ok = _read_through(build, out)
        m = _PREFIX_WARNING.search(out.stderr)
        _TAKEN[key] = Taken(ok, norm(m.group(2)) if ok and m else None, said)
    return _TAKEN[key]


def _read_through(build: Build, out: subprocess.CompletedProcess[str]) -> bool:
    """Whether the judging mysqld read its option file to the end: exit 0, and with
    ``--help`` its option list printed (it stops before it on an option it refuses)."""
    return out.returncode == 0 and (validates(build) or "innodb-buffer-pool-size" in
                                    out.stdout.replace("_", "-"))


# How my_getopt refuses a value its option's type cannot take (MariaDB's --help says it
# of a plugin's option and goes on, exit 0).
_VALUE_REFUSED = re.compile(r"(?:Error while setting value '.*?' to|Unknown suffix '.' used "
                            r"for variable) '([\w-]+)'")


@dataclass(frozen=True)
class Refusal:
    """Why a build's mysqld does not start with a file: the option whose value it
    refuses (None: it names none), and its words."""

    option: str | None
    said: str


def file_refusal(build: Build, lines: list[str]) -> Refusal | None:
    """What the build's mysqld says of these [mysqld] lines read at once, values too
    (None: it reads them all)."""
    out = judged(build, lines)
    m = _VALUE_REFUSED.search(out.stderr)
    if m is None and _read_through(build, out):
        return None
    errors = [ln for ln in out.stderr.splitlines() if "[ERROR]" in ln or ": Error" in ln]
    said = next((ln for ln in errors if m and m.group(0) in ln), errors[0] if errors else
                out.stderr.strip()[-300:] or f"exit {out.returncode}")
    return Refusal(norm(m.group(1)) if m else None, _bare(said))


def _bare(line: str) -> str:
    """A line of mysqld's stderr without its timestamp, thread and program columns."""
    line = re.sub(r"^.*?\[(ERROR|Warning|Note)\]\s*(\[[^]]*\]\s*)*", "", line)
    return re.sub(r"^/\S+/(mysqld|mariadbd): ", "", line).strip()


def validates(build: Build) -> bool:
    """Whether the build has ``mysqld --validate-config`` (MySQL 8.0.16 and later), which
    refuses what the server would; their ``--help`` takes an unknown option silently."""
    return build.flavor != "mariadb" and build.version_tuple >= (8, 0, 16)


def _server_words(stderr: str, raw: str) -> str:
    """The line of mysqld's stderr that speaks of ``raw`` (its ERROR, else a warning),
    without the timestamp and thread columns."""
    def of_it(ln: str) -> bool:
        return norm(raw).split("=")[0] in norm(ln)
    lines = [ln for ln in stderr.splitlines() if "[ERROR]" in ln and of_it(ln)] or \
        [ln for ln in stderr.splitlines() if of_it(ln)]
    return _bare(lines[0]) if lines else ""


def prefix_of(name: str, known: set[str]) -> str | None:
    """The one option of ``known`` that ``name`` is an unambiguous prefix of (how
    my_getopt resolves a name it does not know: MariaDB always, MySQL before 5.7)."""
    matches = [k for k in known if k.startswith(norm(name))]
    return matches[0] if len(matches) == 1 else None


def resolved_name(build: Build, raw: str, value: Value | None) -> str:
    """The option ``build`` takes a my.cnf name for: itself (normalised) when the build
    lists it, else the one the build resolves it to (a prefix, when it takes one)."""
    name = norm(raw)
    known = known_options(build)
    if name in known or build.init_method == "external":
        return name
    taken = server_takes(build, raw, value)
    return (taken.resolved(name, known) or name) if taken.ok else name


def known_options(build: Build) -> set[str]:
    """Every option name this build's mysqld accepts (cached per binary); for an
    external server, the variables it showed (no binary to ask)."""
    if build.init_method == "external":
        return set(build.variables or ())
    return set(_help(build)["names"])  # type: ignore[call-overload]


def option_defaults(build: Build) -> dict[str, str | None]:
    """Option -> default, as this build prints it (empty for an external server)."""
    if build.init_method == "external":
        return {}
    return dict(_help(build)["defaults"])  # type: ignore[call-overload]


def unknown_variables(build: Build, names: Iterable[str]) -> list[str]:
    """Names in ``names`` that SET GLOBAL would refuse on this build: not among its
    options (a variable takes no prefix)."""
    known = known_options(build)
    return [raw for raw in names if not _listed(raw, known)]


def unknown_file_options(build: Build, options: Mapping[str, Value | None]) -> list[str]:
    """Option-file lines of ``options`` this build's mysqld would refuse: a name it does
    not list is put to the build itself with its value (a prefix, an old name it maps)."""
    known = known_options(build)
    return [raw for raw, value in options.items() if not _listed(raw, known) and (
        build.init_method == "external" or not server_takes(build, raw, value).ok)]


def _listed(raw: str, known: set[str]) -> bool:
    """Whether the build lists ``raw``: ``loose-`` names always (mysqld ignores them
    where unknown, by design); ``skip-``/``enable-``/``disable-`` on the option they
    toggle."""
    name = norm(raw)
    return name.startswith("loose_") or name in known or \
        re.sub(r"^(skip|enable|disable)_", "", name) in known


def shown_like(default: str | None, written: Value | None) -> str | None:
    """A default in bytes in the unit the file wrote its value in (``16M`` beside a
    default of 134217728: ``128M``; a smaller unit where that one does not divide it);
    any other default as the build printed it."""
    unit = re.match(r"^\s*\d+(?:\.\d+)?\s*([kmgtKMGT])\s*$", str(written or ""))
    if default is None or not unit or not default.isdigit():
        return default
    units = "KMGT"[:"KMGT".index(unit.group(1).upper()) + 1]
    for u in reversed(units):
        factor = 1 << (10 * ("KMGT".index(u) + 1))
        if int(default) % factor == 0:
            return f"{int(default) // factor}{u}"
    return default


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtKMGT]?)\s*$")


def parse_size(v: Value | None) -> int | None:
    """A my.cnf size (``512M``, ``2G``, ``134217728``) in bytes; None if not a size."""
    if v is None or isinstance(v, bool):
        return None
    m = _SIZE.match(str(v))
    if not m:
        return None
    mult = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[m.group(2).lower()]
    return int(float(m.group(1)) * mult)


_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,127}$")
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")
# What makes the option file parser read a value differently unless it is quoted.
_QUOTE_RE = re.compile(r"""[#;'"\\]|^\s|\s$|^$""")


def value_problem(name: str, value: Value | None) -> str | None:
    """Why ``value`` is not a value of option ``name``, where the name says what kind it
    is (``*_size``, ``*_packet``: a size), or None."""
    if isinstance(value, bool) or value is None:
        return None
    if norm(name).endswith(("_size", "_packet")) and parse_size(value) is None:
        return (f"option {name}: {value!r} is not a size (a number of bytes, or with K, M, "
                "G or T: 128M)")
    return None


# The servers' option file reader (mysys/my_default.c) reads a line into a 4 KB buffer
# and takes what is past it as a line of its own: as an option. A rendered line stays
# well under that on every build.
MAX_LINE = 2048


def option_problem(name: str, value: object) -> str | None:
    """Why ``name = value`` cannot be written to an option file as one option, or None.
    A newline would add options past every check; a ``[`` would open a group; a line
    past the reader's buffer would be cut, its rest read as other options."""
    if not _NAME_RE.match(name):
        return (f"option name {name!r}: only letters, digits, '_', '-' and '.' (a newline, "
                "'[', '=' or a space would smuggle other options in)")
    if isinstance(value, str) and _CONTROL_RE.search(value):
        return f"option {name}: its value holds a control character (newline, tab ...)"
    if isinstance(value, str) and any(0xDC80 <= ord(c) <= 0xDCFF for c in value):
        return (f"option {name}: its value holds a byte that is not UTF-8 (0x"
                f"{next(ord(c) - 0xDC00 for c in value if 0xDC80 <= ord(c) <= 0xDCFF):02X}): "
                "save the file as UTF-8")
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        n = len(f"{name} = {fmt_value(value)}".encode())
        if n > MAX_LINE:
            return (f"option {name}: its line would be {n} bytes, more than the {MAX_LINE} "
                    "an option file line may hold here (the server's reader cuts long "
                    "lines and reads the rest as options of their own)")
    return None


def printed_defaults(options: Iterable[tuple[str, Value | None]]) -> str:
    """The arguments line ``mysqld --print-defaults`` prints for a group that holds
    exactly these options, in order (stripped)."""
    return " ".join(f"--{k}" if v is None else f"--{k}={_raw(v)}" for k, v in options)


def _raw(v: Value) -> str:
    return ("ON" if v else "OFF") if isinstance(v, bool) else str(v)


def print_defaults(build: Build, cnf: Path, cwd: Path | None = None
                   ) -> tuple[int, str, str]:
    """The build's own reading of ``cnf``: ``mysqld --print-defaults``'s exit code, its
    arguments line (stripped) and what it said on stderr."""
    out = proc.run([build.mysqld, f"--defaults-file={cnf}", "--print-defaults"],
                   env=build.env(), cwd=cwd, timeout=60, check=False,
                   what=f"{build.name} mysqld --print-defaults")
    lines = out.stdout.strip().splitlines()
    return out.returncode, (lines[-1].strip() if lines else ""), out.stderr


def read_back(build: Build, cnf: Path, options: Mapping[str, Value | None]) -> str | None:
    """Why the build's own mysqld reads ``cnf`` as something else than ``options`` (an
    option more, one less, a value cut), or None when it reads exactly them."""
    code, got, err = print_defaults(build, cnf)
    want = printed_defaults(options.items())
    if code == 0 and got == want:
        return None
    at = next((n for n, (a, b) in enumerate(zip(got, want, strict=False)) if a != b),
              min(len(got), len(want)))
    return (f"{build.name}'s mysqld reads {cnf} otherwise than it was written (exit "
            f"{code}{': ' + err.strip()[-200:] if code else ''}): from character {at} it "
            f"reads {got[at:at + 60]!r} where {want[at:at + 60]!r} was written")


def fmt_value(v: Value) -> str:
    """A value as an option file reads it back exactly: quoted (with ``\\`` and ``\"``
    escaped) when it holds a comment sign, a quote, a backslash or edge spaces."""
    if isinstance(v, bool):
        return "ON" if v else "OFF"
    text = str(v)
    if _CONTROL_RE.search(text):
        raise ValueError(f"an option value holds a control character: {text!r}")
    if _QUOTE_RE.search(text):
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return text


def render(sections: Mapping[str, Mapping[str, Value | None]]) -> str:
    """Render ``{section: {option: value}}`` as my.cnf text; None means a bare flag."""
    out = []
    for section, opts in sections.items():
        out.append(f"[{section}]")
        for k, v in opts.items():
            why = option_problem(k, v)
            if why:
                raise ValueError(why)
            out.append(k if v is None else f"{k} = {fmt_value(v)}")
        out.append("")
    return "\n".join(out)
