"""The servers of a scenario and the options they run with: which builds, the my.cnf
overlays (inline options and files) of each variant, and SET GLOBAL changes made
while a run runs."""
from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    Field,
    field_validator,
    model_validator,
)

from ..model import (
    Model,
    Name,
    Start,
    parse_start,
)
from ..server import hostpaths
from ..server.catalog import CATALOG, installed_files
from ..server.mycnf import option_problem, value_problem
from .host import checked_sysctls

OptionValue = str | int | float | bool | None


def _safe_options(opts: dict[str, OptionValue]) -> dict[str, OptionValue]:
    """mysqld options that render as themselves (no name or value that adds options)
    and keep the sandbox in its folder (no path of the host: :mod:`hostpaths`)."""
    for k, v in opts.items():
        why = option_problem(k, v) or value_problem(k, v) or hostpaths.refusal(k, v)
        if why:
            raise ValueError(why)
    return opts


Options = Annotated[dict[str, OptionValue], AfterValidator(_safe_options)]



class ServerSpec(Model):
    """A server: a catalog name, an unpacked tarball by path, or an external server the
    harness did not create (``host``, over TCP): it is benchmarked as it is - never
    prepared, dropped, reconfigured or restarted unless marked ``disposable``."""

    name: Name | None = None
    basedir: str | None = None
    # A name or an address: nothing a client option file or a URL could read as more.
    host: str | None = Field(None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,252}$")
    port: int = Field(3306, ge=1, le=65535)
    # MySQL account names may hold most characters, never a control character.
    user: str | None = Field(None, pattern=r"^[^\x00-\x1f\x7f]{1,80}$")
    # The name of an environment variable holding the password (never the password).
    password_env: str | None = Field(None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    label: Name | None = None
    disposable: bool = False
    # The account can only read: checked with SHOW GRANTS before anything runs.
    read_only_account: bool = False

    @model_validator(mode="before")
    @classmethod
    def _no_password(cls, v: Any) -> Any:
        if isinstance(v, dict) and "password" in v:
            raise ValueError("never write a password into a scenario: set 'password_env' to "
                             "the name of an environment variable that holds it")
        return v

    @model_validator(mode="after")
    def _one_of(self) -> ServerSpec:
        given = [k for k in ("name", "basedir") if getattr(self, k) is not None]
        if self.external:
            given.append("host")
        if len(given) != 1:
            raise ValueError("give exactly one of 'name' (a catalog server), 'basedir' (an "
                             "unpacked tarball) or 'host' (an external server)")
        if self.name is not None and self.name not in CATALOG and \
                self.name not in installed_files():
            known = sorted([*CATALOG, *installed_files()])
            raise ValueError(f"unknown server '{self.name}'; known: {', '.join(known)}")
        self._account_fits()
        return self

    def _account_fits(self) -> None:
        """An account for an external server, and none for one the harness creates."""
        if self.external and not self.user:
            raise ValueError("an external server needs 'user' (and 'password_env', the name "
                             "of an environment variable holding its password)")
        if not self.external and (self.user or self.password_env or self.disposable
                                  or self.read_only_account):
            raise ValueError("'user', 'password_env', 'disposable' and 'read_only_account' "
                             "are for external servers (host); the harness owns the servers "
                             "it creates")

    @property
    def external(self) -> bool:
        return self.host is not None

    @property
    def title(self) -> str:
        """How messages and the store name this server."""
        if self.label:
            return self.label
        if self.name:
            return self.name
        if self.basedir:
            return f"basedir:{self.basedir}"
        return f"{self.host}:{self.port}"


class Variant(Model):
    """A my.cnf overlay: options inline, and/or the [mysqld] section of a file."""

    description: str = ""
    mysqld: Options = Field(default_factory=dict)
    my_cnf: str | None = None
    # Host settings for this variant's runs, over host.sysctls (a disposable host only).
    sysctls: dict[str, int | str] = Field(default_factory=dict)

    _sysctls = field_validator("sysctls")(classmethod(lambda cls, v: checked_sysctls(v)))


class ConfigChange(Model):
    """``SET GLOBAL`` at a point of the timeline, recorded as a ``config`` event (an
    empty ``set_global`` only marks the time). ``reset``: options set back to the value
    the server had when the measured phase began (read then: for an option no my.cnf
    sets, the server's own default, as it computed it). ``stop_run_on_error``: a refused
    SET stops the main workload at once (the run fails either way)."""

    name: Name | None = None
    start: Start
    set_global: Options = Field(default_factory=dict)
    reset: list[str] = Field(default_factory=list)
    stop_run_on_error: bool = False

    _start = field_validator("start", mode="before")(classmethod(lambda cls, v: parse_start(v)))


