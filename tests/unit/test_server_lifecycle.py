"""The server lifecycle of a run set against a fake provider: which server each run gets
and what was done to it (new sandbox, prepared, snapshot saved or restored, restarted,
kept running with SET GLOBAL), for every between_runs policy. The real servers' side of
each step has its own integration tests; this is the policy, in milliseconds."""
from __future__ import annotations

import io
from pathlib import Path

import pytest

from harness.progress import Progress
from harness.runner.lifecycle import ServerLifecycle
from harness.runner.plan import Cell
from harness.scenario import parse_scenario
from harness.server.catalog import Build
from harness.server.mysql import Endpoint
from harness.store import RunRecord
from harness.store.prepared import Prepared
from harness.workloads.base import RunContext

from ..fakes import STATIC, FakeProvider

BUILD = Build(root=Path("/opt/fake"), flavor="mysql", version="8.4.0",
              version_string="8.4.0", mysqld=Path("/opt/fake/bin/mysqld"),
              share_dir=Path("/opt/fake/share"), lib_dir=None,
              init_method="initialize-insecure", install_db=None, pristine_data=None,
              name="fake-8.4")

SCENARIO = """\
name: lifecycle
servers: [mysql-5.7.29]  # the cell below is of the fake build
dataset: {{tables: 2, table_size: 100}}
workload: {{kind: sysbench, test: oltp_read_only, duration_s: 5}}
between_runs: {policy}
snapshot: {snapshot}
{extra}
"""


class Harness:
    """A lifecycle on the fake provider, with what it prepared."""

    def __init__(self, tmp: Path, policy: str = "restore", snapshot: bool = True,
                 extra: str = "", keep: bool = False,
                 saved: dict[str, Path] | None = None):
        text = SCENARIO.format(policy=policy, snapshot=str(snapshot).lower(), extra=extra)
        self.sc = parse_scenario(tmp / "s.yaml", text)
        self.provider = FakeProvider(tmp, saved=saved)
        self.saved = self.provider.saved
        self.prepared: list[int] = []
        self.events: list[tuple] = []
        self.out = io.StringIO()
        self.life = ServerLifecycle(self.sc, self.provider, Progress(self.out), "set-1",
                                    keep=keep, prepare=self._prepare,
                                    find_snapshot=self.provider.find_snapshot)
        self.runs = 0

    def _prepare(self, ctx: RunContext, data: object) -> Prepared:
        self.prepared.append(ctx.endpoint.port)
        return Prepared.timed("sbtest", 200, 0.1)

    def ready(self, options: dict | None = None, variant: str = "base") -> str:
        """One run's server made ready; how, as stored in the run's details."""
        self.runs += 1
        rec = RunRecord(run_id=f"run-{self.runs}", run_set="set-1", scenario="lifecycle",
                        server=BUILD.name, flavor="mysql", version="8.4.0",
                        variant=variant, target="fake", host="", started_at="now")
        ctx = RunContext(endpoint=Endpoint("", 0, "", ""), artifacts=Path("."),
                         clock=lambda: 1.0, sample=lambda *a: None,
                         event=lambda t, kind, name, d: self.events.append((kind, name, d)))
        live = self.life.ready(Cell(BUILD, variant, dict(options or {})), ctx, rec)
        assert ctx.endpoint == live.server.endpoint, "the run is pointed at its server"
        return rec.details.server_state["how"]

    def steps(self) -> list[str]:
        return self.provider.take_steps()


def test_restore_prepares_once_then_each_run_starts_from_the_snapshot(tmp_path):
    h = Harness(tmp_path, "restore", extra="prepare_mysqld: {innodb_flush_log_at_trx_commit: 0}")
    assert h.ready({"innodb_buffer_pool_size": "128M"}) == \
        "new sandbox, prepared, snapshot saved"
    assert h.steps() == ["sandbox-1 provision", "sandbox-1 start", "sandbox-1 stop",
                         "sandbox-1 save_datadir", "sandbox-1 start"]
    first = h.provider.made[0]
    # prepare ran with prepare_mysqld on top; the measured start without it
    assert first.started_with == [{"innodb_buffer_pool_size": "128M",
                                   "innodb_flush_log_at_trx_commit": 0},
                                  {"innodb_buffer_pool_size": "128M"}]
    assert h.prepared == [first.endpoint.port]
    assert h.ready({"innodb_buffer_pool_size": "128M"}) == "snapshot restored, restarted"
    (key,) = h.saved
    assert h.steps() == ["sandbox-1 stop", f"sandbox-1 replace_datadir {key}",
                         "sandbox-1 start"]
    # another run set finds the snapshot: no prepare at all
    again = Harness(tmp_path / "2", "restore",
                    extra="prepare_mysqld: {innodb_flush_log_at_trx_commit: 0}",
                    saved=dict(h.saved))
    assert again.ready({"innodb_buffer_pool_size": "128M"}) == "new sandbox from snapshot"
    assert again.steps() == [f"sandbox-1 provision from {key}", "sandbox-1 start"]
    assert again.prepared == []


def test_a_format_option_needs_another_snapshot_and_another_sandbox(tmp_path):
    h = Harness(tmp_path, "restore")
    h.ready({"innodb_page_size": "16k"})
    h.steps()
    assert h.ready({"innodb_page_size": "8k"}) == "new sandbox, prepared, snapshot saved"
    assert h.steps()[:2] == ["sandbox-1 destroy", "sandbox-2 provision"]
    assert len(h.saved) == 2 and len(h.prepared) == 2


def test_restart_restarts_and_a_server_that_died_is_replaced(tmp_path):
    h = Harness(tmp_path, "restart")
    h.ready()
    h.steps()
    assert h.ready() == "restarted"
    assert h.steps() == ["sandbox-1 stop", "sandbox-1 start"]
    h.provider.made[0].running = False  # mysqld died between runs
    assert h.ready() == "new sandbox from snapshot"
    assert h.steps() == ["sandbox-1 destroy", f"sandbox-2 provision from {next(iter(h.saved))}",
                         "sandbox-2 start"]


def test_warmup_keeps_the_server_and_sets_a_new_variants_dynamic_options(tmp_path):
    h = Harness(tmp_path, "warmup")
    h.ready({"innodb_buffer_pool_size": "128M"}, "a")
    h.steps()
    assert h.ready({"innodb_buffer_pool_size": "128M"}, "a") == "kept running"
    assert h.steps() == []
    assert h.ready({"innodb_buffer_pool_size": "256M"}, "b") == \
        "kept running, SET GLOBAL innodb_buffer_pool_size"
    assert h.steps() == ["sandbox-1 set_global innodb_buffer_pool_size"]
    assert h.events == [("config", "variant", {"set_global": {"innodb_buffer_pool_size": "256M"},
                                               "ok": True})]
    # a static option: the server says so, and the run restarts it instead
    opts = {"innodb_buffer_pool_size": "256M", STATIC: "1G"}
    assert h.ready(opts, "c") == "restarted (a changed option is not dynamic)"
    assert h.steps() == ["sandbox-1 stop", "sandbox-1 start"]
    assert h.provider.made[0].started_with[-1] == opts
    assert f"{STATIC} cannot be set at runtime" in h.out.getvalue()
    # an option the next variant leaves out only goes back to its default on a restart
    assert h.ready({"innodb_buffer_pool_size": "256M"}, "b") == \
        "restarted (a changed option is not dynamic)"


def test_no_snapshot_restarts_without_the_prepare_options(tmp_path):
    h = Harness(tmp_path, "restart", snapshot=False,
                extra="prepare_mysqld: {innodb_flush_log_at_trx_commit: 0}")
    assert h.ready() == "new sandbox, prepared, restarted without prepare_mysqld"
    assert h.steps() == ["sandbox-1 provision", "sandbox-1 start", "sandbox-1 stop",
                         "sandbox-1 start"]
    assert h.saved == {}
    h.provider.made[0].running = False
    assert h.ready() == "new sandbox, prepared, restarted without prepare_mysqld"
    assert len(h.prepared) == 2, "without a snapshot, a new sandbox prepares again"


@pytest.mark.parametrize("interrupted", [False, True])
def test_keep_leaves_the_last_sandbox_running_unless_interrupted(tmp_path, interrupted):
    h = Harness(tmp_path, keep=True)
    h.ready()
    h.steps()
    h.life.drop(keep=not interrupted)
    assert h.steps() == (["sandbox-1 destroy"] if interrupted else ["sandbox-1 keep set-1"])
    assert h.life.live is None
    h.life.drop()  # nothing live: nothing to do
    assert h.steps() == []
