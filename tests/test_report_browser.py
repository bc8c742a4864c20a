"""The HTML report as a person sees it: rendered by a real headless Chromium (Debian's `chromium`),
every image decoded, no console error, nothing wider than a laptop's screen, and a screenshot saved.
Skips, saying why, where no Chromium is installed (.ci/run installs it)."""

import shutil
from pathlib import Path

import pytest

from cdp_pipe import Chromium, find_chromium
from gpulab.report import card_page

ROOT = Path(__file__).resolve().parents[1]
H200 = ROOT / "results" / "h200"
LAPTOP = (1366, 768)
# Where the screenshots go: beside the test's other files, or a folder named here (CI keeps it).
SCREENSHOT_ENV = "GPULAB_SCREENSHOTS"

pytestmark = pytest.mark.skipif(find_chromium() is None,
                                reason="no Chromium on PATH: apt-get install chromium (as .ci/run does)")

IMAGES = "Array.from(document.images).map(i => ({alt: i.alt, complete: i.complete, width: i.naturalWidth}))"
PAGE_WIDTH = "[document.documentElement.scrollWidth, window.innerWidth]"


def _screenshot_dir(tmp_path: Path) -> Path:
    import os

    folder = Path(os.environ.get(SCREENSHOT_ENV) or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_report_page_renders_in_chromium(tmp_path):
    card = tmp_path / "h200"
    shutil.copytree(H200, card, ignore=shutil.ignore_patterns("*.png", "report.html"))
    page, plots = card_page.write(card)
    with Chromium(width=LAPTOP[0], height=LAPTOP[1]) as browser:
        browser.open(page.resolve().as_uri())
        images = browser.evaluate(IMAGES)
        assert len(images) == plots == page.read_text().count("<img")
        assert [i["alt"] for i in images if not (i["complete"] and i["width"] > 0)] == [], images
        assert browser.errors() == []
        scroll_width, viewport = browser.evaluate(PAGE_WIDTH)
        assert scroll_width <= viewport, "the page scrolls sideways on a laptop's screen"
        assert browser.evaluate("document.querySelectorAll('table').length") >= 5
        shot = browser.screenshot(_screenshot_dir(tmp_path) / "report-h200-laptop.png")
    header = shot.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(header[16:20], "big") == LAPTOP[0]  # the PNG's width: the screen it was taken at
    print(f"screenshot: {shot}")


def test_the_check_catches_a_broken_image_and_a_console_error(tmp_path):
    """The same checks fail on a page that is broken: they can fail."""
    bad = tmp_path / "bad.html"
    bad.write_text("<!doctype html><meta charset='utf-8'><title>bad</title>"
                   "<img alt='cut' src='data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA'>"
                   "<script>console.error('planted')</script><div style='width:3000px'>wide</div>")
    with Chromium(width=LAPTOP[0], height=LAPTOP[1]) as browser:
        browser.open(bad.resolve().as_uri())
        images = browser.evaluate(IMAGES)
        errors = browser.errors()
        scroll_width, viewport = browser.evaluate(PAGE_WIDTH)
    assert images == [{"alt": "cut", "complete": True, "width": 0}]
    assert any("planted" in e for e in errors)
    assert scroll_width > viewport
