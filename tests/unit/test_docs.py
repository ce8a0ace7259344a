"""The documentation holds: the site builds with --strict (a broken link, a page out of
the navigation or a missing anchor fails it), the command-line reference is the parser's
own, and the README stays a short path into the docs."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import cli_reference  # noqa: E402


def test_the_site_builds_strictly(tmp_path):
    mkdocs = Path(sys.executable).parent / "mkdocs"
    r = subprocess.run([str(mkdocs), "build", "--strict", "--site-dir", str(tmp_path / "site")],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "site" / "cli" / "index.html").is_file()
    assert (tmp_path / "site" / "schemas" / "compare.schema.json").is_file()


def test_the_command_line_reference_is_the_parsers():
    assert (ROOT / "docs" / "cli.md").read_text() == cli_reference.reference(), \
        "docs/cli.md is out of date: python tools/cli_reference.py"


def test_the_readme_is_a_short_path_into_the_docs():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) < 300
    assert lines[3].startswith("make demo") and lines[4].startswith("make test")
    linked = {p for line in lines for p in ROOT.glob("docs/**/*.md") if
              f"({p.relative_to(ROOT)})" in line}
    assert {ROOT / "docs" / n for n in ("cli.md", "output.md", "ab-verdicts.md",
                                        "nightly.md", "experiments/index.md")} <= linked
