"""One source per number: every measured figure the README, the docs, --help and
`make help` quote lives in docs/measurements/figures.toml with its date, machine and
page, and every mention of it says the value there."""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
FIGURES = tomllib.loads((ROOT / "docs" / "measurements" / "figures.toml").read_text())


def _readers() -> list[Path]:
    """What a reader meets: README, the docs but the measurements themselves (the
    source), docs/cli.md (every --help, generated from the parser) and the Makefile
    (make help)."""
    docs = [p for p in (ROOT / "docs").rglob("*.md") if "measurements" not in p.parts]
    return [ROOT / "README.md", ROOT / "Makefile", *sorted(docs)]


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_every_mention_of_a_figure_is_its_value(name):
    f = FIGURES[name]
    pattern = re.compile(f["pattern"])
    seen: dict[str, list[str]] = {}
    for page in _readers():
        text = page.read_text()
        if not f.get("lines"):
            text = " ".join(text.split())  # a figure may be wrapped
        if found := pattern.findall(text):
            seen[str(page.relative_to(ROOT))] = found
    wrong = {p: v for p, v in seen.items() if any(x != f["value"] for x in v)}
    assert not wrong, f"{name}: docs/measurements/figures.toml says {f['value']}: {wrong}"
    missing = [q for q in f["quoted"] if q not in seen]
    assert not missing, f"{name}: not mentioned where figures.toml says it is: {missing}"


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_every_figure_says_when_where_and_on_what(name):
    f = FIGURES[name]
    assert {"value", "pattern", "measured", "machine", "page", "quoted"} <= set(f), f
    assert (ROOT / "docs" / f["page"]).is_file(), f["page"]
    assert re.compile(f["pattern"]).groups == 1, f["pattern"]
