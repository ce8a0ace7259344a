"""``harness run --measure instructions`` (or a scenario's ``measure: instructions``),
and the counted half of ``harness nightly --count-instructions``: each server and
variant's mysqld under the counter for one lifetime, a warm-up window, then
``windows`` judged ones; the run's figure is instructions per transaction (the
geometric mean of its windows, their spread beside it; TPC-C's types each too), stored
as a run of its own that ``harness regress`` follows night after night as it follows
tps. A count does not follow the host's noise: no measurement lock is taken.
"""
from __future__ import annotations

import math
import secrets
import statistics
import time
from dataclasses import dataclass
from datetime import UTC, datetime

from .. import counted
from ..analysis.counted import BAND, Window, mixed
from ..analysis.defaults import COUNTED_WINDOWS
from ..errors import HarnessError
from ..jsonvalue import JsonDict
from ..progress import Progress
from ..scenario import LoadedScenario
from ..server import catalog, refs
from ..store import RunSummary, Store
from ..workloads.base import COUNTED_FIGURE
from .counted_plan import CountedPlan, probe_of
from .counted_session import CountedSession

WINDOWS = COUNTED_WINDOWS  # judged windows a run: the count repeats to 0.02-0.05% in a lifetime


@dataclass(frozen=True)
class CountedRun:
    """One counted run: where, what it counted, and how it ended."""

    run_id: str
    server: str
    variant: str
    status: str  # ok, failed
    error: str | None
    summary: RunSummary | None

    def line(self) -> str:
        if self.summary is None:
            return f"{self.server} / {self.variant}: {self.status}: {self.error}"
        return f"{self.server} / {self.variant}: ok, {self.summary.headline}"


def counted_runs(sc: LoadedScenario, servers: list[str], variants: list[str], store: Store,
                 events: int | None, windows: int, progress: Progress, counter: str = "auto"
                 ) -> tuple[str, list[CountedRun]]:
    """A counted run of every server and variant asked (else the scenario's), in one
    run set; a run that fails is stored failed and the next goes on."""
    names = servers or [s.name for s in sc.model.servers if s.name] or [
        catalog.DEFAULT_SERVER]
    run_set = datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)
    out = []
    for name in names:
        build = refs.build(name, log=progress.log)
        for variant in variants or list(sc.model.variants):
            out.append(_one(sc, build, variant, run_set, store, events, windows, progress,
                            counter))
    return run_set, out


def _one(sc: LoadedScenario, build: catalog.Build, variant: str, run_set: str,
         store: Store, events: int | None, windows: int, progress: Progress, counter: str
         ) -> CountedRun:
    options = sc.variant_options(variant, sc.variant_file(variant, build))
    probe = probe_of(sc)
    p = CountedPlan((build, build), (variant, variant), (options, options), {}, False,
                    probe, events or probe.default_events, *counted.choose(counter),
                    math.inf, 0.05, BAND, sc.model.name)
    s = CountedSession(p, store, progress)
    rec = s.open_run(run_set, variant=variant)
    summary, status, error = None, "failed", None
    try:
        s.provision()
        s.start("A")
        s.window("A", p.events, judged=False)  # a warm-up: the first is higher
        for _ in range(windows):
            s.window("A", p.events, judged=True)
        summary, status = _summary(s, time.monotonic() - s.t0), "ok"
    except HarnessError as e:
        error = str(e)
        progress.log(f"  {build.name} / {variant}: failed: {e}")
    except BaseException:
        status, error = "interrupted", "interrupted"
        raise
    finally:
        s.close(None, status, error, summary)
    return CountedRun(rec.run_id, build.name, variant, status, error, summary)


def _summary(s: CountedSession, seconds: float) -> RunSummary:
    """The run's figures: instructions per transaction (the mix's, and each type's)."""
    judged = [w for w in s.windows if w.judged]
    mix = mixed(judged, s.p.probe.weights())
    per_tx, cv = _geomean(mix), _cv(mix)
    measured: JsonDict = {COUNTED_FIGURE.key: per_tx, "instructions_cv": cv,
                          "counted_windows": len(mix), "events_per_window": s.p.events,
                          "counter": s.counter.name}
    for cls in s.p.probe.classes:
        if cls:
            measured[f"instructions_{cls}"] = _geomean([w for w in judged if w.cls == cls])
    headline = (f"{per_tx:,.1f} instructions a transaction ({s.p.probe.name}, "
                f"{len(mix)} windows of {s.p.events:,}, CV {cv:.3%}; counted by "
                f"{s.counter.name}, {s.counter.threads})")
    return RunSummary(workload=f"counted {s.p.probe.name}", samples=len(judged),
                      measured=measured, headline=headline, threads=1, duration_s=seconds)


def _geomean(ws: list[Window]) -> float:
    return math.exp(math.fsum(math.log(w.per_tx) for w in ws) / len(ws))


def _cv(ws: list[Window]) -> float:
    logs = [math.log(w.per_tx) for w in ws]
    return statistics.stdev(logs) if len(logs) > 1 else 0.0
