"""Where the images and files of a Responses input are, and a copy of the input with some of them replaced.

They sit in messages' `content`, in the `output` arrays of tool call outputs
(a tool may answer with an image), and in a `computer_call_output`'s screenshot.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from agentic_core.json_types import Item
from agentic_core.media.data_urls import is_data_url

PartPath = tuple[str, int] | tuple[str]  # ("content", 2), ("output", 0), or ("output",) for a screenshot
MediaKind = Literal["image", "file"]
IMAGE_PARTS = frozenset({"input_image", "computer_screenshot"})
FILE_PARTS = frozenset({"input_file"})


@dataclass(frozen=True, slots=True)
class MediaPart:
    item: int  # the input item's index
    path: PartPath
    part: dict[str, Any]

    @property
    def kind(self) -> MediaKind:
        return "file" if self.part.get("type") in FILE_PARTS else "image"

    @property
    def param(self) -> str:
        """Where the part is, OpenAI's way: `input[0].content[1]`."""
        place = f"{self.path[0]}[{self.path[1]}]" if len(self.path) == 2 else self.path[0]
        return f"input[{self.item}].{place}"

    def field(self, name: str) -> str:
        return f"{self.param}.{name}"


def media_parts(items: Sequence[Item]) -> list[MediaPart]:
    """Every image and file part of the input items, in order."""
    found: list[MediaPart] = []
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        for key in ("content", "output"):
            parts = item.get(key)
            if key == "content" and not _is_message(item):
                continue
            if isinstance(parts, list):
                found += [MediaPart(index, (key, position), part) for position, part in enumerate(parts)
                          if isinstance(part, dict) and part.get("type") in IMAGE_PARTS | FILE_PARTS]
            elif key == "output" and isinstance(parts, dict) and parts.get("type") == "computer_screenshot":
                found.append(MediaPart(index, ("output",), parts))
    return found


def input_fetches_media(raw_input: Any) -> bool:
    """The input holds a file, or an image that is not inline (a URL to fetch, a file id): only the executor may
    serve it, since a model server must never be handed a URL to fetch on its own."""
    if not isinstance(raw_input, list):
        return False
    for found in media_parts(raw_input):
        if found.kind == "file":
            return True
        image_url = found.part.get("image_url")
        if not (isinstance(image_url, str) and is_data_url(image_url)):
            return True
    return False


def replace_parts(items: Sequence[Item], replacements: Mapping[tuple[int, PartPath], dict[str, Any]]) -> list[Item]:
    """A copy of the items with the parts at `(item, path)` replaced; the items and arrays not touched are shared."""
    copied = list(items)
    for (index, path), part in replacements.items():
        item = copied[index] = dict(copied[index]) if copied[index] is items[index] else copied[index]
        if len(path) == 1:
            item[path[0]] = part
            continue
        key, position = path
        if item[key] is items[index].get(key):
            item[key] = list(item[key])
        item[key][position] = part
    return copied


def _is_message(item: Item) -> bool:
    return item.get("type") == "message" or (item.get("type") is None and "role" in item)
