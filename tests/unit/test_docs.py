"""The documentation holds: the site builds with --strict (a broken link, a page out of
the navigation or a missing anchor fails it), the command-line reference is the parser's
own, and the README stays a short path into the docs."""
from __future__ import annotations

import re
import shlex
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


def test_the_readme_answers_each_user_on_its_first_screen():
    """Under the title: the DBA's, the performance engineer's and the lab team's command,
    each complete (the parser takes it, the make target exists, the files it names are
    there), then the two set-up commands; the rest is a short path into the docs."""
    from harness.cli.parser import build_parser

    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) < 200
    first = lines[:30]
    commands = [c.strip("`") for line in first if line.startswith("| ")
                for c in re.findall(r"`[^`]+`", line)]
    harness_cmds = [c.split(".venv/bin/harness ", 1)[1] for c in commands
                    if ".venv/bin/harness " in c]
    assert any(c.startswith("compare --baseline scenarios/ab/current.cnf --candidate "
                            "scenarios/ab/new.cnf") for c in harness_cmds), commands
    for c in harness_cmds:
        args = build_parser().parse_args(shlex.split(c))  # SystemExit: not a command
        named = [getattr(args, n, None) for n in ("baseline", "candidate", "file")]
        assert all((ROOT / f).is_file() for f in named if f), named
    targets = {m for c in commands for m in re.findall(r"^make (\S+)", c)}
    assert {"exp-side-load", "nightly"} <= targets, commands
    makefile = (ROOT / "Makefile").read_text()
    assert all(re.search(rf"^{re.escape(t)}:", makefile, re.M) for t in targets), targets
    at = [i for i, ln in enumerate(lines) if ln.startswith(("make demo", "make test"))]
    assert at[:2] == [at[0], at[0] + 1] and at[0] < 30, at
    linked = {p for line in lines for p in ROOT.glob("docs/**/*.md") if
              f"({p.relative_to(ROOT)})" in line}
    assert {ROOT / "docs" / n for n in ("cli.md", "output.md", "ab-verdicts.md",
                                        "nightly.md", "experiments/index.md",
                                        "getting-started.md")} <= linked


TRACKER = re.compile(r"(?<![\w&])#\d{1,3}(?![\w-])|\bthe Goal\b|\b[Ii]ssue #?\d")


def test_the_docs_speak_no_tracker_words():
    """The guide says what a thing does, never the project tracker's words (an issue's
    number, "the Goal"); code spans (an SQL comment like `#2`) are left out."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
    found = [f"{p.relative_to(ROOT)}:{n}: {line.strip()}" for p in pages
             for n, line in enumerate(p.read_text().splitlines(), 1)
             if TRACKER.search(re.sub(r"`[^`]*`", "", line))]
    assert found == []


def _commands(page: Path) -> list[tuple[int, str]]:
    """Each command line of the page's ```sh blocks, with its line number: continuation
    lines joined, comments and leading VAR=value assignments dropped."""
    out, in_sh, pending, start = [], False, "", 0
    for n, line in enumerate(page.read_text().splitlines(), 1):
        if line.startswith("```"):
            in_sh = not in_sh and line.strip() in ("```sh", "```bash", "```shell")
            continue
        if not in_sh:
            continue
        text = re.sub(r"\s+#.*$", "", line).strip() if not line.lstrip().startswith("#") \
            else ""
        if not pending:
            start = n
        pending += " " + text.rstrip("\\")
        if not text.endswith("\\"):
            if pending.strip():
                out.append((start, pending.strip()))
            pending = ""
    return out


def _harness_args(cmd: str) -> list[str] | None:
    """The arguments after `harness` (or .venv/bin/harness), None for another command."""
    words = shlex.split(cmd)
    while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
        words.pop(0)
    if words and words[0] in ("harness", ".venv/bin/harness"):
        return words[1:]
    return None


def test_every_harness_and_make_line_of_the_docs_is_one_the_parser_and_make_take():
    """Every `harness ...` and `make ...` line in README.md's and docs/'s shell blocks:
    the real parser takes it (a renamed flag fails here), and the make target exists."""
    from harness.cli.parser import build_parser

    # make's own list of targets, the generated ones too (bench-*): nothing is run
    listed = subprocess.run(["make", "-pRrq", "-f", "Makefile", ":"], cwd=ROOT, text=True,
                            capture_output=True).stdout
    targets = set(re.findall(r"^([a-z][\w-]*):", listed, re.M))
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
    bad, seen = [], 0
    for page in pages:
        if page.name == "cli.md":  # generated from the parser itself
            continue
        for n, cmd in _commands(page):
            where = f"{page.relative_to(ROOT)}:{n}: {cmd}"
            args = _harness_args(cmd)
            if args is not None:
                seen += 1
                try:
                    build_parser().parse_args(args)
                except SystemExit:
                    bad.append(where)
            for target in re.findall(r"(?:^|&& )make (?:-\S+ )*([a-z][\w-]*)", cmd):
                seen += 1
                if target not in targets:
                    bad.append(where)
    assert seen > 50, seen  # the pages were read
    assert bad == [], "\n".join(bad)


def _option_defaults() -> dict[str, set[str]]:
    """Each long option of every command, with the defaults the parser gives it (an
    option several commands share may have several)."""
    import argparse

    from harness.cli.parser import build_parser

    out: dict[str, set[str]] = {}

    def walk(p: argparse.ArgumentParser) -> None:
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for sub in a.choices.values():
                    walk(sub)
            elif a.default not in (None, argparse.SUPPRESS, False, True):
                for name in a.option_strings:
                    out.setdefault(name, set()).add(str(a.default))
    walk(build_parser())
    return out


_FLAG = re.compile(r"`(--[a-z][\w-]*)[^`]*`")
_FIGURE = r"(`[^`]+`|\d[\d.]*)(%?)"
_STATED = re.compile(rf"\bdefault (?:is )?±?{_FIGURE}|±?{_FIGURE}(?: \w+)? (?:each )?by default"
                     rf"|\bthe {_FIGURE} default\b")


def _claims(text: str) -> list[tuple[str, str, str]]:
    """(flag, value, "%" or "") for each default a sentence states beside an option: the
    nearest option before the figure, else the first after it, in the same sentence."""
    out = []
    for sentence in re.split(r"(?<=[a-z)`])\.\s+|\n\n", text):
        flags = [(m.start(), m.group(1)) for m in _FLAG.finditer(sentence)]
        if not flags:
            continue
        for m in _STATED.finditer(sentence):
            at = next(i for i in (1, 3, 5) if m.group(i))
            value, pct = m.group(at).strip("`"), m.group(at + 1)
            before = [f for at, f in flags if at < m.start()]
            out.append((before[-1] if before else flags[0][1], value, pct))
    return out


def _same(stated: str, pct: str, defaults: set[str]) -> bool:
    for d in defaults:
        try:
            if any(abs(float(d) - v) < 1e-9 for v in (float(stated), float(stated) / 100
                                                       if pct else float(stated))):
                return True
        except ValueError:
            if d == stated:
                return True
    return False


def test_a_default_the_docs_state_is_the_parsers():
    """Where README.md or a guide page says an option's default ("`--windows` windows
    (default 132", "5 by default (`--repetitions`)"), the parser gives that default: a
    changed default fails here until the page says the new one. Measurement pages are
    records of their day and are left out."""
    defaults = _option_defaults()
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    bad, seen = [], 0
    for page in pages:
        if page.name == "cli.md":
            continue
        for flag, value, pct in _claims(page.read_text()):
            if flag not in defaults:
                continue  # an option of a tool, or one without a default
            seen += 1
            if not _same(value, pct, defaults[flag]):
                bad.append(f"{page.relative_to(ROOT)}: {flag} default {value}{pct}, the "
                           f"parser's {sorted(defaults[flag])}")
    assert seen >= 4, seen
    assert bad == [], "\n".join(bad)


_MINUTES = re.compile(r"\((?:~|about )(\d+) min(?:utes)?\b|\(~(\d+) min;")


def _help_minutes() -> dict[str, str]:
    """Each target's duration as `make help` states it: the one place a target's time is
    written (`(~N min)`)."""
    out = {}
    for line in (ROOT / "Makefile").read_text().splitlines():
        m = re.match(r'\t@echo "make ([a-z][\w-]*)\b', line)
        d = _MINUTES.search(line) if m else None
        if m and d:
            out[m.group(1)] = d.group(1) or d.group(2)
    return out


def test_a_targets_duration_is_stated_as_make_help_states_it():
    """A make target's duration is written once, in `make help`; where README.md or a
    guide page repeats it beside the target, it is the same figure; every experiment's
    target has one."""
    minutes = _help_minutes()
    targets = set(re.findall(r"^(exp-[\w-]+):", (ROOT / "Makefile").read_text(), re.M))
    assert targets and targets <= minutes.keys(), targets - minutes.keys()
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
             *sorted((ROOT / "docs" / "experiments").glob("*.md"))]
    bad, seen = [], 0
    for page in pages:
        if page.name == "cli.md":
            continue
        for n, line in enumerate(page.read_text().splitlines(), 1):
            m = re.search(r"make ([a-z][\w-]*)\b`?(.*)", line)
            d = _MINUTES.search(m.group(2)) if m else None
            if not (m and d) or m.group(1) not in minutes:
                continue
            seen += 1
            if (d.group(1) or d.group(2)) != minutes[m.group(1)]:
                bad.append(f"{page.relative_to(ROOT)}:{n}: make {m.group(1)} "
                           f"{d.group(0)}, make help's ~{minutes[m.group(1)]} min")
    assert seen >= 5, seen
    assert bad == [], "\n".join(bad)


def test_a_default_an_options_help_states_is_its_own():
    """`--help` says "(default 30)" only where the option's default is 30: the text and
    the value are written apart in the parser, and this holds them together."""
    import argparse

    from harness.cli.parser import build_parser

    bad, seen = [], 0

    def walk(p: argparse.ArgumentParser, where: str) -> None:
        nonlocal seen
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for name, sub in a.choices.items():
                    walk(sub, f"{where} {name}")
                continue
            help_text = (a.help or "") % {"default": a.default} if a.help else ""
            for m in _STATED.finditer(help_text):
                at = next(i for i in (1, 3, 5) if m.group(i))
                value, pct = m.group(at).strip("`"), m.group(at + 1)
                if a.default in (None, argparse.SUPPRESS):
                    continue  # "default: twice the noise", a rule the command applies
                seen += 1
                if not _same(value, pct, {str(a.default)}):
                    bad.append(f"{where} {'/'.join(a.option_strings)}: help says default "
                               f"{value}{pct}, the default is {a.default!r}")
    walk(build_parser(), "harness")
    assert seen >= 5, seen
    assert bad == [], "\n".join(bad)


# A tracker's or a diary's words, which mean nothing to a reader of the product: the
# issue that asked for a thing, the stop or session that built it, the goal it was held
# to, and "this project's machine" where the figures' machine (or the reader's) is meant.
NOTEBOOK_WORDS = re.compile(
    r"\bthe goal\b|\bthe issue(?:'s)?\b|\bissue #?\d+|#\d{2,3}\b|\bthis stop\b|"
    r"\bthe session's doing\b|\bnot met this stop\b|\bthis project's (?:\d-\w+ )?"
    r"(?:machines?|VMs?)\b", re.IGNORECASE)


def _reader_texts() -> list[tuple[str, str]]:
    from harness.cli.parser import build_parser

    texts = [(str(p.relative_to(ROOT)), p.read_text())
             for p in [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted(
                 (ROOT / "docs").rglob("*.md"))]]
    return texts + [("harness --help and its commands' help", cli_reference.reference()),
                    ("harness --help", build_parser().format_help())]


def test_no_tracker_or_diary_words_reach_a_reader():
    found = [f"{where}: {m.group(0)!r} in ...{text[max(0, m.start() - 40):m.end() + 20]}..."
             for where, text in _reader_texts() for m in NOTEBOOK_WORDS.finditer(text)]
    assert found == []
