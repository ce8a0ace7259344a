"""The ownership guard: what the harness may do to a server it did not create.

A server the harness creates (a sandbox) is its own to prepare, drop, restart and wipe.
An external server (``servers: [{host: ...}]``) is somebody else's: the harness only
reads from it - a read-only workload on data that is already there, side loads and
collectors - unless the scenario marks it ``disposable: true`` *and* the command line
repeats it with ``--i-know-this-is-disposable``. Every refused step is named, with the
field that asks for it, before anything runs.

Never allowed on an external server, disposable or not: a restart (a my.cnf option
that is not dynamic), a datadir snapshot or restore, and a host profile (cgroup limits
on a mysqld process the harness did not start).
"""
from __future__ import annotations

import pymysql

from ..collectors import enabled as enabled_collectors
from ..errors import OwnershipError
from ..providers import external_endpoint as endpoint_of
from ..scenario import LoadedScenario, OptionValue, ServerSpec
from ..server import grants
from ..server.catalog import Build
from ..server.mysql import connection
from ..workloads import verify_dataset

FLAG = "--i-know-this-is-disposable"


def refusals(sc: LoadedScenario, spec: ServerSpec, where: str, build: Build,
             cells_options: dict[str, dict[str, OptionValue]], confirmed: bool) -> list[str]:
    """Each step the scenario asks of external server ``spec`` that is refused."""
    m = sc.model
    out: list[str] = []
    if m.host_profile is not None:
        out.append("host_profile: cgroup limits apply to a mysqld the harness starts on this "
                   "host; run the profile on a sandbox or limit the server's host yourself")
    if "between_runs" in m.model_fields_set and m.between_runs != "warmup":
        out.append(f"between_runs: {m.between_runs} needs a server the harness started "
                   "(external servers keep running between runs; use warmup)")
    if spec.disposable and confirmed:
        return out
    ep = endpoint_of(spec, where)
    for d in m.dataset:
        wrong = verify_dataset(ep, d)
        if wrong:
            out.append(f"dataset {d.database}: prepare (create and load its "
                       f"{d.kind} tables, dropping broken ones) - it is not there as "
                       f"declared: {wrong[0]}")
    return out + writes(sc, cells_options)


def writes(sc: LoadedScenario, cells_options: dict[str, dict[str, OptionValue]]) -> list[str]:
    """Every step of the scenario that writes to a server or changes its state, each as
    its field and reason, read from what each workload, side load and collector
    declares (known without contacting the server)."""
    m = sc.model
    base = sc.path.parent
    out = list(m.workload.writes(base))
    for i, ld in enumerate(m.side_loads):
        out += [f"side_loads[{i}] ({ld.name}).{why}" for why in ld.writes(base)]
    out += collector_refusals(sc)
    for variant, options in cells_options.items():
        if options:
            out.append(f"variants.{variant}: SET GLOBAL {', '.join(sorted(options))} (mysqld "
                       "options of the scenario or variant)")
        elif m.variants[variant].my_cnf:  # fail closed: whatever the file holds is set
            out.append(f"variants.{variant}.my_cnf: SET GLOBAL of the options in "
                       f"{m.variants[variant].my_cnf}")
    for i, ch in enumerate(m.config_changes):
        out.append(f"config_changes[{i}]: SET GLOBAL "
                   f"{', '.join(sorted({*ch.set_global, *ch.reset}))}")
    return out


def collector_refusals(sc: LoadedScenario) -> list[str]:
    """Enabled collectors that do not say they only read (or adapt: change server state
    only on a server the harness owns, and read what is there elsewhere)."""
    return [f"collectors.{cls.name}: it does not declare that it only reads "
            "(disable it: collectors: {" + cls.name + ": {enabled: false}})"
            for cls, _ in enabled_collectors(sc.model.collectors)
            if cls.server_access not in ("reads", "adapts")]


def check(sc: LoadedScenario, specs: list[ServerSpec], builds: list[Build],
          variants: dict[str, dict[str, OptionValue]], confirmed: bool) -> None:
    """Raise an OwnershipError listing every refused step on every external server."""
    lines = []
    for i, (spec, build) in enumerate(zip(specs, builds, strict=True)):
        if not spec.external:
            continue
        where = f"servers[{i}]"
        lines += _account_refused(sc, spec, where)
        bad = refusals(sc, spec, where, build, variants, confirmed)
        if bad:
            lines += _refused(sc, spec, where, bad, confirmed)
    if lines:
        raise OwnershipError("\n".join(lines))


def _account_refused(sc: LoadedScenario, spec: ServerSpec, where: str) -> list[str]:
    """A server whose scenario says ``read_only_account: true``: refused (one line per
    privilege) unless the server lists none beyond reading for the account."""
    if not spec.read_only_account:
        return []
    try:
        with connection(endpoint_of(spec, where), timeout=10) as c:
            bad = grants.account_writes(c)
    except pymysql.err.MySQLError as e:
        bad = [f"unknown (cannot connect: {e})"]
    if not bad:
        return []
    return [f"{sc.path}: {where}.read_only_account ({spec.title}): refusing - "
            f"{spec.user}@{spec.host}:{spec.port} may write:", *(f"  {b}" for b in bad)]


def check_static(sc: LoadedScenario, specs: list[ServerSpec],
                 variants: dict[str, dict[str, OptionValue]]) -> None:
    """What ``validate`` can tell without contacting the servers: on each external server
    not marked disposable, every declared write is refused."""
    lines = []
    for i, spec in enumerate(specs):
        if spec.external and not spec.disposable:
            bad = writes(sc, variants)
            if bad:
                lines += _refused(sc, spec, f"servers[{i}]", bad, False)
    if lines:
        raise OwnershipError("\n".join(lines))


def _refused(sc: LoadedScenario, spec: ServerSpec, where: str, bad: list[str],
             confirmed: bool) -> list[str]:
    """The lines naming the server, why it is refused, and each refused step."""
    if spec.disposable and not confirmed:
        why = (f"it is marked disposable: true in the scenario, but the command line did "
               f"not repeat it ({FLAG})")
    elif spec.disposable:
        why = "not even on a disposable server"
    else:
        why = (f"the harness did not create it; if it is a scratch server, mark it "
               f"disposable: true in the scenario and pass {FLAG}")
    return [f"{sc.path}: {where} ({spec.title}, {spec.user}@{spec.host}:{spec.port}): "
            f"refusing - {why}:", *(f"  {b}" for b in bad)]


def check_host(sc: LoadedScenario, variants: list[str], elsewhere: list[str],
               confirmed: bool) -> bool:
    """Whether the scenario tunes this host (swap file, vm.* sysctls, balloon); raise an
    OwnershipError when that is refused: servers that run elsewhere would not feel it,
    and this host must be marked disposable and the command line repeat it."""
    m = sc.model
    if m.host is None or not (m.host.swap_file or m.host.balloon or
                              any(sc.variant_sysctls(v) for v in variants)):
        return False
    where = f"{sc.path}: host"
    if elsewhere:
        raise OwnershipError(f"{where}: host tuning changes this machine, and "
                             f"{', '.join(elsewhere)} runs elsewhere")
    if not confirmed:
        raise OwnershipError(f"{where}: refusing to change this host's settings (swap "
                             "file, vm.* sysctls, balloon): the scenario marks it disposable: "
                             f"true, but the command line did not repeat it ({FLAG})")
    return True
