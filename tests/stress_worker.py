"""One of the harness processes that tests/integration/test_concurrency.py races on one
cache: ``install SPEC`` installs the catalog entry a JSON file describes; ``snapshot KEY
DATADIR OUT`` saves DATADIR as snapshot KEY (or finds it saved) and restores it into
OUT. Each prints what it said while it ran, then one JSON line of what it did."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from harness.server import catalog, snapshot


def install(spec: str) -> dict[str, object]:
    entry = catalog.CatalogEntry(**json.loads(Path(spec).read_text()))
    said: list[str] = []

    def log(line: str) -> None:
        said.append(line)
        print(line, flush=True)
    catalog.install(entry, log=log)
    return {"installed": any(line.startswith("installed ") for line in said), "said": said,
            "pid": os.getpid()}


def restore(key: str, datadir: str, out: str) -> dict[str, object]:
    said: list[str] = []

    def say(line: str) -> None:
        said.append(line)
        print(line, flush=True)
    path, _ = snapshot.save(key, Path(datadir), {"build": "stress"}, say=say)
    with snapshot.restoring(path, say=say) as held:
        snapshot.copy_datadir(held, Path(out))
    return {"said": said, "pid": os.getpid()}


if __name__ == "__main__":
    what, *args = sys.argv[1:]
    done = install(*args) if what == "install" else restore(*args)
    print(json.dumps(done), flush=True)
