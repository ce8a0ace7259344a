"""A plain text table, in a module of its own below the reports and the commands: the
quick commands (runs, servers list) print one without loading the reports."""
from __future__ import annotations

from typing import Any


def print_table(rows: list[dict[str, Any]], cols: list[str], indent: str = "") -> None:
    def fmt(v: Any) -> str:
        if v is None:
            return "-"
        if isinstance(v, float):
            return f"{v:.2f}"
        return str(v)
    cells = [[fmt(r.get(c)) for c in cols] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) if cells else len(c)
              for i, c in enumerate(cols)]
    print(indent + "  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True)).rstrip())
    for row in cells:
        print(indent + "  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip())
