"""The differential flame graph (report/flamegraph.py): the candidate's frames, each
coloured by how its share of the samples moved from the baseline's. The real profiles
are drawn in tests/integration/test_cpu_profile.py."""
from __future__ import annotations

import re

from harness.report.flamegraph import diff_svg, svg

BASE = "main;query;parse 30\nmain;query;execute 60\nmain;purge 10\n"
CAND = "main;query;parse 30\nmain;query;execute 20\nmain;query;sort 40\nmain;flush 10\n"


def _frames(drawing: str) -> dict[str, tuple[str, str]]:
    """name: (tooltip, fill) of each frame drawn."""
    return {t.split(":")[0]: (t, fill) for t, fill in re.findall(
        r"<title>([^<]+)</title><rect [^>]*fill='([^']+)'", drawing)}


def test_each_frame_is_coloured_by_how_its_share_moved():
    f = _frames(diff_svg(BASE, CAND, "t"))
    assert set(f) == {"all", "main", "query", "parse", "execute", "sort", "flush"}  # no purge
    assert f["sort"] == ("sort: 0.00% -> 40.00% of the samples (+40.00 points)",
                         "rgb(255,0,0)")  # the largest change: full red
    assert f["execute"][0] == "execute: 60.00% -> 20.00% of the samples (-40.00 points)"
    assert f["execute"][1] == "rgb(0,0,255)"  # shrank as much: full blue
    assert f["parse"][1] == "rgb(255,255,255)"  # held: white
    flush = re.fullmatch(r"rgb\(255,(\d+),\1\)", f["flush"][1])  # grew a quarter as much
    assert flush and int(flush.group(1)) == int(255 * 0.75)
    # Widths are the candidate's: sort is 40% of the drawing's width, as in its own graph.
    width = r"<title>(\w+)[^<]*</title><rect x='[\d.]+' y='[\d.]+' width='([\d.]+)'"
    widths = dict(re.findall(width, diff_svg(BASE, CAND, "t")))
    own = dict(re.findall(width, svg(CAND, "t")))
    assert widths["sort"] == own["sort"] and float(widths["sort"]) == (1200 - 20) * 0.4


def test_no_drawing_without_samples_on_both_sides():
    assert diff_svg("", CAND, "t") == "" and diff_svg(BASE, "junk line\n", "t") == ""
