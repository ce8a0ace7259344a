"""The nightly's alerts and schedule: a new regression and a failed run posted to a
webhook (a local HTTP server here), Slack's payload shape; a failed post said without
the webhook's secret; the systemd units make nightly-timer writes, verified by
systemd-analyze."""
from __future__ import annotations

import json
import shutil
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from harness.cli import main

from ..conftest import ROOT
from ..unit.test_regress import night, noisy, store_history

pytestmark = pytest.mark.integration
SECRET = "/services/T000/B000/s3cr3t"


@pytest.fixture
def webhook():
    """A local webhook: the JSON bodies posted to it; ``status`` is what it answers."""
    got: list[dict] = []
    state = {"status": 200}

    class Hook(BaseHTTPRequestHandler):
        def do_POST(self):
            n = int(self.headers["Content-Length"])
            got.append({"path": self.path, "type": self.headers["Content-Type"],
                        "body": json.loads(self.rfile.read(n))})
            self.send_response(state["status"])
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}{SECRET}", got, state
    server.shutdown()


def test_a_new_regression_is_posted_and_a_failed_post_keeps_its_secret(
        tmp_path, capsys, webhook):
    url, got, state = webhook
    store = f"sqlite:///{tmp_path}/h.db"
    tps = noisy(40, 2)
    tps[25:] = [x * 0.92 for x in tps[25:]]
    store_history(store, tps, build_change_at=25)
    hook = tmp_path / "webhook"
    hook.write_text(url + "\n")
    assert main(["regress", "--results", store, "--since", night(20), "--notify",
                 f"@{hook}"]) == 3
    (post,) = got
    assert post["path"] == SECRET and post["type"] == "application/json"
    text, details = post["body"]["text"], post["body"]["harness"]
    assert text.startswith("1 new regression:\nREGRESSION (new): nightly on mariadb-10.11")
    assert details["kind"] == "regression" and details["new"][0]["change_pct"] < -6
    capsys.readouterr()

    # Nothing new since: nothing posted.
    assert main(["regress", "--results", store, "--since", night(39), "--notify",
                 f"@{hook}"]) == 0 and len(got) == 1
    # A webhook that refuses: said on stderr without its path; still exit 3.
    state["status"] = 500
    assert main(["regress", "--results", store, "--notify", f"@{hook}"]) == 3
    err = capsys.readouterr().err
    assert "notify: 127.0.0.1:" in err and "answered HTTP 500" in err and "s3cr3t" not in err
    # A URL on the command line works, with a warning that it is visible to all.
    state["status"] = 200
    assert main(["notify", "--notify", url, "hello"]) == 0
    assert got[-1]["body"] == {"text": "hello", "harness": {"kind": "message"}}
    assert "visible to every user" in capsys.readouterr().err
    for bad, said in ((f"@{tmp_path}", "not a regular file"), ("ftp://x/y", "not an http")):
        assert main(["notify", "--notify", bad, "x"]) == 2
        assert said in capsys.readouterr().err


def test_a_failed_nightly_run_is_posted(tmp_path, webhook):
    """make nightly: a scenario the server refuses fails its run (exit 8) and is
    posted, and the night goes on and exits 1; a file that does not read is posted,
    naming its problem, before any run."""
    url, got, _ = webhook
    hook = tmp_path / "webhook"
    hook.write_text(url)
    bad = tmp_path / "bad_option.yaml"
    bad.write_text("name: bad_option\nservers: [mariadb-10.11]\n"
                   "mysqld: {no_such_option_at_all: 1}\n"
                   "dataset: {tables: 1, table_size: 100}\n"
                   "workload: {test: oltp_read_only, duration_s: 5}\n")

    def night(*scenarios):
        return subprocess.run(["make", "-s", "-o", "setup-runtime", "nightly",
                               f"NIGHTLY={' '.join(map(str, scenarios))}",
                               f"NOTIFY=@{hook}", f"HARNESS_RESULTS={tmp_path}"],
                              cwd=ROOT, capture_output=True, text=True, timeout=600)

    r = night(bad, bad)  # one scenario twice: two runs
    assert r.returncode != 0 and f"failed: {bad} on local (exit 8)" in r.stdout, r.stdout
    assert [p["body"]["text"].partition(": ")[2] for p in got] == \
        [f"{bad} failed (exit 8)"] * 2  # the first failure did not stop the second run
    assert got[0]["body"]["harness"] == {"kind": "failed", "host": got[0]["body"][
        "harness"]["host"], "scenario": str(bad), "exit_code": 8}
    unread = tmp_path / "unread.yaml"
    unread.write_text("name: unread\n")
    r = night(unread)
    assert r.returncode == 2  # make's own code for a recipe that failed (harness: 8)
    assert got[-1]["body"]["text"].endswith(f"{unread} refused: line 1: dataset: Field "
                                            "required; line 1: workload: Field required")


def _timer(units: Path, *values: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["make", "-s", "nightly-timer", f"SYSTEMD_DIR={units}", *values],
                          cwd=ROOT, capture_output=True, text=True)


def test_the_nightly_timer_units_verify(tmp_path):
    assert shutil.which("systemd-analyze"), "make setup installs systemd (TEST_APT)"
    units = tmp_path / "units"
    r = _timer(units, "NIGHTLY=scenarios/quickstart.yaml scenarios/tpcc.yaml",
               "NIGHTLY_AT=03:30", "NOTIFY=@/etc/mysql-harness/webhook")
    assert r.returncode == 0, r.stderr
    harness = ROOT / ".venv/bin/harness"
    assert f"30 03 * * * cd {ROOT} && {harness} nightly scenarios/quickstart.yaml " \
        "scenarios/tpcc.yaml --target local --notify @/etc/mysql-harness/webhook" in r.stdout
    service = (units / "mysql-harness-nightly.service").read_text()
    assert f"WorkingDirectory={ROOT}" in service
    # the harness itself (not make nightly, which would check apt and pip at 02:00),
    # each value one quoted argument
    assert (f'ExecStart="{harness}" "nightly" "scenarios/quickstart.yaml" '
            '"scenarios/tpcc.yaml" "--target" "local" "--notify" '
            '"@/etc/mysql-harness/webhook"\n') in service, service
    assert "OnCalendar=*-*-* 03:30:00" in (units / "mysql-harness-nightly.timer").read_text()
    v = subprocess.run(["systemd-analyze", "verify", *sorted(map(str, units.iterdir()))],
                       capture_output=True, text=True)
    assert v.returncode == 0 and not v.stderr.strip(), v.stderr
    r = _timer(units, "NIGHTLY_AT=24:00")
    assert r.returncode != 0 and "NIGHTLY_AT='24:00': HH:MM" in r.stderr


@pytest.mark.parametrize("var, value", [
    (var, value) for var in ("NIGHTLY", "NIGHTLY_TARGET", "NOTIFY", "NIGHTLY_AT")
    for value in ("scenarios/quickstart.yaml'", "scenarios/quickstart.yaml;touch {pwned}",
                  "scenarios/quickstart.yaml\nEnvironment=LD_PRELOAD=/tmp/x.so",
                  "$$(touch {pwned})", "https://hooks.example/T0/secret")])
def test_a_value_that_is_not_what_it_must_be_is_refused_and_inert(tmp_path, var, value):
    """A quote, a ';', a newline, a '$' (make's '$$') or a URL (a secret) in any of the
    nightly's values: refused naming the variable, nothing written, nothing run; make
    nightly alike."""
    pwned = tmp_path / "pwned"
    value = value.format(pwned=pwned)
    if var == "NOTIFY" and value.startswith("scenarios"):
        value = "@" + value
    units = tmp_path / "units"
    r = _timer(units, f"{var}={value}")
    assert r.returncode != 0 and f"error: {var}" in r.stderr, (r.stdout, r.stderr)
    assert not units.exists() or not list(units.iterdir())
    r = subprocess.run(["make", "-s", "nightly", f"{var}={value}"], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and f"error: {var}" in r.stderr, (r.stdout, r.stderr)
    assert not pwned.exists()
