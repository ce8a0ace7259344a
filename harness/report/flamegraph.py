"""A flame graph as Brendan Gregg draws it, from folded stacks (``cpu.folded``): the
root at the bottom, each frame as wide as the samples it was on the CPU for, its
callers below it, siblings in name order (so that two profiles line up), each frame's
name and share in its tooltip. A plain SVG, no script: readable offline and in a page
that allows none."""
from __future__ import annotations

import hashlib
import html
from dataclasses import dataclass, field

WIDTH = 1200
ROW = 16
PAD = 10
MIN_PX = 0.5  # frames narrower than this are left out (flamegraph.pl's --minwidth)
CHAR_PX = 6.5  # of the 11 px monospace font


@dataclass
class Frame:
    name: str
    samples: int = 0
    children: dict[str, Frame] = field(default_factory=dict)


def parse_folded(text: str) -> Frame:
    """``stack count`` lines -> the tree of frames under one root ("all")."""
    root = Frame("all")
    for line in text.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        root.samples += n
        node = root
        for name in stack.split(";"):
            node = node.children.setdefault(name, Frame(name))
            node.samples += n
    return root


def _depth(f: Frame) -> int:
    return 1 + max((_depth(c) for c in f.children.values()), default=0)


def _colour(name: str) -> str:
    """flamegraph.pl's "hot" palette, the same colour for the same name every time."""
    h = hashlib.blake2s(name.encode(), digest_size=3).digest()
    return f"rgb({205 + h[0] % 50},{h[1] % 230},{h[2] % 55})"


def svg(text: str, title: str) -> str:
    """The flame graph of folded stacks ``text`` as an SVG document."""
    root = parse_folded(text)
    if not root.samples:
        return ""
    rows = _depth(root)
    height = rows * ROW + 3 * PAD + ROW
    scale = (WIDTH - 2 * PAD) / root.samples
    rects: list[str] = []
    _draw(root, PAD, height - PAD - ROW, scale, root.samples, rects)
    return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{WIDTH}' height='{height}' "
            f"viewBox='0 0 {WIDTH} {height}' font-family='monospace' font-size='11'>"
            f"<rect width='100%' height='100%' fill='#fdfdf4'/>"
            f"<text x='{WIDTH / 2}' y='{PAD + ROW - 4}' text-anchor='middle' "
            f"font-size='13'>{html.escape(title)}</text>" + "".join(rects) + "</svg>")


def _draw(f: Frame, x: float, y: float, scale: float, total: int, out: list[str]) -> None:
    w = f.samples * scale
    if w < MIN_PX:
        return
    share = 100.0 * f.samples / total
    name = html.escape(f.name)
    label = f.name if len(f.name) * CHAR_PX <= w - 4 else \
        f.name[:max(0, int((w - 4) / CHAR_PX) - 2)] + ".." if w > 3 * CHAR_PX else ""
    out.append(f"<g><title>{name} ({f.samples} samples, {share:.2f}%)</title>"
               f"<rect x='{x:.1f}' y='{y:.1f}' width='{w:.1f}' height='{ROW - 1}' "
               f"fill='{_colour(f.name)}' rx='2'/>"
               + (f"<text x='{x + 3:.1f}' y='{y + ROW - 4:.1f}'>{html.escape(label)}</text>"
                  if label else "") + "</g>")
    for child in sorted(f.children.values(), key=lambda c: c.name):
        _draw(child, x, y - ROW, scale, total, out)
        x += child.samples * scale
