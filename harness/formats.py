"""The formats the harness prints for scripts, each a name and a version: the one list
docs/output.md's table, the schemas in docs/schemas/ and the outputs' own ``format``
field agree with (tests/unit/test_formats.py holds them together).

A version goes up when a field moves or changes meaning; a field added is not a new
version (the schemas are open to added fields), and CHANGELOG.md says each change.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Format:
    """One output format: what a script reads to know what it holds."""

    name: str
    version: int

    def marker(self) -> dict[str, object]:
        """The ``format`` field of a JSON output."""
        return {"name": f"mysql-harness {self.name}", "version": self.version}


COMPARE = Format("compare", 2)
SHOW = Format("show", 2)
RUNS = Format("runs", 2)  # {"format", "runs": [...]}: its items are run.schema.json's
EXPORT = Format("export", 2)  # CSV: its header row is the format (export.columns.json)
REFERENCE = Format("reference", 1)  # its own reference_version field
COUNTED_COMPARE = Format("counted-compare", 1)  # compare --measure instructions
RUN_SET = Format("run-set", 1)  # run --json: the run set made, timed or counted
REGRESS = Format("regress", 1)
CNF_CHECK = Format("cnf-check", 1)
SERVERS = Format("servers", 1)  # {"format", "servers": [...]}
SANDBOXES = Format("sandboxes", 1)  # {"format", "sandboxes": [...]}

ALL = (COMPARE, SHOW, RUNS, EXPORT, REFERENCE, COUNTED_COMPARE, RUN_SET, REGRESS, CNF_CHECK,
       SERVERS, SANDBOXES)
# The JSON objects (not the CSV export, whose header row is its format)
OBJECTS = tuple(f for f in ALL if f is not EXPORT)
