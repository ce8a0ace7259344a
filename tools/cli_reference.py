"""docs/cli.md, the command-line reference, generated from the parser itself:
``python tools/cli_reference.py`` writes it, ``--check`` exits 1 when it is out of date
(tests/unit/test_docs.py does the same)."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "docs" / "cli.md"
WIDTH = "100"  # argparse wraps help to $COLUMNS


def _subparsers(p: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            return dict(a.choices)
    return {}


def _sections(p: argparse.ArgumentParser, name: str, depth: int) -> list[str]:
    out = [f"{'#' * depth} `{name}`", "", "```text", p.format_help().rstrip(), "```", ""]
    for sub, sp in _subparsers(p).items():
        out += _sections(sp, f"{name} {sub}", min(depth + 1, 4))
    return out


def reference() -> str:
    """The reference's text, from ``harness.cli.parser.build_parser``."""
    from harness.cli.parser import build_parser

    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        parser = build_parser()
        body = _sections(parser, "harness", 2)
    finally:
        if before is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = before
    head = ["# Command line", "",
            "Generated from the parser by `tools/cli_reference.py` (do not edit by hand); "
            "`harness COMMAND --help` prints the same.", ""]
    return "\n".join(head + body).rstrip() + "\n"


def main() -> int:
    text = reference()
    if "--check" in sys.argv[1:]:
        if not OUT.exists() or OUT.read_text() != text:
            print(f"{OUT} is out of date: run python tools/cli_reference.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
