"""The lab's nightly: its scenarios one after another, each by a ``harness run`` of its
own (one scenario's failure does not stop the next), a failed one posted to the
webhook; over an Ansible inventory, one such sequence per host of its ``mysql_servers``
group, in parallel, into one store. Then ``harness regress`` over the history, from the
time the night started: exit 3 and a post when a regression is new.

Every step is a child harness, as ``make nightly`` ran them: a scenario that crashes or
is killed leaves the others and the store as they were. The store's URL goes to the
children in their environment (``HARNESS_STORE``), never in argv.
"""
from __future__ import annotations

import os
import socket
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from .. import exits, notify, proc
from ..errors import HarnessError
from ..providers import lab_hosts, lab_inventory
from .lab import per_host

Say = Callable[[str], None]


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@dataclass
class Night:
    """What a night did: when it started (regress counts changes from then), each
    scenario's exit code per host, and regress's."""

    since: str
    codes: dict[str, dict[str, int]] = field(default_factory=dict)  # host: scenario: code
    regress: int | None = None

    @property
    def failed(self) -> list[tuple[str, str, int]]:
        return [(h, s, c) for h, cs in self.codes.items() for s, c in cs.items() if c]

    @property
    def exit_code(self) -> int:
        """1 when a run failed (the history has a hole), 3 on a new regression, 7 on both
        (a failed run never hides a regression), else regress's."""
        return exits.worst_of_night(bool(self.failed), self.regress or 0)


def _harness(*args: str) -> list[str]:
    return [sys.executable, "-m", "harness", *args]


def _env(store_url: str | None) -> dict[str, str]:
    return {**os.environ, **({"HARNESS_STORE": store_url} if store_url else {})}


def run_scenarios(scenarios: list[str], target: str, passthrough: list[str],
                  store_url: str | None, notify_flag: str | None, say: Say = _say,
                  counted: Sequence[str] = ()) -> dict[str, int]:
    """Each scenario by its own ``harness run`` on ``target`` (output as it goes), and
    those in ``counted`` by a counted run after it; a failed one posted where a webhook
    is configured. Scenario (``S (counted)`` for a counted run): exit code."""
    codes: dict[str, int] = {}
    for s in scenarios:
        runs = [(s, ["--target", target, *passthrough])]
        if s in counted:
            runs.append((f"{s} (counted)", ["--measure", "instructions"]))
        for name, flags in runs:
            say(f"nightly: {name} on {target}")
            codes[name] = code = _wait(_harness("run", s, *flags), store_url)
            if code == 130:
                raise KeyboardInterrupt
            if code:
                post_failure(notify_flag, f"{name} failed (exit {code})", target, say,
                             scenario=s, exit_code=code)
    return codes


def post_failure(flag: str | None, what: str, target: str, say: Say = _say,
                 **details: object) -> None:
    """Say a failure of the night and post it where a webhook is configured (a post
    that fails is said, not raised: the night's exit code already tells)."""
    where = target.rpartition("@")[2] if "@" in target else socket.gethostname()
    text = f"nightly on {where}: {what}"
    say(text)
    try:
        url = notify.target(flag)
        if url:
            notify.post(url, text, {"kind": "failed", "host": where, **details})
    except HarnessError as e:
        say(f"error: {e}")


def over_hosts(scenarios: list[str], target: str, passthrough: list[str],
               store_url: str | None, say: Say = _say) -> dict[str, dict[str, int]]:
    """The scenarios on every host of the inventory at once, one child ``harness
    nightly --no-regress`` per host (its log kept until it ends, the tail shown when
    it fails): host: scenario: exit code (all the host's scenarios at its code when it
    failed as a whole)."""
    inventory = lab_inventory(target)
    hosts = [h.name for h in lab_hosts(f"ansible:{inventory}")]
    say(f"nightly: {len(scenarios)} scenario(s) on each of {len(hosts)} host(s) of "
        f"{inventory}: {', '.join(hosts)}")
    argvs = {h: _harness("nightly", *scenarios, "--target", f"ansible:{inventory}@{h}",
                         "--no-regress", *passthrough) for h in hosts}
    out: dict[str, dict[str, int]] = {}
    for h, (code, tail) in per_host(argvs, _env(store_url), "nightly-", 120).items():
        out[h] = dict.fromkeys(scenarios, code)
        say(f"{h}: " + ("done" if code == 0 else f"exit code {code}\n    "
                        + "\n    ".join(tail)))
    return out


def night(scenarios: list[str], target: str, store_url: str | None,
          notify_flag: str | None, disposable: bool = False, regress: bool = True,
          say: Say = _say, counted: Sequence[str] = ()) -> Night:
    """One night: the scenarios on ``target`` (on every host of an inventory given
    without @HOST), those in ``counted`` counted too (local sandboxes), then regress
    from the night's start. Each run writes its HTML report (the history site links
    the run to it)."""
    n = Night(datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S"))
    mine = ["--i-know-this-is-disposable"] if disposable else []
    if target.startswith("ansible:") and "@" not in target:
        n.codes = over_hosts(scenarios, target, [*mine, *(
            ["--notify", notify_flag] if notify_flag else [])], store_url, say)
    else:
        n.codes = {target: run_scenarios(scenarios, target, ["--html", *mine], store_url,
                                         notify_flag, say, counted)}
    if regress:
        n.regress = _wait(_harness("regress", "--since", n.since, *(
            ["--notify", notify_flag] if notify_flag else [])), store_url)
    return n


def _wait(argv: list[str], store_url: str | None) -> int:
    """A child harness with this terminal (its output as it goes); its exit code."""
    with proc.popen(argv, env=_env(store_url)) as child:
        return child.wait()
