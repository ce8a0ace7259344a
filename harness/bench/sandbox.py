"""The sandbox a bench section measures on: mariadb-10.11 (or another catalog build)
with the section's options."""
from __future__ import annotations

import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..providers import get_provider
from ..server import catalog
from ..workloads.base import RunContext


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


@contextmanager
def bench_server(options: dict[str, Any], prefix: str, server: str = "mariadb-10.11"
                 ) -> Iterator[tuple[Any, RunContext]]:
    """A sandbox of ``server`` started with ``options``, and a run context on it (its
    artifacts in a folder of its own, mysqld may write there); both gone after."""
    box = get_provider("local").provision(catalog.resolve(server, log=log))
    art = Path(tempfile.mkdtemp(prefix=prefix))
    art.chmod(0o777)
    try:
        box.start(options)
        t0 = time.monotonic()
        yield box, RunContext(endpoint=box.endpoint, artifacts=art,
                              clock=lambda: time.monotonic() - t0, sample=lambda *a: None,
                              event=lambda *a: None)
    finally:
        box.destroy()
        shutil.rmtree(art, ignore_errors=True)
