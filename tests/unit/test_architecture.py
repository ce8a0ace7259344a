"""The architecture's rules, read from the source: no import cycle between modules, counting
the imports inside functions too (only ``if TYPE_CHECKING:`` blocks, which never run, are
left out); no import against the layers (reports and analysis never import the driver,
the server building blocks never import what runs on them); every subprocess starts in
proc.py."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

HARNESS = Path(__file__).parent.parent.parent / "harness"
DISCOVERING = ("harness.workloads", "harness.sideloads", "harness.collectors",
               "harness.providers")

# Each package (or module) and the packages it must never import, anywhere in its code.
NEVER = {
    "harness.report": ("harness.runner", "harness.providers", "harness.cli", "harness.bench"),
    "harness.analysis": ("harness.runner", "harness.providers", "harness.cli", "harness.bench",
                         "harness.report"),
    "harness.server": ("harness.providers", "harness.runner", "harness.cli", "harness.report",
                       "harness.analysis", "harness.workloads", "harness.sideloads",
                       "harness.collectors", "harness.scenario", "harness.store",
                       "harness.bench", "harness.host"),
    "harness.inputs": ("harness.",),  # the standard library and harness.errors only
    "harness.store": ("harness.runner", "harness.providers", "harness.cli", "harness.report",
                      "harness.analysis", "harness.workloads", "harness.scenario",
                      "harness.server"),
    "harness.host": ("harness.providers", "harness.runner", "harness.cli", "harness.report",
                     "harness.analysis", "harness.workloads", "harness.sideloads",
                     "harness.collectors", "harness.scenario", "harness.store",
                     "harness.bench"),
    "harness.providers": ("harness.runner", "harness.cli", "harness.report",
                          "harness.analysis", "harness.workloads", "harness.sideloads",
                          "harness.collectors", "harness.store", "harness.bench"),
    "harness.workloads": ("harness.runner", "harness.providers", "harness.cli",
                          "harness.report", "harness.sideloads", "harness.collectors",
                          "harness.bench", "harness.analysis"),  # analysis reads workloads
    # the statistics both use, below both
    "harness.stats": ("harness.runner", "harness.providers", "harness.cli", "harness.report",
                      "harness.analysis", "harness.workloads", "harness.sideloads",
                      "harness.collectors", "harness.scenario", "harness.bench",
                      "harness.server", "harness.host"),
    "harness.collectors": ("harness.runner", "harness.providers", "harness.cli",
                           "harness.report", "harness.analysis", "harness.workloads",
                           "harness.sideloads", "harness.scenario", "harness.store",
                           "harness.bench"),
    "harness.errors": ("harness.",),  # but the exit codes, a leaf
    "harness.exits": ("harness.",),
    "harness.formats": ("harness.",),
    "harness.table": ("harness.",),
}
NEVER_EXCEPT = {"harness.inputs": ("harness.errors", "harness.exits"),
                "harness.errors": ("harness.exits",)}


def _modules(root: Path) -> dict[str, Path]:
    out = {}
    for p in root.rglob("*.py"):
        parts = list(p.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


MODULES = _modules(HARNESS)


def _type_checking_only(tree: ast.Module) -> set[int]:
    """The ids of the import nodes under ``if TYPE_CHECKING:`` (read by mypy, never run)."""
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.If) and isinstance(n.test, ast.Name) and \
                n.test.id == "TYPE_CHECKING":
            out |= {id(x) for b in n.body for x in ast.walk(b)}
    return out


def _imports(name: str, modules: dict[str, Path] = MODULES,
             discovering: tuple[str, ...] = DISCOVERING) -> set[str]:
    """The modules of ``modules`` that ``name`` imports when its code runs: at the top,
    inside functions, anywhere but under ``if TYPE_CHECKING:``."""
    path = modules[name]
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    skip = _type_checking_only(tree)
    out = set()
    for n in ast.walk(tree):
        if id(n) in skip:
            continue
        if isinstance(n, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - (n.level - 1)] \
                if n.level else []
            target = ".".join(base + ([n.module] if n.module else []))
            for a in n.names:
                full = f"{target}.{a.name}"
                out.add(full if full in modules else target)
        elif isinstance(n, ast.Import):
            out |= {a.name for a in n.names}
    if name in discovering:  # its registry imports every module in it
        out |= {m for m in modules if m.rpartition(".")[0] == name}
    return {m for m in out if m in modules and m != name}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """An import cycle of ``graph`` (module: the modules it imports), or None."""
    done: set[str] = set()

    def visit(m: str, path: list[str]) -> list[str] | None:
        if m in path:
            return path[path.index(m):] + [m]
        if m in done:
            return None
        for n in sorted(graph[m]):
            found = visit(n, path + [m])
            if found:
                return found
        done.add(m)
        return None

    for m in sorted(graph):
        found = visit(m, [])
        if found:
            return found
    return None


def _in(name: str, package: str) -> bool:
    return name == package or name.startswith(package if package.endswith(".")
                                              else package + ".")


def test_no_import_against_the_layers():
    bad = []
    for name in MODULES:
        for package, never in NEVER.items():
            if not _in(name, package):
                continue
            allowed = NEVER_EXCEPT.get(package, ())
            bad += [f"{name} imports {m}" for m in sorted(_imports(name))
                    if any(_in(m, x) for x in never) and not _in(m, package)
                    and not any(_in(m, a) for a in allowed)]
    assert not bad, "\n".join(bad)


def test_no_import_cycle_between_modules():
    assert _cycle({m: _imports(m) for m in MODULES}) is None
    assert len(MODULES) > 90


def test_a_cycle_made_by_an_import_inside_a_function_is_found(tmp_path):
    pkg = tmp_path / "planted"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .sub import b\n")
    (pkg / "sub" / "b.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from .. import a\n")  # type-only: no cycle
    modules = _modules(pkg)
    graph = {m: _imports(m, modules, ()) for m in modules}
    assert _cycle(graph) is None
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..a import g\n    return g\n")
    graph = {m: _imports(m, modules, ()) for m in modules}
    assert _cycle(graph) == ["planted.a", "planted.sub.b", "planted.a"]


def test_every_subprocess_starts_in_proc():
    starters = {"run", "Popen", "call", "check_call", "check_output", "getoutput", "system",
                "execv", "execvp", "spawnv"}
    for name, path in MODULES.items():
        if name in ("harness.proc", "harness.reaper"):  # the reaper: the program that
            continue  # proc.run(contained=True) runs a child through
        for n in ast.walk(ast.parse(path.read_text())):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and \
                    isinstance(n.func.value, ast.Name) and \
                    n.func.value.id in ("subprocess", "os") and n.func.attr in starters:
                raise AssertionError(f"{path}:{n.lineno}: {n.func.value.id}.{n.func.attr} "
                                     "outside harness/proc.py")


def test_the_architecture_picture_names_every_package_and_nothing_gone():
    for doc, heading in (("docs/architecture.md", "# Architecture"),):
        text = (HARNESS.parent / doc).read_text()
        block = text.split(f"{heading}\n\n```\n", 1)[1].split("```", 1)[0]
        named = {m.rstrip("/") for m in (line.split()[0] for line in block.splitlines()
                                         if line.startswith("harness/"))}
        packages = {str(p.parent.relative_to(HARNESS.parent))
                    for p in HARNESS.glob("*/__init__.py")}
        assert packages - named == set(), f"packages {doc}'s architecture leaves out"
        assert {n for n in named if not (HARNESS.parent / n).exists()} == set(), \
            f"paths in {doc}'s architecture that do not exist"


def test_two_plugins_of_one_name_are_refused_naming_both(tmp_path, monkeypatch):
    from harness.model import discover

    pkg = tmp_path / "planted_plugins"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "first.py").write_text("PLUGIN = ('kind', 'one')\n")
    (pkg / "helper.py").write_text("X = 1\n")  # no PLUGIN: not a plugin
    (pkg / "second.py").write_text("PLUGIN = ('kind', 'two')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import planted_plugins
    by_kind = discover("planted_plugins", planted_plugins.__path__,
                       lambda p: p[0] if p[1] == "one" else None)
    assert by_kind == {"kind": ("kind", "one")}
    with pytest.raises(RuntimeError, match=r"two plugins named 'kind': "
                       r"planted_plugins.first and planted_plugins.second"):
        discover("planted_plugins", planted_plugins.__path__, lambda p: p[0])


# ruff's complexity limit, 12, counted the strict way, radon's (every comprehension and
# boolean operator a branch): no function past it (#38 took the count from 32 to 0).
LIMIT = 12


def _complexities() -> list[tuple[int, str]]:
    """(radon's cyclomatic complexity, "file: function") of every function and method
    of the package, as `radon cc` lists them (a closure counts in its function)."""
    from radon.complexity import cc_visit

    out = []
    for path in sorted(HARNESS.rglob("*.py")):
        for f in cc_visit(path.read_text()):  # functions and methods, then classes
            if not hasattr(f, "methods"):
                out.append((f.complexity, f"{path.relative_to(HARNESS)}: {f.fullname}"))
    return out


def test_no_function_is_past_the_complexity_limit_counted_radon_s_way():
    found = _complexities()
    assert len(found) > 1500  # the whole package was read (1,803 on 2026-11-27)
    over = sorted(f"{name} ({c})" for c, name in found if c > LIMIT)
    assert not over, f"past {LIMIT} counted radon's way; split them: {over}"


# Rooms, not halls: the packages a maintainer reads first keep each module short enough
# to hold in one's head, and the command line's functions each fit on a screen.
MAX_MODULE_LINES = {"scenario": 400, "runner": 400}
MAX_CLI_FUNCTION_LINES = 60


def test_no_module_of_the_scenario_or_the_runner_is_a_hall():
    long = [f"{p.relative_to(HARNESS)}: {n} lines" for pkg, most in MAX_MODULE_LINES.items()
            for p in sorted((HARNESS / pkg).rglob("*.py"))
            if (n := len(p.read_text().splitlines())) >= most]
    assert long == []


def test_no_function_of_the_command_line_is_longer_than_a_screen():
    long = []
    for p in sorted((HARNESS / "cli").rglob("*.py")):
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > MAX_CLI_FUNCTION_LINES:
                    long.append(f"{p.relative_to(HARNESS)}: {node.name}, {n} lines")
    assert long == []


# A provider's own modules (a target kind's, and the external servers'), which nothing
# outside harness/providers imports: it asks the package (get_provider, lab_hosts,
# external_server ...) and the base types. The bench measures the providers themselves.
PROVIDER_MODULES = ("harness.providers.local", "harness.providers.docker",
                    "harness.providers.ansible", "harness.providers.external",
                    "harness.providers.dockerd")
PROVIDER_CLASSES = ("LocalProvider", "DockerProvider", "AnsibleProvider", "ExternalServer",
                    "Sandbox", "ContainerServer", "AnsibleServer")


def test_nothing_outside_the_providers_imports_a_provider_or_tests_its_class():
    bad = [f"{name} imports {m}" for name in MODULES
           if not _in(name, "harness.providers") and not _in(name, "harness.bench")
           for m in sorted(_imports(name)) if m in PROVIDER_MODULES]
    for name, path in MODULES.items():
        if _in(name, "harness.providers"):
            continue
        for n in ast.walk(ast.parse(path.read_text())):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and \
                    n.func.id == "isinstance" and len(n.args) == 2:
                named = {x.attr if isinstance(x, ast.Attribute) else getattr(x, "id", "")
                         for x in ast.walk(n.args[1])}
                bad += [f"{name}: isinstance(..., {c})" for c in PROVIDER_CLASSES
                        if c in named]
    assert bad == []


def test_every_target_kind_is_found_by_its_declaration():
    from harness.providers import get_provider, kinds

    assert {k.usage() for k in kinds().values()} == {"local", "docker", "ansible:INVENTORY"}
    assert get_provider("local").target == "local"
    for wrong in ("ansible", "local:x", "nope"):
        with pytest.raises(Exception, match="known: .*ansible:INVENTORY"):
            get_provider(wrong)
