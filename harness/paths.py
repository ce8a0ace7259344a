"""Where the harness keeps things on disk. Every location can be moved by environment."""
from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """Server builds, downloads and cached option lists (``HARNESS_CACHE``).

    Root's default is /var/cache/mysql-harness, not ~/.cache: mysqld then runs as an
    unprivileged account, which must reach the builds and sandboxes (/root is 0700).
    """
    default = (Path("/var/cache/mysql-harness") if os.geteuid() == 0
               else Path.home() / ".cache" / "mysql-harness")
    return Path(os.environ.get("HARNESS_CACHE", default))


def sandbox_dir() -> Path:
    """Parent of every sandbox the harness creates (``HARNESS_SANDBOXES``).

    Kept short on purpose: a unix socket path must stay under 108 bytes.
    """
    return Path(os.environ.get("HARNESS_SANDBOXES", cache_dir() / "sandboxes"))


def results_dir() -> Path:
    """The embedded results store and run artifacts (``HARNESS_RESULTS``)."""
    return Path(os.environ.get("HARNESS_RESULTS", "results"))


def ssb_data_dir() -> Path:
    """Generated SSB files, one folder per scale and seed (``HARNESS_SSB_DATA``)."""
    return Path(os.environ.get("HARNESS_SSB_DATA", cache_dir() / "ssb"))
