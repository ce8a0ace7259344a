"""The commands over stored runs: ``runs``, ``show``, ``report``, ``regress``, ``export``,
``artifacts`` and ``store``."""
from __future__ import annotations

import argparse
import csv
import functools
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .. import formats, notify
from ..analysis import reference, regress
from ..errors import HarnessError, InputError, UnavailableError
from ..exits import Exit
from ..paths import writable_folder
from ..report import history, html
from ..report.hints import hints_of
from ..report.judged import print_plan, print_rejudged
from ..report.select import report_dir, reports_for, runs_named
from ..report.text import print_against, print_conditions, print_summary
from ..store import Store, StoredRun, default_url, migrate, open_store, salvage
from ..store import replay as replaying
from ..store.damage import damage
from ..store.listing import RUN_KEYS, ListedRun, listed_of
from ..store.schema import FORMAT_VERSION
from ..table import print_table
from .args.common import REGRESS_KEYS


def _run_json(r: StoredRun) -> dict[str, Any]:
    return {k: getattr(r, k) for k in RUN_KEYS}


def _ended_in_spool(store: Store, run_id: str) -> bool:
    """Whether a run left ``running`` was ended by its harness, its end in its spool
    (said); only asked of runs whose harness is gone."""
    status = replaying.ended_in_spool(store, run_id)
    if status is not None:
        print(f"note: run {run_id} ended {status}, and waits in its spool: the store "
              "could not take it then ('harness store replay-spool' stores it)",
              file=sys.stderr)
    return status is not None


def _mark_dead(store: Store) -> None:
    ended = functools.partial(_ended_in_spool, store)
    for run_id, why in store.mark_dead_runs(by="'harness runs'", ended=ended):
        print(f"note: run {run_id} was left running ({why}): marked interrupted ('harness "
              "store check' names the spool it left, if any)", file=sys.stderr)


def _listed(store: Store, a: argparse.Namespace) -> list[StoredRun]:
    """The runs ``harness runs`` lists; an unknown run set is bad input, not nothing."""
    runs = store.runs(scenario=a.scenario, run_set=a.run_set)
    if a.run_set and not runs and not store.runs(run_set=a.run_set):
        raise UnavailableError(f"--run-set {a.run_set}: no such run set in {store.safe_url()} "
                               "('harness runs' lists them)")
    return runs


def runs_from_store(a: argparse.Namespace) -> list[ListedRun]:
    """``harness runs``'s runs from the full store: what the quick listing
    (cli/quick.py) leaves to it (a server store, runs left running to mark, a damaged
    file, an unknown run set)."""
    store = open_store(a.results)
    _mark_dead(store)
    return [listed_of(r, REGRESS_KEYS) for r in _listed(store, a)]


def _get_run(store: Store, run_id: str) -> StoredRun:
    r = store.get_run(run_id)
    if r is None:
        raise UnavailableError(f"no run '{run_id}' in the store {store.safe_url()}")
    return r


def cmd_show(a: argparse.Namespace) -> int:
    store = open_store(a.results)
    r = _get_run(store, a.run_id)
    events = store.events(r.run_id)
    summary = r.summary
    if not summary.samples:  # a run still running: its samples so far
        summary = summary.but(samples=store.sample_count(r.run_id))
    out = dict(format=formats.SHOW.marker(), **_run_json(r), summary=summary.to_json(),
               error=r.error,
               artifacts=r.artifacts, details=r.details.to_json(),
               events=[e.to_json() for e in events])
    out["expectations"] = out["summary"]["expectations"]
    if a.json:
        print(json.dumps(out, indent=2, default=str))
        return 0
    for k in RUN_KEYS:
        print(f"{k:>12}: {out[k]}")
    print(f"{'artifacts':>12}: {out['artifacts']}")
    if out["error"]:
        print(f"{'error':>12}: {out['error']}")
    print_summary(summary)
    print_conditions(r.details, summary.collectors)
    if events:
        print("\nevents:")
        for e in events:
            print(f"  {e.t:8.2f} s  {e.kind:<12} {e.name}")
    return 0


def cmd_report(a: argparse.Namespace) -> int:
    ref = reference.load(Path(a.against)) if a.against else None
    store = open_store(a.results)
    runs, sets = runs_named(store, a.ids)
    out = _report_folder(a.output, store, runs, sets)
    for rs in sets:
        reports_for(store, rs, None if a.no_plots else out)
    if a.judge:
        print_rejudged(store, runs, a.judge)
    if a.plan:
        print_plan(store, runs, a.judge)
    if not a.no_plots:
        page = html.write(store, runs, out, baseline_server=hints_of(runs).baseline_server,
                          title=f"{runs[0].scenario}: "
                          + ", ".join(sets or [r.run_id for r in runs]))
        print(f"report: {page}")
    return held_against(ref, a.against, runs) if ref else 0


def held_against(ref: reference.Reference, path: str, runs: list[StoredRun]) -> int:
    """Print the runs held against the reference; 3 when a finding differs."""
    held = reference.held(ref, runs)
    print_against(ref, held, path)
    return Exit.WORSE if held.differs else Exit.OK


def cmd_reference(a: argparse.Namespace) -> int:
    store = open_store(a.results)
    runs, _ = runs_named(store, a.ids)
    made = reference.reference_of(runs, datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
    text = json.dumps(made.to_json(), indent=1) + "\n"
    if a.output:
        Path(a.output).write_text(text, encoding="utf-8")
        print(f"{a.output}: {len(made.findings)} findings, {len(made.figures)} figures of "
              f"{made.scenario} ({', '.join(made.run_sets)})", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _report_folder(output: str | None, store: Store, runs: list[StoredRun],
                   sets: list[str]) -> Path:
    """``-o``, else the run set's reports folder (or one named after the runs), made
    and writable."""
    out = Path(output) if output else report_dir(
        store, sets[0] if len(sets) == 1 else "-".join(r.run_id[-4:] for r in runs[:6]))
    try:
        writable_folder(out)
    except OSError as e:
        raise UnavailableError(f"-o {out}: cannot write the report there: "
                               f"{e.strerror or e}") from None
    return out


def _history_runs(a: argparse.Namespace, store: Store) -> list[StoredRun]:
    """The stored runs of ``--scenario`` (all without), less compare's unless
    ``--include-compare``; refused when none is left."""
    runs = store.runs(scenario=a.scenario)
    if not runs:
        of = f" of scenario {a.scenario}" if a.scenario else ""
        raise UnavailableError(f"no stored runs{of} in {store.safe_url()}")
    if a.include_compare:
        return runs
    runs, left = regress.outside_comparisons(runs)
    if not runs:
        raise UnavailableError(f"all {left} stored run(s) were made by harness compare, which "
                               "regress leaves out; --include-compare counts them")
    if left and not getattr(a, "json", False):
        print(f"note: {left} run(s) made by harness compare left out (--include-compare "
              "counts them)")
    return runs


def cmd_regress(a: argparse.Namespace) -> int:
    store = open_store(a.results)
    runs = _history_runs(a, store)
    metrics = a.metric or list(regress.METRICS)
    kw = _regress_limits(a)
    changes = regress.detect(runs, metrics=metrics, since=a.since, **kw)
    regress.explain(store, runs, changes)
    seen = regress.sensitivity(runs, metrics=metrics, **kw)
    flips = regress.finding_changes(runs, since=a.since)
    both: list[Any] = [*changes, *flips]  # change points, and findings that flipped
    new = [x for x in both if x.regression and x.new]
    if a.json:
        print(json.dumps({"format": formats.REGRESS.marker(),
                          "changes": [c.to_json() for c in changes],
                          "finding_changes": [c.to_json() for c in flips],
                          "new_regressions": len(new), "sensitivity": seen},
                         indent=2, default=str))
    else:
        _print_regress(a, runs, changes, flips, seen)
    if new:
        _notify_regressions(a.notify, new)
    return Exit.WORSE if new else Exit.OK


def _notify_regressions(flag: str | None, new: list[Any]) -> None:
    """Post the new regressions where a webhook is configured; a failed post is said
    on stderr (the exit code still says regression)."""
    url = notify.target(flag)
    if url is None:
        return
    text = f"{len(new)} new regression{'s' if len(new) > 1 else ''}:\n" + "\n".join(
        x.text().splitlines()[0] for x in new)
    try:
        notify.post(url, text, {"kind": "regression", "new": [x.to_json() for x in new]})
    except HarnessError as e:
        print(f"error: {e}", file=sys.stderr)


def cmd_notify(a: argparse.Namespace) -> int:
    url = notify.target(a.notify)
    if url is None:
        print(f"notify: no webhook (--notify URL|@FILE or {notify.ENV}): not posted",
              file=sys.stderr)
        return 0
    notify.post(url, a.message, {"kind": "message"})
    return 0


def cmd_history(a: argparse.Namespace) -> int:
    store = open_store(a.results)
    runs = _history_runs(a, store)
    site = _site_folder(a.html) if a.html else None
    reports = Path(store.artifacts_root()) / "reports"
    found = history.histories(runs, reports, site or Path.cwd(), store)
    if not found:
        raise InputError("no ok runs stored" + (f" of scenario {a.scenario}" if a.scenario
                                                else ""))
    for h in found:
        print(history.line(h))
    if site is not None:
        index = history.write_site(found, site, a.title)
        print(f"history site: {index} ({len(found)} histories)")
    return 0


def _site_folder(path: str) -> Path:
    try:
        writable_folder(Path(path))
        return Path(path)
    except OSError as e:
        raise InputError(f"--html {path}: cannot write there: {e.strerror or e}") from None


def _regress_limits(a: argparse.Namespace) -> dict[str, Any]:
    """The change-point search's settings from the flags."""
    magnitude = None if a.min_magnitude is None else a.min_magnitude / 100
    return {"window": a.window, "p_value": a.p_value, "min_points": a.min_points,
            "min_magnitude": magnitude}


def _print_regress(a: argparse.Namespace, runs: list[StoredRun], changes: list[Any],
                   flips: list[Any], seen: list[dict[str, Any]]) -> None:
    hist = regress.histories(runs)
    print(f"{len(hist)} histories, {sum(len(v) for v in hist.values())} ok runs"
          + (f", new since {a.since}" if a.since else "") + ":")
    for c in changes:
        print(c.text())
    if not changes:
        print("no change point")
    for f in flips:
        print(f.text())
    print("what each history can see:")
    for x in seen:
        print(regress.sensitivity_text(x, a.min_points))


def cmd_export(a: argparse.Namespace) -> int:
    store = open_store(a.results)
    r = _get_run(store, a.run_id)
    try:
        out = open(a.output, "w", newline="") if a.output else sys.stdout
    except OSError as e:
        raise UnavailableError(f"-o {a.output}: cannot write it: {e.strerror or e}") from None
    origin = _clock_origin(r)
    try:
        w = csv.writer(out)
        w.writerow(["run_id", "t", "time", "source", "metric", "labels", "value"])
        for s in store.series(r.run_id):
            labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))
            for t, v in s.points():
                wall = datetime.fromtimestamp(origin + t, UTC).isoformat(timespec="milliseconds")
                w.writerow([r.run_id, f"{t:.3f}", wall, s.source, s.metric, labels,
                            repr(v)])
    finally:
        if a.output:
            out.close()
    return 0


def cmd_artifacts(a: argparse.Namespace) -> int:
    store = open_store(a.results)
    r = _get_run(store, a.run_id)
    names = store.artifact_names(r.run_id)
    if not names:
        raise InputError(f"run {r.run_id}: no files in the store (stored before format "
                         f"3, or lost with its run); its folder: {r.artifacts}")
    if a.name:
        data = store.artifact(r.run_id, a.name)
        if data is None:
            raise UnavailableError(f"run {r.run_id} has no file {a.name!r}; it has: "
                             + ", ".join(n for n, _ in names))
        sys.stdout.buffer.write(data)
        return 0
    if a.output:
        return _write_artifacts(store, r.run_id, names, Path(a.output))
    print_table([{"name": n, "bytes": size} for n, size in names], ["name", "bytes"])
    left = r.details.artifacts_only_in_folder
    if left:
        print(f"only in {r.artifacts}: {', '.join(left)}")
    return 0


def _write_artifacts(store: Store, run_id: str, names: list[tuple[str, int]], out: Path) -> int:
    root = out.absolute()
    for name, _ in names:
        dest = (root / name).resolve()
        if not dest.is_relative_to(root.resolve()):  # a name from the store is data
            raise InputError(f"run {run_id}: file name {name!r} points outside {root}")
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(store.artifact(run_id, name) or b"")
        except OSError as e:
            raise InputError(f"-o {out}: cannot write {name}: {e.strerror or e}") from None
    print(f"{len(names)} file(s) of run {run_id} in {root}")
    return 0


def _clock_origin(r: StoredRun) -> float:
    """Wall-clock time (epoch s) of a run's t = 0: stored with the run, or for runs
    stored before it was, the run's start (within the moment it took to begin)."""
    origin = r.details.clock_origin
    if origin is not None:
        return float(origin)
    return datetime.fromisoformat(r.started_at).timestamp()


def cmd_store(a: argparse.Namespace) -> int:
    if a.action == "migrate":
        return _store_migrate(a.results)
    if a.salvage:
        return _salvage(a.results or default_url(), Path(a.salvage))
    store = open_store(a.results)
    if a.action == "replay-spool":
        return _replay_spools(store, [Path(x) for x in a.spools])
    if a.spools:
        raise InputError(f"harness store {a.action} takes no PATH (replay-spool does)")
    problems = store.check() + replaying.waiting(store)
    for p in problems:
        print(f"problem: {p}")
    dead = _stale_runs(store, a.repair)
    left = len(problems) + (0 if a.repair else len(dead))
    print(f"{store.safe_url()}: {'ok' if not left else f'{left} problem(s)'}")
    return Exit.FINDING if left else Exit.OK


def _stale_runs(store: Store, repair: bool) -> list[str]:
    """Runs still 'running' (said); those whose harness is gone, marked interrupted
    with ``repair``. The dead ones' ids."""
    stale = store.stale_runs()
    dead = [run_id for run_id, _why, sure in stale if sure]
    for run_id, why, sure in stale:
        fixed = " - marked interrupted" if sure and repair else ""
        print(f"{'stale' if sure else 'running'}: run {run_id}: {why}{fixed}")
    if repair and dead:
        store.mark_interrupted(dead)
    elif dead:
        print(f"{len(dead)} run(s) left running by a dead harness: 'harness store check "
              "--repair' marks them interrupted")
    return dead


def _salvage(url: str, out: Path) -> int:
    """The readable runs of a damaged SQLite store into a new one; 1 if any was lost."""
    if not url.startswith("sqlite:///"):
        raise InputError(f"--salvage reads an SQLite store file, not {url.split(':')[0]}")
    if out.exists():
        raise InputError(f"--salvage {out}: the file exists; give a new one")
    src = Path(url[len("sqlite:///"):])
    print(damage(src) or f"{src}: SQLite finds it whole; copying its runs anyway")
    got = salvage.salvage(src, open_store(f"sqlite:///{out.absolute()}"))
    for line in got.lost:
        print(f"lost: run {line}")
    print(f"{out}: {len(got.copied)} run(s) and {got.samples} samples copied, "
          f"{len(got.lost)} lost")
    return Exit.FAILED if got.lost else Exit.OK


def _replay_spools(store: Store, named: list[Path]) -> int:
    """Spools into the store: those named (a run's folder or its spool file), else
    every one of this store whose harness is gone. 1 if any could not be."""
    by = "'harness store replay-spool'"
    done, problems = replaying.replay_named(store, named, by) if named else \
        replaying.replay_all(store, store.artifacts_root(), by)
    for r in done:
        print(f"run {r.run_id}: {r.samples} samples and {r.events} events stored from its "
              f"spool, {r.status}" + ("" if r.ended else " (its harness died before its end)"))
    for p in problems:
        print(f"problem: {p}", file=sys.stderr)
    if not done and not problems:
        print(f"{store.safe_url()}: no run waits in a spool")
    return Exit.FAILED if problems else Exit.OK


def _store_migrate(url: str | None) -> int:
    store = open_store(url, migrating=True)
    steps = migrate.pending(store.format_version)
    if not steps:
        print(f"{store.safe_url()}: format version {FORMAT_VERSION}, nothing to do")
        return 0
    if not migrate.upgrade(store):
        print(f"{store.safe_url()}: format version {FORMAT_VERSION} (another process "
              "migrated it meanwhile)")
    return 0
