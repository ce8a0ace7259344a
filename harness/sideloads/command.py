"""``kind: command``: any program next to the main workload (a DBA's own tool), with
the server's credentials in a client defaults file; treated as writing."""
from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator

from ..model import SideLoadModel


class CommandLoad(SideLoadModel):
    """Any program, as an argv list (no shell). ``HARNESS_DEFAULTS_FILE`` in its
    environment names a 0600 client defaults file for the server under test."""

    kind: Literal["command"] = "command"
    runs_programs: ClassVar[bool] = True
    example: ClassVar[dict[str, Any]] = {"argv": ["sh", "-c", "echo backed up"], "start": 1}
    argv: list[str] = Field(min_length=1)

    def writes(self, base: Path) -> list[str]:
        return [f"argv: {self.argv[0]} gets the server's credentials and may do anything "
                "with them"]

    @field_validator("argv", mode="before")
    @classmethod
    def _scalars(cls, v: Any) -> Any:
        # YAML reads `[sleep, 2]` and `[true]` as numbers and booleans: argv is text.
        if isinstance(v, list):
            return [str(x).lower() if isinstance(x, bool) else
                    str(x) if isinstance(x, int | float) else x for x in v]
        return v

    def programs(self) -> list[tuple[str, str]]:
        return [(self.argv[0], "argv[0] must be a program on PATH or a path to one")]

    def run_pass(self, load: Any, p: Any) -> None:
        cnf = load.defaults_file()
        try:
            load.run_program(p, self.argv, load.ctx.artifacts / f"sideload-{self.name}-"
                             f"{p.n}.log", env={"HARNESS_DEFAULTS_FILE": str(cnf)})
        finally:
            cnf.unlink(missing_ok=True)


PLUGIN = CommandLoad
