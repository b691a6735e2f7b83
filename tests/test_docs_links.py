"""Every relative link in the Markdown docs names a file that exists, and every ``#anchor``
names a heading of its target, so a renamed section or a moved file breaks a test rather
than a reader's click."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", ROOT / "SECURITY.md", ROOT / "demo" / "README.md",
        *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
LINK = re.compile(r"\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but ``-`` and ``_`` dropped,
    spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    found = set(re.findall(r'<a (?:name|id)="([^"]+)"', text))
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*#*$", text, re.M):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def relative_links(path: Path) -> list[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return [t for t in LINK.findall(text) if "://" not in t and not t.startswith("mailto:")]


def test_the_slug_follows_github() -> None:
    assert slug("Search latency: `bench/search.py`") == "search-latency-benchsearchpy"
    assert slug("2026-11-30, 10:30-10:48 UTC: after schema 5") == "2026-11-30-1030-1048-utc-after-schema-5"
    assert slug("`neighbour` = 0.5 (was `NEIGHBOUR_WEIGHT`)") == "neighbour--05-was-neighbour_weight"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_and_anchors_resolve(doc: Path) -> None:
    broken = []
    for target in relative_links(doc):
        name, _, fragment = target.partition("#")
        destination = (doc.parent / name).resolve() if name else doc
        if not destination.exists():
            broken.append(f"{target}: no such file")
        elif fragment and destination.suffix == ".md" and fragment not in anchors(destination):
            broken.append(f"{target}: no such heading")
    assert not broken, broken


def test_the_checker_sees_links() -> None:
    # Guards the test above against a regex that matches nothing.
    assert len(relative_links(ROOT / "README.md")) >= 5
    assert any("#" in t for doc in DOCS for t in relative_links(doc))
