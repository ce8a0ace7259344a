"""Alerts for a lab's nightly: a JSON message posted to a webhook when a regression is
new or a nightly failed.

The payload is Slack's incoming-webhook shape (``text``, which Slack, Mattermost, Rocket
.Chat and Teams' Slack-compatible connectors show), with the details for a program
beside it under ``harness``. A webhook URL carries its secret in its path, and a
command line is visible to every user of the host: the URL is read from
``HARNESS_NOTIFY_URL`` or from a file (``--notify @FILE``, a regular file), and a URL on
the command line itself is taken but warned about. Errors name the host, never the
path.
"""
from __future__ import annotations

import http.client
import json
import os
import stat
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .errors import InputError, NotifyError

ENV = "HARNESS_NOTIFY_URL"
TIMEOUT_S = 10.0  # a read's
TOTAL_S = 20.0  # the whole post's


def target(flag: str | None) -> str | None:
    """The webhook URL from ``--notify`` (``URL`` or ``@FILE``), else the environment;
    None when neither says one."""
    if flag is None:
        return _checked(os.environ[ENV], ENV) if os.environ.get(ENV) else None
    if not flag.startswith("@"):
        print("warning: --notify URL is visible to every user of this host in the "
              f"process list: put it in a file (--notify @FILE) or {ENV}", file=sys.stderr)
        return _checked(flag, "--notify")
    try:  # non-blocking: a FIFO is refused, not waited on
        fd = os.open(Path(flag[1:]), os.O_RDONLY | os.O_NONBLOCK)
    except OSError as e:
        raise InputError(f"--notify {flag}: {e.strerror or e}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise InputError(f"--notify {flag}: not a regular file")
    with os.fdopen(fd, encoding="utf-8", errors="replace") as f:
        text = f.read(4096).strip()
    return _checked(text, f"--notify {flag}")


def _checked(url: str, where: str) -> str:
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in url):
        raise InputError(f"{where}: a URL holds no space, tab, CR, LF or other control "
                         "character (it is not shown: its path is the webhook's secret)")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(f"{where}: not an http(s) URL (a webhook, e.g. "
                         "https://hooks.slack.com/services/...)")
    return url


def post(url: str, text: str, details: dict[str, Any]) -> None:
    """POST ``{"text": text, "harness": details}``; a refused or failed post raises
    NotifyError naming the host and the status."""
    body = json.dumps({"text": text, "harness": details}, default=str).encode()
    req = urllib.request.Request(url, data=body, method="POST",
                                 headers={"Content-Type": "application/json"})
    host = urlsplit(url).netloc.rpartition("@")[2]
    failed: list[BaseException] = []

    def send() -> None:
        try:
            with urllib.request.urlopen(req, timeout=TIMEOUT_S) as r:  # noqa: S310 (http(s))
                r.read(65536)
        except BaseException as e:  # noqa: BLE001 - said by the caller's thread below
            failed.append(e)

    # One deadline for the whole post: the socket timeout is per read, and a server
    # that sends a byte every few seconds would hold a nightly's alert for ever.
    t = threading.Thread(target=send, daemon=True, name="notify")
    t.start()
    t.join(TOTAL_S)
    if t.is_alive():
        raise NotifyError(f"notify: {host} did not finish answering within {TOTAL_S:.0f} s")
    if failed:
        _raise_for(failed[0], host)


def _raise_for(e: BaseException, host: str) -> None:
    """A failed post as a NotifyError naming the host and the status, never the path."""
    if isinstance(e, urllib.error.HTTPError):
        raise NotifyError(f"notify: {host} answered HTTP {e.code} {e.reason}") from None
    if isinstance(e, (urllib.error.URLError, OSError, ValueError,
                      http.client.HTTPException)):  # garbage for an answer: BadStatusLine
        reason = getattr(e, "reason", e.__class__.__name__)
        raise NotifyError(f"notify: could not post to {host}: {reason}") from None
    raise e
