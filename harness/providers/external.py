"""External servers: a MySQL or MariaDB the harness did not create, reached over TCP.

The harness benchmarks it as it is. It never starts, stops, restarts it or touches its
datadir; preparing data, SET GLOBAL and write workloads need the scenario to mark it
``disposable: true`` and the command line to repeat it (see :mod:`harness.runner.guard`).
Variables changed on a disposable server are set back when the harness lets it go.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

import pymysql

from ..errors import OwnershipError, ProviderError, UnavailableError
from ..scenario import ServerSpec
from ..server.catalog import Build, version_tuple
from ..server.mycnf import Value
from ..server.mysql import Endpoint, connection, query, scalar
from .base import Server


def endpoint_of(spec: ServerSpec, where: str) -> Endpoint:
    """The spec's endpoint, its password read from the environment variable it names."""
    password = ""
    if spec.password_env:
        if spec.password_env not in os.environ:
            raise UnavailableError(f"{where}.password_env: environment variable "
                                   f"{spec.password_env} "
                                   f"is not set (it should hold the password of {spec.title})")
        password = os.environ[spec.password_env]
    assert spec.host is not None and spec.user is not None
    return Endpoint(spec.host, spec.port, spec.user, password)


def flavor_of(version: str, comment: str) -> str:
    text = f"{version} {comment}".lower()
    return "mariadb" if "mariadb" in text else "percona" if "percona" in text else "mysql"


def detect(spec: ServerSpec, where: str) -> Build:
    """Connect and describe the server as a build (flavor, version, variable names)."""
    ep = endpoint_of(spec, where)
    try:
        with connection(ep, timeout=10) as c:
            version = str(scalar(c, "SELECT VERSION()"))
            comment = str(scalar(c, "SELECT @@version_comment") or "")
            names = {str(r[0]).lower() for r in query(c, "SHOW GLOBAL VARIABLES")}
    except pymysql.err.MySQLError as e:
        raise ProviderError(f"{where} ({spec.title}): cannot connect as {spec.user}@"
                            f"{spec.host}:{spec.port}: {e}") from None
    numeric = version.split("-")[0]
    version_tuple(numeric)  # a version we cannot read fails here, naming the server
    return Build(root=Path("/"), flavor=flavor_of(version, comment), version=numeric,
                 version_string=f"{version} ({comment})", mysqld=Path(""),
                 share_dir=Path(""), lib_dir=None, init_method="external", install_db=None,
                 pristine_data=None, name=spec.title, variables=frozenset(names))


class ExternalServer(Server):
    """A running server the harness connects to and never controls."""

    def drop_page_cache(self, disposable: bool) -> str | None:
        return "an external server: the harness does not reach its host"

    def __init__(self, spec: ServerSpec, build: Build, endpoint: Endpoint):
        self.spec = spec
        self.build = build
        self.endpoint = endpoint
        self.owned = False
        self.name = spec.title
        with connection(endpoint) as c:
            self.datadir = Path(str(scalar(c, "SELECT @@datadir")))
        self._scratch: Path | None = None
        self.original: dict[str, str] = {}  # variables this harness SET, as they were

    @property
    def remote_host(self) -> str | None:
        host = self.spec.host or ""
        return None if host in ("127.0.0.1", "localhost", "::1") else host

    def _refuse(self, step: str) -> OwnershipError:
        return OwnershipError(f"{self.name}: refusing to {step}: the harness did not create "
                              "this server and cannot control its process")

    def start(self, options: Mapping[str, Value | None] | None = None) -> None:
        if options:
            raise self._refuse("restart it with new my.cnf options")
        if not self.is_running:
            raise ProviderError(f"{self.name}: not answering at {self.spec.host}:"
                                f"{self.spec.port}; start it yourself")

    def stop(self) -> None:
        raise self._refuse("stop it")

    def restart(self, options: Mapping[str, Value | None] | None = None) -> None:
        raise self._refuse("restart it")

    def remember(self, names: list[str]) -> None:
        """Note the current values of ``names`` before the harness first sets them."""
        todo = [n for n in names if n not in self.original]
        if not todo:
            return
        with connection(self.endpoint) as c:
            for n in todo:
                self.original[n] = str(scalar(c, f"SELECT @@GLOBAL.{n}"))

    def put_back(self, names: list[str] | None = None) -> list[str]:
        """SET GLOBAL the variables this harness changed (all, or ``names``) back to
        their values before; a list of what could not be."""
        failed: list[str] = []
        todo = [n for n in (self.original if names is None else names) if n in self.original]
        if not todo:
            return failed
        with connection(self.endpoint) as c, c.cursor() as cur:
            for n in todo:
                v = self.original.pop(n)
                try:
                    cur.execute(f"SET GLOBAL {n} = %s", (v,))
                except pymysql.err.MySQLError:
                    try:  # a numeric variable rejects a quoted value
                        cur.execute(f"SET GLOBAL {n} = {int(v)}")
                    except (ValueError, pymysql.err.MySQLError) as e:
                        failed.append(f"{n} = {v}: {e}")
        return failed

    def destroy(self) -> None:
        """Let it go: put changed variables back, remove the harness's scratch files."""
        try:
            failed = self.put_back()
        finally:
            if self._scratch is not None:
                shutil.rmtree(self._scratch, ignore_errors=True)
                self._scratch = None
        if failed:
            raise ProviderError(f"{self.name}: could not set back: {'; '.join(failed)}")

    def collect_artifacts(self, dest: Path) -> None:
        (dest / "server.json").write_text(json.dumps({
            "external": True, "title": self.name, "host": self.spec.host,
            "port": self.spec.port, "user": self.spec.user,
            "version": self.build.version_string, "datadir": str(self.datadir),
            "disposable": self.spec.disposable}, indent=2))

    @property
    def is_running(self) -> bool:
        try:
            with connection(self.endpoint, timeout=5):
                return True
        except pymysql.err.MySQLError:
            return False

    def death(self) -> str | None:
        if self.is_running:
            return None
        return (f"external server {self.name} ({self.spec.host}:{self.spec.port}) stopped "
                "answering")

    @property
    def scratch(self) -> Path:
        """Side loads' files go to this host's temp dir (the datadir is not ours)."""
        if self._scratch is None:
            self._scratch = Path(tempfile.mkdtemp(prefix="harness-external-"))
        return self._scratch

    def replace_datadir(self, src: Path) -> None:
        raise self._refuse("replace its datadir")

    def save_datadir(self, key: str, meta: dict[str, object]) -> tuple[Path, float]:
        raise self._refuse("copy its datadir")
