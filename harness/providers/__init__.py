"""Providers start and stop servers: a local sandbox today, Docker and Ansible next."""
from __future__ import annotations

from .base import Provider, Server
from .local import LocalProvider

PROVIDERS: dict[str, type[Provider]] = {"local": LocalProvider}


def get_provider(target: str) -> Provider:
    """The provider for ``--target``: ``local`` (more to come: docker, ansible:INVENTORY)."""
    from ..errors import InputError

    kind = target.split(":", 1)[0]
    if kind not in PROVIDERS:
        raise InputError(f"--target {target}: unknown target; known: {', '.join(PROVIDERS)}")
    return PROVIDERS[kind]()


__all__ = ["Provider", "Server", "get_provider", "LocalProvider"]
