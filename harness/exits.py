"""The harness's exit codes: one meaning each, whatever the command. The table in
``harness --help`` and docs/cli.md is made from this enum and its words.

Three kinds of "no" stay apart, so that a CI gate can act on each: what you gave is
wrong as checked (FINDING: fix the file), the command line is wrong (USAGE: fix the
script), and the check could not run (CANNOT_CHECK: nothing is known about the file)."""
from __future__ import annotations

import textwrap
from enum import IntEnum


class Exit(IntEnum):
    OK = 0
    FAILED = 1
    USAGE = 2
    WORSE = 3
    NO_VERDICT = 4
    REFUSED = 5
    NOT_NOTIFIED = 6
    FAILED_AND_WORSE = 7
    FINDING = 8
    CANNOT_CHECK = 9
    INTERRUPTED = 130


MEANING = {
    Exit.OK: "done, and nothing checked is worse or wrong",
    Exit.FAILED: "a run or a step failed, its cause said (salvage: runs lost; a run kept "
                 "in its spool)",
    Exit.USAGE: "usage: an unknown command, flag or name, a value out of its range, or "
                "flags (or a scenario and a target) that do not go together",
    Exit.WORSE: "a measurement is worse: compare's candidate, a new regression (regress, "
                "nightly), a finding that DIFFERS from its reference (--against)",
    Exit.NO_VERDICT: "compare gave no verdict: too few or too noisy runs, or an interval "
                     "wider than the noise band (could not tell)",
    Exit.REFUSED: "refused to change the host (setup: apt would remove a package of the "
                  "host's)",
    Exit.NOT_NOTIFIED: "the webhook did not take the notification (what it was about is "
                       "in the store)",
    Exit.FAILED_AND_WORSE: "nightly: a run failed and a new regression was found, both said",
    Exit.FINDING: "what you gave is wrong as checked: a my.cnf option no build knows, a "
                  "value a build refuses, an option a build renamed or removed (cnf "
                  "check, compare, run); a scenario's bad field (validate, run); a file "
                  "nobody pins; problems in a store (store check)",
    Exit.CANNOT_CHECK: "could not check: a file, folder, run set, build, store or tool "
                       "the command needs is not there or cannot be reached (no stored "
                       "runs, a download refused)",
    Exit.INTERRUPTED: "interrupted (Ctrl-C, SIGTERM): the current run stored as "
                      "interrupted, its sandbox removed",
}


def worst_of_night(failed: bool, regress: int) -> Exit:
    """A night's code: a failed run never hides a new regression (both: 7)."""
    worse = regress == Exit.WORSE
    if failed:
        return Exit.FAILED_AND_WORSE if worse else Exit.FAILED
    return Exit(regress) if regress else Exit.OK


def table(width: int = 92) -> str:
    """The codes as a table, a row each (its meaning wrapped under itself), for --help
    and docs/cli.md."""
    rows = (textwrap.fill(MEANING[c], width, break_on_hyphens=False,
                          initial_indent=f"  {int(c):>3}  ",
                          subsequent_indent=" " * 7) for c in Exit)
    return "Exit codes (one meaning each, whatever the command):\n" + "\n".join(rows)
