"""One version per output format (harness/formats.py), and every place that states it
agrees: each schema's own version and marker, docs/output.md's table, the CHANGELOG's
newest entry and `harness --version`."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness import __version__, formats

ROOT = Path(__file__).resolve().parent.parent.parent
SCHEMAS = ROOT / "docs" / "schemas"
SCHEMA_OF = {f.name: f"{f.name}.schema.json" for f in formats.OBJECTS} | {
    "export": "export.columns.json"}


def test_each_schema_states_the_version_the_code_prints():
    for f in formats.ALL:
        schema = json.loads((SCHEMAS / SCHEMA_OF[f.name]).read_text())
        assert schema["version"] == f.version, f


def test_the_json_objects_name_their_format_and_the_schema_requires_it():
    for f in formats.OBJECTS:
        if f is formats.REFERENCE:  # a file of its own, with its reference_version
            continue
        schema = json.loads((SCHEMAS / SCHEMA_OF[f.name]).read_text())
        assert "format" in schema["required"]
        marker = schema["properties"]["format"]["properties"]
        assert {k: v["const"] for k, v in marker.items()} == f.marker()


def test_the_published_schemas_take_an_added_field():
    for p in SCHEMAS.glob("*.schema.json"):
        text = p.read_text()
        assert '"additionalProperties": false' not in text, p.name
        assert '"unevaluatedProperties": false' not in text, p.name


def test_output_md_lists_each_format_at_its_version():
    table = (ROOT / "docs" / "output.md").read_text()
    for f in formats.ALL:
        row = next(ln for ln in table.splitlines() if SCHEMA_OF[f.name] in ln)
        assert row.rstrip().endswith(f"| {f.version} |"), row


def test_the_changelog_newest_release_is_the_harness_version():
    text = (ROOT / "CHANGELOG.md").read_text()
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d\d-\d\d)$", text, re.M)
    assert releases and releases[0][0] == __version__, releases[:2]
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.search(rf'^version = "{re.escape(__version__)}"$', pyproject, re.M)
    dates = [d for _, d in releases]
    assert dates == sorted(dates, reverse=True)


def test_the_parser_names_regress_figures_as_the_plugins_do():
    from harness.analysis.figures import REGRESS_METRICS
    from harness.cli import parser

    assert parser.REGRESS_METRICS == tuple(REGRESS_METRICS)
    from harness.cli.args.common import REGRESS_KEYS
    assert REGRESS_KEYS == {name: key for name, (key, _) in REGRESS_METRICS.items()}


def test_help_loads_none_of_the_commands_code():
    import subprocess
    import sys

    code = ("import sys; from harness.cli.parser import build_parser; build_parser(); "
            "print(sorted(m for m in sys.modules if m.startswith(('harness.cli.', "
            "'harness.analysis.', 'harness.store', 'harness.workloads', 'numpy', "
            "'sqlalchemy', 'scipy'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout
    loaded = eval(out)
    assert [m for m in loaded if not m.startswith("harness.cli.args")] == [
        "harness.analysis.defaults", "harness.cli.parser"], out
    assert "harness.cli.args.common" in loaded  # the sub-parsers, and none of the commands


@pytest.mark.parametrize(("argv", "name", "items"), [
    (["servers", "list", "--json"], "servers", "servers"),
    (["sandboxes", "list", "--json"], "sandboxes", "sandboxes"),
    (["runs", "--json"], "runs", "runs"),
])
def test_a_listing_is_an_object_its_format_first(argv, name, items, tmp_path, monkeypatch,
                                                 capsys):
    """Every --json output is an object whose first field says what it is: a script
    reading a listing reads its items under their name, never a bare list."""
    from harness.cli import main

    from ..schemas import conform

    monkeypatch.setenv("HARNESS_RESULTS", str(tmp_path))
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert next(iter(out)) == "format" and isinstance(out[items], list), out
    conform(name, out)
