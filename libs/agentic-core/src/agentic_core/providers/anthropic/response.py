"""An Anthropic `Message` → the Responses object vLLM's /v1/responses returns for the same generation.

Blocks, in order: `text` → a message item; `thinking` → a reasoning item whose
`encrypted_content` is `anthropic.thinking.<signature>` (the executor seals it
for the client when asked, and the request adapter replays it);
`redacted_thinking` → a reasoning item `anthropic.redacted.<data>`; `tool_use` →
a function call (its `input` as JSON arguments). `stop_reason`: `max_tokens`
and `model_context_window_exceeded` end incomplete (`max_output_tokens`),
`refusal` incomplete (`content_filter`), the rest completed. Usage: input
tokens count the cached and cache-written ones (Anthropic counts them apart).
"""

from __future__ import annotations

import time
from typing import Any

import orjson

from agentic_core.chat.response import function_call_item, message_item, output_text_part, response_object
from agentic_core.ids import new_id, new_item_id, new_response_id
from agentic_core.providers.anthropic.request import REDACTED_PREFIX, THINKING_PREFIX
from agentic_core.providers.common import count, invalid_reply, usage
from agentic_core.providers.events import reasoning_output_item

PROVIDER = "Anthropic Messages"
_INCOMPLETE = {"max_tokens": "max_output_tokens", "model_context_window_exceeded": "max_output_tokens",
               "refusal": "content_filter"}


def status_for(stop_reason: str | None) -> tuple[str, dict[str, Any] | None]:
    if stop_reason in _INCOMPLETE:
        return "incomplete", {"reason": _INCOMPLETE[stop_reason]}
    return "completed", None


def usage_from_anthropic(raw: Any) -> dict[str, Any] | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise invalid_reply(PROVIDER, "`usage` is not an object")
    cached = count(raw.get("cache_read_input_tokens"), PROVIDER)
    written = count(raw.get("cache_creation_input_tokens"), PROVIDER)
    return usage(count(raw.get("input_tokens"), PROVIDER) + cached + written, count(raw.get("output_tokens"), PROVIDER),
                 cached=cached, cache_write=written)


def thinking_blob(block: dict[str, Any]) -> str | None:
    if block.get("type") == "redacted_thinking":
        return REDACTED_PREFIX + str(block.get("data") or "")
    signature = block.get("signature")
    return THINKING_PREFIX + signature if isinstance(signature, str) and signature else None


def response_from_anthropic_message(message: Any, request: dict[str, Any]) -> dict[str, Any]:
    """A non-streaming Messages reply → a Responses response object echoing `request`."""
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        raise invalid_reply(PROVIDER, "the body is not a Message with `content`")
    stop_reason = message.get("stop_reason")
    status, incomplete_details = status_for(stop_reason if isinstance(stop_reason, str) else None)
    output = [item for block in message["content"] if (item := _item(block)) is not None]
    if not any(item["type"] in ("message", "function_call") for item in output):
        output.append(message_item(new_item_id("message"), [output_text_part("", [])], "completed"))
    if status == "incomplete" and output:
        output[-1]["status"] = "incomplete"
    model = message.get("model")
    return response_object(
        request, response_id=new_response_id(), created_at=int(time.time()),
        model=model if isinstance(model, str) else None, status=status, output=output,
        usage=usage_from_anthropic(message.get("usage")), incomplete_details=incomplete_details,
    )


def _item(block: Any) -> dict[str, Any] | None:
    if not isinstance(block, dict):
        raise invalid_reply(PROVIDER, "a content block is not an object")
    kind = block.get("type")
    if kind == "text":
        return message_item(new_item_id("message"), [output_text_part(str(block.get("text") or ""), [])], "completed")
    if kind in ("thinking", "redacted_thinking"):
        text = block.get("thinking") if kind == "thinking" else ""
        return reasoning_output_item(new_item_id("reasoning"), text if isinstance(text, str) else "",
                                     thinking_blob(block), "completed")
    if kind == "tool_use":
        name, call_id = block.get("name"), block.get("id")
        if not isinstance(name, str) or not name:
            raise invalid_reply(PROVIDER, "a tool_use block has no name")
        arguments = orjson.dumps(block.get("input") if block.get("input") is not None else {}).decode()
        return function_call_item(new_item_id("function_call"),
                                  call_id if isinstance(call_id, str) and call_id else new_id("call"), name,
                                  arguments, "completed")
    return None  # server tool blocks and future kinds: nothing the round loop can act on
