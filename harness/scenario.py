"""Scenario files: YAML validated by pydantic v2 models.

Every model forbids unknown keys so a typo is an error, and :func:`load_scenario`
reports every problem at once, each with the file, the field path and the line:
``scenarios/x.yaml:12: workload.duraton_s: Extra inputs are not permitted``.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal, Union

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
)

from .catalog import CATALOG, DEFAULT_SERVER
from .errors import ScenarioError
from .mycnf import parse_mycnf

MAX_SCENARIO_BYTES = 1 << 20
Ident = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")]
Name = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")]
OptionValue = str | int | float | bool | None

SYSBENCH_TESTS = ("oltp_read_only", "oltp_read_write", "oltp_write_only", "oltp_point_select",
                  "oltp_update_index", "oltp_update_non_index", "oltp_insert", "oltp_delete",
                  "select_random_points", "select_random_ranges")


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ServerSpec(Model):
    """A server: a catalog name, or an unpacked tarball by path."""

    name: Name | None = None
    basedir: str | None = None

    @model_validator(mode="after")
    def _one_of(self) -> ServerSpec:
        if (self.name is None) == (self.basedir is None):
            raise ValueError("give exactly one of 'name' (a catalog server) or 'basedir'")
        if self.name is not None and self.name not in CATALOG:
            raise ValueError(f"unknown server '{self.name}'; known: {', '.join(sorted(CATALOG))}")
        return self

    @property
    def label(self) -> str:
        return self.name or f"basedir:{self.basedir}"


class Variant(Model):
    """A my.cnf overlay: options inline, and/or the [mysqld] section of a file."""

    description: str = ""
    mysqld: dict[str, OptionValue] = Field(default_factory=dict)
    my_cnf: str | None = None


class SysbenchDataset(Model):
    """sysbench tables ``sbtest1..N`` in one database."""

    kind: Literal["sysbench"] = "sysbench"
    database: Ident = "sbtest"
    tables: int = Field(1, ge=1, le=10000)
    table_size: int = Field(10000, ge=1)
    prepare_threads: int | None = Field(None, ge=1, le=256)


class SysbenchWorkload(Model):
    """A sysbench 1.0 OLTP test against a sysbench dataset."""

    kind: Literal["sysbench"] = "sysbench"
    test: Literal[SYSBENCH_TESTS]  # type: ignore[valid-type]
    database: Ident = "sbtest"
    threads: int = Field(1, ge=1, le=4096)
    rand_type: Literal["uniform", "gaussian", "special", "pareto"] = "uniform"
    duration_s: int = Field(60, ge=1)
    warmup_s: int = Field(0, ge=0)
    report_interval_s: int = Field(1, ge=1)
    options: dict[str, str | int | float | bool] = Field(default_factory=dict)

    @field_validator("options")
    @classmethod
    def _no_managed(cls, v: dict[str, Any]) -> dict[str, Any]:
        managed = {"mysql-host", "mysql-port", "mysql-user", "mysql-password", "mysql-socket",
                   "mysql-db", "tables", "table-size", "threads", "time", "report-interval",
                   "report-checkpoints", "rand-type", "percentile", "config-file"}
        bad = [k for k in v if k.replace("_", "-") in managed]
        if bad:
            raise ValueError(f"set by the harness, not in options: {', '.join(bad)}")
        return v


def _kind(default: str) -> Discriminator:
    """Pick the model by ``kind:``, defaulting to ``default`` where it is left out."""
    def pick(v: Any) -> str | None:
        if isinstance(v, dict):
            return str(v.get("kind", default))
        return getattr(v, "kind", None)
    return Discriminator(pick)


# One kind each today; new kinds (mysqldump, ssb, insert_benchmark ...) join these unions.
Workload = Annotated[Union[Annotated[SysbenchWorkload, Tag("sysbench")]],  # noqa: UP007
                     _kind("sysbench")]
Dataset = Annotated[Union[Annotated[SysbenchDataset, Tag("sysbench")]],  # noqa: UP007
                    _kind("sysbench")]


class CollectorSpec(Model):
    """One collector's settings; collectors not named run at their defaults."""

    enabled: bool = True
    interval_s: float | None = Field(None, gt=0, le=3600)


class Scenario(Model):
    """One experiment: servers x variants x repetitions, a dataset and a workload."""

    name: Name
    description: str = ""
    servers: list[ServerSpec] = Field(default_factory=lambda: [ServerSpec(name=DEFAULT_SERVER)],
                                             min_length=1)
    mysqld: dict[str, OptionValue] = Field(default_factory=dict)
    variants: dict[Name, Variant] = Field(default_factory=lambda: {"default": Variant()},
                                          min_length=1)
    dataset: list[Dataset] = Field(min_length=1)
    workload: Workload
    repetitions: int = Field(1, ge=1, le=1000)
    collectors: dict[str, CollectorSpec] = Field(default_factory=dict)
    wakeup_probe: bool = True
    cpu_keepalive: bool | Literal["pm_qos", "spinner"] = False

    @field_validator("collectors")
    @classmethod
    def _known_collectors(cls, v: dict[str, CollectorSpec]) -> dict[str, CollectorSpec]:
        from .collectors import REGISTRY

        unknown = sorted(set(v) - set(REGISTRY))
        if unknown:
            raise ValueError(f"unknown collector(s) {', '.join(unknown)}; known: "
                             f"{', '.join(REGISTRY)}")
        return v

    @field_validator("dataset", mode="before")
    @classmethod
    def _one_or_many(cls, v: Any) -> Any:
        return [v] if isinstance(v, dict) else v

    @field_validator("servers", mode="before")
    @classmethod
    def _servers(cls, v: Any) -> Any:
        if isinstance(v, str | dict):
            v = [v]
        out = []
        for item in v if isinstance(v, list) else [v]:
            out.append({"name": item} if isinstance(item, str) else item)
        return out

    @model_validator(mode="after")
    def _workload_has_data(self) -> Scenario:
        dbs = {d.database for d in self.dataset}
        if self.workload.database not in dbs:
            raise ValueError(f"workload.database '{self.workload.database}' is not prepared by "
                             f"any dataset entry (datasets: {', '.join(sorted(dbs))})")
        return self

    def dataset_for(self, database: str) -> SysbenchDataset:
        return next(d for d in self.dataset if d.database == database)


class LoadedScenario:
    """A validated scenario plus where it came from."""

    def __init__(self, path: Path, text: str, model: Scenario):
        self.path = path
        self.text = text
        self.model = model

    def variant_options(self, variant: str) -> dict[str, OptionValue]:
        """Base ``mysqld`` options overlaid with the variant's file, then its inline options."""
        v = self.model.variants[variant]
        opts = dict(self.model.mysqld)
        if v.my_cnf:
            opts.update(parse_mycnf((self.path.parent / v.my_cnf).read_text()))
        opts.update(v.mysqld)
        return opts


def _line_of(root: yaml.Node | None, loc: tuple[Any, ...]) -> int | None:
    """1-based line of the YAML node at ``loc``, or of its nearest existing parent."""
    node, line = root, None
    for key in loc:
        if node is None:
            break
        line = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            nxt = None
            for k, v in node.value:
                if k.value == str(key):
                    nxt, line = v, k.start_mark.line + 1
                    break
            node = nxt
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int):
            node = node.value[key] if key < len(node.value) else None
        else:
            node = None
    if node is not None:
        line = node.start_mark.line + 1
    return line


_TAGS = ("sysbench",)


def _yaml_loc(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    # pydantic puts discriminator tags and validator names in locs; keep the YAML path.
    return tuple(p for p in loc if not (isinstance(p, str) and (
        p in _TAGS or p.startswith("function-") or p.startswith("constrained-"))))


def parse_scenario(path: Path, text: str) -> LoadedScenario:
    """Validate scenario text; raise :class:`ScenarioError` listing every problem."""
    p = str(path)
    if len(text.encode()) > MAX_SCENARIO_BYTES:
        raise ScenarioError(p, [f"file is larger than {MAX_SCENARIO_BYTES} bytes; "
                                "a scenario is a short YAML document"])
    try:
        data = yaml.safe_load(text)
        root = yaml.compose(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark else ""
        raise ScenarioError(p, [f"{where}not valid YAML: {getattr(e, 'problem', e)}"]) from None
    if data is None:
        raise ScenarioError(p, ["file is empty; see scenarios/quickstart.yaml for an example"])
    if not isinstance(data, dict):
        raise ScenarioError(p, [f"top level must be a mapping of fields, not "
                                f"{type(data).__name__}"])
    try:
        model = Scenario.model_validate(data)
    except ValidationError as e:
        problems = []
        for err in e.errors():
            loc = _yaml_loc(tuple(err["loc"]))
            line = _line_of(root, loc)
            msg = re.sub(r"^Value error, ", "", err["msg"])
            if err["type"] == "union_tag_invalid":
                msg = (f"unknown kind '{err['ctx']['tag']}'; known kinds: "
                       f"{err['ctx']['expected_tags']}")
            where = ".".join(str(x) for x in loc) or "(top level)"
            problems.append(f"{'line ' + str(line) + ': ' if line else ''}{where}: {msg}")
        raise ScenarioError(p, problems) from None
    problems = []
    for name, v in model.variants.items():
        if v.my_cnf and not (path.parent / v.my_cnf).is_file():
            problems.append(f"variants.{name}.my_cnf: file not found: "
                            f"{path.parent / v.my_cnf}")
    if problems:
        raise ScenarioError(p, problems)
    return LoadedScenario(path, text, model)


def load_scenario(path: str | Path) -> LoadedScenario:
    path = Path(path)
    try:
        if path.stat().st_size > MAX_SCENARIO_BYTES:
            raise ScenarioError(str(path), [f"file is larger than {MAX_SCENARIO_BYTES} bytes"])
        text = path.read_text()
    except FileNotFoundError:
        raise ScenarioError(str(path), ["no such file"]) from None
    except IsADirectoryError:
        raise ScenarioError(str(path), ["is a directory, not a scenario file"]) from None
    except UnicodeDecodeError:
        raise ScenarioError(str(path), ["not a text file (not UTF-8)"]) from None
    return parse_scenario(path, text)
