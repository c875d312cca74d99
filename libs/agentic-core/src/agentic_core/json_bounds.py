"""Bounds on the JSON a client sends, checked once where a request enters, with a 400: how deep it nests, and that
the `type` and `role` tags of its tagged lists are strings.

Deeply nested JSON exhausts the recursion of validators and serialisers further in; a tag that is not a string breaks
every lookup of it in a set.
"""

from __future__ import annotations

from typing import Any

from agentic_core.errors import InvalidRequest

# Deeper JSON than any API body needs (tool schemas nest a few dozen levels at most), and shallow enough that
# nothing behind the edge (pydantic, protobuf, our own walkers) comes near Python's recursion limit.
MAX_JSON_DEPTH = 128
# Lists of tagged objects in request bodies (Responses, Conversations, Messages, Chat) and the tags read from them.
_TAGGED_LISTS = ("input", "items", "tools", "messages")
_TAGS = ("type", "role")


def check_depth(value: Any, limit: int = MAX_JSON_DEPTH) -> None:
    """A 400 when arrays and objects in `value` nest deeper than `limit`. Iterative, so any depth is safe to check;
    one level at a time (the containers of each level in one list), which walks a 40 KB agent request in half the
    time a stack of (node, depth) pairs takes."""
    level: list[Any] = [value] if isinstance(value, (dict, list)) else []
    depth = 1
    while level:
        if depth > limit:
            raise InvalidRequest(f"The request body nests arrays and objects deeper than {limit} levels.",
                                 code="invalid_json")
        below: list[Any] = []
        for node in level:
            below += [child for child in (node.values() if isinstance(node, dict) else node)
                      if isinstance(child, (dict, list))]
        level, depth = below, depth + 1


def check_body_depth(body: bytes, payload: Any, limit: int = MAX_JSON_DEPTH) -> None:
    """`check_depth` on a parsed body, skipped (cheaply, in C) when the body holds too few brackets to nest that deep."""
    if body.count(b"[") + body.count(b"{") > limit:
        check_depth(payload, limit)


def check_tags(payload: dict[str, Any]) -> None:
    """A 400 when a `type` or `role` in a body's tagged lists (or in their entries' `content` parts) is not a string."""
    for key in _TAGGED_LISTS:
        entries = payload.get(key)
        if not isinstance(entries, list):
            continue
        for index, entry in enumerate(entries):
            if not isinstance(entry, dict):
                continue
            _check_entry_tags(entry, f"{key}[{index}]")
            content = entry.get("content")
            if isinstance(content, list):
                for part_index, part in enumerate(content):
                    if isinstance(part, dict):
                        _check_entry_tags(part, f"{key}[{index}].content[{part_index}]")


def _check_entry_tags(entry: dict[str, Any], where: str) -> None:
    for tag in _TAGS:
        value = entry.get(tag)
        if value is not None and not isinstance(value, str):
            param = f"{where}.{tag}"
            raise InvalidRequest(f"Invalid type for '{param}': expected a string.", param=param, code="invalid_type")
