"""A stateless Responses request → the body Anthropic's Messages API (`POST /v1/messages`) accepts.

| Responses key | Messages |
|---|---|
| `instructions`, system/developer messages | `system` (joined; Messages has one system prompt) |
| `input` | `messages`: user/assistant turns, consecutive items of one role merged into one turn |
| `max_output_tokens` | `max_tokens` (required there: the route's default when unset) |
| `temperature`, `top_p`, `top_k`, `stop` | `temperature`, `top_p`, `top_k`, `stop_sequences` (sampling keys are dropped while thinking, which refuses them) |
| `tools` (functions), `tool_choice`, `parallel_tool_calls: false` | `tools` (`input_schema`), `tool_choice` (`auto`/`any`/`tool`/`none`), `disable_parallel_tool_use` |
| `reasoning.effort` | `thinking: {type: enabled, budget_tokens}` (kept under `max_tokens`) |
| `text.format` json_schema | `output_config.format` |
| `safety_identifier` (else `user`) | `metadata.user_id` |
| `stream` | kept |
| everything else (`prompt_cache_key`, `cache_salt`, `store`, ...) | dropped: the API refuses keys it does not know |

Items: text and images (data URLs: the executor fetched any URL) and PDF files
(`file_data`) become blocks; `function_call` → `tool_use` (arguments parsed);
`function_call_output` → `tool_result`; a `reasoning` item carrying Anthropic's
own blob (see `agentic_core.providers.anthropic.response`) → the `thinking` or
`redacted_thinking` block it was; reasoning without it is dropped (Anthropic
refuses unsigned thinking). Other items raise `InvalidRequest`.
"""

from __future__ import annotations

from typing import Any

import orjson

from agentic_core.errors import InvalidRequest
from agentic_core.providers.common import (
    data_url,
    function_output_text,
    function_tools,
    input_items,
    item_type,
    json_schema_format,
    message_parts,
    part_text,
    stop_sequences,
    system_text,
    thinking_budget,
    tool_choice_mode,
    unsupported,
)

PROVIDER = "an Anthropic"
THINKING_PREFIX = "anthropic.thinking."
REDACTED_PREFIX = "anthropic.redacted."
MIN_THINKING_BUDGET = 1024  # Anthropic's smallest `budget_tokens`
DEFAULT_MAX_TOKENS = 4096
_IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})


def anthropic_request_from_responses(body: dict[str, Any], *, default_max_tokens: int = DEFAULT_MAX_TOKENS
                                     ) -> dict[str, Any]:
    """The Messages body equivalent to the stateless Responses request `body`."""
    max_tokens = body.get("max_output_tokens") or default_max_tokens
    request: dict[str, Any] = {"model": body.get("model"), "max_tokens": max_tokens}
    system = system_text(body, PROVIDER)
    if system:
        request["system"] = system
    request["messages"] = _messages(body)
    budget = thinking_budget(body)
    if budget is not None and max_tokens > MIN_THINKING_BUDGET:
        request["thinking"] = {"type": "enabled", "budget_tokens": max(MIN_THINKING_BUDGET, min(budget, max_tokens - 1))}
    else:
        for key, target in (("temperature", "temperature"), ("top_p", "top_p"), ("top_k", "top_k")):
            if body.get(key) is not None:
                request[target] = body[key]
    stop = stop_sequences(body)
    if stop:
        request["stop_sequences"] = stop
    _map_tools(body, request)
    text_format = json_schema_format(body, PROVIDER)
    if text_format is not None:
        kind, schema = text_format
        if kind != "json_schema":
            raise unsupported(PROVIDER, "The text format 'json_object' (give a json_schema)", "text.format.type")
        request["output_config"] = {"format": {"type": "json_schema", "schema": schema}}
    user = body.get("safety_identifier") or body.get("user")
    if isinstance(user, str) and user:
        request["metadata"] = {"user_id": user}
    if body.get("stream") is not None:
        request["stream"] = body["stream"] is True
    return request


# -- messages --------------------------------------------------------------------


def _messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"] += blocks
        else:
            messages.append({"role": role, "content": blocks})

    for index, item in enumerate(input_items(body)):
        kind = item_type(item)
        if kind == "message":
            role = item.get("role")
            if role in ("system", "developer"):
                continue  # in `system`
            if role not in ("user", "assistant"):
                raise InvalidRequest(f"Invalid value for 'input[{index}].role'.", param=f"input[{index}].role",
                                     code="invalid_value")
            add(role, _content_blocks(message_parts(item, index), index, assistant=role == "assistant"))
        elif kind == "reasoning":
            add("assistant", _thinking_blocks(item))
        elif kind == "function_call":
            add("assistant", [_tool_use(item, index)])
        elif kind == "function_call_output":
            add("user", [_tool_result(item, index)])
        else:
            raise unsupported(PROVIDER, f"Input items of type '{kind}'", f"input[{index}]")
    return messages


def _content_blocks(parts: list[dict[str, Any]], index: int, *, assistant: bool) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for position, part in enumerate(parts):
        param = f"input[{index}].content[{position}]"
        text = part_text(part)
        if text is not None:
            if text:  # Anthropic refuses empty text blocks
                blocks.append({"type": "text", "text": text})
            continue
        if part.get("type") == "refusal" and assistant:
            if part.get("refusal"):
                blocks.append({"type": "text", "text": str(part["refusal"])})
            continue
        if assistant:
            raise unsupported(PROVIDER, "Assistant content other than text", param)
        blocks.append(_media_block(part, param))
    return blocks


def _media_block(part: dict[str, Any], param: str) -> dict[str, Any]:
    part_type = part.get("type")
    if part_type == "input_image":
        parsed = data_url(part.get("image_url"))
        if parsed is None or parsed[0] not in _IMAGE_TYPES:
            raise unsupported(PROVIDER, "An image that is not a JPEG, PNG, GIF or WebP data URL", param)
        return {"type": "image", "source": {"type": "base64", "media_type": parsed[0], "data": parsed[1]}}
    if part_type == "input_file":
        parsed = data_url(part.get("file_data"))
        if parsed is not None and parsed[0] == "application/pdf":
            block: dict[str, Any] = {"type": "document", "source": {"type": "base64", "media_type": "application/pdf",
                                                                    "data": parsed[1]}}
            if isinstance(part.get("filename"), str):
                block["title"] = part["filename"]
            return block
        raise unsupported(PROVIDER, "A file that is not a PDF given as `file_data`", param)
    raise unsupported(PROVIDER, f"Content parts of type '{part_type}'", param)


def _thinking_blocks(item: dict[str, Any]) -> list[dict[str, Any]]:
    blob = item.get("encrypted_content")
    if not isinstance(blob, str):
        return []
    if blob.startswith(REDACTED_PREFIX):
        return [{"type": "redacted_thinking", "data": blob[len(REDACTED_PREFIX):]}]
    if not blob.startswith(THINKING_PREFIX):
        return []  # another model's reasoning: Anthropic reads only its own signed thinking
    texts = [text for part in item.get("content") or [] if (text := part_text(part)) is not None]
    return [{"type": "thinking", "thinking": "".join(texts), "signature": blob[len(THINKING_PREFIX):]}]


def _tool_use(item: dict[str, Any], index: int) -> dict[str, Any]:
    call_id, name, arguments = item.get("call_id"), item.get("name"), item.get("arguments")
    if not isinstance(call_id, str) or not call_id or not isinstance(name, str) or not isinstance(arguments, str):
        raise InvalidRequest(f"Input item {index} of type 'function_call' needs `call_id`, `name` and `arguments`.",
                             param=f"input[{index}]", code="invalid_value")
    try:
        parsed = orjson.loads(arguments) if arguments.strip() else {}
    except orjson.JSONDecodeError:
        parsed = None
    if not isinstance(parsed, dict):
        # What the model wrote was not an object; Anthropic's tool input must be one.
        parsed = {"arguments": arguments}
    return {"type": "tool_use", "id": call_id, "name": name, "input": parsed}


def _tool_result(item: dict[str, Any], index: int) -> dict[str, Any]:
    call_id = item.get("call_id")
    if not isinstance(call_id, str) or not call_id:
        raise InvalidRequest(f"Input item {index} of type 'function_call_output' needs a non-empty `call_id`.",
                             param=f"input[{index}].call_id", code="invalid_value")
    output = item.get("output")
    text = function_output_text(output, index)
    content: str | list[dict[str, Any]]
    if text is not None:
        content = text
    else:
        assert isinstance(output, list)
        content = _content_blocks(output, index, assistant=False)
    return {"type": "tool_result", "tool_use_id": call_id, "content": content}


# -- tools -----------------------------------------------------------------------


def _map_tools(body: dict[str, Any], request: dict[str, Any]) -> None:
    tools = function_tools(body, PROVIDER)
    if not tools:
        return
    request["tools"] = [
        {"name": tool["name"], **({"description": tool["description"]} if tool.get("description") else {}),
         "input_schema": tool.get("parameters") or {"type": "object", "properties": {}}}
        for tool in tools
    ]
    mode, name = tool_choice_mode(body)
    choice: dict[str, Any] = {"type": "tool", "name": name} if mode == "function" else \
        {"type": {"none": "none", "auto": "auto", "required": "any"}[mode]}
    if body.get("parallel_tool_calls") is False and mode != "none":
        choice["disable_parallel_tool_use"] = True
    if choice != {"type": "auto"}:
        request["tool_choice"] = choice
