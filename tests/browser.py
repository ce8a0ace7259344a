"""A page as headless Chromium (Debian's, through Playwright) shows it: for the tests
that check a report a human will open."""
from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


@dataclass
class Rendered:
    text: str  # the body's text as shown
    images: list[tuple[bool, int, int]]  # each image: loaded, natural width, height
    scripts: int
    svgs: list[tuple[float, float]]  # each inline SVG as drawn: width, height


def rendered(page: Path, shot: Path) -> Rendered:
    """``page`` opened in a 1200x900 window; its full-page screenshot saved in ``shot``."""
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium")
    assert chromium, "Debian chromium is installed by make setup"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=ARGS)
        try:
            tab = browser.new_page(viewport={"width": 1200, "height": 900})
            tab.goto(page.as_uri())
            images = [tuple(i) for i in tab.evaluate(
                "[...document.images].map(i => [i.complete, i.naturalWidth, i.naturalHeight])")]
            scripts = int(tab.evaluate("document.scripts.length"))
            svgs = [tuple(s) for s in tab.evaluate(
                "[...document.querySelectorAll('svg')].map(s => {"
                "const b = s.getBoundingClientRect(); return [b.width, b.height]})")]
            tab.screenshot(path=str(shot), full_page=True)
            return Rendered(str(tab.inner_text("body")), images, scripts, svgs)
        finally:
            browser.close()
