"""The architecture's rules, read from the source: reports and analysis never import the
driver, no import cycle between modules, and every subprocess starts in proc.py."""
from __future__ import annotations

import ast
from pathlib import Path

HARNESS = Path(__file__).parent.parent.parent / "harness"
DISCOVERING = ("harness.workloads", "harness.sideloads", "harness.collectors")


def _modules() -> dict[str, Path]:
    out = {}
    for p in HARNESS.rglob("*.py"):
        parts = list(p.relative_to(HARNESS.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


MODULES = _modules()


def _imports(name: str, top_level_only: bool) -> set[str]:
    """The harness modules ``name`` imports (at import time only, or anywhere)."""
    path = MODULES[name]
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    out = set()
    for n in nodes:
        if isinstance(n, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - (n.level - 1)] \
                if n.level else []
            target = ".".join(base + ([n.module] if n.module else []))
            for a in n.names:
                full = f"{target}.{a.name}"
                out.add(full if full in MODULES else target)
        elif isinstance(n, ast.Import):
            out |= {a.name for a in n.names}
    if name in DISCOVERING:  # its registry imports every module in it
        out |= {m for m in MODULES if m.rpartition(".")[0] == name}
    return {m for m in out if m in MODULES and m != name}


def test_reports_and_analysis_never_import_the_runner():
    for name in MODULES:
        if name.startswith(("harness.report", "harness.analysis")):
            bad = {m for m in _imports(name, top_level_only=False)
                   if m.startswith("harness.runner")}
            assert not bad, f"{name} imports {bad}"


def test_no_import_cycle_between_modules():
    graph = {m: _imports(m, top_level_only=True) for m in MODULES}
    done: set[str] = set()

    def visit(m: str, path: list[str]) -> None:
        if m in path:
            raise AssertionError("import cycle: " + " -> ".join(path[path.index(m):] + [m]))
        if m in done:
            return
        for n in sorted(graph[m]):
            visit(n, path + [m])
        done.add(m)

    for m in sorted(graph):
        visit(m, [])
    assert len(done) == len(MODULES) > 90


def test_every_subprocess_starts_in_proc():
    starters = {"run", "Popen", "call", "check_call", "check_output", "getoutput", "system",
                "execv", "execvp", "spawnv"}
    for name, path in MODULES.items():
        if name == "harness.proc":
            continue
        for n in ast.walk(ast.parse(path.read_text())):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and \
                    isinstance(n.func.value, ast.Name) and \
                    n.func.value.id in ("subprocess", "os") and n.func.attr in starters:
                raise AssertionError(f"{path}:{n.lineno}: {n.func.value.id}.{n.func.attr} "
                                     "outside harness/proc.py")
