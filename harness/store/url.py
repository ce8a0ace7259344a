"""A store URL shown without its secrets, however the password was written.

SQLAlchemy's own masking reads the URL as SQLAlchemy parses it: a password with an
unencoded ``@`` is cut at the first one (the rest shows as the host), a password in the
query (``?password=``) is not a password to it, and its parse errors quote the URL
whole. Here the userinfo is everything before the *last* ``@`` of the authority, query
parameters that carry a secret are masked too, and :func:`scrub` takes every secret of
a URL out of any text (an error message) before it is shown.
"""
from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

from ..paths import results_dir

MASK = "***"
_SECRET_PARAMS = re.compile(r"([?&;](?:password|passwd|pwd|pass|ssl_key_password)=)([^&;#]*)",
                            re.I)


def _authority(url: str) -> tuple[int, int] | None:
    """Where the authority (``user:pw@host:port``) of ``url`` starts and ends."""
    m = re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", url)
    if not m:
        return None
    start = m.end()
    # the authority ends at the first '/', '?' or '#' after its last '@': a password
    # may hold '/', '@' and an unencoded '?' (an '@' in the query would make more of the
    # URL the userinfo, and so masked: the safe way to be wrong)
    rest = url[start:]
    at = rest.rfind("@")
    ends = [i for i in (rest.find(c, at + 1) for c in "/?#") if i >= 0]
    return start, start + (min(ends) if ends else len(rest))


def secrets(url: str) -> list[str]:
    """The secrets ``url`` holds, as written and decoded (longest first)."""
    found = []
    span = _authority(url)
    if span:
        auth = url[span[0]:span[1]]
        user_info = auth.rpartition("@")[0] if "@" in auth else ""
        if ":" in user_info:
            found.append(user_info.split(":", 1)[1])
    found += [m.group(2) for m in _SECRET_PARAMS.finditer(url)]
    out = {s for s in found if s} | {unquote(s) for s in found if s}
    return sorted(out, key=len, reverse=True)


def masked(url: str) -> str:
    """``url`` with its password and secret query parameters as ``***``."""
    out = _SECRET_PARAMS.sub(lambda m: m.group(1) + MASK, url)
    span = _authority(out)
    if span:
        auth = out[span[0]:span[1]]
        user_info, at, host = auth.rpartition("@")
        if at and ":" in user_info:
            user = user_info.split(":", 1)[0]
            out = out[:span[0]] + f"{user}:{MASK}@{host}" + out[span[1]:]
    return out


def scrub(text: str, url: str) -> str:
    """``text`` (an error message) with every secret of ``url`` replaced by ``***``."""
    for s in secrets(url):
        if len(s) >= 2:
            text = text.replace(s, MASK)
    return text


# The query options a store URL may carry, per driver (anything else is refused: an
# option SQLite reads would open another file, or a database that vanishes with the
# process; a driver's unknown keyword ends in a traceback).
_MYSQL_QUERY = {"charset": ("utf8mb4",), "ssl_ca": None, "ssl_cert": None, "ssl_key": None}


def refusal(url: str) -> str | None:
    """Why ``url`` is not a store URL the harness opens as given (None: it is): SQLite
    takes a file path and no query (``?timeout=``, ``?mode=memory``, ``file:`` URIs
    would make another file or none); MySQL takes ``charset=utf8mb4`` and ``ssl_ca``,
    ``ssl_cert``, ``ssl_key`` naming readable files; nothing is read twice."""
    scheme, _, rest = url.partition("://")
    query = rest.partition("?")[2]
    if scheme.startswith("sqlite"):
        if query or "file:" in rest or "mode=" in rest:
            return ("a SQLite store is a file at its path, with no query options (?...) "
                    "or file: URI: give sqlite:////absolute/path/harness.db")
        return None
    pairs = [kv.partition("=") for kv in re.split(r"[&;]", query) if kv]
    keys = [unquote(k) for k, _, _ in pairs]
    return next((why for k, _, v in pairs
                 if (why := _option_refusal(unquote(k), unquote(v), keys.count(unquote(k))))),
                None)


def _option_refusal(key: str, value: str, times: int) -> str | None:
    """Why one query option of a MySQL store URL is refused (None: it is taken)."""
    if key not in _MYSQL_QUERY or times > 1:
        return (f"query option {key!r} is not one the harness passes to the driver "
                f"(it takes {', '.join(sorted(_MYSQL_QUERY))}, each once)")
    allowed = _MYSQL_QUERY[key]
    if allowed is not None and value not in allowed:
        return f"{key}={value}: the store speaks {', '.join(allowed)}"
    if allowed is None and not _readable(value):
        return f"{key}: {value} is not a readable file"
    return None


def _readable(path: str) -> bool:
    try:
        with open(path, "rb"):
            return True
    except OSError:
        return False


SQLITE_SUFFIXES = (".db", ".sqlite", ".sqlite3")


def default_url() -> str:
    """The results folder's SQLite store (paths.results_dir)."""
    return f"sqlite:///{(results_dir() / 'harness.db').absolute()}"


def as_url(value: str) -> str:
    """A store as ``--results`` or HARNESS_STORE gives it: a URL as it is; a path its
    SQLite URL (a file named ``*.db``, ``*.sqlite`` or ``*.sqlite3`` itself, any other
    path a folder holding ``harness.db``)."""
    if re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", value) and not re.match(r"[A-Za-z]:[\\/]",
                                                                       value):
        return value
    path = Path(value).expanduser().absolute()
    if path.suffix.lower() not in SQLITE_SUFFIXES:
        path = path / "harness.db"
    return f"sqlite:///{path}"
