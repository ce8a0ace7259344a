"""Planning a run set: the servers and variants asked for, each build resolved (catalog
builds installed), every cell's options checked against its build, the guard's decision,
side loads' programs found and the host profile tried, all before anything starts."""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import collectors, proc, workloads
from ..errors import InputError, MissingToolError, ScenarioError
from ..host import background, seekdisk, tuning
from ..host.profile import Limits, ProfileError, try_on_host
from ..paths import sandbox_dir
from ..procfs import meminfo_kb
from ..providers import external_build, is_lab, lab_hosts, starts_on_copies, try_profile_on
from ..scenario import LoadedScenario, OptionValue, ServerSpec
from ..server import catalog, cnfcheck, refs
from ..server.catalog import Build
from ..server.mycnf import (
    OFF_LIMITS,
    Refusal,
    file_refusal,
    fmt_value,
    never_why,
    norm,
    parse_size,
    read_as,
    unknown_file_options,
    unknown_variables,
)
from ..server.optionfile import OptionFile
from . import guard
from .options import RunOptions

if TYPE_CHECKING:
    from ..providers.ansible import Host as LabHost


@dataclass
class Cell:
    build: Build
    variant: str
    options: dict[str, OptionValue]
    spec: ServerSpec | None = None  # set for an external server
    # What translate: true renamed or dropped for this build.
    translation: list[cnfcheck.Verdict] = field(default_factory=list)
    # The variant's my.cnf as this build read it: files, groups, what was set aside.
    my_cnf: OptionFile | None = None


def select_servers(sc: LoadedScenario, opts: RunOptions) -> list[ServerSpec]:
    """--server (a name, a tarball's path, a folder) and --basedir together replace the
    scenario's list of servers; an unknown name fails before anything is installed."""
    named = [*(refs.parse(ref) for ref in opts.servers), *map(refs.folder, opts.basedirs)]
    specs = [ServerSpec(name=r.name) if r.name else ServerSpec(basedir=str(r.basedir))
             for r in named]
    return specs or list(sc.model.servers)


def select_variants(sc: LoadedScenario, opts: RunOptions) -> list[str]:
    unknown = [v for v in opts.variants if v not in sc.model.variants]
    if unknown:
        raise InputError(f"{sc.path}: unknown variant(s) {', '.join(unknown)}; the scenario "
                         f"has: {', '.join(sc.model.variants)}")
    return opts.variants or list(sc.model.variants)


def check_cells(sc: LoadedScenario, builds: list[Build], variants: list[str]) -> list[Cell]:
    """Every (build, variant) cell, or a ScenarioError naming each option a build rejects."""
    problems: list[str] = []
    cells = []
    for b in builds:
        for v in variants:
            cell = _cell(sc, b, v, problems)
            if cell is not None:
                cells.append(cell)
        problems += _build_problems(sc, b)
    if problems:
        raise ScenarioError(str(sc.path), sorted(set(problems)))
    return cells


def _cell(sc: LoadedScenario, b: Build, v: str, problems: list[str]) -> Cell | None:
    """Variant ``v`` on build ``b``: its options as the build reads them (translated
    where the scenario asks), each one it refuses added to ``problems``."""
    m = sc.model
    try:
        file = sc.variant_file(v, b)
    except ScenarioError as e:
        problems += e.problems
        return None
    options = sc.variant_options(v, file)

    def where(k: str) -> str:
        return (f"variants.{v}.mysqld.{k}" if k in m.variants[v].mysqld
                else f"mysqld.{k}" if k in m.mysqld else f"variants.{v}.my_cnf: {k}")
    key = functools.cache(functools.partial(read_as, b))  # each name resolved once
    problems += [_managed(where(k), *key(k)) for k in options if key(k)[0] in OFF_LIMITS]
    options, translation = translated(b, options) if m.translate else (options, [])
    for k in unknown_file_options(b, {k: x for k, x in options.items()
                                      if key(k)[0] not in OFF_LIMITS}):
        problems.append(f"{where(k)}: unknown to {b.name} ({b.flavor} {b.version}); "
                        f"{_unknown_why(b, k, options)}")
    problems += _values_refused(sc, b, v, {k: x for k, x in options.items()
                                           if key(k)[0] not in OFF_LIMITS}, where, problems)
    return Cell(b, v, {**_collectors_need(m.collectors, b), **options},
                translation=translation, my_cnf=file)


def _managed(where: str, key: str, shown: str) -> str:
    """The problem of an option the sandbox sets itself, or never takes (``key`` and
    ``shown`` as :func:`mycnf.read_as` gives them)."""
    return f"{where}{shown}: {never_why(key) or 'set by the sandbox itself; remove it'}"


def _build_problems(sc: LoadedScenario, b: Build) -> list[str]:
    """The options and variables of prepare_mysqld and config_changes ``b`` lacks."""
    m = sc.model
    problems = [f"prepare_mysqld.{k}: unknown to {b.name} ({b.flavor} {b.version})"
                for k in unknown_file_options(b, m.prepare_mysqld)]
    for i, ch in enumerate(m.config_changes):
        problems += [f"config_changes[{i}].set_global.{k}: unknown to {b.name} "
                     f"({b.flavor} {b.version})" for k in unknown_variables(b, ch.set_global)]
    return problems + workloads.dataset_build_problems(b, list(m.dataset))


def _collectors_need(settings: dict[str, Any], b: Build) -> dict[str, OptionValue]:
    """What the enabled collectors need mysqld started with (before the scenario's own
    options, which win), on a server the harness starts."""
    if b.init_method == "external":
        return {}
    return dict(collectors.start_options(settings, b.flavor, b.version_tuple))


def options_read(sc: LoadedScenario, cells: Sequence[Cell], variants: Sequence[str]
                 ) -> dict[str, dict[str, OptionValue]]:
    """Per variant, every option a server reads for it (the file as each build reads it:
    its groups, includes, prefixes), for the guard to name; a variant no cell reads
    (validate, builds not installed) by its [mysqld] section, and the guard refuses
    whatever else its file holds."""
    out: dict[str, dict[str, OptionValue]] = {v: {} for v in variants}
    for c in cells:
        out[c.variant].update(c.options)
    return {v: opts if any(c.variant == v for c in cells) else sc.variant_options(v)
            for v, opts in out.items()}


def translated(b: Build, options: dict[str, OptionValue]
                ) -> tuple[dict[str, OptionValue], list[cnfcheck.Verdict]]:
    """translate: true: the options as ``b`` takes them, and what was renamed or dropped."""
    verdicts = cnfcheck.judge(b, options, cnfcheck.installed_knows(b))
    changed = [v for v in verdicts
               if v.status in (cnfcheck.RENAMED, *cnfcheck.DROPPED, cnfcheck.IGNORED)]
    return dict(cnfcheck.translate(verdicts)), changed


def _unknown_why(b: Build, option: str, options: dict[str, OptionValue]) -> str:
    """Why ``b`` refuses ``option``: renamed (to what) or removed, when the cnf check
    knows, else that the version does not accept it."""
    (v,) = cnfcheck.judge(b, {option: options[option]}, cnfcheck.installed_knows(b))
    if v.status == cnfcheck.RENAMED:
        return (f"renamed to {v.new_name} ({v.note}): write {v.new_name} = {v.new_value}, or "
                "set translate: true in the scenario")
    if v.status in cnfcheck.DROPPED:
        # removed from this version, or not in it yet (5.6's options on 5.5): which, the
        # builds named say
        return (f"not in this version ({v.note}): remove it, or set translate: true in the "
                "scenario (it drops such options where a build lacks them)")
    return "this server version does not accept that option"


def _values_refused(sc: LoadedScenario, b: Build, v: str, options: dict[str, OptionValue],
                    where: Callable[[str], str], problems: list[str]) -> list[str]:
    """What no server here can honour (a pool larger than the memory), then, when the
    cell has no problem yet, what the build's mysqld would not start with."""
    pool_in_variant = any(norm(k) == "innodb_buffer_pool_size"
                          for k in sc.model.variants[v].mysqld)
    out = _impossible(options, f"variants.{v}.mysqld" if pool_in_variant else "mysqld")
    return out or ([] if problems else _refused(b, v, options, where))


def _refused(b: Build, v: str, options: dict[str, OptionValue],
             where: Callable[[str], str]) -> list[str]:
    """The value the build's mysqld would not start with, in its words (asked once per
    build and set of lines): a set value it refuses (9.7's sql_mode with
    NO_AUTO_CREATE_USER), a size its type cannot take."""
    if b.init_method == "external" or not options:
        return []
    lines = tuple(k if x is None else f"{k} = {fmt_value(x)}" for k, x in options.items())
    refusal = _refusal(b, lines)
    if refusal is None:
        return []
    at = next((k for k in options if refusal.option and norm(k) == refusal.option), None)
    return [f"{where(at) if at else f'variants.{v}'}: {b.name} ({b.flavor} {b.version}) "
            f"would not start with it: {refusal.said}"]


_REFUSALS: dict[tuple[str, tuple[str, ...]], Refusal | None] = {}


def _refusal(b: Build, lines: tuple[str, ...]) -> Refusal | None:
    key = (f"{b.name}:{b.mysqld}", lines)
    if key not in _REFUSALS:
        _REFUSALS[key] = file_refusal(b, list(lines))
    return _REFUSALS[key]


def _impossible(options: dict[str, OptionValue], where: str) -> list[str]:
    """Values no server on this host can honour (a buffer pool larger than the memory)."""
    pool = next((parse_size(v) for k, v in options.items()
                 if norm(k) == "innodb_buffer_pool_size"), None)
    mem_kb = meminfo_kb("MemTotal")
    mem_mb = mem_kb // 1024 if mem_kb else None
    if pool and mem_mb and pool > mem_mb << 20:
        return [f"{where}.innodb_buffer_pool_size: {pool >> 20} MB is larger than this host's "
                f"memory ({mem_mb} MB)"]
    return []


def plan(sc: LoadedScenario, opts: RunOptions, log: Callable[[str], None]) -> list[Cell]:
    """Resolve servers (installing catalog builds) and check every cell's options."""
    specs = select_servers(sc, opts)
    variants = select_variants(sc, opts)
    _fits_target(sc, opts.target, any(s.external for s in specs))  # before any install
    builds = [_build_of(sc, i, s, log) for i, s in enumerate(specs)]
    cells = check_cells(sc, builds, variants)
    by_name = {b.name: s for s, b in zip(specs, builds, strict=True) if s.external}
    for c in cells:
        c.spec = by_name.get(c.build.name)
    guard.check(sc, specs, builds, options_read(sc, cells, variants),
                opts.disposable_confirmed)
    _side_load_programs(sc)
    # Lab hosts are tuned by their os_tuning role (the same rule: disposable, and the
    # command line repeats it); this machine's settings are not theirs to change.
    if guard.check_host(sc, variants, sorted(by_name), opts.disposable_confirmed) and \
            not is_lab(opts.target):
        _sysctls_exist(sc, variants)
    for line in check_profile(sc, builds, opts.target, bool(by_name)):
        log(f"  host_profile {line}")
    return cells


def _build_of(sc: LoadedScenario, i: int, s: Any, log: Callable[[str], None]) -> Build:
    """servers[i]'s build: a catalog name (installed if need be), an external server,
    or a basedir."""
    if s.name:
        return catalog.resolve(s.name, log=log)
    if s.external:
        return external_build(s, f"{sc.path}: servers[{i}]")
    return catalog.detect_build(Path(s.basedir or ""))


def _side_load_programs(sc: LoadedScenario) -> None:
    """Every program a side load runs is on this host, or MissingToolError naming it."""
    for i, ld in enumerate(sc.model.side_loads):
        try:
            for program, hint in ld.programs():
                proc.which(program, hint)
        except MissingToolError as e:
            raise MissingToolError(f"{sc.path}: side_loads[{i}] ({ld.name}): {e}") from None


def _fits_target(sc: LoadedScenario, target: str, external: bool) -> None:
    """What the scenario does to this machine (swap file, balloon, CPU placement) only
    where its servers run here."""
    m, lab = sc.model, is_lab(target)
    if lab and m.host is not None and m.host.swap_file:
        raise InputError(f"{sc.path}: host.swap_file: not on lab hosts (--target "
                         f"{target}); give them swap in their provisioning")
    if m.cpu_placement is not None and (target != "local" or external):
        where = f"--target {target}" if target != "local" else "external servers"
        raise InputError(f"{sc.path}: cpu_placement: pins a mysqld that runs here as a "
                         f"local sandbox, not on {where}")
    if lab and m.host is not None and m.host.balloon:
        raise InputError(f"{sc.path}: host.balloon: this machine's memory only, not lab "
                         f"hosts' (--target {target})")
    _datadir_fits(sc, target, external)


def _datadir_fits(sc: LoadedScenario, target: str, external: bool) -> None:
    """A datadir dataset (a DBA's, a physical backup) starts a sandbox on a copy of it:
    only where the target's kind can (its ProviderKind says), never on external servers."""
    whole = [d for d in sc.model.dataset if d.whole_datadir]
    if whole and (external or not starts_on_copies(target)):
        where = "external servers" if external else f"--target {target}"
        raise InputError(f"{sc.path}: dataset {whole[0].database}: a {whole[0].kind} "
                         "dataset starts a local sandbox on a copy of the folder; not on "
                         f"{where} (run it with --target local)")


def _sysctls_exist(sc: LoadedScenario, variants: list[str]) -> None:
    """Every sysctl a variant sets exists on this host."""
    for v in variants:
        unknown = tuning.unknown_sysctls(list(sc.variant_sysctls(v)))
        if unknown:
            raise InputError(f"{sc.path}: variants.{v} (or host.sysctls): "
                             f"{', '.join(unknown)}: no such setting on this host "
                             f"(no {tuning.sysctl_file(unknown[0])})")


def check_profile(sc: LoadedScenario, servers: Sequence[Build | catalog.CatalogEntry],
                  target: str, external: bool) -> list[str]:
    """The host profile, if any: the ``servers`` give the threads it limits, and it
    applies where the sandboxes of ``target`` will run (how, a line each)."""
    profile = sc.model.host_profile
    if profile is None:
        return []
    if profile.background_cpu is not None:
        kinds: list[str] = list(profile.background_cpu.threads)
        for b in servers:
            why = background.unsupported(b.flavor, catalog.version_tuple(b.version), kinds)
            if why:
                raise InputError(f"{sc.path}: host_profile.background_cpu: not on {b.name}: "
                                 f"{why}")
    lines = []
    if profile.disk is not None:
        why = ("a model disk is made here, under local sandboxes" if target != "local"
               or external else seekdisk.unavailable())
        if why:
            raise InputError(f"{sc.path}: host_profile.disk: {why}"
                             + (f" (not --target {target})" if target != "local" else ""))
        g = profile.disk.geometry()
        lines.append(f"on this host: the datadir on a model disk ({g.seek_ms:g} ms a seek, "
                     f"{g.mbps:g} MB/s)")
    return [ln for ln in try_profile(sc, profile.limits(), target, external)
            if not ln.endswith(": ")] + lines


def try_profile(sc: LoadedScenario, limits: Limits, target: str,
                external: bool) -> list[str]:
    """Apply the host profile once where the sandboxes of ``target`` will run (this
    machine, or each lab host) and take it away: how each controller applies there, or
    ProfileError, before anything is provisioned."""
    def where(h: str, got: dict[str, Any]) -> str:
        return f"on {h}: " + ", ".join(f"{c} on cgroup {v}"
                                       for c, v in got.get("cgroup", {}).items())
    try:
        if not is_lab(target):
            return [] if external else [where("this host", try_on_host(
                limits, sandbox_dir()))]
        out = []
        for h in lab_hosts(target):
            _profile_off_host(sc, h)
            out.append(where(h.name, try_profile_on(target, h, limits, lambda _m: None)))
        return out
    except ProfileError as e:
        raise ProfileError(f"{sc.path}: {e}") from None


def _profile_off_host(sc: LoadedScenario, h: LabHost) -> None:
    """A side load in the server's cgroups runs on the controller: only where the lab
    host is this machine."""
    for i, ld in enumerate(sc.model.side_loads):
        if ld.in_server_cgroup and not h.local:
            raise ProfileError(f"side_loads[{i}] ({ld.name}).in_server_cgroup: lab host "
                               f"{h.name} is another machine, and side loads run on this "
                               "one; its cgroups are out of their reach")
