"""Reasoning items' `encrypted_content`: their reasoning sealed for the tenant when asked for, opened when sent back.

The secret is the executors' compaction key (`AGENTIC_EXECUTOR_COMPACTION_KEY`); a purpose of its own derives a
key of its own from it, so a compaction blob never opens as reasoning nor the other way round. Without a key,
reasoning items are returned as the model server gave them (no `encrypted_content`), never with readable text in
that field; an item we sealed that comes back to an executor without the key is refused.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agentic_core.errors import InvalidRequest
from agentic_core.json_types import Item
from agentic_core.responses.reasoning import (
    ReasoningContent,
    ReasoningOpener,
    is_reasoning,
    model_item,
    wants_encrypted_content,
    with_encrypted_content,
)
from agentic_runtime.sealed_box import PREFIX, SealedBox

from agentic_executor.settings import ExecutorSettings

PURPOSE = "agentic reasoning v1"


def tampered(reason: str) -> InvalidRequest:
    return InvalidRequest(f"Invalid 'encrypted_content' of a reasoning item: {reason}.", param="input",
                          code="invalid_encrypted_content")


class ReasoningSealer:
    """One turn's public form of reasoning items. The same item (id and content) is sealed once, so that its
    `output_item.done` event and the response object carry the same `encrypted_content`."""

    def __init__(self, box: SealedBox | None = None, tenant: str = "") -> None:  # no box: items shown as they are
        self._box = box
        self._context = tenant.encode()
        self._sealed: dict[tuple[Any, bytes], str] = {}

    def __call__(self, item: Item) -> Item:
        if self._box is None or not is_reasoning(item):
            return item
        upstream = item.get("encrypted_content")
        content = ReasoningContent.of(item, upstream if isinstance(upstream, str) and upstream else None)
        plain = content.to_json()
        token = self._sealed.get((item.get("id"), plain))
        if token is None:
            token = self._sealed[(item.get("id"), plain)] = self._box.seal(plain, self._context)
        return with_encrypted_content(item, token)

    def all(self, items: Iterable[Item]) -> tuple[Item, ...]:
        return tuple(self(item) for item in items)


class ReasoningSeal:
    def __init__(self, key: str | None = None) -> None:  # no key: reasoning items are never sealed
        self._box = SealedBox(key, PURPOSE) if key else None

    @classmethod
    def from_settings(cls, settings: ExecutorSettings) -> ReasoningSeal:
        key = settings.compaction_key.get_secret_value().strip() if settings.compaction_key else None
        return cls(key)

    def sealer(self, tenant: str, include: Any) -> ReasoningSealer:
        """Seals reasoning items where `include` asks for their encrypted content and a key is configured."""
        return ReasoningSealer(self._box if wants_encrypted_content(include) else None, tenant)

    def opener(self, tenant: str) -> ReasoningOpener:
        """A reasoning item as the model server reads it. An `encrypted_content` that is null or absent is read as
        today (the item's own parts); one that is not ours is the model server's own and reaches it as it is."""
        context = tenant.encode()

        def open_item(item: Item) -> Item:
            token = item.get("encrypted_content")
            if not isinstance(token, str) or not token.startswith(PREFIX):
                return item
            if self._box is None:
                raise tampered("this gateway has no key to open it")
            try:
                content = ReasoningContent.from_json(self._box.open(token, context))
            except ValueError as exc:  # SealedBoxError, or content that is not a reasoning item's
                raise tampered(str(exc)) from None
            return model_item(item, content)

        return open_item
