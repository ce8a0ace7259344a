"""pt-summary and pt-mysql-summary, captured once per run into its artifacts as an
environment fingerprint. A missing or failing tool is a note, never a failed run."""
from __future__ import annotations

import shutil

from .. import proc
from ..errors import HarnessError
from .base import CollectorContext


def capture(ctx: CollectorContext) -> list[str]:
    """Write pt-summary.txt and pt-mysql-summary.txt; return notes about what failed."""
    notes = []
    if shutil.which("pt-summary") is None:
        return ["percona-toolkit is not installed (apt-get install percona-toolkit)"]
    cnf = ctx.endpoint.write_defaults_file(ctx.artifacts / ".pt-client.cnf")
    try:
        for name, argv in (
                ("pt-summary", ["pt-summary"]),
                ("pt-mysql-summary", ["pt-mysql-summary", f"--defaults-file={cnf}",
                                      "--sleep", "1"])):
            try:
                r = proc.run(argv, timeout=120, check=False, what=name)
                (ctx.artifacts / f"{name}.txt").write_text(r.stdout + r.stderr)
                if r.returncode != 0:
                    notes.append(f"{name} exited with code {r.returncode}")
            except HarnessError as e:
                notes.append(f"{name}: {e}")
    finally:
        cnf.unlink(missing_ok=True)
    return notes
