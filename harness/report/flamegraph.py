"""A flame graph as Brendan Gregg draws it, from folded stacks (``cpu.folded``): the
root at the bottom, each frame as wide as the samples it was on the CPU for, its
callers below it, siblings in name order (so that two profiles line up), each frame's
name and share in its tooltip. A plain SVG, no script: readable offline and in a page
that allows none. The differential one (:func:`diff_svg`) draws a comparison's candidate
with each frame coloured by how its share moved from the baseline's."""
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


def _shares(f: Frame, total: int, path: tuple[str, ...] = (),
            out: dict[tuple[str, ...], float] | None = None) -> dict[tuple[str, ...], float]:
    """Each frame's share of all samples, by its stack from the root."""
    out = {} if out is None else out
    for c in f.children.values():
        key = (*path, c.name)
        out[key] = c.samples / total
        _shares(c, total, key, out)
    return out


def _diff_colour(delta: float, most: float) -> str:
    """Red where the frame's share grew, blue where it shrank, white where it held:
    as Gregg's differential flame graphs, the strength relative to the largest change."""
    k = min(1.0, abs(delta) / most) if most else 0.0
    fade = int(255 * (1 - k))
    return f"rgb(255,{fade},{fade})" if delta > 0 else f"rgb({fade},{fade},255)"


def diff_svg(base: str, cand: str, title: str) -> str:
    """The candidate's flame graph (folded stacks ``cand``), each frame coloured by how
    its share of the samples moved from the baseline's (``base``): a differential flame
    graph. Frames the baseline has and the candidate lacks are not drawn (their share
    went to others); a frame's tooltip gives both shares."""
    b, c = parse_folded(base), parse_folded(cand)
    if not (b.samples and c.samples):
        return ""
    before = {(): 1.0, **_shares(b, b.samples)}
    after = {(): 1.0, **_shares(c, c.samples)}
    deltas = {k: v - before.get(k, 0.0) for k, v in after.items()}
    most = max((abs(d) for d in deltas.values()), default=0.0)
    rows = _depth(c)
    height = rows * ROW + 3 * PAD + ROW
    scale = (WIDTH - 2 * PAD) / c.samples
    rects: list[str] = []
    paint = _Painter(before, after, deltas, most, scale, rects)
    paint.frame(c, (), PAD, height - PAD - ROW)
    return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{WIDTH}' height='{height}' "
            f"viewBox='0 0 {WIDTH} {height}' font-family='monospace' font-size='11'>"
            f"<rect width='100%' height='100%' fill='#fdfdfd'/>"
            f"<text x='{WIDTH / 2}' y='{PAD + ROW - 4}' text-anchor='middle' "
            f"font-size='13'>{html.escape(title)}</text>" + "".join(rects) + "</svg>")


@dataclass
class _Painter:
    """Draws a differential flame graph's frames (see :func:`diff_svg`)."""

    before: dict[tuple[str, ...], float]
    after: dict[tuple[str, ...], float]
    deltas: dict[tuple[str, ...], float]
    most: float
    scale: float
    out: list[str]

    def frame(self, f: Frame, path: tuple[str, ...], x: float, y: float) -> None:
        w = f.samples * self.scale
        if w < MIN_PX:
            return
        self._rect(f, path, x, y, w)
        for child in sorted(f.children.values(), key=lambda c: c.name):
            self.frame(child, (*path, child.name), x, y - ROW)
            x += child.samples * self.scale

    def _rect(self, f: Frame, path: tuple[str, ...], x: float, y: float, w: float) -> None:
        a, b = 100 * self.before.get(path, 0.0), 100 * self.after[path]
        label = f.name if len(f.name) * CHAR_PX <= w - 4 else \
            f.name[:max(0, int((w - 4) / CHAR_PX) - 2)] + ".." if w > 3 * CHAR_PX else ""
        self.out.append(
            f"<g><title>{html.escape(f.name)}: {a:.2f}% -> {b:.2f}% of the samples "
            f"({b - a:+.2f} points)</title><rect x='{x:.1f}' y='{y:.1f}' width='{w:.1f}' "
            f"height='{ROW - 1}' fill='{_diff_colour(self.deltas[path], self.most)}' "
            "stroke='#ccc' stroke-width='0.5' rx='2'/>"
            + (f"<text x='{x + 3:.1f}' y='{y + ROW - 4:.1f}'>{html.escape(label)}</text>"
               if label else "") + "</g>")
