"""A run's records in the store: a new run's row and folder, what a dead harness left
(spools replayed, runs left running marked), how a finished run ended, and a failed
run kept with its cause before anything else can fail."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from ..analysis.phases import describe
from ..errors import HarnessError
from ..paths import private_folder
from ..providers.base import Provider, Server
from ..scenario import LoadedScenario
from ..store import RunRecord, RunSummary, Store
from ..store import replay as replaying
from ..store.details import RunDetails
from ..store.spool import RunEnd
from .keeper import Keeper
from .liveness import Stall, stalled_failure
from .options import RunResult, World
from .plan import Cell
from .tables import headline


class Records:
    """The store's side of a run set: each run's record from its first row to its end."""

    def __init__(self, sc: LoadedScenario, store: Store, world: World, provider: Provider,
                 run_set: str, log: Callable[[str], None]):
        self.sc, self.store, self.world, self.provider = sc, store, world, provider
        self.run_set, self.log = run_set, log

    def recover(self) -> None:
        """What a dead harness left: runs a store that was away could not take, stored
        from their spools, and runs left ``running`` (their process gone from this
        machine) marked interrupted with their last event as the cause."""
        done, problems = replaying.replay_all(self.store, self.store.artifacts_root(),
                                              by="the next harness run")
        for r in done:
            self.log(f"note: run {r.run_id} waited in its spool: {r.samples} samples and "
                     f"{r.events} events stored, {r.status}")
        for p in problems:
            self.log(f"warning: a spool left as it is: {p}")
        for run_id, why in self.store.mark_dead_runs(by="the next harness run"):
            self.log(f"note: run {run_id} was left running ({why}): marked interrupted")

    def new(self, cell: Cell, rep: int, facts: dict[str, Any]) -> RunRecord:
        """A new run's record, its folder made with the scenario and the host's facts."""
        run_id = self.world.new_id()
        art = self.store.artifacts_root() / "runs" / run_id
        private_folder(art)
        (art / "scenario.yaml").write_text(self.sc.text)
        (art / "host.json").write_text(json.dumps(facts, indent=2))
        return RunRecord(
            run_id=run_id, run_set=self.run_set, scenario=self.sc.model.name,
            server=cell.build.name, flavor=cell.build.flavor, version=cell.build.version,
            variant=cell.variant, repetition=rep,
            target="external" if cell.spec else self.provider.target,
            # The server's host: an external server is not on this machine (its facts
            # are still in details.host).
            host=f"{cell.spec.host}:{cell.spec.port}" if cell.spec
            else self.provider.host_name or facts.get("hostname") or "",
            started_at=self.world.iso_now(), artifacts=str(art),
            details=self._details(cell, facts))

    def _details(self, cell: Cell, facts: dict[str, Any]) -> RunDetails:
        return RunDetails(
            scenario_file=str(self.sc.path), scale=self.sc.scale,
            report=self.sc.model.report_hints(), version_string=cell.build.version_string,
            build_root=str(cell.build.root), options=dict(cell.options), host=facts,
            cnf_translation=[t.to_json() for t in cell.translation] or None,
            my_cnf=cell.my_cnf.to_json() if cell.my_cnf else None,
            lab_host=self.provider.host_facts() if self.provider.host_name else None)

    def end(self, rec: RunRecord, summary: RunSummary) -> RunEnd:
        """How a finished run ended: failed when its workload found its result invalid,
        its server hung, or a side load or config change failed (the main workload
        finished)."""
        return self._ended(rec, summary, _failures(rec, summary))

    def _ended(self, rec: RunRecord, summary: RunSummary, failures: list[str]) -> RunEnd:
        return RunEnd(status="failed" if failures else "ok", ended_at=self.world.iso_now(),
                      error="\n".join(failures) or None, summary=summary,
                      details=rec.details)

    def finish(self, rec: RunRecord, cell: Cell, rep: int, summary: RunSummary,
               keeper: Keeper) -> RunResult:
        """The finished run stored, with its lines in the progress."""
        failures = _failures(rec, summary)
        end = self._ended(rec, summary, failures)
        keeper.end(end)
        self.log("  " + headline(summary))
        if summary.stall and not failures:
            self.log(f"  warning: {summary.stall}: its figures are a stalled server's")
        for line in failures:
            self.log(f"  {line} (the main workload finished; run marked failed)")
        for x in summary.expectations:
            self.log("  " + describe(x))
        return RunResult(rec.run_id, cell.build.name, cell.variant, rep, end.status,
                         summary, end.error)

    def store_files(self, rec: RunRecord) -> None:
        """The run's folder into the store, so a shared store has it on every machine;
        what is too large to belong there is named in the run's details."""
        left = self.store.save_artifacts(rec.run_id, Path(rec.artifacts or "."))
        if left:
            rec.details.artifacts_only_in_folder = left

    def fail(self, cell: Cell, rec: RunRecord, keeper: Keeper, server: Server | None,
             status: str, error: str) -> RunResult:
        """A run that did not finish, kept with its cause (in its spool first, then the
        store) and the server's files."""
        if server is not None:
            try:
                server.collect_artifacts(Path(rec.artifacts or "."))
            except OSError:
                pass
        n = keeper.writer.count
        end = RunEnd(status=status, ended_at=self.world.iso_now(), error=error,
                     summary=RunSummary(samples=n), details=rec.details)
        keeper.spool.end(end)  # the cause, kept before anything that can fail
        try:
            keeper.patiently("storing the run's files", self.store_files, rec)
            n = end.summary.samples = keeper.patiently("counting the stored samples",
                                                       self.store.sample_count, rec.run_id)
            keeper.end(end)
        except (HarnessError, SQLAlchemyError, OSError) as e:
            keeper.spool.release()
            self.log(f"run {rec.run_id}: not stored as {status} ({e})")
        self.log(f"run {rec.run_id} {status}: {error}")
        return RunResult(rec.run_id, cell.build.name, cell.variant, rec.repetition, status,
                         RunSummary(samples=n), error)


def _failures(rec: RunRecord, summary: RunSummary) -> list[str]:
    """Why a run whose main workload finished is not ok: its workload found its result
    invalid, its server answered nothing for most of its measured part, or a side load
    or config change failed."""
    failures = [summary.workload_failure] if summary.workload_failure else []
    hung = stalled_failure([Stall(**x) for x in rec.details.server_stalls or []],
                           summary.main_window)
    failures += [hung] if hung else []
    return failures + [x.error for x in summary.side_loads if x.error] + \
        [f"config change at {x.t} s failed: {x.error}"
         for x in summary.config_changes if x.error]
