"""One exception hierarchy for everything the harness reports to a human.

The CLI turns a :class:`HarnessError` into ``error: <message>`` and its class's exit
code (harness/exits.py): a usage error (:class:`InputError`) exits 2, what a check finds
wrong in what the user gave (:class:`FindingError`) 8, what is not there to check
(:class:`UnavailableError`) 9, a failed run 1.
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
    """The user asked for something impossible: an unknown name, a bad flag, flags that
    do not go together (usage)."""

    exit_code = Exit.USAGE


class FindingError(InputError):
    """What the user gave is wrong as checked: a my.cnf option a build does not know
    or refuses, a scenario's bad field, a file nobody pins."""

    exit_code = Exit.FINDING


class UnavailableError(InputError):
    """What the command needs is not there or cannot be reached: a missing file or run
    set, an empty store, a build that cannot be downloaded. Nothing was checked."""

    exit_code = Exit.CANNOT_CHECK


class ScenarioError(FindingError):
    """A scenario file is malformed; the message names the file and every bad field."""

    def __init__(self, path: str, problems: list[str]):
        self.path = path
        self.problems = problems
        lines = "\n".join(f"  {p}" for p in problems)
        super().__init__(f"{path}: {len(problems)} problem(s)\n{lines}")


class CatalogError(InputError):
    """An unknown server name, or a build that cannot be installed as given."""


class BuildUnavailableError(CatalogError, UnavailableError):
    """A build that cannot be had: not downloadable from here, its file missing, a
    download that does not match its pin."""

    exit_code = Exit.CANNOT_CHECK


class BuildRefusedError(CatalogError, FindingError):
    """A file given as a build that the catalog refuses: nobody pins it, a member that
    would land outside its folder, not a server tarball."""

    exit_code = Exit.FINDING


class MissingToolError(HarnessError):
    """A required binary is not installed; the message says how to install it."""

    exit_code = Exit.CANNOT_CHECK


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

    exit_code = Exit.USAGE


class StoreError(HarnessError):
    """The results store is unreadable, of an unknown format version, or inconsistent."""


class StoreOpenError(StoreError):
    """The results store named cannot be opened at all (a bad URL, a path that cannot be
    written, a file damaged, a format to migrate first): nothing in it could be
    checked."""

    exit_code = Exit.CANNOT_CHECK


class StoreUrlError(StoreOpenError):
    """A store URL that is wrong as written (no file named, an option the harness does
    not pass, a driver SQLAlchemy does not have): usage."""

    exit_code = Exit.USAGE
