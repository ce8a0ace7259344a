"""A matrix over the hosts of an Ansible inventory, in parallel: the servers are spread
over the hosts and one harness process runs each host's share into one run set, so N
hosts take about the time of one. Each child runs in its own session and dies with this
process; Ctrl-C here stops them in order."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import proc
from ..providers import spread_over
from . import new_id


@dataclass
class LabRun:
    """What the hosts did: the run set, each host's share and exit code, and the last
    lines of the log of a host that failed other than by a failed run."""

    run_set: str
    shares: dict[str, list[str]]
    codes: dict[str, int] = field(default_factory=dict)
    failed_tails: dict[str, list[str]] = field(default_factory=dict)


def per_host(argvs: dict[str, list[str]], env: dict[str, str], prefix: str,
             stop_within: float = 60) -> dict[str, tuple[int, list[str]]]:
    """Each host's child harness (``argvs``: host: argv) at once, each in its own
    session with its log in a temporary folder: host: (exit code, the log's last six
    lines). Ctrl-C terminates them all and waits up to ``stop_within`` seconds for each
    before it is raised again; the logs go when the children end."""
    children: dict[str, subprocess.Popen[bytes]] = {}
    logdir = Path(tempfile.mkdtemp(prefix=prefix))
    out: dict[str, tuple[int, list[str]]] = {}
    try:
        for host, argv in argvs.items():
            children[host] = proc.spawn_daemon(argv, logdir / f"{host}.log", env=env)
        for host, child in children.items():
            code = child.wait()
            log = (logdir / f"{host}.log").read_text(errors="replace")
            out[host] = (code, log.splitlines()[-6:])
    except KeyboardInterrupt:
        for child in children.values():
            child.terminate()
        for child in children.values():
            child.wait(timeout=stop_within)
        raise
    finally:
        shutil.rmtree(logdir, ignore_errors=True)
    return out


def run_on_lab(scenario: str, inventory: Path, hosts: list[Any], servers: list[str],
               passthrough: list[str], store_url: str | None,
               say: Callable[[str], None] = lambda m: print(m, file=sys.stderr)) -> LabRun:
    """Run ``scenario`` with ``servers`` spread over ``hosts``, each share by a child
    ``harness run`` given ``passthrough`` (its flags); the store's URL goes to the
    children in their environment, never in argv (it may hold a password)."""
    lab = LabRun(new_id(), spread_over(servers, hosts))
    env = {**os.environ, **({"HARNESS_STORE": store_url} if store_url else {})}
    say(f"run set {lab.run_set}: {len(servers)} server(s) over {len(lab.shares)} host(s) "
        f"of {inventory}: " + "; ".join(f"{h}: {', '.join(s)}" for h, s in lab.shares.items()))
    argvs = {host: [sys.executable, "-m", "harness", "run", scenario, "--target",
                    f"ansible:{inventory}@{host}", "--run-set", lab.run_set, "--quiet",
                    *sum((["--server", s] for s in share), []), *passthrough]
             for host, share in lab.shares.items()}
    for host, (code, tail) in per_host(argvs, env, "lab-").items():
        lab.codes[host] = code
        say(f"{host}: {'done' if code == 0 else f'exit code {code}'}")
        if code not in (0, 1):  # 1: a run failed, and is stored as failed
            lab.failed_tails[host] = tail
    return lab
