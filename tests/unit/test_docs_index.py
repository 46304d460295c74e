"""docs/index.md lists every page of docs/, and every page it links exists."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).parents[2] / "docs"


def test_the_index_links_every_page_and_only_pages_that_exist() -> None:
    linked = set(re.findall(r"\]\(([a-z0-9-]+\.md)\)", (DOCS / "index.md").read_text()))
    pages = {p.name for p in DOCS.glob("*.md")} - {"index.md"}
    assert pages - linked == set(), f"docs/index.md does not list {sorted(pages - linked)}"
    assert linked - pages == set(), f"docs/index.md links missing {sorted(linked - pages)}"
