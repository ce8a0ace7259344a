"""Names of the files a report writes, made from what a store says: a server's name or a
run id read from a store is somebody's text (a crafted store may name a server
``../../x``), never a path."""
from __future__ import annotations

import hashlib
import re

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def file_name(text: str) -> str:
    """``text`` as one file name inside the report's folder: anything but letters,
    digits, ``.``, ``_`` and ``-`` becomes ``_``, no leading dot, and a name that had to
    change gets a short hash of the original so two names never meet."""
    safe = _UNSAFE.sub("_", text).lstrip(".") or "_"
    if safe == text:
        return text
    return f"{safe[:80]}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"
