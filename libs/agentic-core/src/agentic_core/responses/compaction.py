"""Compaction: one `compaction` item stands for the context before it, except the user messages it retained.

The item's content (`encrypted_content`) is opaque to clients: the summary the
model wrote and the ids of the user messages kept beside it, sealed by the
executor (or plain, where the operator chose). What the model reads of a
context holding compaction items is `visible_context`: the latest one replaces
everything before it by its retained user messages and its summary, as an
assistant message; the items after it stay. Stored history is never rewritten.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from agentic_core.errors import InvalidRequest
from agentic_core.ids import new_item_id
from agentic_core.json_types import Item

COMPACTION = "compaction"
SUMMARY_PROMPT = (
    "You compact a conversation between a user and an AI assistant so that the assistant can continue it "
    "without the original. Write a concise summary of everything the assistant needs: the user's goals and "
    "constraints, decisions made, facts and results established (including tool results), files or identifiers "
    "mentioned, open questions and the next steps. Write only the summary, in the conversation's language."
)
_SUMMARY_REQUEST = "Summarise the conversation above for continuing it, as instructed."
_SUMMARY_HEADING = "Summary of the earlier conversation (compacted):\n"


@dataclass(frozen=True, slots=True)
class CompactionContent:
    """What a compaction item holds: the model's summary and the ids of the user messages it kept."""

    summary: str
    retained: tuple[str, ...] = ()

    def to_json(self) -> bytes:
        return orjson.dumps({"summary": self.summary, "retained": list(self.retained)})

    @classmethod
    def from_json(cls, raw: bytes | str) -> CompactionContent:
        """Raises ValueError when `raw` is not a compaction's content."""
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise ValueError("not JSON") from None
        summary = data.get("summary") if isinstance(data, dict) else None
        retained = data.get("retained", []) if isinstance(data, dict) else None
        if not isinstance(summary, str) or not isinstance(retained, list) or not all(isinstance(i, str) for i in retained):
            raise ValueError("not a compaction's content")
        return cls(summary, tuple(retained))


# Opens a compaction item's `encrypted_content` (raises InvalidRequest when it cannot).
Opener = Callable[[Item], CompactionContent]


def read_context_management(value: Any) -> int | None:
    """`context_management`: `[{"type": "compaction", "compact_threshold": N}]`; the threshold, or None without one."""
    if value is None:
        return None
    if not isinstance(value, list):
        raise InvalidRequest("Invalid value for 'context_management': expected an array.", param="context_management",
                             code="invalid_value")
    threshold: int | None = None
    for index, entry in enumerate(value):
        param = f"context_management[{index}]"
        if not isinstance(entry, dict) or entry.get("type") != COMPACTION:
            kind = entry.get("type") if isinstance(entry, dict) else None
            raise InvalidRequest(f"Invalid value for '{param}.type': {kind!r}; only 'compaction' is supported.",
                                 param=f"{param}.type", code="invalid_value")
        unknown = sorted(set(entry) - {"type", "compact_threshold"})
        if unknown:
            raise InvalidRequest(f"Unknown parameter: '{param}.{unknown[0]}'.", param=f"{param}.{unknown[0]}",
                                 code="unknown_parameter")
        if threshold is not None:
            raise InvalidRequest("Only one 'compaction' entry is allowed in 'context_management'.", param=param,
                                 code="invalid_value")
        raw = entry.get("compact_threshold")
        if raw is None:
            raise InvalidRequest(f"Missing required parameter: '{param}.compact_threshold'.",
                                 param=f"{param}.compact_threshold", code="missing_required_parameter")
        if isinstance(raw, bool) or not isinstance(raw, int) or raw < 1:
            raise InvalidRequest(f"Invalid value for '{param}.compact_threshold': expected a positive integer of "
                                 "tokens.", param=f"{param}.compact_threshold", code="invalid_value")
        threshold = raw
    return threshold


def is_user_message(item: Item) -> bool:
    return item.get("type", "message") == "message" and item.get("role") == "user"


def latest_compaction(items: Sequence[Item]) -> int | None:
    for index in range(len(items) - 1, -1, -1):
        if items[index].get("type") == COMPACTION:
            return index
    return None


def visible_context(items: Sequence[Item], open_item: Opener) -> list[Item]:
    """The items a model reads: before the latest compaction, only the user messages it retained, then its summary."""
    last = latest_compaction(items)
    if last is None:
        return list(items)
    compaction = items[last]
    content = open_item(compaction)
    retained = set(content.retained)

    def kept(item: Item) -> bool:
        return is_user_message(item) and item.get("id") in retained

    before = items[:last]
    # The summary takes the place of the last item it superseded: user messages after that one (a turn's own
    # input, compacted before its first round) still follow it, so the model answers them.
    cut = next((index + 1 for index in range(len(before) - 1, -1, -1) if not kept(before[index])), len(before))
    summary = summary_message(content.summary, compaction.get("id") or "")
    return [*filter(kept, before[:cut]), summary, *before[cut:], *items[last + 1:]]


def summary_message(summary: str, compaction_id: str) -> Item:
    """The summary as the model reads it: an assistant message (the model wrote it)."""
    return {"type": "message", "id": f"msg_{compaction_id}", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": _SUMMARY_HEADING + summary, "annotations": [], "logprobs": []}]}


def retained_user_messages(visible: Sequence[Item]) -> list[Item]:
    """The user messages a compaction keeps verbatim: every one the model can see (OpenAI's rule)."""
    return [item for item in visible if is_user_message(item)]


def summary_request(model_items: list[Item], instructions: str | None, *, model: str) -> dict[str, Any]:
    """The model server's body for writing the summary: the context as the model sees it, then the request."""
    request = _SUMMARY_REQUEST
    if instructions:
        request += f"\n\nThe assistant works under these instructions (keep what the summary needs of them):\n{instructions}"
    return {
        "model": model,
        "instructions": SUMMARY_PROMPT,
        "input": [*model_items, {"type": "message", "role": "user", "content": [{"type": "input_text", "text": request}]}],
        "stream": False,
        "store": False,
    }


def summary_text(upstream_response: dict[str, Any]) -> str:
    """The summary the model wrote: the text of its assistant messages."""
    texts = [
        part.get("text", "")
        for item in upstream_response.get("output") or []
        if isinstance(item, dict) and item.get("type") == "message"
        for part in item.get("content") or []
        if isinstance(part, dict) and part.get("type") == "output_text"
    ]
    return "".join(texts).strip()


def compaction_item(encrypted_content: str, item_id: str | None = None) -> Item:
    return {"type": COMPACTION, "id": item_id or new_item_id(COMPACTION), "encrypted_content": encrypted_content}


def compacted_response(response_id: str, created_at: int, output: list[Item], usage: dict[str, Any] | None) -> dict[str, Any]:
    """The `response.compaction` object `POST /v1/responses/compact` answers."""
    return {"id": response_id, "object": "response.compaction", "created_at": created_at, "output": output,
            "usage": usage or _zero_usage()}


def _zero_usage() -> dict[str, Any]:
    return {"input_tokens": 0, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 0,
            "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 0}
