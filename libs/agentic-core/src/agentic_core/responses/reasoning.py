"""Reasoning items across stateless turns: what a sealed `encrypted_content` holds, and the model's view of one.

With `include: ["reasoning.encrypted_content"]` a reasoning item we return carries its reasoning (the parts the
model produced, and any blob of the model server's own) sealed for the tenant by the executor; a client that keeps
its history itself (`store: false`, Codex) sends the item back and the model server reads the reasoning as the
model produced it, whatever the client kept of the item's readable parts. Sealing and opening need the key, so
they live in the executor (`agentic_executor.reasoning_seal`); this module is the pure part.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

import orjson

from agentic_core.json_types import Item

REASONING = "reasoning"
INCLUDE_ENCRYPTED_CONTENT = "reasoning.encrypted_content"
# A reasoning item → the item a model server reads in its place (opened when it was sealed by us).
ReasoningOpener = Callable[[Item], Item]


@dataclass(frozen=True, slots=True)
class ReasoningContent:
    """What a sealed reasoning item holds: the model's reasoning parts, its summary parts, and the encrypted
    content the model server itself returned (a hosted server's own blob, replayed to it; None from vLLM)."""

    content: tuple[Item, ...] = ()
    summary: tuple[Item, ...] = ()
    upstream_encrypted_content: str | None = None

    def to_json(self) -> bytes:
        return orjson.dumps({"content": list(self.content), "summary": list(self.summary),
                             "encrypted_content": self.upstream_encrypted_content})

    @classmethod
    def from_json(cls, raw: bytes) -> ReasoningContent:
        """Raises ValueError when `raw` is not a reasoning item's sealed content."""
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise ValueError("not JSON") from None
        if not isinstance(data, dict):
            raise ValueError("not a reasoning item's content")
        content, summary, blob = data.get("content"), data.get("summary"), data.get("encrypted_content")
        if not _parts(content) or not _parts(summary) or not (blob is None or isinstance(blob, str)):
            raise ValueError("not a reasoning item's content")
        return cls(tuple(content), tuple(summary), blob)

    @classmethod
    def of(cls, item: Item, upstream_encrypted_content: str | None = None) -> ReasoningContent:
        """A reasoning item's content as the model server returned it (parts that are not objects count as absent)."""
        return cls(_objects(item.get("content")), _objects(item.get("summary")), upstream_encrypted_content)


def is_reasoning(item: Any) -> bool:
    return isinstance(item, dict) and item.get("type") == REASONING


def wants_encrypted_content(include: Any) -> bool:
    """`include` asks for reasoning items' `encrypted_content`."""
    return isinstance(include, list) and INCLUDE_ENCRYPTED_CONTENT in include


def carries_encrypted_reasoning(payload: dict[str, Any]) -> bool:
    """The request asks for sealed reasoning, or sends reasoning items with an `encrypted_content` back: only the
    executor can seal or open one, so such a request is never passed straight to the model server."""
    if wants_encrypted_content(payload.get("include")):
        return True
    items = payload.get("input")
    return isinstance(items, list) and any(is_reasoning(item) and isinstance(item.get("encrypted_content"), str)
                                           and item["encrypted_content"] for item in items)


def with_encrypted_content(item: Item, encrypted_content: str) -> Item:
    """The public form of a reasoning item: as it was, plus its sealed content."""
    return {**item, "encrypted_content": encrypted_content}


def model_item(item: Item, content: ReasoningContent) -> Item:
    """An opened reasoning item as the model server reads it: the sealed parts replace what the client sent
    (vLLM reads `summary`, else `content`, and refuses any `encrypted_content` but its own: none)."""
    opened = {key: value for key, value in item.items() if key != "encrypted_content"}
    opened["summary"] = list(content.summary)
    opened["content"] = list(content.content)
    if content.upstream_encrypted_content is not None:
        opened["encrypted_content"] = content.upstream_encrypted_content
    return opened


def open_reasoning(items: Sequence[Item], opener: ReasoningOpener) -> list[Item]:
    """`items` with each reasoning item replaced by what the model reads of it."""
    return [opener(item) if is_reasoning(item) else item for item in items]


def opened_request(body: dict[str, Any], opener: ReasoningOpener) -> dict[str, Any]:
    """A model server's body with its input's reasoning items opened."""
    items = body.get("input")
    if not isinstance(items, list) or not any(is_reasoning(item) for item in items):
        return body
    return {**body, "input": open_reasoning(items, opener)}


def _parts(value: Any) -> TypeGuard[list[Item]]:
    return isinstance(value, list) and all(isinstance(part, dict) for part in value)


def _objects(value: Any) -> tuple[Item, ...]:
    return tuple(part for part in value if isinstance(part, dict)) if isinstance(value, list) else ()
