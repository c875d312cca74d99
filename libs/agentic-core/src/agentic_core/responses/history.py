"""A turn's stored history: relayed to the model server as the bytes stored for it, parsed only where a step reads it.

Each stored item keeps its public form (what `input_items` lists) and, written beside it when the turn was stored,
its model view (`stored_model_view`). A history whose every item has a model view goes into the next round's body
as those bytes (`orjson.Fragment`), without building a Python object per item; the public items are parsed once,
and only by a step that reads them: approvals, MCP listings, compaction, the continuation rules (which read only
the items that can be calls or outputs). Reasoning and compaction items have no stored view: they are opened (with
the tenant's key) or read as their summary at turn time, so a history holding one is parsed as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from agentic_core.json_types import Item
from agentic_core.responses.items import NOT_FOR_THE_MODEL, model_input, model_view, parse_stored_items

NEVER_READ = b"null"  # the model view of an item the model never reads (a public projection, bookkeeping)
READ_AT_TURN_TIME = frozenset({"reasoning", "compaction"})  # opened, or read as a summary, when a turn reads them
# Bytes only an item that can be a call or an output holds: its `call_id`, or a `local_shell_call_output`'s type.
_CALL_MARKS = (b'"call_id"', b'"local_shell_call_output"')

# An item of a model server's body: a parsed item, or one relayed as the bytes stored for it.
BodyItem = Item | orjson.Fragment


def stored_model_view(item: Item) -> bytes:
    """What is stored beside `item` for later turns to relay: its model view's JSON, `null` when the model never
    reads it, or empty when a turn must read the item itself."""
    item_type = item.get("type")
    if item_type in READ_AT_TURN_TIME:
        return b""
    if item_type in NOT_FOR_THE_MODEL:
        return NEVER_READ
    return orjson.dumps(model_view(item))


class StoredHistory:
    """`public`: each item's stored JSON, oldest first; `model`: each one's stored model view, or empty (none
    stored: rows written before views were, items read at turn time)."""

    __slots__ = ("public", "model", "_items")

    def __init__(self, public: Sequence[bytes] = (), model: Sequence[bytes] = ()) -> None:
        self.public = public
        self.model = model if len(model) == len(public) else ()
        self._items: list[Item] | None = None

    @classmethod
    def of_items(cls, items: Sequence[Item]) -> StoredHistory:
        """A history already parsed (a WebSocket's retained chain, a test's items): read as items."""
        history = cls()
        history._items = list(items)
        return history

    def __len__(self) -> int:
        return len(self._items) if self._items is not None else len(self.public)

    @property
    def items(self) -> list[Item]:
        """The public items, parsed on first use (one parser call for all)."""
        if self._items is None:
            self._items = parse_stored_items(self.public)
        return self._items

    @property
    def relayable(self) -> bool:
        """Every item has a stored model view: none needs reading for the model."""
        return bool(self.model) and all(self.model)

    def model_input(self) -> list[BodyItem]:
        """The history as the model reads it: the stored views as bytes, or, when one is missing, every item's view
        worked out from its parsed public form."""
        if not self.relayable:
            return list(model_input(self.items))
        return [orjson.Fragment(view) for view in self.model if view != NEVER_READ]

    def calls(self) -> list[Item]:
        """The items the continuation rules read (calls and outputs), in order; others are not parsed."""
        if self._items is not None:
            return self._items
        # One look over all the bytes first (a mark cannot span two items: each is a whole JSON object).
        call_id, shell_output = _CALL_MARKS
        joined = b"".join(self.public)
        if call_id not in joined and shell_output not in joined:
            return []
        return [orjson.loads(raw) for raw in self.public if call_id in raw or shell_output in raw]

    def first_id(self) -> Any:
        """The oldest item's `id` (None for an empty history)."""
        if self._items is not None:
            return self._items[0].get("id") if self._items else None
        return orjson.loads(self.public[0]).get("id") if self.public else None


def as_history(history: StoredHistory | Sequence[Item]) -> StoredHistory:
    return history if isinstance(history, StoredHistory) else StoredHistory.of_items(history)


def materialized(body: dict[str, Any]) -> dict[str, Any]:
    """`body` with its input as parsed items: for a step that reads or translates them (a Chat Completions,
    Anthropic or Gemini request, a tokenizer's count) rather than relaying them."""
    items = body.get("input")
    if isinstance(items, list) and any(isinstance(item, orjson.Fragment) for item in items):
        return {**body, "input": orjson.loads(orjson.dumps(items))}
    return body
