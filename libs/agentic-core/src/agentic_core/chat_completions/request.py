"""A Chat Completions request → the stateless Responses create body the round loop runs (`/v1/chat/completions`
in front of a model server that does not speak it: the hosted providers' routes).

| Chat key | Responses |
|---|---|
| `messages` | `input`: system/developer → `instructions` (joined), user/assistant messages, assistant `tool_calls` → `function_call` items, `tool` messages → `function_call_output` |
| `max_completion_tokens` (else `max_tokens`) | `max_output_tokens` |
| `tools`, `tool_choice`, `parallel_tool_calls` | function tools, the same choices |
| `response_format` | `text.format` |
| `reasoning_effort` | `reasoning.effort` |
| `temperature`, `top_p`, `stop`, `seed`, `user`, `prompt_cache_key`, `stream` | kept |
| anything else (`n`, `logprobs`, `stream_options`, ...) | dropped; `store` is always false |
"""

from __future__ import annotations

from typing import Any

from agentic_core.errors import InvalidRequest

_KEPT = ("model", "temperature", "top_p", "stop", "seed", "user", "prompt_cache_key", "cache_salt", "parallel_tool_calls")


def _invalid(message: str, param: str) -> InvalidRequest:
    return InvalidRequest(message, param=param, code="invalid_value")


def responses_request_from_chat(body: dict[str, Any]) -> dict[str, Any]:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise InvalidRequest("Missing required parameter: 'messages'.", param="messages", code="missing_required_parameter")
    request: dict[str, Any] = {key: body[key] for key in _KEPT if body.get(key) is not None}
    instructions, items = _input(messages)
    request["input"] = items
    if instructions:
        request["instructions"] = instructions
    max_tokens = body.get("max_completion_tokens") or body.get("max_tokens")
    if max_tokens is not None:
        request["max_output_tokens"] = max_tokens
    if body.get("tools"):
        request["tools"] = [_tool(tool, index) for index, tool in enumerate(body["tools"])]
        if body.get("tool_choice") is not None:
            request["tool_choice"] = _tool_choice(body["tool_choice"])
    if body.get("reasoning_effort") is not None:
        request["reasoning"] = {"effort": body["reasoning_effort"]}
    response_format = body.get("response_format")
    if isinstance(response_format, dict) and response_format.get("type") in ("json_object", "json_schema"):
        schema = response_format.get("json_schema") if response_format["type"] == "json_schema" else None
        request["text"] = {"format": {"type": "json_schema", **schema} if isinstance(schema, dict)
                           else {"type": "json_object"}}
    request["stream"] = body.get("stream") is True
    request["store"] = False
    return request


def _input(messages: list[Any]) -> tuple[str | None, list[dict[str, Any]]]:
    system: list[str] = []
    items: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise _invalid(f"messages[{index}] must be an object.", f"messages[{index}]")
        role, content = message.get("role"), message.get("content")
        if role in ("system", "developer"):
            system.append(_text(content, index))
        elif role == "user":
            items.append({"type": "message", "role": "user", "content": _user_parts(content, index)})
        elif role == "assistant":
            text = _text(content, index) if content is not None else ""
            if text:
                items.append({"type": "message", "role": "assistant",
                              "content": [{"type": "output_text", "text": text}]})
            for call in message.get("tool_calls") or []:
                function = call.get("function") if isinstance(call, dict) else None
                if not isinstance(function, dict) or not isinstance(call.get("id"), str):
                    raise _invalid(f"messages[{index}].tool_calls needs ids and functions.", f"messages[{index}].tool_calls")
                items.append({"type": "function_call", "call_id": call["id"], "name": function.get("name"),
                              "arguments": function.get("arguments") or "{}"})
        elif role == "tool":
            if not isinstance(message.get("tool_call_id"), str):
                raise _invalid(f"messages[{index}].tool_call_id is required.", f"messages[{index}].tool_call_id")
            items.append({"type": "function_call_output", "call_id": message["tool_call_id"],
                          "output": _text(content, index)})
        else:
            raise _invalid(f"Invalid value for 'messages[{index}].role'.", f"messages[{index}].role")
    return ("\n\n".join(text for text in system if text) or None), items


def _text(content: Any, index: int) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(part, dict) and part.get("type") == "text" for part in content):
        return "\n".join(str(part.get("text") or "") for part in content)
    raise _invalid(f"messages[{index}].content must be text here.", f"messages[{index}].content")


def _user_parts(content: Any, index: int) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "input_text", "text": content}]
    if not isinstance(content, list):
        raise _invalid(f"Invalid value for 'messages[{index}].content'.", f"messages[{index}].content")
    parts: list[dict[str, Any]] = []
    for position, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            parts.append({"type": "input_text", "text": str(part.get("text") or "")})
        elif kind == "image_url" and isinstance(part.get("image_url"), dict):
            parts.append({"type": "input_image", "image_url": part["image_url"].get("url"),
                          "detail": part["image_url"].get("detail") or "auto"})
        else:
            raise InvalidRequest(f"Content parts of type '{kind}' are not supported here.",
                                 param=f"messages[{index}].content[{position}]", code="unsupported_value")
    return parts


def _tool(tool: Any, index: int) -> dict[str, Any]:
    function = tool.get("function") if isinstance(tool, dict) and tool.get("type") == "function" else None
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        raise InvalidRequest("Only function tools are supported.", param=f"tools[{index}]", code="unsupported_value")
    return {"type": "function", **{key: function[key] for key in ("name", "description", "parameters", "strict")
                                   if function.get(key) is not None}}


def _tool_choice(choice: Any) -> Any:
    if isinstance(choice, str):
        return choice
    function = choice.get("function") if isinstance(choice, dict) else None
    if isinstance(function, dict) and isinstance(function.get("name"), str):
        return {"type": "function", "name": function["name"]}
    raise InvalidRequest("Invalid value for 'tool_choice'.", param="tool_choice", code="invalid_value")
