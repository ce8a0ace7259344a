"""Providers start and stop servers: local sandboxes (the default), Docker containers,
lab hosts managed by Ansible, and the external servers a scenario names.

Each target kind is a module declaring ``PLUGIN = ProviderKind(...)``, found by one
``discover()``; what a provider or a server can do is declared on it
(``Provider.tunes_host``, ``snapshots``, ``seeds``; ``Server.owned``), never probed.
Code outside this package asks through the names below and never imports a provider's
module or tests a provider's class."""
from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .base import Provider, ProviderKind, Server

if TYPE_CHECKING:
    from ..host.profile import Limits
    from ..scenario import ServerSpec
    from ..server.catalog import Build
    from ..server.mysql import Endpoint
    from .ansible import Host as LabHost


@functools.cache
def kinds() -> dict[str, ProviderKind]:
    """Every target kind, by the word of ``--target`` that names it."""
    from ..model import discover  # pydantic's: not for a listing of kept sandboxes

    return discover(__name__, __path__,
                    lambda p: p.name if isinstance(p, ProviderKind) else None)


def get_provider(target: str) -> Provider:
    """The provider for ``--target``: ``local``, ``docker`` or ``ansible:INVENTORY``."""
    from ..errors import InputError

    word, colon, _ = target.partition(":")
    kind = kinds().get(word)
    if kind is None or bool(colon) != bool(kind.argument):
        known = ", ".join(k.usage() for k in kinds().values())
        raise InputError(f"--target {target}: unknown target; known: {known}")
    return kind.make(target)


def starts_on_copies(target: str) -> bool:
    """Whether ``--target``'s servers can start on a copy of a datadir the harness did
    not make (a DBA's, a physical backup): its kind says so."""
    kind = kinds().get(target.partition(":")[0])
    return bool(kind and kind.seeds)


def remove_stale(verbose: bool = False) -> list[str]:
    """What killed harnesses left on this machine (``make clean-sandboxes``): their
    containers, then their sandboxes (whose folders the containers used)."""
    from .docker import remove_stale as containers
    from .local import remove_stale as sandboxes

    return [*containers(verbose), *map(str, sandboxes(verbose))]


# Lab hosts (--target ansible:INVENTORY[@HOST])

def is_lab(target: str) -> bool:
    return target.startswith("ansible:")


def lab_inventory(target: str) -> Path:
    from .ansible import parse_target

    return parse_target(target)[0]


def lab_hosts(target: str) -> list[LabHost]:
    """The inventory's hosts of the mysql_servers group; the pinned one alone (@HOST)."""
    from .ansible import inventory_hosts, parse_target

    inventory, pinned = parse_target(target)
    return [h for h in inventory_hosts(inventory) if pinned in (None, h.name)]


def spread_over(servers: list[str], hosts: list[LabHost]) -> dict[str, list[str]]:
    """Each lab host's share of a matrix's servers."""
    from .ansible import split_servers

    return split_servers(servers, hosts)


def try_profile_on(target: str, host: LabHost, limits: Limits,
                   progress: Callable[[str], None]) -> dict[str, Any]:
    """A host profile applied once on a lab host and taken away: what would be in force."""
    from .ansible import try_profile

    return try_profile(lab_inventory(target), host, limits, progress)


# External servers (a scenario's servers with host:)

def external_endpoint(spec: ServerSpec, where: str) -> Endpoint:
    """The spec's endpoint, its password read from the environment variable it names."""
    from .external import endpoint_of

    return endpoint_of(spec, where)


def external_build(spec: ServerSpec, where: str) -> Build:
    """The external server described as a build (flavor, version, variable names)."""
    from .external import detect

    return detect(spec, where)


def external_server(spec: ServerSpec, build: Build) -> Server:
    """The running server a scenario names, connected, never controlled (owned False)."""
    from .external import ExternalServer, endpoint_of

    return ExternalServer(spec, build, endpoint_of(spec, spec.title))


__all__ = ["Provider", "ProviderKind", "Server", "external_build", "external_endpoint",
           "external_server", "get_provider", "is_lab", "kinds", "lab_hosts",
           "lab_inventory", "remove_stale", "spread_over", "starts_on_copies",
           "try_profile_on"]
