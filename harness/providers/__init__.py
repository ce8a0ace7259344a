"""Providers start and stop servers: local sandboxes (the default), Docker containers,
lab hosts managed by Ansible."""
from __future__ import annotations

from .base import Provider, Server
from .docker import DockerProvider
from .local import LocalProvider

PROVIDERS: dict[str, type[Provider]] = {"local": LocalProvider, "docker": DockerProvider}


def get_provider(target: str) -> Provider:
    """The provider for ``--target``: ``local``, ``docker`` or ``ansible:INVENTORY``."""
    from ..errors import InputError

    kind = target.split(":", 1)[0]
    if kind not in PROVIDERS and kind != "ansible":
        raise InputError(f"--target {target}: unknown target; known: {', '.join(PROVIDERS)}, "
                         "ansible:INVENTORY")
    if kind == "ansible":
        from .ansible import AnsibleProvider
        return AnsibleProvider(target)
    return PROVIDERS[kind]()


def remove_stale(verbose: bool = False) -> list[str]:
    """What killed harnesses left on this machine (``make clean-sandboxes``): their
    containers, then their sandboxes (whose folders the containers used)."""
    from .docker import remove_stale as containers
    from .local import remove_stale as sandboxes

    return [*containers(verbose), *map(str, sandboxes(verbose))]


__all__ = ["Provider", "Server", "get_provider", "LocalProvider", "DockerProvider"]
