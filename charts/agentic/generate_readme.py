"""Write the values table of the chart README from the `# --` comments of values.yaml, and its table of image
sizes from image-sizes.json (`deploy/images/build.sh sizes` writes that file from the images built here).

    python charts/agentic/generate_readme.py           # rewrite README.md between the markers
    python charts/agentic/generate_readme.py --check   # exit 1 when README.md is stale

A `# -- text` comment documents the key on the next key line; a documented mapping is one row (its
children need no comment of their own). tests/packaging checks that the README is fresh and that
every value is covered by a documented key.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml

CHART = Path(__file__).resolve().parent
START, END = "<!-- values-table:start -->", "<!-- values-table:end -->"
SIZES_START, SIZES_END = "<!-- image-sizes:start -->", "<!-- image-sizes:end -->"
KEY_LINE = re.compile(r"^(?P<indent>\s*)(?P<key>[A-Za-z0-9_.\-]+):(\s|$)")


def documented_keys(values_text: str) -> list[tuple[tuple[str, ...], str]]:
    """(key path, description) of every documented key, in file order."""
    rows: list[tuple[tuple[str, ...], str]] = []
    stack: list[tuple[int, str]] = []
    pending: str | None = None
    for line in values_text.splitlines():
        stripped = line.strip()
        if stripped.startswith("# --"):
            pending = stripped.removeprefix("# --").strip()
            continue
        if not stripped or stripped.startswith(("#", "- ")):
            continue
        match = KEY_LINE.match(line)
        if not match:
            continue
        indent = len(match["indent"])
        while stack and stack[-1][0] >= indent:
            stack.pop()
        stack.append((indent, match["key"]))
        if pending is not None:
            rows.append((tuple(key for _, key in stack), pending))
            pending = None
    return rows


def lookup(values: dict[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = values
    for key in path:
        node = node[key]
    return node


def type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    return "object"


def markdown_table(values_text: str) -> str:
    values = yaml.safe_load(values_text)
    lines = ["| Key | Type | Default | Description |", "|-----|------|---------|-------------|"]
    for path, description in documented_keys(values_text):
        value = lookup(values, path)
        default = json.dumps(value, separators=(", ", ": ")).replace("|", "\\|")
        text = description.replace("|", "\\|")
        lines.append(f"| `{'.'.join(path)}` | {type_name(value)} | `{default}` | {text} |")
    return "\n".join(lines)


def sizes_table(sizes: dict[str, Any]) -> str:
    """One row per image: its uncompressed size as the engine reports it, and the base it was built from."""
    lines = [f"Measured with {sizes['engine']} on images built from `{sizes['base']}` "
             f"(base image {sizes['base_bytes'] / 1e6:.0f} MB); uncompressed, as `{sizes['engine']} images` shows them.",
             "", "| image | size |", "|---|---|"]
    for service, size in sizes["images"].items():
        lines.append(f"| `{service}` | {size / 1e6:.0f} MB |")
    return "\n".join(lines)


def _replace_between(text: str, start: str, end: str, body: str) -> str:
    head, found, rest = text.partition(start)
    if not found:
        raise ValueError(f"README.md lacks the marker {start}")
    _, _, tail = rest.partition(end)
    return f"{head}{start}\n{body}\n{end}{tail}"


def render_into(readme_text: str, values_text: str, sizes: dict[str, Any] | None = None) -> str:
    text = _replace_between(readme_text, START, END, markdown_table(values_text))
    if sizes is not None:
        text = _replace_between(text, SIZES_START, SIZES_END, sizes_table(sizes))
    return text


def main(argv: list[str]) -> int:
    readme = CHART / "README.md"
    current = readme.read_text()
    sizes = json.loads((CHART / "image-sizes.json").read_text())
    fresh = render_into(current, (CHART / "values.yaml").read_text(), sizes)
    if "--check" in argv:
        if fresh != current:
            print("charts/agentic/README.md is stale: run python charts/agentic/generate_readme.py", file=sys.stderr)
            return 1
        return 0
    readme.write_text(fresh)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
