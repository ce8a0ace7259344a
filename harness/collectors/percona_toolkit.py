"""pt-summary and pt-mysql-summary, captured into a run's artifacts as an environment
fingerprint once every other collector has stopped: once per cell of a run set (the same
host, build and my.cnf); the other repetitions carry a copy. A missing or failing tool
is a note, never a failed run. About 2 CPU-seconds a capture (pt-summary alone starts
some hundred processes): ``collectors: {percona_toolkit: {enabled: false}}`` or
``HARNESS_COLLECTORS_OFF=percona_toolkit`` leaves it out."""
from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .. import proc
from ..errors import HarnessError
from ..paths import secrets_dir
from .base import Collector, CollectorContext

NAMES = ("pt-summary", "pt-mysql-summary")


def copy_from(first: Path, first_run: str, ctx: CollectorContext) -> list[str]:
    """The fingerprint of an earlier repetition of the cell (they take ~3 s a run)."""
    copied = [name for name in NAMES if (first / f"{name}.txt").exists()]
    for name in copied:
        shutil.copyfile(first / f"{name}.txt", ctx.artifacts / f"{name}.txt")
    return [f"{' and '.join(copied) or 'no Percona Toolkit summary'}: from run {first_run}, "
            "the first repetition of this cell"]


def capture(ctx: CollectorContext) -> list[str]:
    """Write pt-summary.txt and pt-mysql-summary.txt; return notes about what failed."""
    notes = []
    if shutil.which("pt-summary") is None:
        return ["percona-toolkit is not installed (apt-get install percona-toolkit)"]
    cnf = ctx.endpoint.write_defaults_file(secrets_dir() / ".pt-client.cnf")

    def one(name: str, argv: list[str]) -> str | None:
        try:
            r = proc.run(argv, timeout=120, check=False, what=name)
            (ctx.artifacts / f"{name}.txt").write_text(r.stdout + r.stderr)
            return f"{name} exited with code {r.returncode}" if r.returncode else None
        except HarnessError as e:
            return f"{name}: {e}"
    try:
        # Side by side, each sampling for 1 s (pt-summary's default 5 s vmstat sample
        # and the two in a row added ~7 s to every run).
        with ThreadPoolExecutor(2) as pool:
            argv = {"pt-summary": ["pt-summary", "--sleep", "1"],
                    "pt-mysql-summary": ["pt-mysql-summary", f"--defaults-file={cnf}",
                                         "--sleep", "1"]}
            found = list(pool.map(lambda name: one(name, argv[name]), NAMES))
        notes += [n for n in found if n]
    finally:
        cnf.unlink(missing_ok=True)
    return notes


class PerconaToolkit(Collector):
    name = "percona_toolkit"
    server_access = "reads"  # pt-mysql-summary's SHOW statements; pt-summary: this host

    def __enter__(self) -> PerconaToolkit:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def after_stop(self) -> list[str]:
        earlier = self.ctx.earlier
        if earlier is not None:
            return copy_from(earlier[1], earlier[0], self.ctx)
        return capture(self.ctx)


PLUGIN = PerconaToolkit
