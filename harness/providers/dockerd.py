"""The Docker daemon: a docker-py client, starting ``dockerd`` when none runs.

Debian's docker.io (installed by ``make setup``) brings the daemon; on a machine without
systemd nothing starts it, so the harness does, once, detached (it outlives the harness
like any system daemon; its log is ``<cache>/docker/dockerd.log``).
"""
from __future__ import annotations

import functools
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from .. import proc
from ..errors import ProviderError
from ..paths import cache_dir

START_TIMEOUT_S = 60.0


def _ping() -> Any | None:
    from docker.client import DockerClient
    from docker.errors import DockerException

    try:
        c = DockerClient.from_env(timeout=300)
        c.ping()
        return c
    except DockerException:
        return None


def start_daemon() -> None:
    """Start dockerd detached and wait until it answers."""
    exe = shutil.which("dockerd") or "/usr/sbin/dockerd"
    if not Path(exe).exists():
        raise ProviderError("no Docker daemon runs and dockerd is not installed "
                            "(make setup installs Debian's docker.io)")
    log = cache_dir() / "docker" / "dockerd.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    print(f"docker: starting dockerd (log {log})", file=sys.stderr)
    # No userland proxy: published ports are forwarded by the kernel (NAT). Through
    # docker-proxy, a process copying every byte, 2-thread oltp_read_only on a published
    # port ran at a quarter of the throughput of the same server locally. The daemon
    # outlives the harness (other runs and containers use it).
    p = proc.spawn_daemon([exe, "--userland-proxy=false"], log, outlive=True)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if _ping() is not None:
            return
        if p.poll() is not None:
            tail = log.read_text(errors="replace").splitlines()[-8:]
            raise ProviderError(f"dockerd exited with code {p.returncode} while starting; "
                                f"{log}:\n" + "\n".join("    " + ln for ln in tail))
        time.sleep(0.5)
    raise ProviderError(f"dockerd did not answer within {START_TIMEOUT_S:.0f} s; see {log}")


@functools.cache
def client() -> Any:
    """A docker-py client of a running daemon (started here when none runs)."""
    c = _ping()
    if c is None:
        start_daemon()
        c = _ping()
    if c is None:
        raise ProviderError("the Docker daemon does not answer")
    return c


def running_client() -> Any | None:
    """A client when a daemon already runs, else None (cleanup never starts one)."""
    if not shutil.which("dockerd") and not shutil.which("docker"):
        return None
    return _ping()
