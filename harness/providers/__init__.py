"""Providers start and stop servers: local sandboxes (the default), Docker containers."""
from __future__ import annotations

from .base import Provider, Server
from .docker import DockerProvider
from .local import LocalProvider

PROVIDERS: dict[str, type[Provider]] = {"local": LocalProvider, "docker": DockerProvider}


def get_provider(target: str) -> Provider:
    """The provider for ``--target``: ``local`` or ``docker``."""
    from ..errors import InputError

    kind = target.split(":", 1)[0]
    if kind not in PROVIDERS:
        raise InputError(f"--target {target}: unknown target; known: {', '.join(PROVIDERS)}")
    return PROVIDERS[kind]()


__all__ = ["Provider", "Server", "get_provider", "LocalProvider", "DockerProvider"]
