"""Small breaks of the last attack round, each held: a store's text never becomes a path
outside a report's folder, and a webhook answering garbage is a notify error."""
from __future__ import annotations

import socket
import threading

import pytest

from harness import notify
from harness.errors import NotifyError
from harness.report.files import file_name


@pytest.mark.parametrize("name", ["../../x", "/etc/cron.d/x", "..", ".hidden", "a/b",
                                  "mysql-8.0.31", "20261207-010145-575b", "x\ny"])
def test_a_name_from_a_store_is_one_file_in_the_folder(name, tmp_path):
    made = file_name(name)
    assert "/" not in made and not made.startswith(".") and "\n" not in made
    assert (tmp_path / f"{made}.png").parent == tmp_path
    if name.replace("-", "").replace(".", "").isalnum() and not name.startswith("."):
        assert made == name  # a plain name is kept as it is
    assert file_name("a/b") != file_name("a_b")  # two names never meet


def test_a_webhook_that_answers_garbage_is_a_notify_error():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]

    def answer() -> None:
        conn, _ = srv.accept()
        conn.recv(65536)
        conn.sendall(b"\x00\xffnot http at all\r\n\r\n")
        conn.close()
    t = threading.Thread(target=answer, daemon=True)
    t.start()
    try:
        with pytest.raises(NotifyError, match=f"could not post to 127.0.0.1:{port}"):
            notify.post(f"http://127.0.0.1:{port}/hook", "a regression", {})
    finally:
        t.join(5)
        srv.close()


@pytest.mark.parametrize("url, secret", [
    ("mysql+pymysql://harness:pa?ss@db1:3306/results", "pa?ss"),
    ("mysql+pymysql://harness:p@s?s/w@db1/results?charset=utf8mb4", "p@s?s/w"),
    ("mysql+pymysql://harness:pa#ss@db1/results", "pa#ss"),
    ("mysql+pymysql://harness:plain@db1/results?password=second", "second"),
])
def test_a_store_password_is_masked_however_it_was_written(url, secret):
    from harness.store.url import masked, scrub
    shown = masked(url)
    assert secret not in shown and "***" in shown, shown
    assert secret not in scrub(f"cannot connect to {url}: refused", url)
    assert "db1" in shown


def test_capture_refuses_a_file_name_that_would_print_a_line_of_sql():
    from ..conftest import harness
    p = harness("capture", "--flavor", "mysql", "--version", "8.0.31", "--file",
                "x.log\nDROP DATABASE prod;")
    assert p.returncode == 2 and "control character" in p.stderr, p.stderr
    assert not any(ln.strip() == "DROP DATABASE prod;" for ln in p.stdout.splitlines())


def test_a_sql_file_that_is_no_sql_is_refused_without_its_text(tmp_path):
    """A token's file given as a side load's file: the refusal names the file and its
    line, never the token."""
    from harness.sideloads.sql import SqlLoad, _without_words_of
    (tmp_path / "tok.sql").write_text("GHP_Secr3tToken0123456789\n")
    load = SqlLoad(name="s", kind="sql", file="tok.sql", start=1)
    (why,) = load.writes(tmp_path)
    assert "tok.sql, line 1" in why and "GHP_" not in why, why
    said = _without_words_of("You have an error in your SQL syntax; check the manual that "
                             "corresponds to your MySQL server version for the right "
                             "syntax to use near 'GHP_Secr3tToken0123456789' at line 1",
                             "GHP_Secr3tToken0123456789")
    assert "GHP_" not in said and "near '...' at line 1" in said, said
