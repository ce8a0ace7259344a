"""The building blocks of scenario models, shared by scenario.py and by the plugins
that own their part of a scenario (each workload's dataset and workload models), and
the one way a plugin registry finds its plugins (:func:`discover`).

Every model forbids unknown keys (a typo is an error) and refuses YAML's true where
a number is meant.
"""
from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

Ident = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")]
Name = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")]


def discover(package: str, path: Iterable[str], key: Callable[[Any], str | None]
             ) -> dict[str, Any]:
    """Every module of ``package`` (its ``__path__``) that declares a ``PLUGIN``, by the
    name ``key`` gives it (None: not a plugin of this registry), in module name order.
    Two plugins with one name are refused, both modules named. A module whose source
    never says PLUGIN is not imported (a plugin's helpers load when it uses them: SSB's
    generator and pyarrow only to generate)."""
    found: dict[str, Any] = {}
    where: dict[str, str] = {}
    for m in pkgutil.iter_modules(path):
        module = f"{package}.{m.name}"
        if not _may_declare(m):
            continue
        plugin = getattr(importlib.import_module(module), "PLUGIN", None)
        name = None if plugin is None else key(plugin)
        if name is None:
            continue
        if name in found:
            raise RuntimeError(f"two plugins named {name!r}: {where[name]} and {module}")
        found[name], where[name] = plugin, module
    return found


def _may_declare(m: pkgutil.ModuleInfo) -> bool:
    """False only for a module file whose text never names PLUGIN."""
    spec = m.module_finder.find_spec(m.name, None)
    origin = spec.origin if spec else None
    if not origin or not origin.endswith(".py") or m.ispkg:
        return True
    try:
        return "PLUGIN" in Path(origin).read_text()
    except OSError:
        return True


@dataclass(frozen=True)
class Figure:
    """A figure of a run's summary that a workload declares: tables, ``harness runs``,
    the HTML report and ``harness regress`` read it by ``key``."""

    key: str  # the run summary's key
    label: str  # a column or axis name
    higher_is_better: bool
    headline: bool = False  # the one figure its workload is compared by
    regress: str | None = None  # its name as a harness regress metric
    # the smallest relative change regress calls a change of it, whatever the history's
    # noise (2% for what the clock measures; a count repeats a hundred times closer)
    floor: float = 0.02


@dataclass(frozen=True)
class Metric:
    """An expected-finding metric a workload judges (``expectations[].metric``), and
    which of the expectation's fields it takes: the scenario checks them by this."""

    name: str
    about: str  # what it compares, for messages ("SSB flights")
    needs: tuple[str, ...] = ()  # fields it cannot do without
    allows: tuple[str, ...] = ()  # optional fields beyond name, min, max, variant, server


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    @model_validator(mode="before")
    @classmethod
    def _no_bool_for_numbers(cls, data: Any) -> Any:
        """YAML's true is not a count: ``threads: true`` must not run 1 thread."""
        if isinstance(data, dict):
            for name, f in cls.model_fields.items():
                v = data.get(name)
                text = str(f.annotation)
                if isinstance(v, bool) and ("int" in text or "float" in text) and \
                        "bool" not in text:
                    raise ValueError(f"{name}: a number, not {str(v).lower()}")
        return data


class Declares:
    """A workload or side load says what it does to the server: ``writes`` names each
    way it writes to it or changes its state (empty: it only reads). One that says
    nothing is treated as writing: the ownership guard fails closed."""

    def writes(self, base: Path) -> list[str]:
        """Why it writes or changes server state (``base``: the scenario's folder)."""
        return [f"{getattr(self, 'kind', type(self).__name__)}: it does not declare "
                "that it is read-only"]


class Start(Model):
    """When a timeline item starts: ``at`` seconds into the run, or ``delay_s`` after
    another item ends (``after: warmup`` is the main workload's warmup, ``after: main``
    the main workload itself, any other name a side load)."""

    at: float | None = Field(None, ge=0)
    after: Name | None = None
    delay_s: float = Field(0, ge=0)

    @model_validator(mode="after")
    def _one_of(self) -> Start:
        if (self.at is None) == (self.after is None):
            raise ValueError("give exactly one of 'at' (seconds into the run) or 'after' "
                             "(warmup, main, or a side load's name)")
        if self.at is not None and self.delay_s:
            raise ValueError("'delay_s' goes with 'after'; with 'at' put the time in 'at'")
        return self


def parse_start(v: Any) -> Any:
    """``start: 30`` is ``start: {at: 30}``; ``start: warmup`` is ``{after: warmup}``."""
    if isinstance(v, int | float) and not isinstance(v, bool):
        return {"at": v}
    if isinstance(v, str):
        return {"after": v}
    return v


class Located(Model):
    """A part of a scenario that reads files named relative to the scenario's folder
    (``files()``), which the scenario sets when it is loaded (``located``)."""

    _base_dir: Path = PrivateAttr(default=Path("."))

    def files(self) -> dict[str, str]:
        """The files it reads, by field: names relative to the scenario's folder."""
        return {}

    def folders(self) -> set[str]:
        """The fields of ``files`` that may name a folder, which it reads itself (its
        ``content_problems`` say what is wrong in it)."""
        return set()

    def located(self, base_dir: Path) -> Any:
        self._base_dir = base_dir
        return self

    def path_of(self, name: str) -> Path:
        """A file it names, where it is."""
        return self._base_dir / name

    def content_problems(self) -> list[str]:
        """What is wrong inside the files it reads, found when the scenario is loaded
        (before any server is set up); none by default."""
        return []

    def content_summary(self) -> list[str]:
        """What the files it reads hold, a line each, for ``harness validate``."""
        return []


class DatasetModel(Located):
    """A dataset entry: its ``kind`` (the workload plugin that prepares it) and the
    database it lives in."""

    kind: str
    database: Ident
    # It is a whole datadir (the server starts on it), so the scenario's only entry.
    whole_datadir: ClassVar[bool] = False

    def scaled(self, factor: float) -> dict[str, Any]:
        """The fields ``--scale FACTOR`` changes, at their scaled values (its size)."""
        return {}


class WorkloadModel(Located, Declares):
    """The main workload: its ``kind`` (the plugin that runs it), when it starts, the
    database it runs on, and where its measured part begins (``warmup_s``)."""

    kind: str
    start: Start = Field(default_factory=lambda: Start(at=0))
    database: Ident
    warmup_s: int = Field(0, ge=0)

    _start = field_validator("start", mode="before")(
        classmethod(lambda cls, v: parse_start(v)))


class SideLoadModel(Model, Declares):
    """What every side load has: a name, when it starts and ends, how often it repeats.

    ``until: complete`` ends after ``repeat`` passes; ``until: main_end`` loops until
    the main workload ends (a pass still running then is stopped); ``duration_s`` stops
    it that many seconds after it started, whichever comes first.

    Each kind is one module of ``harness.sideloads`` whose model subclasses this one,
    declares what it needs (below) and runs one pass (:meth:`run_pass`).
    """

    kind: str = ""
    name: Name
    start: Start
    until: Literal["complete", "main_end"] = "complete"
    repeat: int = Field(1, ge=1, le=1_000_000)
    duration_s: float | None = Field(None, gt=0)
    pause_s: float = Field(0, ge=0)  # between passes
    # Start the side load's processes inside the server's host_profile cgroups: they
    # share its memory limit (and page cache) as programs on the server's machine do.
    in_server_cgroup: bool = False

    # It runs programs (so in_server_cgroup can place them).
    runs_programs: ClassVar[bool] = False
    # The kind of dataset its database must hold (None: any, or none at all).
    dataset_kind: ClassVar[str | None] = None
    # One entry of ``side_loads`` that exercises it beside the default workload's
    # example (its dataset is there, as is the example of ``dataset_kind``): the plugin
    # suite runs every side load through the runner with it.
    example: ClassVar[dict[str, Any]] = {}

    _start = field_validator("start", mode="before")(
        classmethod(lambda cls, v: parse_start(v)))

    @model_validator(mode="after")
    def _ends(self) -> SideLoadModel:
        if self.until == "main_end" and self.repeat != 1:
            raise ValueError("'repeat' counts passes for until: complete; until: main_end "
                             "loops until the main workload ends")
        return self

    def dataset_database(self) -> str | None:
        """The database of a dataset entry it reads (the scenario must prepare it)."""
        return None

    def programs(self) -> list[tuple[str, str]]:
        """Programs it starts: (name or path, how to get it), checked before a run."""
        return []

    def file_problems(self, base: Path) -> list[str]:
        """Why the files it reads (relative to ``base``) cannot be read as it reads
        them: checked by validate and before a run."""
        return []

    def run_pass(self, load: Any, p: Any) -> None:
        """One pass, with the side load's thread (``harness.sideloads.SideLoad``) and the
        pass to fill in; raises to fail it."""
        raise NotImplementedError(f"side load kind {self.kind} runs no pass")
