"""The ``harness`` command: one ``cmd_*`` function per sub-command.

Exit codes: 0 ok, 1 a run failed, 2 bad input (scenario, flag, name), 130 interrupted.
Errors print as ``error: ...`` on stderr, never as a traceback.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from . import __version__, catalog, guard, proc, snapshot, workloads
from .analysis.compare import MAX_CV as MAX_CV_DEFAULT
from .analysis.compare import NOISE as NOISE_DEFAULT
from .analysis.figures import REGRESS_METRICS, SUMMARY_KEYS
from .analysis.phases import describe
from .errors import HarnessError, InputError
from .paths import writable_folder
from .progress import Progress
from .report import upgrade
from .report.phase_report import print_report, print_verdicts
from .runner import Runner, RunOptions, summary_table
from .runner.plan import check_cells, check_profile, select_servers, select_variants
from .scenario import load_scenario
from .store import RunSummary, open_store

MEASURE_LOCK_HELP = (
    "measure even while another harness run measures on this host (by default each "
    "measured part waits for the host's measurement lock, saying for whom; the scenario's "
    "measure_lock: false, or HARNESS_MEASURE_LOCK=off, does the same)")

RUN_KEYS = ("run_id", "run_set", "scenario", "server", "flavor", "version", "variant",
            "repetition", "target", "host", "status", "started_at", "ended_at")


def _print_table(rows: list[dict[str, Any]], cols: list[str]) -> None:
    def fmt(v: Any) -> str:
        if v is None:
            return "-"
        if isinstance(v, float):
            return f"{v:.2f}"
        return str(v)
    cells = [[fmt(r.get(c)) for c in cols] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) if cells else len(c)
              for i, c in enumerate(cols)]
    print("  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True)))
    for row in cells:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)))


def _run_json(r: dict[str, Any]) -> dict[str, Any]:
    return {k: r.get(k) for k in RUN_KEYS}


# --- sub-commands -------------------------------------------------------------------------

def cmd_run(a: argparse.Namespace) -> int:
    sc = _scaled(load_scenario(a.scenario), a)
    if a.keep and a.target != "local":
        raise InputError(f"--keep: keeps local sandboxes only (not --target {a.target})")
    store = open_store(a.results)
    if a.target.startswith("ansible:") and "@" not in a.target and not a.run_set:
        from .providers import ansible
        inventory, _ = ansible.parse_target(a.target)
        hosts = ansible.inventory_hosts(inventory)
        servers = a.server or [s.name for s in sc.model.servers if s.name]
        if len(hosts) > 1 and len(servers) > 1:
            return _run_on_lab(a, sc, store, inventory, hosts, servers)
    opts = RunOptions(servers=a.server or [], basedirs=a.basedir or [], variants=a.variant or [],
                      repetitions=a.repetitions, target=a.target, fail_fast=a.fail_fast,
                      collectors=not a.no_collectors, metrics_port=a.metrics_port,
                      pushgateway=a.pushgateway, resume=a.resume, interleave=a.interleave,
                      disposable_confirmed=a.i_know_this_is_disposable, run_set=a.run_set,
                      keep=a.keep, measure_lock=not a.no_measure_lock)
    runner = Runner(sc, store, opts, Progress(quiet=a.quiet))
    results = runner.run()
    rows = summary_table(results)
    if a.json:
        print(json.dumps({"run_set": runner.run_set,
                          "runs": [{"run_id": r.run_id, "server": r.server,
                                    "variant": r.variant, "repetition": r.repetition,
                                    "status": r.status, "error": r.error,
                                    "summary": r.summary.to_json()} for r in results],
                          "table": rows}, indent=2, default=str))
    else:
        print(f"\nrun set {runner.run_set} ({sc.model.name}): "
              f"{sum(r.status == 'ok' for r in results)}/{len(results)} runs ok")
        _print_table(rows, ["server", "variant", "runs", "ok",
                            *[k for k in SUMMARY_KEYS if any(k in r for r in rows)]])
        for r in results:
            if r.status != "ok":
                print(f"\n{r.run_id} {r.status}: {r.error}")
        if results:
            _print_reports(sc, store, runner.run_set)
    return 0 if results and all(r.status == "ok" for r in results) else 1


def _scaled(sc: Any, a: argparse.Namespace) -> Any:
    """The scenario at ``--scale`` (itself without it)."""
    if a.scale is None:
        return sc
    if not 0 < a.scale <= 100_000:
        raise InputError(f"--scale {a.scale:g}: a factor above 0 (2 doubles the sizes)")
    try:
        return sc.scaled(a.scale)
    except ValidationError as e:
        raise InputError(f"{a.scenario}: scaled x{a.scale:g}, the scenario is no "
                         f"longer valid: {e.errors()[0]['msg']}") from None


def _print_reports(sc: Any, store: Any, run_set: str) -> None:
    """After a run set: its phases, its upgrade verdicts, its SSB flights or its A/B
    verdicts, and for an experiment the HTML report."""
    m = sc.model
    if m.side_loads:
        print_report(store, run_set, _print_columns, _report_dir(store, run_set),
                     _watched(m))
    if m.baseline_server:
        upgrade.print_report(store, store.runs(run_set=run_set), m.baseline_server,
                             _print_table)
    _print_workload_reports(store, store.runs(run_set=run_set))
    if not m.side_loads:
        print_verdicts(store.runs(run_set=run_set))
    if m.expectations:  # an experiment: its figures too
        from .report import html
        page = html.write(store, store.runs(run_set=run_set), _report_dir(store, run_set),
                          f"{m.name}: {run_set}", baseline_server=m.baseline_server)
        print(f"report: {page}")


def _run_on_lab(a: argparse.Namespace, sc: Any, store: Any, inventory: Path,
                hosts: list[Any], servers: list[str]) -> int:
    """A matrix over the hosts of an inventory, in parallel: the servers are spread
    over the hosts and one harness process runs each host's share into one run set,
    so N hosts take about the time of one."""
    from .providers.ansible import split_servers
    from .runner import new_id

    run_set = new_id()
    shares = split_servers(servers, hosts)
    passthrough = [*sum((["--variant", v] for v in a.variant or []), []),
                   *(["--repetitions", str(a.repetitions)] if a.repetitions else []),
                   *(["--scale", str(a.scale)] if a.scale else []),
                   *(["--fail-fast"] if a.fail_fast else []),
                   *(["--interleave"] if a.interleave else []),
                   *(["--no-collectors"] if a.no_collectors else []),
                   *(["--i-know-this-is-disposable"] if a.i_know_this_is_disposable else []),
                   *(["--no-measure-lock"] if a.no_measure_lock else [])]
    # The store's URL may hold a password: children inherit it, never see it in argv.
    env = {**os.environ, **({"HARNESS_STORE": a.results} if a.results else {})}
    print(f"run set {run_set}: {len(servers)} server(s) over {len(shares)} host(s) of "
          f"{inventory}: " + "; ".join(f"{h}: {', '.join(s)}" for h, s in shares.items()),
          file=sys.stderr)
    children: dict[str, subprocess.Popen[bytes]] = {}
    logs: dict[str, Path] = {}
    logdir = Path(tempfile.mkdtemp(prefix="lab-"))
    try:
        for host, share in shares.items():
            logs[host] = logdir / f"{host}.log"
            argv = [sys.executable, "-m", "harness", "run", a.scenario, "--target",
                    f"ansible:{inventory}@{host}", "--run-set", run_set, "--quiet",
                    *sum((["--server", s] for s in share), []), *passthrough]
            # Each in its own session, dying with this process: Ctrl-C here stops them
            # in order (below), a killed parent leaves none running.
            children[host] = proc.spawn_daemon(argv, logs[host], env=env)
        codes = {}
        for host, child in children.items():
            codes[host] = child.wait()
            print(f"{host}: {'done' if codes[host] == 0 else f'exit code {codes[host]}'}",
                  file=sys.stderr)
    except KeyboardInterrupt:
        for child in children.values():
            child.terminate()
        for child in children.values():
            child.wait(timeout=60)
        raise
    runs = store.runs(run_set=run_set)
    for host, code in codes.items():
        if code not in (0, 1):
            tail = logs[host].read_text(errors="replace").splitlines()[-6:]
            print(f"{host} (exit {code}):\n" + "\n".join("    " + ln for ln in tail),
                  file=sys.stderr)
    shutil.rmtree(logdir, ignore_errors=True)
    print(f"\nrun set {run_set} ({sc.model.name}): "
          f"{sum(r['status'] == 'ok' for r in runs)}/{len(runs)} runs ok on "
          f"{len(shares)} hosts")
    rows = [{"server": r["server"], "variant": r["variant"], "host": r["host"],
             "status": r["status"], **{k: v for k in SUMMARY_KEYS
                                       if (v := r["summary"].figure(k)) is not None}}
            for r in runs]
    _print_table(rows, ["server", "variant", "host", "status",
                        *[k for k in SUMMARY_KEYS if any(k in r for r in rows)]])
    return 0 if runs and all(c == 0 for c in codes.values()) else max(codes.values()) or 1


def cmd_validate(a: argparse.Namespace) -> int:
    bad = 0
    for f in a.files:
        try:
            sc = load_scenario(f)
            specs = select_servers(sc, RunOptions())
            installed = [s.name for s in specs if s.name and catalog.is_installed(
                catalog.get_entry(s.name))]
            external = [s.title for s in specs if s.external]
            builds = [catalog.detect_build(catalog.get_entry(n).install_dir, name=n)
                      for n in installed]
            variants = select_variants(sc, RunOptions())
            cells = check_cells(sc, builds, variants)
            guard.check_static(sc, specs, {v: sc.variant_options(v) for v in variants})
            skipped = [s.title for s in specs if s.name not in installed and not s.external]
            note = (f" (options not checked against {', '.join(skipped)}: not installed; "
                    "'harness servers install NAME' first)") if skipped else ""
            if external:
                note += (f" (external {', '.join(external)}: not contacted; 'harness run' "
                         "checks their variables and what the harness may do there)")
            profile = check_profile(sc, [catalog.get_entry(s.name) for s in specs if s.name],
                                    a.target, bool(external))
            print(f"{f}: ok{note}")
            for line in profile:
                print(f"  host_profile applies {line}")
            _print_my_cnf_reading(cells)
        except HarnessError as e:
            bad += 1
            print(f"error: {e}", file=sys.stderr)
    return 2 if bad else 0


def _print_my_cnf_reading(cells: list[Any]) -> None:
    """How each build read each variant's my.cnf: what it took, what was set aside."""
    for c in cells:
        if not c.my_cnf:
            continue
        aside = c.my_cnf["set_aside"]
        print(f"  variants.{c.variant}.my_cnf on {c.build.name}: {len(c.options)} options "
              f"from {len(c.my_cnf['files'])} file(s)"
              + (f"; set aside (the sandbox sets them): {', '.join(aside)}" if aside else ""))
        for n in c.my_cnf["notes"]:
            if not n.endswith("the sandbox sets it"):
                print(f"    {n}")


def cmd_servers(a: argparse.Namespace) -> int:
    if a.servers_cmd == "install":
        def log(m: str) -> None:
            print(m, file=sys.stderr)
        for name in a.names:
            if name.endswith((".tar.gz", ".tgz", ".tar.xz")):  # a tarball by path
                entry = catalog.install_file(Path(name), log=log)
            else:
                entry = catalog.get_entry(name)
                catalog.install(entry, force=a.force, log=log)
            b = catalog.detect_build(entry.install_dir, name=entry.name)
            print(f"{entry.name}: {b.flavor} {b.version} in {entry.install_dir}")
        return 0
    rows = []
    for e in catalog.CATALOG.values():
        rows.append({"name": e.name, "flavor": e.flavor, "version": e.version,
                     "engine": e.engine, "source": e.source, "package": e.package,
                     "sha256": e.sha256, "installed": catalog.is_installed(e),
                     "install_dir": str(e.install_dir),
                     "from": catalog.built_from(e) if catalog.is_installed(e) else None,
                     "default": e.name == catalog.DEFAULT_SERVER, "notes": e.notes})
    if a.json:
        print(json.dumps(rows, indent=2))
    else:
        shown = [dict(r, installed="yes" if r["installed"] else "no",
                      name=f"{r['name']}{' *' if r['default'] else ''}") for r in rows]
        _print_table(shown, ["name", "flavor", "version", "engine", "source", "installed",
                            "from"])
        print("\n* the embedded default; from: where an installed build came from "
              "(--json: each entry's package)")
    return 0


def cmd_capture(a: argparse.Namespace) -> int:
    """harness capture: the statements that turn a server's slow log into a capture of
    every statement (and back), for a DBA to run on a server of theirs."""
    from .collectors.slow_log import capture_statements

    if bool(a.server) == bool(a.version):
        raise InputError("capture: give --server NAME (a catalog server) or --flavor and "
                         "--version of yours")
    if a.server:
        entry = catalog.get_entry(a.server)
        flavor, version = entry.flavor, entry.version
    else:
        flavor, version = a.flavor, a.version
    if not re.fullmatch(r"\d+\.\d+(\.\d+)?", version):
        raise InputError(f"--version {version}: a version such as 8.0.36")
    on, off = capture_statements(flavor, catalog.version_tuple(version), a.file)
    print(f"-- {flavor} {version}: capture every statement into {a.file} (relative: in "
          "the datadir)\n" + "".join(s + ";\n" for s in on))
    print("-- connections opened before this keep their own long_query_time: reconnect\n"
          "-- the application (or wait for its pool to cycle), run the workload, then:\n"
          + "".join(s + ";\n" for s in off)
          + "-- and put long_query_time (and the other options) back as they were.\n"
          "-- Replay the file with a scenario's workload: {kind: replay, log: FILE}.")
    return 0


def cmd_cnf(a: argparse.Namespace) -> int:
    """harness cnf check: each option of a my.cnf on each build, the file read as that
    build's mysqld reads it (exit 3: the file does not run unchanged on one of them;
    2: an option no build knows, or bad input)."""
    from . import cnfcheck, optionfile

    path = Path(a.file)
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    reference = catalog.resolve(a.from_server) if a.from_server else None
    report, files = {}, {}
    for name in a.server:
        build = catalog.resolve(name, log=lambda m: print(m, file=sys.stderr))
        files[name] = read = optionfile.read(path, build)
        if not read.options:
            raise InputError(f"{path}: no options {name} reads (its groups: "
                             f"{', '.join(read.groups)})")
        report[name] = cnfcheck.judge(build, dict(read.options),
                                      cnfcheck.installed_knows(build), reference=reference)
    statuses = {v.status for vs in report.values() for v in vs}
    if a.json:
        print(json.dumps({"file": str(path), "from": a.from_server,
                          "servers": {n: [v.to_json() for v in vs]
                                      for n, vs in report.items()},
                          "read": {n: f.to_json() for n, f in files.items()}}, indent=2))
    else:
        _print_cnf_report(path, report, a.from_server, files)
    if cnfcheck.UNKNOWN in statuses:
        return 2
    return 3 if statuses & {cnfcheck.RENAMED, cnfcheck.REMOVED} else 0


def _print_cnf_report(path: Path, report: dict[str, list[Any]], ref: str | None,
                      files: dict[str, Any]) -> None:
    for name, verdicts in report.items():
        print(f"{path} on {name}" + (f" (written for {ref})" if ref else "") + ":")
        for note in files[name].notes:
            print(f"  note: {note}")
        rows = []
        for v in verdicts:
            becomes = (f"{v.new_name} = {v.new_value}" if v.new_name
                       else "(dropped)" if v.status == "removed" else "")
            if v.status == "default differs":
                becomes = f"default here {v.default}, there {v.reference_default}"
            rows.append({"option": v.option, "value": "" if v.value is None else v.value,
                         "status": v.status, "becomes": becomes, "why": v.note})
        _print_table(rows, ["option", "value", "status", "becomes", "why"])
        counts = Counter(v.status for v in verdicts)
        print("  " + ", ".join(f"{n} {s}" for s, n in counts.items()) + "\n")


def cmd_sandboxes(a: argparse.Namespace) -> int:
    """harness sandboxes list|stop|remove: the sandboxes 'run --keep' left running."""
    from .providers import kept

    if a.sandboxes_cmd == "list":
        rows = kept.kept_sandboxes()
        if a.json:
            print(json.dumps(rows, indent=2))
        elif rows:
            _print_table(rows, ["name", "owner", "build", "port", "state", "since",
                                "run_set", "connect"])
        else:
            print("no kept sandboxes ('harness run --keep' keeps them)")
        return 0
    if not a.names and not a.all:
        raise InputError(f"sandboxes {a.sandboxes_cmd}: name the sandboxes, or --all")
    for box in kept.find(a.names, a.all, a.any_owner):
        if a.sandboxes_cmd == "stop":
            print(f"{box['name']}: " + ("stopped" if kept.stop(box) else "was not running"))
        else:
            kept.remove(box)
            print(f"{box['name']}: removed")
    return 0


def cmd_images(a: argparse.Namespace) -> int:
    from .providers import images

    if a.images_cmd == "build":
        for name in a.server or list(images.DEFAULT_IMAGES):
            catalog.get_entry(name)
            spec = images.build_image(name, log=lambda m: print(m, file=sys.stderr))
            print(f"{name}: {spec.image} ({spec.flavor} {spec.version})")
        return 0
    rows = [{"image": i, "server": s, "version": v} for i, s, v in images.list_images()]
    rows += [{"image": spec.image + " (official, pull by hand)", "server": name,
              "version": spec.version} for name, spec in images.OFFICIAL.items()]
    _print_table(rows, ["image", "server", "version"])
    return 0


def cmd_runs(a: argparse.Namespace) -> int:
    store = open_store(a.results)
    runs = store.runs(scenario=a.scenario, run_set=a.run_set)
    if a.json:
        print(json.dumps([_run_json(r) for r in runs], indent=2))
        return 0
    # The regress metrics' figures (tps and p95 always; the others where a run has them).
    figs = {name: key for name, (key, _) in REGRESS_METRICS.items()}
    rows = [dict(r, **{n: r["summary"].figure(k) for n, k in figs.items()}) for r in runs]
    extra = [n for n in figs if n not in ("tps", "p95_ms") and
             any(x[n] is not None for x in rows)]
    _print_table(rows, ["run_id", "run_set", "scenario", "server", "version", "variant",
                        "repetition", "target", "host", "status", "started_at", "tps",
                        "p95_ms", *extra])
    return 0


def _get_run(store: Any, run_id: str) -> dict[str, Any]:
    r = store.get_run(run_id)
    if r is None:
        raise InputError(f"no run '{run_id}' in the store {store._safe_url()}")
    return r


def cmd_show(a: argparse.Namespace) -> int:
    store = open_store(a.results)
    r = _get_run(store, a.run_id)
    events = store.events(r["run_id"])
    summary = r["summary"]
    if not summary.samples:  # a run still running: its samples so far
        summary = summary.but(samples=store.sample_count(r["run_id"]))
    out = dict(_run_json(r), summary=summary.to_json(), error=r["error"],
               artifacts=r["artifacts"], details=r["details"],
               events=[{k: e[k] for k in ("t", "kind", "name", "detail")} for e in events])
    out["expectations"] = summary.expectations
    if a.json:
        print(json.dumps(out, indent=2, default=str))
        return 0
    for k in RUN_KEYS:
        print(f"{k:>12}: {out[k]}")
    print(f"{'artifacts':>12}: {out['artifacts']}")
    if out["error"]:
        print(f"{'error':>12}: {out['error']}")
    _print_summary(summary)
    _print_conditions(out["details"], summary.collectors)
    if events:
        print("\nevents:")
        for e in events:
            print(f"  {e['t']:8.2f} s  {e['kind']:<12} {e['name']}")
    return 0


def _print_summary(summary: RunSummary) -> None:
    """A run's summary: its figures, then its prepare, side loads, flights, phases and
    expected findings a line each."""
    print("\nsummary:")
    structured = ("prepare", "side_loads", "phases", "expectations", "config_changes",
                  "flights", "digests", "collectors", "measured", "series_stats")
    for k, v in [*summary.to_json().items(), *summary.measured.items()]:
        if k not in structured and v is not None:
            print(f"  {k:>32}: {v}")
    for p in summary.prepare:
        print(f"  {'prepare ' + p['database']:>32}: {p['rows']} rows in {p['seconds']} s")
    for x in summary.side_loads:
        print(f"  {'side load ' + x['name']:>32}: {x['kind']} {x['status']}, "
              f"{x['seconds']} s, {len(x['passes'])} pass(es), {x['bytes']} bytes, "
              f"{x['rows']} rows" + (f"; {x['error']}" if x["error"] else ""))
    for f in summary.measured.get("flights", []):
        slow = sorted(f["queries"].items(), key=lambda q: -q[1]["seconds"])[:3]
        print(f"  {'flight ' + f['flight']:>32}: {f['seconds']} s, {f['pages_read']:.0f} pages "
              f"read, hit ratio {f['hit_ratio']}; slowest "
              + ", ".join(f"{q} {x['seconds']:.2f} s" for q, x in slow))
    for ph in summary.phases or []:
        print(f"  {'phase ' + ph['phase']:>32}: {ph['seconds']} s, main tps "
              f"{ph['tps_median_inside']} inside vs {ph['tps_median_outside']} outside")
    for x in summary.expectations:
        print(f"  {'expected':>32}: {describe(x)}")


def _print_conditions(details: dict[str, Any], collectors: dict[str, Any]) -> None:
    """What a reader of a run needs beside its figures: how the server was made ready,
    the my.cnf reading, the CPU wake-up probe, and what each collector did or did not."""
    lines = []
    state = details.get("server_state") or {}
    if state:
        lines.append(f"server: {state.get('how')} ({state.get('seconds')} s)")
        lines += [f"server: {n}" for n in state.get("notes", [])]
    lines += [f"my.cnf: {n}" for n in (details.get("my_cnf") or {}).get("notes", [])]
    probe = details.get("wakeup_probe")
    if probe:
        lines.append(f"wake-up probe: {probe['idle_tps']} tps idle, {probe['one_core_busy_tps']}"
                     f" with one core kept busy (x{probe['ratio']})"
                     + ("; idle CPUs wake slowly here" if probe.get("large") else ""))
    keepalive = details.get("cpu_keepalive")
    if keepalive:
        lines.append(f"cpu keep-alive: {keepalive}")
    place = details.get("cpu_placement")
    if place:
        lines.append(f"cpu placement: mysqld ({place['mysqld_threads']} threads) on CPUs "
                     f"{place['server']}, the client on {place['client']}")
    lines += [f"collector note: {n}" for n in collectors.get("notes", [])]
    for name, c in collectors.items():
        if name != "notes" and isinstance(c, dict):
            lines.append(f"collector {name}: {c.get('samples')} samples every "
                         f"{c.get('interval_s')} s, {c.get('failures')} failed, "
                         f"{c.get('duration_ms_median')} ms each (p99 "
                         f"{c.get('duration_ms_p99')} ms)")
    if lines:
        print("\nconditions:")
        for line in lines:
            print(f"  {line}")


def _print_columns(rows: list[dict[str, Any]], cols: list[str]) -> None:
    """A wide table turned on its side: one line per column, one column per row."""
    def fmt(v: Any) -> str:
        return "-" if v is None else f"{v:.2f}" if isinstance(v, float) else str(v)
    heads = [f"{r['server']} / {r['variant']}" for r in rows]
    left = max(len(c) for c in cols)
    widths = [max(len(h), *(len(fmt(r.get(c))) for c in cols)) for h, r in
              zip(heads, rows, strict=True)]
    print(" " * left + "  " + "  ".join(h.rjust(w) for h, w in zip(heads, widths,
                                                                    strict=True)))
    for c in cols[2:]:
        print(c.ljust(left) + "  " + "  ".join(fmt(r.get(c)).rjust(w) for r, w in
                                               zip(rows, widths, strict=True)))


def _report_dir(store: Any, run_set: str) -> Any:
    from .runner import artifacts_root
    return artifacts_root(store) / "reports" / run_set


def _watched(model: Any) -> list[str]:
    return sorted({*model.watch_indexes, *(e.index for e in model.expectations if e.index)})


def cmd_report(a: argparse.Namespace) -> int:
    from pathlib import Path

    from .report import html

    store = open_store(a.results)
    runs, sets = _runs_named(store, a.ids)
    out = Path(a.output) if a.output else _report_dir(store, sets[0] if len(sets) == 1
                                                      else "-".join(r["run_id"][-4:]
                                                                    for r in runs[:6]))
    try:
        writable_folder(out)
    except OSError as e:
        raise InputError(f"-o {out}: cannot write the report there: {e.strerror or e}") from None
    for rs in sets:
        _print_run_set(store, rs, None if a.no_plots else out)
    if a.judge:
        _print_rejudged(store, runs, a.judge)
    if a.plan:
        _print_plan(store, runs, a.judge)
    if not a.no_plots:
        page = html.write(store, runs, out, baseline_server=_baseline_server(runs),
                          title=f"{runs[0]['scenario']}: "
                          + ", ".join(sets or [r["run_id"] for r in runs]))
        print(f"report: {page}")
    return 0


def _runs_named(store: Any, ids: list[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """The runs of run sets or single runs (ids or unambiguous prefixes), each once,
    and which of ``ids`` were run sets."""
    runs: list[dict[str, Any]] = []
    sets: list[str] = []
    for ident in ids:
        found = store.runs(run_set=ident)
        if found:
            sets.append(ident)
        else:
            one = store.get_run(ident)
            if one is None:
                raise InputError(f"no run set or run '{ident}' in the store "
                                 f"{store._safe_url()}")
            found = [one]
        runs += [r for r in found if r["run_id"] not in {x["run_id"] for x in runs}]
    return runs, sets


def _print_run_set(store: Any, rs: str, plots: Any) -> None:
    """A stored run set's tables: phases, upgrade verdicts, SSB flights or A/B verdicts."""
    runs = store.runs(run_set=rs)
    watch: list[str] = []
    for r in runs:
        try:
            watch = _watched(load_scenario(r["details"]["scenario_file"]).model)
            break
        except (HarnessError, KeyError, TypeError):
            continue
    phased = any(r["summary"].phases is not None for r in runs)
    if phased:
        print_report(store, rs, _print_columns, plots, watch)
    baseline = _baseline_server(runs)
    if baseline:
        upgrade.print_report(store, runs, baseline, _print_table)
    _print_workload_reports(store, runs)
    if not phased:
        print_verdicts(runs)


def _print_workload_reports(store: Any, runs: list[dict[str, Any]]) -> None:
    """Each workload's own tables (SSB's flights), for its runs."""
    for plugin, mine in workloads.runs_by_plugin(runs):
        if plugin.report:
            plugin.report(store, mine, _print_table)


def _print_rejudged(store: Any, runs: list[dict[str, Any]], scenario: str) -> None:
    from .analysis import findings

    judged = findings.rejudge(store, runs, load_scenario(scenario).model.expectations)
    print(f"\nexpected findings judged again with {scenario} (not stored):")
    for r, x in judged:
        which = f"{x['runs']} runs" if x.get("pooled") else f"rep {r['repetition']}"
        print(f"  [{r['server']} / {r['variant']} {which}] {describe(x)}")
    if not judged:
        print("  none: the file has no metric: series expectation for these runs")


def _print_plan(store: Any, runs: list[dict[str, Any]], judge: str | None) -> None:
    """Each finding's plan from its verdicts in each run set (judged again, each run set
    on its own, with --judge's scenario where it has them)."""
    from .analysis import findings, plan

    expectations = load_scenario(judge).model.expectations if judge else []
    triples = []
    for run_set in sorted({r["run_set"] or r["run_id"] for r in runs}):
        mine = [r for r in runs if (r["run_set"] or r["run_id"]) == run_set]
        again = findings.rejudge(store, mine, expectations) if judge else []
        names = {x["name"] for _, x in again}
        triples += [(run_set, r, x) for r, x in again]
        triples += [(run_set, r, x) for r in mine for x in r["summary"].expectations
                    if x["name"] not in names]
    plans = plan.plan(triples)
    print("\nruns a cell each finding needs to be decided in 19 of 20 repeats, from the "
          f"spread of its values over {len({t[0] for t in triples})} run set(s):")
    if plans:
        _print_table(plan.rows(plans), ["finding", "server", "variant", "values", "bound",
                                        "spread", "from", "advice"])
    else:
        print("  none: these runs stored no expected finding")


def _baseline_server(runs: list[dict[str, Any]]) -> str | None:
    """The scenario's baseline_server (an upgrade), read from the runs' scenario file."""
    for r in runs:
        try:
            return load_scenario(r["details"]["scenario_file"]).model.baseline_server
        except (HarnessError, KeyError, TypeError):
            continue
    return None


def cmd_compare(a: argparse.Namespace) -> int:
    from .analysis import compare as cmp

    limits = cmp.Limits(alpha=a.alpha, noise=a.noise / 100, max_cv=a.max_cv / 100)
    metrics = [*cmp.BUILTIN, *(cmp.parse_metric(m) for m in a.metric or [])]
    store = open_store(a.results)
    _check_compare_flags(a)
    if a.run_sets:
        base, cand, bname, cname = cmp.stored_groups(store, a.run_sets, a.variants)
        run_set, rule = a.run_sets[-1], None
    else:
        found = _switchback_compare(a, store, limits)
        if found is not None:
            return _print_comparisons(a, store, *found, None)
        run_set, base, cand, bname, cname, rule = _compare_run(a, store, limits, metrics)
    metrics = [*cmp.headline_metrics([*base, *cand]), *metrics]
    b_by, c_by = cmp.by_server(base), cmp.by_server(cand)
    comparisons = [cmp.compare_runs(store, b_by[server], c_by[server], metrics, bname,
                                    cname, server, limits) for server in b_by if server in c_by]
    if not comparisons:
        raise InputError(f"baseline ({', '.join(b_by) or 'no runs'}) and candidate "
                         f"({', '.join(c_by) or 'no runs'}) share no server")
    return _print_comparisons(a, store, run_set, comparisons, rule)


def _print_comparisons(a: argparse.Namespace, store: Any, run_set: str,
                       comparisons: list[Any], rule: Any) -> int:
    """The verdicts printed and saved as compare.json; the exit code."""
    out: dict[str, Any] = {"run_set": run_set,
                           "comparisons": [c.to_json() for c in comparisons]}
    if rule is not None:
        out["sequential"] = rule.to_json()
    folder = _report_dir(store, run_set)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "compare.json").write_text(json.dumps(out, indent=2))
    from .report import compare_html
    page = compare_html.write(out, folder)
    if a.json:
        print(json.dumps(out, indent=2))
    else:
        print()
        if rule is not None:
            print(rule.text())
            print("per metric, with the fixed-sample statistics on the same runs:")
        for c in comparisons:
            print(c.text())
        print(f"saved: {folder / 'compare.json'}, {page}")
    if rule is not None:
        return {"worse": 3, "undecided": 4}.get(rule.verdict, 0)
    codes = [c.exit_code for c in comparisons]
    return 3 if 3 in codes else 4 if 4 in codes else 0


def _switchback_compare(a: argparse.Namespace, store: Any, limits: Any
                        ) -> tuple[str, list[Any]] | None:
    """``--design`` switchback (or auto, where the options allow it): the run set and
    its comparisons; None when the interleaved design is to run instead."""
    from . import switchback

    if a.design == "interleaved" or not a.scenario:
        return None
    sc, pair = _compare_pair(a, load_scenario(a.scenario))
    select_variants(sc, RunOptions(variants=pair))  # an unknown one: the same error as runs
    why = switchback.why_not(sc, pair) or _switchback_flags(a)
    if why:
        if a.design == "switchback":
            raise InputError(f"--design switchback: {a.scenario}: {why}")
        print(f"design: interleaved runs ({why})", file=sys.stderr)
        return None
    diff = switchback.differing(sc, pair)
    progress = Progress(quiet=a.quiet)
    progress.log(f"design: switchback, {a.windows} windows of {a.window_s} s on one server "
                 f"(options that differ: {', '.join(diff) or 'none'})")
    opts = RunOptions(servers=a.server or [], variants=[switchback.VARIANT],
                      disposable_confirmed=a.i_know_this_is_disposable,
                      measure_lock=not a.no_measure_lock)
    runner = Runner(switchback.scenario(sc, pair, a.window_s, a.windows), store, opts,
                    progress)
    runner.run()
    from .analysis import switchback as sb
    runs = store.runs(run_set=runner.run_set)
    refused = [why for r in runs if (why := sb.refusal(store.events(r["run_id"])))]
    if refused and a.design == "auto":
        progress.log(f"design: interleaved runs (switchback refused: {refused[0]})")
        return None
    bname, cname = (a.baseline, a.candidate) if a.baseline else (pair[0], pair[1])
    return runner.run_set, [sb.compare_run(store, r, bname, cname, limits) for r in runs]


def _check_compare_flags(a: argparse.Namespace) -> None:
    if a.run_sets:
        if a.scenario or a.baseline or a.candidate:
            raise InputError("--run-sets compares stored runs: give no scenario, --baseline "
                             "or --candidate")
        if len(a.run_sets) > 2:
            raise InputError("--run-sets: one run set (with --variants) or two")
        if a.budget:
            raise InputError("--budget runs a comparison: not with --run-sets")
    if a.watch and not a.budget:
        raise InputError("--watch names the figure --budget stops on: give --budget too")


def _switchback_flags(a: argparse.Namespace) -> str | None:
    if a.budget:
        return "--budget stops interleaved runs; a switchback runs its --windows"
    from .analysis.switchback import MIN_QUADS, least_p

    if a.windows % 4 or a.windows < 4 * MIN_QUADS:
        return (f"--windows {a.windows}: a multiple of 4 (whole quads, the unit of the "
                f"test), at least {4 * MIN_QUADS} ({MIN_QUADS} quads)")
    if least_p(a.windows // 4) >= a.alpha:
        fewest = next(n for n in range(MIN_QUADS, 64) if least_p(n) < a.alpha)
        return (f"--windows {a.windows}: {a.windows // 4} quads cannot give p < {a.alpha} "
                f"(their least p is {least_p(a.windows // 4):.3g}); at least {4 * fewest}")
    return None


def _compare_pair(a: argparse.Namespace, sc: Any) -> tuple[Any, list[str]]:
    """The scenario to run (with the my.cnf files as variants) and its two variants."""
    from .analysis import compare as cmp

    if bool(a.baseline) != bool(a.candidate):
        raise InputError("--baseline and --candidate go together")
    if a.baseline and a.variants:
        raise InputError("give --baseline/--candidate files or --variants, not both")
    if a.baseline:
        sc, pair = cmp.with_cnf_variants(sc, a.baseline, a.candidate), ["baseline",
                                                                         "candidate"]
    elif a.variants or len(sc.model.variants) == 2:
        pair = list(a.variants or sc.model.variants)
    else:
        raise InputError(f"{a.scenario}: has {len(sc.model.variants)} variant(s); name two "
                         "with --variants BASELINE CANDIDATE, or give --baseline and "
                         "--candidate my.cnf files")
    return _kept_awake(sc), pair


def _kept_awake(sc: Any) -> Any:
    """The scenario with its CPUs kept awake during runs, unless it says otherwise: idle
    CPUs that wake slowly are the largest noise a comparison meets on a VM (README,
    Noise)."""
    if "cpu_keepalive" in sc.model.model_fields_set:
        return sc
    print("cpu keep-alive: on for the comparison (the scenario does not set "
          "cpu_keepalive; false there turns it off)", file=sys.stderr)
    return sc.amended(lambda data: data.update(cpu_keepalive=True))


def _compare_run(a: argparse.Namespace, store: Any, limits: Any, metrics: list[Any]
                 ) -> tuple[str, list[dict[str, Any]], list[dict[str, Any]], str, str, Any]:
    """Baseline and candidate run interleaved: the run set, each side's runs and names
    (``metrics`` gains the scenario's compare_metrics), and with ``--budget`` the
    sequential rule that stopped them."""
    from .analysis import compare as cmp

    if not a.scenario:
        raise InputError("compare: give a scenario (with --baseline/--candidate my.cnf "
                         "files or --variants) or --run-sets")
    sc, pair = _compare_pair(a, load_scenario(a.scenario))
    metrics += [cmp.parse_metric(m) for m in sc.model.compare_metrics]
    if a.repetitions < limits.min_runs:
        print(f"warning: {a.repetitions} repetitions cannot give a verdict (at least "
              f"{limits.min_runs} per side)", file=sys.stderr)
    progress = Progress(quiet=a.quiet)
    opts = RunOptions(servers=a.server or [], variants=pair, repetitions=a.repetitions,
                      interleave=True, disposable_confirmed=a.i_know_this_is_disposable,
                      measure_lock=not a.no_measure_lock)
    rule = _sequential(a, sc, pair, progress) if a.budget else None
    if rule is not None:
        opts.repetitions, opts.stop_rule = SEQUENTIAL_MAX_ROUNDS, rule
    runner = Runner(sc, store, opts, progress)
    runner.run()
    runs = store.runs(run_set=runner.run_set)
    base = [r for r in runs if r["variant"] == pair[0]]
    cand = [r for r in runs if r["variant"] == pair[1]]
    bname, cname = (a.baseline, a.candidate) if a.baseline else (pair[0], pair[1])
    return runner.run_set, base, cand, bname, cname, rule


SEQUENTIAL_MAX_ROUNDS = 200  # a cap; the budget ends a comparison long before


def _sequential(a: argparse.Namespace, sc: Any, pair: list[str], progress: Progress) -> Any:
    """The stopping rule of ``--budget``/``--effect`` (one server: its rounds are what
    the looks count)."""
    from .analysis.sequential import Budget, SequentialRule, parse_duration

    servers = a.server or [s.name or s.title for s in sc.model.servers]
    if len(servers) != 1:
        raise InputError(f"--budget: one server at a time ({len(servers)} given; pick one "
                         "with --server)")
    try:
        budget = Budget(parse_duration(a.budget))
    except ValueError as e:
        raise InputError(f"--budget {e}") from None
    if not 0 < a.effect < 100:
        raise InputError(f"--effect {a.effect:g}: a percentage above 0, e.g. 3")
    figures = workloads.plugin(sc.model.workload.kind).figures
    if a.watch and not any(a.watch in (f.regress, f.key) for f in figures):
        raise InputError(f"--watch {a.watch}: the {sc.model.workload.kind} workload's figures "
                         "are " + ", ".join(str(f.regress or f.key) for f in figures))
    return SequentialRule(pair[0], pair[1], a.effect / 100, budget, alpha=a.alpha,
                          log=progress.log, watch=a.watch)


def cmd_regress(a: argparse.Namespace) -> int:
    from .analysis import regress

    store = open_store(a.results)
    runs = store.runs(scenario=a.scenario)
    if not runs:
        raise InputError("no stored runs" + (f" of scenario {a.scenario}" if a.scenario else ""))
    metrics = a.metric or list(regress.METRICS)
    kw = {"window": a.window, "p_value": a.p_value, "min_points": a.min_points,
          "min_magnitude": None if a.min_magnitude is None else a.min_magnitude / 100}
    changes = regress.detect(runs, metrics=metrics, since=a.since, **kw)
    seen = regress.sensitivity(runs, metrics=metrics, **kw)
    flips = regress.finding_changes(runs, since=a.since)
    new_regressions = [c for c in changes if c.regression and c.new] + \
        [f for f in flips if f.regression and f.new]
    if a.json:
        print(json.dumps({"changes": [c.to_json() for c in changes],
                          "finding_changes": [c.to_json() for c in flips],
                          "new_regressions": len(new_regressions), "sensitivity": seen},
                         indent=2, default=str))
    else:
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
    return 3 if new_regressions else 0


def cmd_snapshots(a: argparse.Namespace) -> int:
    if a.action == "remove":
        gone, busy = snapshot.remove(a.key)
        print(f"removed {len(gone)} snapshot(s)"
              + (f"; {len(busy)} in use now, kept: {', '.join(busy)}" if busy else ""))
        return 0
    if a.action == "prune":
        budget = snapshot.parse_size(a.budget, "--budget") if a.budget \
            else snapshot.budget_bytes()
        done = snapshot.prune(budget, dry_run=a.dry_run, say=print)
        print(f"{'would remove' if a.dry_run else 'removed'} {len(done.removed)}; the cache's "
              f"snapshots and kept sandboxes {'would ' * a.dry_run}take "
              f"{snapshot.size_text(done.total)} of a budget of {snapshot.size_text(budget)}")
        return 0
    for s in snapshot.listing():
        print(f"{s['key']}  {s['bytes'] / 1e6:9.1f} MB  {s['created_at']}  "
              f"prepare {s.get('prepare_s', 0):.1f} s  last used "
              f"{datetime.fromtimestamp(s['last_used']):%Y-%m-%d %H:%M}  {s['path']}")
    return 0


def cmd_export(a: argparse.Namespace) -> int:
    store = open_store(a.results)
    r = _get_run(store, a.run_id)
    try:
        out = open(a.output, "w", newline="") if a.output else sys.stdout
    except OSError as e:
        raise InputError(f"-o {a.output}: cannot write it: {e.strerror or e}") from None
    origin = _clock_origin(r)
    try:
        w = csv.writer(out)
        w.writerow(["run_id", "t", "time", "source", "metric", "labels", "value"])
        for s in store.series(r["run_id"]):
            labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))
            for t, v in s.points():
                wall = datetime.fromtimestamp(origin + t, UTC).isoformat(timespec="milliseconds")
                w.writerow([r["run_id"], f"{t:.3f}", wall, s.source, s.metric, labels,
                            repr(v)])
    finally:
        if a.output:
            out.close()
    return 0


def cmd_artifacts(a: argparse.Namespace) -> int:
    store = open_store(a.results)
    r = _get_run(store, a.run_id)
    names = store.artifact_names(r["run_id"])
    if not names:
        raise InputError(f"run {r['run_id']}: no files in the store (stored before format "
                         f"3, or lost with its run); its folder: {r['artifacts']}")
    if a.name:
        data = store.artifact(r["run_id"], a.name)
        if data is None:
            raise InputError(f"run {r['run_id']} has no file {a.name!r}; it has: "
                             + ", ".join(n for n, _ in names))
        sys.stdout.buffer.write(data)
        return 0
    if a.output:
        return _write_artifacts(store, r["run_id"], names, Path(a.output))
    _print_table([{"name": n, "bytes": size} for n, size in names], ["name", "bytes"])
    left = (r["details"] or {}).get("artifacts_only_in_folder")
    if left:
        print(f"only in {r['artifacts']}: {', '.join(left)}")
    return 0


def _write_artifacts(store: Any, run_id: str, names: list[tuple[str, int]], out: Path) -> int:
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


def _clock_origin(r: dict[str, Any]) -> float:
    """Wall-clock time (epoch s) of a run's t = 0: stored with the run, or for runs
    stored before it was, the run's start (within the moment it took to begin)."""
    origin = (r.get("details") or {}).get("clock_origin")
    if origin is not None:
        return float(origin)
    return datetime.fromisoformat(r["started_at"]).timestamp()


def cmd_store(a: argparse.Namespace) -> int:
    if a.action == "migrate":
        return _store_migrate(a.results)
    store = open_store(a.results)
    problems = store.check()
    stale = store.stale_runs()
    dead = [run_id for run_id, _why, sure in stale if sure]
    for p in problems:
        print(f"problem: {p}")
    for run_id, why, sure in stale:
        fixed = " - marked interrupted" if sure and a.repair else ""
        print(f"{'stale' if sure else 'running'}: run {run_id}: {why}{fixed}")
    if a.repair and dead:
        store.mark_interrupted(dead)
    left = len(problems) + (0 if a.repair else len(dead))
    if dead and not a.repair:
        print(f"{len(dead)} run(s) left running by a dead harness: 'harness store check "
              "--repair' marks them interrupted")
    print(f"{store._safe_url()}: {'ok' if not left else f'{left} problem(s)'}")
    return 1 if left else 0


def _store_migrate(url: str | None) -> int:
    from .store import migrate
    from .store.schema import FORMAT_VERSION
    store = open_store(url, migrating=True)
    steps = migrate.pending(store.format_version)
    if not steps:
        print(f"{store._safe_url()}: format version {FORMAT_VERSION}, nothing to do")
        return 0
    if not migrate.upgrade(store):
        print(f"{store._safe_url()}: format version {FORMAT_VERSION} (another process "
              "migrated it meanwhile)")
    return 0


# --- parser -------------------------------------------------------------------------------

def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port}: a port is 1 to 65535")
    return port


def _since(text: str) -> str:
    """An ISO date or time, as the store's started_at compares (UTC when no zone)."""
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an ISO date or time (2026-11-24, 2026-11-24T06:00)") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC).isoformat()


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{n}: at least 1")
    return n


def _probability(text: str) -> float:
    try:
        p = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < p < 1:
        raise argparse.ArgumentTypeError(f"{p}: between 0 and 1")
    return p


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="harness",
        description="Benchmark MySQL, Percona Server and MariaDB builds in sandboxes with "
                    "sysbench, and keep every number in a results store.",
        epilog="Exit codes: 0 ok, 1 a run failed, 2 bad input, 130 interrupted. "
               "Results default to harness.db in the checkout's results/ (else "
               "/var/lib/mysql-harness/results for root, ~/.local/share/mysql-harness/"
               "results for others), from any folder; HARNESS_RESULTS moves it. "
               "Server builds and sandboxes live under ~/.cache/mysql-harness, or "
               "/var/cache/mysql-harness for root (HARNESS_CACHE); its snapshots and "
               "stopped kept sandboxes are pruned past HARNESS_CACHE_BUDGET (default "
               f"{snapshot.DEFAULT_BUDGET}). Two harness runs on one host share the cache "
               "through locks, and measure one at a time (the measurement lock in "
               "/run/lock; HARNESS_MEASURE_LOCK moves it, =off or --no-measure-lock "
               "measures beside anything).")
    p.add_argument("--version", action="version", version=f"harness {__version__}")
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND")

    def results_arg(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--results", metavar="URL", default=os.environ.get("HARNESS_STORE"),
                        help="results store: any SQLAlchemy URL, e.g. "
                             "mysql+pymysql://user@host/db (default: $HARNESS_STORE, else "
                             "harness.db in the results folder); prefer HARNESS_STORE for "
                             "URLs with a "
                             "password, so it stays out of the process list")

    r = sub.add_parser("run", help="run a scenario: every server x variant x repetition",
                       description="Run a scenario file. Prints run ids, progress while "
                                   "preparing and running, and a summary table.")
    r.add_argument("scenario", help="scenario YAML file (see scenarios/)")
    r.add_argument("--server", action="append", metavar="NAME",
                   help="run on this catalog server instead of the scenario's servers "
                        "(repeatable; see 'harness servers list')")
    r.add_argument("--basedir", action="append", metavar="DIR",
                   help="run on an unpacked MySQL, Percona Server or MariaDB tarball "
                        "(repeatable; with --server, replaces the scenario's servers)")
    r.add_argument("--variant", action="append", metavar="NAME",
                   help="run only this variant (repeatable)")
    r.add_argument("--repetitions", type=int, metavar="N", help="override the scenario's")
    r.add_argument("--target", default="local",
                   help="where servers run: local (sandboxes on this host, the default), "
                        "docker (a container per server, from the images of 'harness images "
                        "build'; dockerd is started when none runs), or ansible:INVENTORY "
                        "(lab hosts, by the playbooks in ansible/; the servers are spread "
                        "over the hosts of its mysql_servers group and run in parallel; "
                        "ansible:INVENTORY@HOST pins one host)")
    r.add_argument("--run-set", help=argparse.SUPPRESS)  # a lab host's share of a matrix
    r.add_argument("--fail-fast", action="store_true", help="stop at the first failed run")
    r.add_argument("--keep", action="store_true",
                   help="leave each sandbox running at the end, to inspect it (prints how "
                        "to connect; 'harness sandboxes list|stop|remove' manage them; not "
                        "after Ctrl-C)")
    r.add_argument("--interleave", action="store_true",
                   help="run every cell once, then again in reverse (A B, B A, A B ...), so "
                        "drift of the machine hits every variant alike (the scenario's "
                        "interleave: true)")
    r.add_argument("--scale", type=float, metavar="F",
                   help="multiply the scenario's sizes by F for larger hardware: datasets, "
                        "buffer pool and redo log sizes, the memory limit, the swap file, "
                        "the balloon, side-load sizes, vm.*_bytes and expectations marked "
                        "scaled "
                        "(durations, threads and IO limits stay)")
    r.add_argument("--no-measure-lock", action="store_true", help=MEASURE_LOCK_HELP)
    r.add_argument("--i-know-this-is-disposable", action="store_true",
                   help="allow prepare, DROP TABLE, SET GLOBAL and write workloads on the "
                        "external servers (host: ...) that the scenario marks disposable: "
                        "true, and swap and vm.* sysctls on this host when its host: "
                        "says disposable: true; without both, the harness only reads from "
                        "servers it did not create and leaves the host alone")
    r.add_argument("--resume", metavar="RUN_SET",
                   help="complete an interrupted or partly failed run set: run only the "
                        "server x variant x repetition cells that have no ok run in it")
    r.add_argument("--no-collectors", action="store_true",
                   help="sample nothing but the workload (to measure collector overhead)")
    r.add_argument("--metrics-port", type=_port, metavar="PORT",
                   help="serve live Prometheus metrics on 127.0.0.1:PORT/metrics during the run")
    r.add_argument("--pushgateway", metavar="URL",
                   help="also push the live metrics to this Prometheus Pushgateway every 10 s")
    r.add_argument("--json", action="store_true", help="print the results as JSON")
    r.add_argument("--quiet", action="store_true", help="no progress output")
    results_arg(r)
    r.set_defaults(func=cmd_run)

    v = sub.add_parser("validate", help="check scenario files; report every problem")
    v.add_argument("files", nargs="+")
    v.add_argument("--target", default="local",
                   help="where the scenario would run (as for 'run'): a host_profile is "
                        "tried there, on each lab host of ansible:INVENTORY")
    v.set_defaults(func=cmd_validate)

    s = sub.add_parser("servers", help="the server catalog")
    ssub = s.add_subparsers(dest="servers_cmd", required=True, metavar="ACTION")
    sl = ssub.add_parser("list", help="list catalog servers and whether they are installed")
    sl.add_argument("--json", action="store_true")
    si = ssub.add_parser("install", help="install catalog servers into the cache (from "
                                         "HARNESS_MIRROR first), or a tarball by path")
    si.add_argument("names", nargs="+", metavar="NAME|FILE.tar.gz",
                    help="a catalog name, or a vendor tarball: installed as the catalog "
                         "build it is (by its checksum, else its own mysqld --version)")
    si.add_argument("--force", action="store_true", help="reinstall")
    s.set_defaults(func=cmd_servers)

    sb = sub.add_parser("sandboxes", help="sandboxes kept by 'harness run --keep'")
    sbsub = sb.add_subparsers(dest="sandboxes_cmd", required=True, metavar="ACTION")
    sbl = sbsub.add_parser("list", help="kept sandboxes: who kept them, build, port, "
                                        "running or stopped, how to connect")
    sbl.add_argument("--json", action="store_true")
    for action, what in (("stop", "shut mysqld down cleanly (the datadir stays)"),
                         ("remove", "stop it and remove its folder, datadir included")):
        sp = sbsub.add_parser(action, help=what)
        sp.add_argument("names", nargs="*", metavar="NAME", help="as 'list' shows them")
        sp.add_argument("--all", action="store_true", help="every sandbox you kept")
        sp.add_argument("--any-owner", action="store_true",
                        help="also those another user kept (with --all: everyone's)")
    sb.set_defaults(func=cmd_sandboxes)

    cp = sub.add_parser(
        "capture", help="the statements that capture every statement of a server of yours "
                        "in its slow log, for a replay",
        description="Print the SET GLOBAL statements that turn a server's slow log into a "
                    "capture of every statement (long_query_time = 0, and the version's "
                    "log_slow_* options), and those that turn it off. Nothing is run: on "
                    "a server the harness creates, a scenario's collectors: {slow_log: "
                    "{enabled: true}} captures the run itself into the run's slow.log.")
    cp.add_argument("--server", metavar="NAME", help="a catalog server (its version)")
    cp.add_argument("--flavor", choices=["mysql", "mariadb"], default="mysql",
                    help="your server's flavor (Percona Server: mysql)")
    cp.add_argument("--version", metavar="X.Y.Z", help="your server's version")
    cp.add_argument("--file", default="capture-slow.log",
                    help="the slow log file (default: %(default)s, in the datadir)")
    cp.set_defaults(func=cmd_capture)

    cn = sub.add_parser("cnf", help="a my.cnf written for one version, on others")
    csub = cn.add_subparsers(dest="cnf_cmd", required=True, metavar="ACTION")
    cc = csub.add_parser(
        "check", help="each option mysqld reads from FILE, on each --server: accepted, "
                      "renamed (to what), removed, or unknown",
        description="Judge each option a server build's mysqld reads from a my.cnf (its "
                    "groups: [mysqld], [server], [mysqld-X.Y], MariaDB's [mariadb...]; "
                    "!include and !includedir followed, relative ones from the file's "
                    "folder; read by the build's my_print_defaults and checked against its "
                    "mysqld --print-defaults), from the "
                    "build's own mysqld --verbose --help and a short table of renames "
                    "(harness/cnfcheck.py). Exit codes: 0 every option is taken as written; "
                    "3 some option is renamed or removed on a build (a scenario with "
                    "'translate: true' rewrites or drops them, and says so); 2 an option "
                    "no build knows (a typo?), or bad input.")
    cc.add_argument("file", help="the my.cnf")
    cc.add_argument("--server", action="append", required=True, metavar="NAME",
                    help="a catalog server to check it on (repeatable)")
    cc.add_argument("--from", dest="from_server", metavar="NAME",
                    help="the catalog server the file was written for: adds where its "
                         "defaults differ from each --server's")
    cc.add_argument("--json", action="store_true")
    cn.set_defaults(func=cmd_cnf)

    im = sub.add_parser("images", help="container images of catalog servers for --target "
                                       "docker")
    isub = im.add_subparsers(dest="images_cmd", required=True, metavar="ACTION")
    ib = isub.add_parser("build", help="build local images without a registry: a Debian "
                                       "minbase root (debootstrap, once) plus the catalog "
                                       "build and the libraries it loads")
    ib.add_argument("--server", action="append", metavar="NAME",
                    help="catalog server (repeatable; default: mariadb-10.11 and "
                         "mysql-5.7.29)")
    isub.add_parser("list", help="images the Docker provider can use here, and the official "
                                 "images it knows")
    im.set_defaults(func=cmd_images)

    rs = sub.add_parser("runs", help="list stored runs")
    rs.add_argument("--scenario")
    rs.add_argument("--run-set")
    rs.add_argument("--json", action="store_true")
    results_arg(rs)
    rs.set_defaults(func=cmd_runs)

    sh = sub.add_parser("show", help="one run: summary, events, details")
    sh.add_argument("run_id", help="a run id (or an unambiguous prefix)")
    sh.add_argument("--json", action="store_true")
    results_arg(sh)
    sh.set_defaults(func=cmd_show)

    rp = sub.add_parser("report", help="plots and a self-contained HTML report of run sets "
                        "or runs, with the phase table and expected findings")
    rp.add_argument("ids", nargs="+", metavar="RUN_SET_OR_RUN_ID",
                    help="run sets (printed by harness run) and/or run ids")
    rp.add_argument("-o", "--output", metavar="DIR",
                    help="where PNGs and report.html go (default results/reports/RUN_SET/)")
    rp.add_argument("--no-plots", action="store_true", help="only the phase table")
    rp.add_argument("--judge", metavar="SCENARIO",
                    help="judge the runs' stored series again with this scenario file's "
                         "metric: series expectations (e.g. after changing a threshold); "
                         "printed, not stored")
    rp.add_argument("--plan", action="store_true",
                    help="from the spread of each expected finding's values over these "
                         "run sets (repeats of one experiment), how many runs a cell it "
                         "needs to be decided in 19 of 20 repeats")
    results_arg(rp)
    rp.set_defaults(func=cmd_report)

    cp = sub.add_parser(
        "compare", help="A/B verdict: is a candidate my.cnf better, worse or the same?",
        description="Run baseline and candidate on the scenario's servers - by switchback "
                    "on one running server when the options that differ are dynamic, else "
                    "as whole runs interleaved (A B, B A, ...) - or read two stored run "
                    "sets, then judge each metric: interleaved runs by the median ratio "
                    "with a bootstrap 95% CI and a Mann-Whitney p-value; switchback "
                    "windows by the paired ratio with a randomisation test on the quads' "
                    "random orientations and its interval. "
                    "The CPUs are kept awake during runs unless the scenario sets "
                    "cpu_keepalive; each comparison says where its runs' noise is and "
                    "whether more or longer runs would help. "
                    "Exit code 0: no regression; 3: the candidate is worse on some metric; "
                    "4: no verdict (too few runs, or too noisy).")
    cp.add_argument("scenario", nargs="?", help="scenario YAML file (its workload and data)")
    cp.add_argument("--baseline", metavar="MY_CNF", help="the current my.cnf ([mysqld])")
    cp.add_argument("--candidate", metavar="MY_CNF", help="the proposed my.cnf")
    cp.add_argument("--variants", nargs=2, metavar=("BASELINE", "CANDIDATE"),
                    help="two variants of the scenario (or of the stored run set)")
    cp.add_argument("--run-sets", nargs="+", metavar="RUN_SET",
                    help="compare stored runs instead: two run sets, or one with --variants")
    cp.add_argument("--server", action="append", metavar="NAME",
                    help="run on this catalog server instead of the scenario's (repeatable)")
    cp.add_argument("--repetitions", type=int, default=5, metavar="N",
                    help="runs per side (default 5; at least 4 for a verdict)")
    cp.add_argument("--metric", action="append",
                    metavar="[SOURCE/]METRIC[:rate|median]:higher|lower",
                    help="also judge a stored series over the measured part: its rate per "
                         "second (a counter; the default for *_total names) or its median "
                         "(a gauge), e.g. global_status/mysql_global_status_innodb_data_reads"
                         ":rate:lower (the scenario's compare_metrics are added)")
    cp.add_argument("--noise", type=float, default=100 * NOISE_DEFAULT, metavar="PCT",
                    help="changes smaller than this are never called (default %(default)s)")
    cp.add_argument("--max-cv", type=float, default=100 * MAX_CV_DEFAULT, metavar="PCT",
                    help="no verdict when a side's coefficient of variation (its outliers "
                         "left out) is above this, unless the sides are far apart "
                         "(default %(default)s)")
    cp.add_argument("--alpha", type=float, default=0.05,
                    help="significance level of the verdict's test: Mann-Whitney on "
                         "runs, the randomisation test on switchback quads (default 0.05)")
    cp.add_argument("--budget", metavar="DURATION",
                    help="sequential: run rounds (one run of each side, back to back, "
                         "A B then B A; each round a pair) until the tps "
                         "interval decides - better, worse, or no change larger than "
                         "--effect - or another round would not fit in DURATION (15m, "
                         "900s, 1h); the error rate holds however often it looks. Exit 4 "
                         "when undecided, with the power the last look had")
    cp.add_argument("--effect", type=float, default=3.0, metavar="PCT",
                    help="with --budget: the smallest change worth finding (default 3)")
    cp.add_argument("--watch", metavar="FIGURE",
                    help="with --budget: the figure the rounds stop on, by its regress "
                         "name (tps, p95_ms, statements_per_s ...); default the "
                         "workload's headline")
    cp.add_argument("--design", choices=("auto", "interleaved", "switchback"),
                    default="auto",
                    help="switchback: A and B alternate by SET GLOBAL on one running "
                         "server in --windows windows (quads ABBA or BAAB), judged on adjacent "
                         "windows paired; interleaved: whole runs, A B, B A, ...; auto "
                         "(default): switchback when every option that differs can change "
                         "at run time (the server refuses a static one at the first window "
                         "and interleaved runs follow), else interleaved")
    cp.add_argument("--window-s", type=_positive, default=10, metavar="S",
                    help="switchback: seconds per window (default 10)")
    cp.add_argument("--windows", type=_positive, default=32, metavar="N",
                    help="switchback: windows, a multiple of 4, at least 24 (default 32: "
                         "8 quads, each ABBA or BAAB at random)")
    cp.add_argument("--no-measure-lock", action="store_true", help=MEASURE_LOCK_HELP)
    cp.add_argument("--i-know-this-is-disposable", action="store_true",
                    help="as for 'harness run' (external servers marked disposable)")
    cp.add_argument("--json", action="store_true", help="print the verdicts as JSON")
    cp.add_argument("--quiet", action="store_true", help="no progress output")
    results_arg(cp)
    cp.set_defaults(func=cmd_compare)

    rg = sub.add_parser(
        "regress", help="find change points in the stored history (nightly regressions)",
        description="One value per ok run and metric (the figures each workload declares: "
                    f"{', '.join(REGRESS_METRICS)}) per history: runs of one "
                    "scenario, server, variant, target and host in start order. Change points "
                    "by Apache Otava's E-divisive with t-test merge. Each expected finding "
                    "whose decided outcome changed along a history is listed too "
                    "(reproduced <-> not reproduced; inconclusive verdicts are passed over). "
                    "Exit code 3 when a new regression or a newly lost finding is found "
                    "(its first run after the change started at or after --since; without "
                    "--since, any).")
    rg.add_argument("--scenario", metavar="NAME", help="only this scenario's runs")
    rg.add_argument("--since", metavar="DATE", type=_since,
                    help="ISO date or time: only changes whose first run after started "
                         "then or later are new")
    rg.add_argument("--metric", action="append",
                    choices=list(REGRESS_METRICS),
                    help="metric(s) to check (default all; a run is in the histories of "
                         "the metrics its workload reports)")
    rg.add_argument("--window", type=_positive, default=30, help="E-divisive split window in runs "
                    "(default 30)")
    rg.add_argument("--p-value", type=_probability, default=0.001,
                    help="significance (default 0.001)")
    rg.add_argument("--min-points", type=_positive, default=5,
                    help="runs needed before and after a change (default 5)")
    rg.add_argument("--min-magnitude", type=float, metavar="PCT",
                    help="smallest change reported, percent (default: twice the history's "
                         "run-to-run noise, at least 2)")
    rg.add_argument("--json", action="store_true", help="print the change points as JSON")
    results_arg(rg)
    rg.set_defaults(func=cmd_regress)

    sn = sub.add_parser("snapshots", help="dataset snapshots kept after a first prepare")
    sn.add_argument("action", choices=["list", "remove", "prune"], nargs="?", default="list",
                    help="list; remove (one, or all; one in use is kept); prune: remove the "
                         "least recently used snapshots and your stopped kept sandboxes "
                         "until the rest fit the budget")
    sn.add_argument("key", nargs="?", help="remove: one snapshot (default: all)")
    sn.add_argument("--budget", metavar="SIZE",
                    help="prune: the size to fit (like 20G; default HARNESS_CACHE_BUDGET, or "
                         f"{snapshot.DEFAULT_BUDGET})")
    sn.add_argument("--dry-run", action="store_true", help="prune: say what would go")
    sn.set_defaults(func=cmd_snapshots)

    ex = sub.add_parser("export", help="a run's samples in long format "
                                       "(run_id,t,time,source,metric,labels,value; t on the "
                                       "run clock, time the wall clock, UTC)")
    ex.add_argument("run_id")
    ex.add_argument("--format", choices=["csv"], default="csv")
    ex.add_argument("-o", "--output", metavar="FILE", help="default: stdout")
    results_arg(ex)
    ex.set_defaults(func=cmd_export)

    af = sub.add_parser("artifacts", help="a run's files, from the store itself (my.cnf, "
                                          "error log, variables, tool output)",
                        description="List the files stored with a run, print one, or write "
                                    "them all to a folder. They come from the store, so a "
                                    "shared store has them on every machine.")
    af.add_argument("run_id")
    af.add_argument("name", nargs="?", help="print this file (as 'list' names it)")
    af.add_argument("-o", "--output", metavar="DIR", help="write every file under DIR")
    results_arg(af)
    af.set_defaults(func=cmd_artifacts)

    st = sub.add_parser("store", help="results store maintenance")
    st.add_argument("action", choices=["check", "migrate"],
                    help="check: integrity of the store and runs left 'running' by a dead "
                         "harness process; migrate: upgrade a store of an older format "
                         "version in place")
    st.add_argument("--repair", action="store_true",
                    help="check: mark the runs whose harness process is gone 'interrupted'")
    results_arg(st)
    st.set_defaults(func=cmd_store)
    return p


def _sigterm(_signo: int, _frame: Any) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    a = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _sigterm)
    # A shell without job control starts background commands with SIGINT ignored (a
    # lab's nohup script, a CI step run with &); kill -INT must still stop a run cleanly.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return int(a.func(a))
    except HarnessError as e:
        print(f"error: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("\ninterrupted: partial results are stored with status 'interrupted'",
              file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
