"""The server each run starts on: one live server per build, kept across its runs and
variants, and made ready for each run as the scenario's ``between_runs`` says (a new
sandbox from the dataset snapshot or prepared, the snapshot restored, a restart, or kept
running with a new variant's options set at runtime); an external server as it is.

The provider, the dataset's prepare and the snapshot lookup are given, so the whole
policy runs against a fake provider in the unit tests.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import HarnessError, OwnershipError
from ..host import background, seekdisk
from ..host.profile import CgroupProfile
from ..progress import Progress
from ..providers import cache as cache_budget
from ..providers import external_server
from ..providers.base import Provider, Server
from ..scenario import DatasetModel, LoadedScenario, OptionValue
from ..server import grants, snapshot
from ..server.mycnf import norm
from ..server.mysql import connection
from ..store import RunRecord
from ..store.prepared import Prepared
from ..workloads import drop_dataset, prepare_dataset, seed_datadir, verify_dataset
from ..workloads.base import RunContext
from .plan import Cell


@dataclass
class LiveServer:
    """The server a run set keeps between runs (and variants) of one build."""

    server: Server
    key: str  # its dataset snapshot key: a run with another key needs another server
    options: dict[str, OptionValue] | None = None  # as last started or SET
    prepare: list[Prepared] = field(default_factory=list)
    prepared_by: str | None = None  # the run whose summary reports the prepare
    profile: CgroupProfile | None = None
    account: str | None = None  # an external server's: what its account may do


class ServerLifecycle:
    """The live server of a run set and what each run needs done to it."""

    def __init__(self, sc: LoadedScenario, provider: Provider, progress: Progress,
                 run_set: str, keep: bool = False,
                 prepare: Callable[[RunContext, DatasetModel], Prepared] = prepare_dataset,
                 find_snapshot: Callable[[str], Path | None] = snapshot.find,
                 monotonic: Callable[[], float] = time.monotonic,
                 seed: Callable[[list[DatasetModel]], Path | None] = seed_datadir):
        self.model = sc.model
        self.provider = provider
        self.progress = progress
        self.run_set = run_set
        self.keep = keep  # --keep: leave the last sandbox running
        self.prepare = prepare
        self.find_snapshot = find_snapshot
        self.seed = seed  # a datadir a new sandbox starts on a copy of (a DBA's)
        self.monotonic = monotonic  # how long making a server ready took
        # Dataset snapshots need the datadir on this machine.
        self.snapshots = bool(sc.model.snapshot and provider.snapshots)
        self.live: LiveServer | None = None
        if sc.model.host_profile is not None:
            provider.disk = sc.model.host_profile.disk
        self._disk_from: dict[str, float] = {}

    def drop(self, keep: bool = True) -> None:
        """Done with the live server: removed, or with ``--keep`` left running (not
        when the run set was interrupted)."""
        live, self.live = self.live, None
        if live is None:
            return
        if self.keep and keep and live.server.owned and self._kept(live):
            return
        self.progress.update("letting go of the external server"
                             if not live.server.owned
                             else "removing sandbox")
        try:
            live.server.destroy()
        except HarnessError as e:
            self.progress.log(f"warning: {e}")
        finally:
            if live.profile is not None:
                live.profile.close()

    def _kept(self, live: LiveServer) -> bool:
        self.progress.update("keeping the sandbox")
        try:
            how = live.server.keep(self.run_set)
        except HarnessError as e:
            self.progress.log(f"warning: {live.server.name} could not be kept ({e}); "
                              "removing it")
            return False
        if live.profile is not None:  # mysqld was restarted outside its cgroups
            live.profile.close()
        self.progress.log(f"kept {live.server.name} ({live.server.build.name}) running; "
                          f"connect: {how}")
        return True

    def _start(self, live: LiveServer, options: dict[str, OptionValue],
               measured: bool = True) -> None:
        """Start with ``options``; a start for the measured part begins inside the host
        profile's cgroups (its memory counts from mysqld's first allocation)."""
        live.server.cgroups = live.profile.enter() if live.profile and measured else []
        live.server.io_limits = live.profile.io_limits if live.profile and measured else {}
        live.server.start(options)
        live.options = dict(options)

    def ready(self, cell: Cell, ctx: RunContext, rec: RunRecord) -> LiveServer:
        """A running server in the state the scenario asks for at the start of a run:
        a new sandbox (from the snapshot, or prepared and snapshotted), or the last one
        reset by ``between_runs``. What was done is stored in the run's details."""
        if cell.spec is not None:
            return self._external(cell, ctx, rec)
        key = snapshot.snapshot_key(cell.build, self.model.dataset, cell.options,
                                    self.model.prepare_mysqld)
        live = self.live
        if live is not None and (live.key != key or not live.server.is_running):
            self.drop()
            live = None
        t0 = self.monotonic()
        if live is None:
            live, how = self._new_sandbox(cell, ctx, rec, key)
        else:
            ctx.endpoint = live.server.endpoint
            how = self._reset(live, cell, ctx, key)
        rec.details.server_state = {"how": how, "seconds": round(self.monotonic() - t0, 3),
                                       "snapshot": key if self.snapshots else None,
                                       "sandbox": live.server.name,
                                       "mysqld_pid": live.server.pid}
        if live.profile is not None and live.server.is_running:
            # Only the measured part runs under the profile: prepare and snapshot copies
            # are not part of the experiment (and would take ages on a throttled disk).
            # A measured start began inside the cgroups; a server kept from its prepare
            # (no snapshot) is moved there now.
            rec.details.host_profile = live.profile.attach(live.server.pid)
            if self.model.host_profile and self.model.host_profile.background_cpu:
                rec.details.host_profile = self._place_background(live, ctx)
        self._said(live, rec, how, t0)
        return live

    def disk_model(self, on: bool, rec: RunRecord) -> None:
        """The model disk under the datadir charges seeks from here (on, the measured
        part) or no longer (off: what it did meanwhile, in the run's details)."""
        live = self.live
        if live is None or not live.server.is_running:
            return
        counters = live.server.seek_model(on)
        if counters is None:
            return
        if on:
            self._disk_from = counters
            return
        spec = self.model.host_profile.disk if self.model.host_profile else None
        geometry = spec.geometry() if spec else None
        rec.details.disk = {
            "model": spec.model if spec else None,
            "seek_ms": geometry.seek_ms if geometry else None,
            "mbps": geometry.mbps if geometry else None,
            "measured": seekdisk.measured(self._disk_from, counters)}

    def _place_background(self, live: LiveServer, ctx: RunContext) -> dict[str, Any]:
        """InnoDB's chosen background threads into the profile's thread group, as this
        start of mysqld numbered them; what is in force, with the threads by kind."""
        assert live.profile is not None and self.model.host_profile is not None
        spec = self.model.host_profile.background_cpu
        assert spec is not None
        by_kind = background.thread_ids(ctx.endpoint, list(spec.threads),
                                        live.server.build.name)
        in_force = live.profile.place_threads(sorted(t for ts in by_kind.values() for t in ts))
        held = ([f"held to {spec.cpus:g} CPU together"] if spec.cpus else []) + \
            ([f"at weight {spec.weight}"] if spec.weight else [])
        self.progress.log("  background_cpu: " + ", ".join(
            f"{len(ts)} {k} thread{'s' * (len(ts) > 1)}" for k, ts in by_kind.items())
            + " " + " and ".join(held))
        return {**in_force, "background_threads": by_kind}

    def _said(self, live: LiveServer, rec: RunRecord, how: str, t0: float) -> None:
        """How the server was made ready, and what to know about how it runs, in the
        progress and in the run's details."""
        self.progress.log(f"  server: {how} ({self.monotonic() - t0:.1f} s)")
        for note in live.server.notes:
            self.progress.log(f"  warning: {note}")
            rec.details.note_state(note)

    def _new_sandbox(self, cell: Cell, ctx: RunContext, rec: RunRecord,
                     key: str) -> tuple[LiveServer, str]:
        """A new sandbox, from the dataset snapshot or prepared (and then snapshotted);
        the live server and how it was made."""
        m = self.model
        snap = self.find_snapshot(key) if self.snapshots else None
        seed = None if snap else self._seed()
        self.progress.update(_creating(snap, seed))
        server = self.provider.provision(cell.build, cell.variant, datadir_from=snap or seed)
        live = self.live = LiveServer(server, key)
        ctx.endpoint = server.endpoint
        if m.host_profile is not None:
            live.profile = server.host_profile(m.host_profile.limits())
            live.profile.apply()
        if snap is not None:
            self._start(live, cell.options)
            return live, "new sandbox from snapshot"
        self._start(live, {**cell.options, **m.prepare_mysqld}, measured=False)
        for d in m.dataset:
            live.prepare.append(self.prepare(ctx, d))
            self.progress.log(f"  {live.prepare[-1].line()}")
        live.prepared_by = rec.run_id
        if self.snapshots:
            self.progress.update("saving the dataset snapshot")
            server.stop()
            path, secs = server.save_datadir(key, {
                "build": cell.build.name, "datasets": [d.model_dump() for d in m.dataset],
                "prepare_s": sum(p.seconds for p in live.prepare)})
            self.progress.log(f"  dataset snapshot saved in {secs:.1f} s: {path}")
            cache_budget.prune(keep={key})
            rec.details.snapshot_saved_s = round(secs, 3)
            self._start(live, cell.options)
            return live, "new sandbox, prepared, snapshot saved"
        if m.prepare_mysqld:
            server.stop()
            self._start(live, cell.options)
            return live, "new sandbox, prepared, restarted without prepare_mysqld"
        return live, "new sandbox"

    def _seed(self) -> Path | None:
        """The datadir the dataset arrives as (a DBA's), where the provider can start a
        sandbox on a copy of it."""
        seed = self.seed(list(self.model.dataset))
        if seed is not None and not self.provider.seeds:
            raise HarnessError(f"dataset: a datadir ({seed}) starts a local sandbox on a "
                               f"copy of it; the {self.provider.target} target cannot")
        return seed

    def _reset(self, live: LiveServer, cell: Cell, ctx: RunContext, key: str) -> str:
        """The last run's server made ready for this one, as ``between_runs`` says:
        the snapshot restored, a restart, or kept running (a new variant's options
        by SET GLOBAL where they are dynamic). How, in words."""
        m = self.model
        if m.between_runs == "restore" and self.snapshots:
            self.progress.update("restoring the dataset snapshot")
            snap = self.find_snapshot(key)
            if snap is None:
                raise HarnessError(f"snapshot {key} disappeared from "
                                   f"{snapshot.snapshot_root()} during the run set")
            live.server.stop()
            live.server.replace_datadir(snap)
            self._start(live, cell.options)
            return "snapshot restored, restarted"
        if m.between_runs == "restart" or live.options is None:
            self.progress.update("restarting the server")
            live.server.stop()
            self._start(live, cell.options)
            return "restarted"
        # warmup: keep it running; apply a new variant's options with SET GLOBAL
        diff = {k: v for k, v in cell.options.items() if live.options.get(k) != v}
        diff.update({k: None for k in live.options if k not in cell.options})
        if not diff:
            return "kept running"
        if self._set_global(live, diff, ctx):
            live.options = dict(cell.options)
            return f"kept running, SET GLOBAL {', '.join(sorted(diff))}"
        live.server.stop()
        self._start(live, cell.options)
        return "restarted (a changed option is not dynamic)"

    def _external(self, cell: Cell, ctx: RunContext, rec: RunRecord) -> LiveServer:
        """An external server as it is: connect, check the dataset is there (or prepare
        it on a disposable one: the guard allowed it), apply a variant with SET GLOBAL
        (disposable only; the old values are set back when the run set lets it go)."""
        spec = cell.spec
        assert spec is not None
        t0 = self.monotonic()
        live, how = self.live, "external server, kept running"
        if live is None:
            live, how = self._connect(cell, ctx, rec)
        ctx.endpoint = live.server.endpoint
        how += self._variant_on_external(live, cell, ctx)
        rec.details.server_state = {"how": how, "seconds": round(self.monotonic() - t0, 3),
                                       "snapshot": None, "external": spec.title,
                                       "disposable": spec.disposable,
                                       "account": live.account}
        self._said(live, rec, how, t0)
        return live

    def _connect(self, cell: Cell, ctx: RunContext, rec: RunRecord
                 ) -> tuple[LiveServer, str]:
        """The external server of ``cell`` connected, its account's rights said, its
        dataset checked (prepared on a disposable one where it is not there)."""
        spec = cell.spec
        assert spec is not None
        how = "external server, kept running"
        self.progress.update(f"connecting to {spec.title}")
        server = external_server(spec, cell.build)
        ep = server.endpoint
        live = self.live = LiveServer(server, f"external:{spec.title}", options={})
        ctx.endpoint = ep
        ctx.server_local = False
        with connection(ep, timeout=10) as c:
            live.account = grants.described(grants.account_writes(c))
        self.progress.log(f"  {spec.title}: account {spec.user}: {live.account}")
        for d in self.model.dataset:
            wrong = verify_dataset(ep, d)
            if not wrong:
                continue
            self.progress.log(f"  {spec.title} is disposable: preparing {d.database} "
                              f"({wrong[0]})")
            drop_dataset(ep, d)
            live.prepare.append(self.prepare(ctx, d))
            live.prepared_by = rec.run_id
            how = "external server (disposable), dataset prepared"
        return live, how

    @staticmethod
    def _variant_on_external(live: LiveServer, cell: Cell, ctx: RunContext) -> str:
        """The variant's options by SET GLOBAL, the last variant's set back first (what
        the server state then says, or nothing when no option changed)."""
        spec = cell.spec
        assert spec is not None
        ext = live.server
        old = live.options or {}
        diff = {k: v for k, v in cell.options.items() if old.get(k) != v}
        back = [k for k in old if k not in cell.options]
        if not diff and not back:
            return ""
        _set_on_external(ext, spec.title, cell.variant, diff, back)
        live.options = dict(cell.options)
        ctx.event(ctx.clock(), "config", "variant", {"set_global": diff, "ok": True,
                                                     "set_back": back})
        return f", SET GLOBAL {', '.join(sorted([*diff, *back]))}"

    def _set_global(self, live: LiveServer, diff: dict[str, OptionValue | None],
                    ctx: RunContext) -> bool:
        """Apply changed options with SET GLOBAL; False if one is not dynamic (or was
        removed from the variant: its default comes back only with a restart)."""
        if any(v is None for v in diff.values()):
            return False
        refused = live.server.set_global(diff)
        if refused:
            self.progress.log(f"  {refused}; restarting instead")
            return False
        ctx.event(ctx.clock(), "config", "variant", {"set_global": diff, "ok": True})
        return True


def _creating(snap: Path | None, seed: Path | None) -> str:
    """The status line while a sandbox is made (a seed's copy may take minutes)."""
    return "creating sandbox" + (" from the dataset snapshot" if snap else
                                 f" on a copy of {seed}" if seed else "")


def _set_on_external(ext: Server, title: str, variant: str,
                     diff: dict[str, Any], back: list[str]) -> None:
    """Options ``back`` set back to what they were before the run set, then ``diff``
    set by SET GLOBAL (their old values remembered first); a server that refuses
    either stops the run (it is not restarted: the harness did not create it)."""
    failed = ext.put_back([norm(k) for k in back])
    if failed:
        raise HarnessError(f"{title}: could not set back {'; '.join(failed)}")
    ext.remember([norm(k) for k in diff])
    refused = ext.set_global(diff)
    if refused:
        raise OwnershipError(f"{title}: variant {variant}: {refused}; the harness does "
                             "not restart a server it did not create")
