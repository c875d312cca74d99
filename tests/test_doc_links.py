"""Every link in the README and the docs resolves inside the repository: a user who clones it finds what
each link names (a file, a folder, a heading)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
DOCUMENTS = sorted(
    path for pattern in ("*.md", "docs/**/*.md", "charts/**/*.md", "deploy/**/*.md", "examples/**/*.md", "bench/**/*.md")
    for path in ROOT.glob(pattern) if ".venv" not in path.parts and "node_modules" not in path.parts
)
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def _anchors(document: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    headings = re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", FENCE.sub("", document.read_text()), re.M)
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-") for heading in headings}


def _links(document: Path) -> list[str]:
    return LINK.findall(FENCE.sub("", document.read_text()))


def test_the_documents_are_found() -> None:
    names = {path.relative_to(ROOT).as_posix() for path in DOCUMENTS}
    assert {"README.md", "docs/architecture.md"} <= names


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.relative_to(ROOT).as_posix())
def test_every_link_resolves_inside_the_repository(document: Path) -> None:
    broken = []
    for target in _links(document):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto: — outside the repository by intent
            continue
        path_part, _, anchor = target.partition("#")
        resolved = (document.parent / path_part).resolve() if path_part else document
        if not resolved.is_relative_to(ROOT) or not resolved.exists():
            broken.append(f"{target} (no such file in the repository)")
        elif anchor and resolved.is_file() and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            broken.append(f"{target} (no such heading)")
    assert broken == [], f"{document.relative_to(ROOT)}: broken links: {broken}"
