"""A provider whose sandboxes only record what is done to them, for the runner's stages:
the unit tests give them no server at all, the integration tests put one real server
behind every one of them."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from harness.providers.base import Provider, Server
from harness.server import snapshot
from harness.server.catalog import Build
from harness.server.mysql import Endpoint

STATIC = "innodb_log_file_size"  # SET GLOBAL of it is refused, as mysqld refuses it


class FakeServer(Server):
    owned = True

    def __init__(self, build: Build, provider: FakeProvider):
        self.build, self.provider = build, provider
        self.name = f"sandbox-{len(provider.made) + 1}"
        n = len(provider.made) + 1
        self.endpoint = provider.endpoint or Endpoint("127.0.0.1", 3300 + n, "harness", "pw")
        self.datadir = provider.datadir or provider.root / self.name
        self.running = False
        self.started_with: list[dict] = []

    def _say(self, what: str) -> None:
        self.provider.steps.append(f"{self.name} {what}")

    def start(self, options: Mapping | None = None) -> None:
        self._say("start")
        self.provider.on_start(dict(options or {}))  # may refuse, as a bad my.cnf does
        self.started_with.append(dict(options or {}))
        self.running = True

    def stop(self) -> None:
        self.running = False
        self._say("stop")

    def destroy(self) -> None:
        self.running = False
        self._say("destroy")

    def keep(self, run_set: str) -> str:
        self._say(f"keep {run_set}")
        return f"mysql -S {self.datadir}/mysqld.sock"

    def collect_artifacts(self, dest: Path) -> None:
        pass

    @property
    def is_running(self) -> bool:
        return self.running

    @property
    def scratch(self) -> Path:
        d = self.provider.root / f"{self.name}-scratch"
        d.mkdir(parents=True, exist_ok=True)
        return d

    def replace_datadir(self, src: Path) -> None:
        self._say(f"replace_datadir {src.name}")

    def save_datadir(self, key: str, meta: dict[str, object]) -> tuple[Path, float]:
        self._say("save_datadir")
        if self.provider.real_snapshots:  # a datadir of one small file, saved for real
            d = self.provider.root / f"{self.name}-datadir"
            d.mkdir(parents=True, exist_ok=True)
            (d / "ibdata1").write_bytes(b"x" * 4096)
            saved, secs = snapshot.save(key, d, meta)
            self.provider.saved[key] = saved
            return saved, secs
        saved = self.provider.root / "snapshots" / key
        saved.mkdir(parents=True, exist_ok=True)
        self.provider.saved[key] = saved
        return saved, 0.5

    def set_global(self, options: Mapping) -> str | None:
        if STATIC in options:
            return f"{STATIC} cannot be set at runtime (Variable is read only)"
        self._say("set_global " + ",".join(sorted(options)))
        return None


class FakeProvider(Provider):
    """Its sandboxes' steps in order, its snapshots by key (``find_snapshot`` for the
    lifecycle), and a hook on every start. ``endpoint``, ``datadir``: the real server
    behind every sandbox, if any."""

    target = "local"
    seeds = True  # a datadir dataset's copy is the real server's, as every sandbox's

    def __init__(self, root: Path, endpoint: Endpoint | None = None,
                 datadir: Path | None = None, saved: dict[str, Path] | None = None):
        self.root, self.endpoint, self.datadir = root, endpoint, datadir
        self.made: list[FakeServer] = []
        self.steps: list[str] = []
        self.saved = {} if saved is None else saved
        self.on_start: Callable[[dict], None] = lambda options: None
        self.real_snapshots = False  # save_datadir saves a real (tiny) snapshot

    def provision(self, build: Build, label: str, datadir_from: Path | None = None
                  ) -> FakeServer:
        s = FakeServer(build, self)
        self.made.append(s)
        s._say(f"provision from {datadir_from.name}" if datadir_from else "provision")
        return s

    def find_snapshot(self, key: str) -> Path | None:
        return self.saved.get(key)

    def take_steps(self) -> list[str]:
        """The steps since the last call."""
        out, self.steps[:] = list(self.steps), []
        return out
