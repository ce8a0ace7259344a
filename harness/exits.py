"""The harness's exit codes: one meaning each, whatever the command. The table in
``harness --help`` and docs/cli.md is made from this enum and its words."""
from __future__ import annotations

from enum import IntEnum


class Exit(IntEnum):
    OK = 0
    FAILED = 1
    BAD_INPUT = 2
    WORSE = 3
    NO_VERDICT = 4
    REFUSED = 5
    NOT_NOTIFIED = 6
    FAILED_AND_WORSE = 7
    INTERRUPTED = 130


MEANING = {
    Exit.OK: "done, and nothing checked is worse",
    Exit.FAILED: "a run or a step failed, its cause said (store check: problems found; "
                 "salvage: runs lost; a run kept in its spool)",
    Exit.BAD_INPUT: "bad input: a file, flag, name, run set or scenario that does not "
                    "exist or does not hold",
    Exit.WORSE: "something checked is worse: compare's candidate, a new regression "
                "(regress, nightly), a finding that DIFFERS from its reference "
                "(--against), an option a build renamed or removed (cnf check)",
    Exit.NO_VERDICT: "compare gave no verdict: too few or too noisy runs, or an interval "
                     "wider than the noise band (could not tell)",
    Exit.REFUSED: "refused to change the host (setup: apt would remove a package of the "
                  "host's)",
    Exit.NOT_NOTIFIED: "the webhook did not take the notification (what it was about is "
                       "in the store)",
    Exit.FAILED_AND_WORSE: "nightly: a run failed and a new regression was found, both said",
    Exit.INTERRUPTED: "interrupted (Ctrl-C, SIGTERM): the current run stored as "
                      "interrupted, its sandbox removed",
}


def worst_of_night(failed: bool, regress: int) -> Exit:
    """A night's code: a failed run never hides a new regression (both: 7)."""
    worse = regress == Exit.WORSE
    if failed:
        return Exit.FAILED_AND_WORSE if worse else Exit.FAILED
    return Exit(regress) if regress else Exit.OK


def table() -> str:
    """The codes as one line each, for --help and docs/cli.md."""
    return "Exit codes: " + "; ".join(f"{int(c)} {MEANING[c]}" for c in Exit) + "."
