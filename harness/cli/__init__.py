"""The ``harness`` command: the parser (``parser.py``), and one module per group of
sub-commands that only parse, call and print (``run``, ``compare``, ``results``,
``servers``).

Exit codes: one meaning each, whatever the command (harness/exits.py, whose table
``harness --help`` prints).
Errors print as ``error: ...`` on stderr, never as a traceback.
"""
from __future__ import annotations

import signal
import sys
from typing import Any

from ..errors import HarnessError
from ..exits import Exit
from .parser import build_parser


def _sigterm(_signo: int, _frame: Any) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    a = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _sigterm)
    # A shell without job control starts background commands with SIGINT ignored (a
    # lab's nohup script, a CI step run with &); kill -INT must still stop a run cleanly.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return int(a.func(a))
    except HarnessError as e:
        print(f"error: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("\ninterrupted: partial results are stored with status 'interrupted'",
              file=sys.stderr)
        return Exit.INTERRUPTED
    except BrokenPipeError:
        return 0
