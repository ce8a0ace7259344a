"""The nightly as `make nightly` runs it and `make nightly-timer` schedules it: its values
(NIGHTLY, NIGHTLY_TARGET, NOTIFY, NIGHTLY_AT) read from the environment, never pasted into
a shell line or a recipe, each validated for what it is, and written into the systemd
units by this writer with systemd's quoting.

- NIGHTLY: scenario files or folders of the checkout, separated by spaces; each path of
  letters, digits and ``_ . / + , @ -`` only, and there.
- NIGHTLY_TARGET: ``local``, ``docker`` or ``ansible:INVENTORY[@HOST]`` of the same
  characters.
- NOTIFY: ``@FILE`` only (a webhook URL is a secret: a unit file is world-readable and a
  command line is visible to every user; put the URL in a file, or ``HARNESS_NOTIFY_URL``
  in /etc/mysql-harness/nightly.env).
- NIGHTLY_AT: ``HH:MM``.

A value that is not one of these is refused, naming the variable, before anything is
written or run. The service runs the harness directly (not ``make nightly``, which would
check apt and pip at 02:00).
"""
from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from .. import proc
from ..errors import InputError, UnavailableError
from ..paths import CHECKOUT

UNIT = "mysql-harness-nightly"
_PATH = re.compile(r"[A-Za-z0-9_./+,@-]+")
_AT = re.compile(r"(?:[01][0-9]|2[0-3]):[0-5][0-9]")


@dataclass(frozen=True)
class Nightly:
    """A nightly's values, each checked."""

    scenarios: list[str]
    target: str
    notify: str | None
    at: str

    def argv(self, harness: str) -> list[str]:
        """The command the nightly runs: ``harness nightly ...``, an argument a value."""
        return [harness, "nightly", *self.scenarios, "--target", self.target,
                *(["--notify", self.notify] if self.notify else [])]


def from_env(env: dict[str, str] | os._Environ[str], root: Path = CHECKOUT) -> Nightly:
    """The nightly's values from ``env`` (make exports them), or an InputError naming the
    variable that is not what it must be."""
    return Nightly(_scenarios(env.get("NIGHTLY", ""), root),
                   _target(env.get("NIGHTLY_TARGET", "") or "local"),
                   _notify(env.get("NOTIFY", "") or None),
                   _at(env.get("NIGHTLY_AT", "") or "02:00"))


def _scenarios(value: str, root: Path) -> list[str]:
    scenarios = value.split()
    for s in scenarios:
        _path("NIGHTLY", s)
        if not (root / s).exists():
            raise UnavailableError(f"NIGHTLY: {s}: no such scenario file or folder in {root}")
    return scenarios


def _target(target: str) -> str:
    kind, _, where = target.partition(":")
    if not (target in ("local", "docker") or (kind == "ansible" and where
                                               and _PATH.fullmatch(where))):
        raise InputError(f"NIGHTLY_TARGET={target!r}: local, docker or "
                         "ansible:INVENTORY[@HOST] (letters, digits and _ . / + , @ -)")
    return target


def _notify(notify: str | None) -> str | None:
    if notify is not None and not (notify.startswith("@") and _PATH.fullmatch(notify[1:])):
        raise InputError("NOTIFY: @FILE, a file holding the webhook's URL (a URL here would "
                         "be visible to every user of the host in the unit file or the "
                         "process list; or set HARNESS_NOTIFY_URL in "
                         "/etc/mysql-harness/nightly.env)")
    return notify


def _at(at: str) -> str:
    if not _AT.fullmatch(at):
        raise InputError(f"NIGHTLY_AT={at!r}: HH:MM")
    return at


def _path(var: str, value: str) -> None:
    if not _PATH.fullmatch(value) or value.startswith("-"):
        raise InputError(f"{var}: {value!r}: a path of letters, digits and _ . / + , @ - "
                         "(no quote, semicolon, dollar, space or control character)")


def quoted(arg: str) -> str:
    """One argument of a unit's ExecStart as systemd reads it back: double-quoted with
    ``\\`` and ``"`` escaped, ``$`` and ``%`` doubled (no variable nor specifier)."""
    escaped = arg.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("$", "$$").replace("%", "%%") + '"'


def units(n: Nightly, root: Path, harness: str) -> dict[str, str]:
    """The service and timer units, by file name."""
    if not _PATH.fullmatch(str(root)):
        raise InputError(f"{root}: the checkout's path holds a character a unit cannot take "
                         "plainly; move the checkout")
    service = f"""\
# harness nightly in {root}, as `make nightly-timer` writes it.
# Exit code 3 (a new regression) leaves the unit failed: what a lab's monitoring sees.
[Unit]
Description=mysql-harness nightly benchmark in {root}
Wants=network-online.target
After=network-online.target

[Service]
Type=oneshot
WorkingDirectory={root}
# HARNESS_NOTIFY_URL=..., HARNESS_STORE=... (mode 0600, root's)
EnvironmentFile=-/etc/mysql-harness/nightly.env
ExecStart={" ".join(quoted(a) for a in n.argv(harness))}
TimeoutStartSec=12h
"""
    timer = f"""\
# When the nightly runs, as `make nightly-timer` writes it (NIGHTLY_AT=HH:MM).
[Unit]
Description=mysql-harness nightly benchmark at {n.at}

[Timer]
OnCalendar=*-*-* {n.at}:00
Persistent=true

[Install]
WantedBy=timers.target
"""
    return {f"{UNIT}.service": service, f"{UNIT}.timer": timer}


def crontab_line(n: Nightly, root: Path, harness: str) -> str:
    """The same as a crontab line (every value checked plain above)."""
    hour, minute = n.at.split(":")
    return (f"{minute} {hour} * * * cd {root} && {' '.join(n.argv(harness))} "
            ">> results/nightly.log 2>&1")


SYSTEM_UNITS = "/etc/systemd/system"


def main(args: list[str]) -> int:
    """``run``: the nightly now; ``units``: write the units into SYSTEMD_DIR (default
    /etc/systemd/system, then enabled where systemd runs), and print the crontab line."""
    harness = str(Path(sys.executable).with_name("harness"))
    try:
        n = from_env(os.environ)
        if args == ["run"]:
            proc.replace(n.argv(harness))
        if args == ["units"]:
            return _write_units(n, harness)
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print("usage: python -m harness.runner.timer run | units", file=sys.stderr)
    return 2


def _write_units(n: Nightly, harness: str) -> int:
    folder = os.environ.get("SYSTEMD_DIR") or SYSTEM_UNITS
    _path("SYSTEMD_DIR", folder)
    Path(folder).mkdir(parents=True, exist_ok=True)
    for name, text in units(n, CHECKOUT, harness).items():
        (Path(folder) / name).write_text(text)
    print(f"wrote {folder}/{UNIT}.service and .timer (harness nightly at {n.at})")
    if folder == SYSTEM_UNITS and Path("/run/systemd/system").is_dir():
        proc.run(["systemctl", "daemon-reload"], timeout=60, what="systemctl daemon-reload")
        proc.run(["systemctl", "enable", "--now", f"{UNIT}.timer"], timeout=60,
                 what=f"systemctl enable {UNIT}.timer")
        return 0
    print("systemd is not running here (or SYSTEMD_DIR is set): not enabled. A crontab "
          f"line:\n{crontab_line(n, CHECKOUT, harness)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
