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
from urllib.parse import unquote

MASK = "***"
_SECRET_PARAMS = re.compile(r"([?&;](?:password|passwd|pwd|pass|ssl_key_password)=)([^&;#]*)",
                            re.I)


def _authority(url: str) -> tuple[int, int] | None:
    """Where the authority (``user:pw@host:port``) of ``url`` starts and ends."""
    m = re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", url)
    if not m:
        return None
    start = m.end()
    # the authority ends at the query, or at the first '/' after its last '@' (a
    # password may hold '/' and '@')
    rest = url[start:]
    cut = rest.find("?") if "?" in rest else len(rest)
    at = rest.rfind("@", 0, cut)
    slash = rest.find("/", at + 1, cut)
    return start, start + (slash if slash >= 0 else cut)


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
