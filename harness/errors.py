"""One exception hierarchy for everything the harness reports to a human.

The CLI turns a :class:`HarnessError` into ``error: <message>`` and an exit code:
bad input (:class:`InputError` and its children) exits 2, a failed run exits 1.
"""
from __future__ import annotations

from .exits import Exit


class HarnessError(Exception):
    """Base of every error the harness raises on purpose."""

    exit_code: int = Exit.FAILED


class NotifyError(HarnessError):
    """A webhook did not take a notification (what it was about is in the store)."""

    exit_code = Exit.NOT_NOTIFIED


class InputError(HarnessError):
    """The user asked for something impossible: bad file, unknown name, bad flag."""

    exit_code = Exit.BAD_INPUT


class ScenarioError(InputError):
    """A scenario file is malformed; the message names the file and every bad field."""

    def __init__(self, path: str, problems: list[str]):
        self.path = path
        self.problems = problems
        lines = "\n".join(f"  {p}" for p in problems)
        super().__init__(f"{path}: {len(problems)} problem(s)\n{lines}")


class CatalogError(InputError):
    """Unknown server name, or a build that cannot be found or installed."""


class MissingToolError(HarnessError):
    """A required binary is not installed; the message says how to install it."""

    exit_code = Exit.BAD_INPUT


class ProviderError(HarnessError):
    """A server could not be created, started or stopped."""


class ToolError(HarnessError):
    """A child process (sysbench, mysqld --initialize, ...) failed."""

    def __init__(self, argv: list[str], rc: int | None, output_tail: str, what: str = ""):
        self.argv = argv
        self.rc = rc
        self.output_tail = output_tail
        head = what or argv[0]
        rc_text = "timed out" if rc is None else f"exited with code {rc}"
        super().__init__(
            f"{head} {rc_text}\n  command: {' '.join(argv)}\n  output tail:\n"
            + "\n".join("    " + line for line in output_tail.splitlines())
        )


class OwnershipError(HarnessError):
    """A destructive step was aimed at something the harness does not own."""

    exit_code = Exit.BAD_INPUT


class StoreError(HarnessError):
    """The results store is unreadable, of an unknown format version, or inconsistent."""


class StoreOpenError(StoreError):
    """The results store named cannot be opened at all (a bad URL, a path that cannot be
    written, a format to migrate first): bad input."""

    exit_code = Exit.BAD_INPUT
