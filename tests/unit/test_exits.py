"""One meaning for each exit code, whatever the command: the enum's table is the one
--help prints, a night never hides a regression behind a failed run, and the commands
that used to borrow a code now exit with their own."""
import re
import socket
from pathlib import Path

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


@pytest.mark.parametrize(("argv", "code", "said"), [
    (["nosuchcommand"], Exit.USAGE, "invalid choice"),
    (["runs", "--results", "sqlite:///"], Exit.USAGE, "names no file"),
    (["cnf", "check", "/nonexistent/my.cnf", "--server", "mariadb-10.11"],
     Exit.CANNOT_CHECK, "/nonexistent/my.cnf: no such file"),
    (["validate", "/nonexistent/s.yaml"], Exit.CANNOT_CHECK, "file not found"),
    (["regress"], Exit.CANNOT_CHECK, "no stored runs"),
    (["show", "nope"], Exit.CANNOT_CHECK, "no run 'nope'"),
])
def test_usage_is_not_a_file_that_is_not_there(argv, code, said, tmp_path, monkeypatch,
                                               capsys):
    """A gate tells a wrong command line (2) from a check that could not run (9): each
    is given for its own case, on an empty store."""
    monkeypatch.setenv("HARNESS_RESULTS", str(tmp_path))
    try:
        got = main(argv)
    except SystemExit as e:  # argparse's own usage error
        got = e.code
    assert got == code and said in capsys.readouterr().err


def test_a_scenario_wrong_as_checked_is_a_finding_and_a_missing_one_is_not(tmp_path,
                                                                           capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nworkload: {test: oltp_read_only, threads: true}\n")
    assert main(["validate", str(bad)]) == Exit.FINDING
    assert main(["validate", str(bad), str(tmp_path / "missing.yaml")]) == Exit.FINDING
    assert main(["validate", str(tmp_path / "missing.yaml")]) == Exit.CANNOT_CHECK
    assert "missing.yaml" in capsys.readouterr().err


# A refusal whose words say the thing is not there must be the class that exits 9.
NOT_THERE = re.compile(r"no such (file|folder|run set|store)|does not exist|: not a folder"
                       r"|no stored runs|no kept sandbox|is not reachable")


def test_every_not_there_refusal_exits_9():
    """Read over the source: a raise of a usage error (InputError, CatalogError) whose
    message says that a file, folder, run set or build is not there is a mistake of
    class; it would tell a gate to fix the script where it should retry."""
    root = Path(__file__).resolve().parents[2] / "harness"
    wrong = []
    for f in root.rglob("*.py"):
        lines = f.read_text().splitlines()
        for i, line in enumerate(lines):
            m = re.search(r"raise (InputError|CatalogError|ScenarioError)\(", line)
            if m and NOT_THERE.search(" ".join(lines[i:i + 3])):
                wrong.append(f"{f.relative_to(root)}:{i + 1}: {line.strip()}")
    assert not wrong, "\n".join(wrong)


def test_the_error_classes_give_the_codes_of_their_meaning():
    from harness import errors

    assert errors.InputError("x").exit_code == Exit.USAGE
    assert errors.FindingError("x").exit_code == Exit.FINDING
    assert errors.ScenarioError("f", ["p"]).exit_code == Exit.FINDING
    assert errors.UnavailableError("x").exit_code == Exit.CANNOT_CHECK
    assert errors.BuildUnavailableError("x").exit_code == Exit.CANNOT_CHECK
    assert errors.BuildRefusedError("x").exit_code == Exit.FINDING
    assert errors.MissingToolError("x").exit_code == Exit.CANNOT_CHECK
    assert errors.StoreOpenError("x").exit_code == Exit.CANNOT_CHECK
    assert errors.StoreUrlError("x").exit_code == Exit.USAGE
    # every error the harness raises on purpose gives a code of the table
    for cls in _subclasses(errors.HarnessError):
        assert cls.exit_code in set(Exit), cls


def _subclasses(cls: type) -> list[type]:
    return [cls, *(s for c in cls.__subclasses__() for s in _subclasses(c))]
