"""One meaning for each exit code, whatever the command: the enum's table is the one
--help prints, a night never hides a regression behind a failed run, and the commands
that used to borrow a code now exit with their own."""
import socket

import pytest

from harness.cli import main
from harness.exits import MEANING, Exit, table, worst_of_night


def test_every_code_has_one_meaning_in_the_help(capsys):
    assert set(MEANING) == set(Exit) and len({int(c) for c in Exit}) == len(Exit)
    with pytest.raises(SystemExit):
        main(["--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert " ".join(table().split()) in shown
    for c in Exit:
        assert f"{int(c)} {' '.join(MEANING[c].split())}" in shown


@pytest.mark.parametrize(("failed", "regress", "code"), [
    (False, 0, Exit.OK), (False, 3, Exit.WORSE), (True, 0, Exit.FAILED),
    (True, 3, Exit.FAILED_AND_WORSE), (False, 2, Exit.USAGE)])
def test_a_night_says_the_worst_and_never_hides_a_regression(failed, regress, code):
    assert worst_of_night(failed, regress) == code


def test_an_unknown_run_set_is_one_that_cannot_be_checked(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HARNESS_RESULTS", str(tmp_path))
    assert main(["runs", "--run-set", "nope"]) == Exit.CANNOT_CHECK
    assert "--run-set nope: no such run set in" in capsys.readouterr().err


def test_a_webhook_that_does_not_answer_is_its_own_code(capsys):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code = main(["notify", "the night's message", "--notify", f"http://127.0.0.1:{port}/hook"])
    assert code == Exit.NOT_NOTIFIED
    assert f"notify: could not post to 127.0.0.1:{port}" in capsys.readouterr().err
