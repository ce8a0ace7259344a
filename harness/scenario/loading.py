"""Reading a scenario file: the YAML (unique keys, `extends:`), every problem at once
with its line, the variants' my.cnf files, and the loaded scenario's views."""
from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from pydantic import (
    ValidationError,
)

from ..errors import InputError, ScenarioError
from ..inputs import inputfile
from ..server import optionfile
from ..server.catalog import Build
from ..server.mycnf import option_problem, value_problem
from ..server.optionfile import OptionFile
from ..sideloads import PLUGINS as SIDE_LOADS
from ..workloads import PLUGINS
from .host import SYSCTL_PAIRS
from .model import Scenario
from .scaling import scale_sizes
from .servers import OptionValue

MAX_SCENARIO_BYTES = 1 << 20
class LoadedScenario:
    """A validated scenario plus where it came from."""

    def __init__(self, path: Path, text: str, model: Scenario, scale: float = 1.0):
        self.path = path
        self.text = text
        self.model = model
        self.scale = scale

    def scaled(self, factor: float) -> LoadedScenario:
        """The scenario at ``factor`` times its sizes, for larger (lab) hardware: the
        datasets, the buffer pool and redo log (everywhere they are set), the memory
        limit, the swap file, the balloon, side loads' sizes, vm.*_bytes sysctls and the
        bounds of expectations marked ``scaled: true``. Durations, thread counts and IO
        limits stay: a scenario names those for the machine it runs on."""
        if factor == 1:
            return self
        d = self.model.model_dump(exclude_unset=True)
        scale_sizes(d, factor)
        for ds, model_ds in zip(d["dataset"], self.model.dataset, strict=True):
            ds.update(model_ds.scaled(factor))
        for e in d.get("expectations") or []:
            if e.get("scaled"):
                for k in ("min", "max"):
                    if e.get(k) is not None:
                        e[k] = e[k] * factor
        model = Scenario.model_validate(d)
        _locate(model, self.path.parent)
        text = f"# scaled x{factor:g} (harness run --scale)\n{self.text}"
        return LoadedScenario(self.path, text, model, scale=factor)

    def amended(self, change: Callable[[dict[str, Any]], None]) -> LoadedScenario:
        """This scenario with ``change`` made to its YAML document (after ``extends``),
        validated again, at the same scale: the scenario a command runs in place of the
        one it was given (compare's my.cnf variants, switchback's windows)."""
        data = yaml.safe_load(self.text)
        change(data)
        return parse_scenario(self.path, yaml.safe_dump(data, sort_keys=False)
                              ).scaled(self.scale)

    def variant_sysctls(self, variant: str) -> dict[str, int | str]:
        """host.sysctls overlaid with the variant's (a ratio replaces its _bytes twin)."""
        out = dict(self.model.host.sysctls) if self.model.host else {}
        for k, v in self.model.variants[variant].sysctls.items():
            for pair in SYSCTL_PAIRS:
                if k in pair:
                    for twin in pair:
                        out.pop(twin, None)
            out[k] = v
        return out

    def variant_options(self, variant: str, file: OptionFile | None = None
                        ) -> dict[str, OptionValue]:
        """Base ``mysqld`` options overlaid with the variant's file, then its inline
        options. The file as one build reads it (:func:`variant_file`), or without a
        build its ``[mysqld]`` section (what the guard looks at before any build)."""
        v = self.model.variants[variant]
        opts = dict(self.model.mysqld)
        if file is not None:
            opts.update(file.options)
        elif v.my_cnf:
            opts.update(_mysqld_group(self.path.parent / v.my_cnf))
        opts.update(v.mysqld)
        return opts

    def variant_file(self, variant: str, build: Build) -> OptionFile | None:
        """The variant's my.cnf as ``build``'s mysqld reads it (None without a file)."""
        v = self.model.variants[variant]
        if not v.my_cnf:
            return None
        try:
            return optionfile.read(self.path.parent / v.my_cnf, build)
        except InputError as e:
            raise ScenarioError(str(self.path), [f"variants.{variant}.my_cnf: {e}"]) from None


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


_TAGS = (*PLUGINS, *SIDE_LOADS)


def _yaml_loc(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    # pydantic puts discriminator tags and validator names in locs; keep the YAML path.
    return tuple(p for p in loc if not (isinstance(p, str) and (
        p in _TAGS or p.startswith("function-") or p.startswith("constrained-"))))


class _UniqueKeys(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """A key given twice is an error: a second ``mysqld:`` block must not silently
    replace the first. On libyaml's parser where PyYAML has it (the same YAML, parsed
    in C)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> Any:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.setdefault(key, key_node.start_mark.line + 1)
            except TypeError:
                continue  # an unhashable key: the constructor reports it
            if first != key_node.start_mark.line + 1:
                raise yaml.constructor.ConstructorError(
                    None, None, f"'{key}' is given twice (first on line {first})",
                    key_node.start_mark)
        return super().construct_mapping(node, deep=deep)


def _merge(base: Any, over: Any) -> Any:
    """``over`` on ``base``: mappings merge key by key, anything else replaces."""
    if isinstance(base, dict) and isinstance(over, dict):
        return {**base, **{k: _merge(base.get(k), v) for k, v in over.items()}}
    return over


def _extended(path: Path, data: dict[str, Any], seen: list[Path]) -> dict[str, Any]:
    """``data`` over the scenario file its ``extends`` names (which may extend another)."""
    data = dict(data)
    ref = data.pop("extends")
    if not isinstance(ref, str):
        raise ScenarioError(str(path), ["extends: a scenario file name (relative to this "
                                        "file)"])
    base_path = (path.parent / ref).resolve()
    if base_path in seen:
        raise ScenarioError(str(path), [f"extends: {ref}: a cycle ("
                                        f"{' -> '.join(x.name for x in [*seen, base_path])})"])
    base = _base_scenario(path, ref, base_path)
    if "extends" in base:
        base = _extended(base_path, base, [*seen, base_path])
    return dict(_merge(base, data))


def _base_scenario(path: Path, ref: str, base_path: Path) -> dict[str, Any]:
    """The document of the file ``extends`` names, refused unless it reads as a
    scenario (saying why in a few words, never its contents: it may be any file)."""
    try:
        base = yaml.load(read_small_text(base_path), Loader=_UniqueKeys)
    except (OSError, ValueError) as e:
        raise ScenarioError(str(path), [f"extends: {ref}: {getattr(e, 'strerror', None) or e}"]
                            ) from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark else ""
        raise ScenarioError(str(path), [f"extends: {ref}: not a YAML scenario{where}: "
                                        f"{getattr(e, 'problem', None) or 'unreadable'}"]
                            ) from None
    if not isinstance(base, dict):
        raise ScenarioError(str(path), [f"extends: {ref}: not a scenario (a mapping)"])
    strange = [k for k in base if k not in Scenario.model_fields and k != "extends"]
    if strange:
        raise ScenarioError(str(path), [f"extends: {ref}: not a scenario: "
                                        + _unknown_fields(strange)])
    return base


def _unknown_fields(strange: list[Any]) -> str:
    """How many unknown top-level fields, named only when every one looks like a field
    name (the file may be any file: its contents are not shown)."""
    shown = [k for k in strange if isinstance(k, str) and re.fullmatch(r"\w{1,40}", k)]
    return (f"{len(strange)} unknown top-level field(s)"
            + (f" ({', '.join(shown[:5])})" if len(shown) == len(strange) else ""))


def parse_scenario(path: Path, text: str) -> LoadedScenario:
    """Validate scenario text; raise :class:`ScenarioError` listing every problem."""
    p = str(path)
    data, root = _yaml_document(p, text)
    if "extends" in data:
        data = _extended(path, data, [path.resolve()])
        text = f"# {path}, merged with what it extends\n" + yaml.safe_dump(data,
                                                                             sort_keys=False)
    try:
        model = Scenario.model_validate(data)
    except ValidationError as e:
        raise ScenarioError(p, [_problem(err, root) for err in e.errors()]) from None
    _locate(model, path.parent)
    problems = _file_problems(path, model)
    if problems:
        raise ScenarioError(p, problems)
    return LoadedScenario(path, text, model)


def _locate(model: Scenario, base_dir: Path) -> None:
    """Its datasets and workload find the files they name in the scenario's folder."""
    for part in [*model.dataset, model.workload]:
        part.located(base_dir)


def _yaml_document(p: str, text: str) -> tuple[dict[str, Any], yaml.Node | None]:
    """The scenario's mapping and its YAML nodes (for line numbers), or ScenarioError."""
    if len(text.encode()) > MAX_SCENARIO_BYTES:
        raise ScenarioError(p, [f"file is larger than {MAX_SCENARIO_BYTES} bytes; "
                                "a scenario is a short YAML document"])
    loader = _UniqueKeys(text)
    try:  # one parse: the nodes (for line numbers), then the mapping built from them
        root = loader.get_single_node()
        data = loader.construct_document(root) if root is not None else None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark else ""
        raise ScenarioError(p, [f"{where}not valid YAML: {getattr(e, 'problem', e)}"]) from None
    finally:
        loader.dispose()
    if data is None:
        raise ScenarioError(p, ["file is empty; see scenarios/quickstart.yaml for an example"])
    if not isinstance(data, dict):
        raise ScenarioError(p, [f"top level must be a mapping of fields, not "
                                f"{type(data).__name__}"])
    return data, root


def _problem(err: Any, root: yaml.Node | None) -> str:
    """One validation error as ``line N: field.path: message``."""
    loc = _yaml_loc(tuple(err["loc"]))
    line = _line_of(root, loc)
    msg = re.sub(r"^Value error, ", "", err["msg"])
    if err["type"] == "union_tag_invalid" and not err["ctx"]["tag"]:
        msg = f"'kind' is required; known kinds: {err['ctx']['expected_tags']}"
    elif err["type"] == "union_tag_invalid":
        msg = (f"unknown kind '{err['ctx']['tag']}'; known kinds: "
               f"{err['ctx']['expected_tags']}")
    where = ".".join(str(x) for x in loc) or "(top level)"
    return f"{'line ' + str(line) + ': ' if line else ''}{where}: {msg}"


def _file_problems(path: Path, model: Scenario) -> list[str]:
    """What a valid model still gets wrong about the files around it."""
    problems = _input_problems(model)
    for i, ld in enumerate(model.side_loads):
        problems += [f"side_loads[{i}] ({ld.name}).file: {why}"
                     for why in ld.file_problems(path.parent)]
    if model.between_runs == "restore" and not model.snapshot:
        problems.append("between_runs: 'restore' needs snapshot: true (there is nothing to "
                        "restore from); use restart or warmup")
    for name, v in model.variants.items():
        if v.my_cnf:
            problems += _my_cnf_problems(path.parent / v.my_cnf, f"variants.{name}.my_cnf")
    return problems


def _input_problems(model: Scenario) -> list[str]:
    """The datasets' and the workload's input files: missing, unreadable, or wrong
    inside (each plugin says what it reads)."""
    problems = []
    parts = [(f"dataset[{i}]", d) for i, d in enumerate(model.dataset)]
    for where, part in [*parts, ("workload", model.workload)]:
        found = [f"{where}.{field_name}: {why}" for field_name, name in part.files().items()
                 if not (field_name in part.folders() and part.path_of(name).is_dir())
                 and (why := inputfile.problem(part.path_of(name), "input file"))]
        problems += found or [f"{where}: {why}" for why in part.content_problems()]
    return problems


def read_small_text(path: Path, limit: int = MAX_SCENARIO_BYTES) -> str:
    """A small regular UTF-8 scenario file, or ValueError that says what is wrong with
    it in a few words (never its contents)."""
    try:
        return inputfile.read_text(path, "scenario", limit)
    except inputfile.InputFileError as e:
        raise ValueError(e.why) from None


def _mysqld_group(file: Path) -> dict[str, OptionValue]:
    """The file's ``[mysqld]`` options as my_print_defaults reads them (no build yet),
    or ScenarioError naming the file."""
    try:
        return dict(optionfile.mysqld_group(file))
    except InputError as e:
        raise ScenarioError(str(file), [str(e)]) from None


def _my_cnf_problems(file: Path, where: str) -> list[str]:
    try:
        opts = optionfile.mysqld_group(file)
    except inputfile.InputFileError as e:
        return [f"{where}: {e.why}: {file}"]
    except InputError as e:
        return [f"{where}: {e}"]
    return [f"{where}: {file}: {why}" for k, v in opts.items()
            if (why := option_problem(k, v) or value_problem(k, v))]


def load_scenario(path: str | Path) -> LoadedScenario:
    path = Path(path)
    try:
        text = inputfile.read_text(path, "scenario", MAX_SCENARIO_BYTES)
    except inputfile.InputFileError as e:
        refused = ScenarioError(str(path), [e.why])
        refused.exit_code = e.exit_code  # a file not there: nothing was checked
        raise refused from None
    return parse_scenario(path, text)
