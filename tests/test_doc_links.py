"""The README and the pages under docs/ (results, notes) link to each other, to result CSVs and plots, and to sections
by anchor: every relative link must name a file of the repository, and every in-page anchor a
heading of its page (the notes moved out of the README once; a moved section must not leave a dead
link behind)."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), ROOT / "scripts" / "README.md",
         ROOT / "notebook" / "README.md"]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def links(page: Path) -> list[str]:
    return [m.group(1) for m in LINK.finditer(page.read_text())]


def page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_relative_link_names_a_file_of_the_repository(page):
    dead = [t for t in links(page)
            if not t.startswith(("http://", "https://", "#", "mailto:"))
            and not (page.parent / t.split("#")[0]).exists()]
    assert not dead, f"{page.name} links to missing files: {dead}"


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_anchor_names_a_heading_of_its_page(page):
    headings = headings_of(page)
    dead = [t for t in links(page) if t.startswith("#") and t[1:] not in headings]
    assert not dead, f"{page.name} links to missing headings: {dead}"


def test_the_anchor_rule_matches_githubs():
    assert anchor("Where t4's time goes, block by block") == "where-t4s-time-goes-block-by-block"
    assert anchor("Stream-K: the last rounds split by k-tiles") == "stream-k-the-last-rounds-split-by-k-tiles"


def headings_of(page: Path) -> set[str]:
    return {anchor(h) for h in re.findall(r"^#+ (.+)$", page.read_text(), flags=re.M)}


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_anchor_into_another_page_names_a_heading_there(page):
    """`docs/usage.md#how-it-measures`: a section that moves to another page must take its links along."""
    dead = []
    for t in links(page):
        path, _, frag = t.partition("#")
        if not frag or not path.endswith(".md") or t.startswith(("http://", "https://")):
            continue
        target = page.parent / path
        if target.exists() and frag not in headings_of(target):
            dead.append(t)
    assert not dead, f"{page.name} links to missing headings: {dead}"
