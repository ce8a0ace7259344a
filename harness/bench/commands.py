"""The quick face: the CPU seconds of the commands a user types to look
around (``--help``, ``--version``, ``servers list``, ``runs``, ``show``), each a fresh
interpreter as the user starts it, best of three. The goal: 0.3 CPU-seconds for the ones
that read no store; ``runs`` and ``show`` load SQLAlchemy to read it (about 0.4 s of it
alone here), so theirs is measured and said, not held to it."""
from __future__ import annotations

import resource
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from .. import proc
from ..jsonvalue import JsonDict
from ..paths import CHECKOUT

COMMANDS = (("--help",), ("--version",), ("servers", "list"), ("runs",))
GOAL_S = 0.3


def _one(argv: tuple[str, ...], env: dict[str, str]) -> float:
    """CPU seconds (user + system) of one command, from the children's rusage."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc.run([sys.executable, "-m", "harness", *argv], env=env, cwd=CHECKOUT, timeout=120,
             what=f"harness {' '.join(argv)}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def bench_face(log: Callable[[str], None], repeats: int = 3) -> JsonDict:
    """Each command's best CPU time of ``repeats``, against an empty results folder."""
    commands: JsonDict = {}
    out: JsonDict = {"goal_cpu_s": GOAL_S, "commands": commands}
    with tempfile.TemporaryDirectory(prefix="harness-face-") as tmp:
        # an empty SQLite store of its own (an empty HARNESS_STORE is none set)
        env = {"HARNESS_RESULTS": str(Path(tmp) / "results"), "HARNESS_STORE": ""}
        for argv in COMMANDS:
            cpu = min(_one(argv, env) for _ in range(repeats))
            name = " ".join(argv)
            commands[name] = {"cpu_s": round(cpu, 3), "within_goal": cpu <= GOAL_S}
            log(f"  harness {name}: {cpu:.2f} CPU-s")
    return out
