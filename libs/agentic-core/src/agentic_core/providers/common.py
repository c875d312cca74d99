"""What the Anthropic and Gemini adapters share: reading a Responses request's parts, options and stop states.

Hosted providers take a closed set of keys (an unknown one is a 400 there), so
an adapter sends only what it maps; everything else is dropped, never forwarded.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from agentic_core.errors import InvalidRequest, UpstreamUnavailable

TEXT_PARTS = frozenset({"input_text", "output_text", "text", "summary_text", "reasoning_text"})
# `reasoning.effort` → a thinking budget in tokens, where the provider takes one.
THINKING_BUDGETS = {"minimal": 1024, "low": 1024, "medium": 4096, "high": 16384, "xhigh": 32768}
INVALID_REPLY_CODE = "upstream_invalid_response"


def invalid_reply(provider: str, message: str) -> UpstreamUnavailable:
    return UpstreamUnavailable(f"The model server sent an invalid {provider} reply: {message}", code=INVALID_REPLY_CODE)


def unsupported(provider: str, what: str, param: str) -> InvalidRequest:
    return InvalidRequest(f"{what} cannot be sent to {provider} model server.", param=param, code="unsupported_value")


def part_text(part: Any) -> str | None:
    if isinstance(part, dict) and part.get("type") in TEXT_PARTS and isinstance(part.get("text"), str):
        text: str = part["text"]
        return text
    return None


def data_url(url: Any) -> tuple[str, str] | None:
    """`data:<mime>;base64,<data>` → (mime, data); None for anything else."""
    if not isinstance(url, str) or not url.startswith("data:"):
        return None
    header, comma, data = url[len("data:"):].partition(",")
    mime, _, encoding = header.partition(";")
    if not comma or encoding != "base64" or not mime:
        return None
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None
    return mime, data


def input_items(body: dict[str, Any]) -> list[dict[str, Any]]:
    raw = body.get("input")
    if raw is None:
        return []
    if isinstance(raw, str):
        return [{"type": "message", "role": "user", "content": raw}]
    if not isinstance(raw, list) or not all(isinstance(item, dict) for item in raw):
        raise InvalidRequest("`input` must be a string or an array of items.", param="input", code="invalid_value")
    return raw


def item_type(item: dict[str, Any]) -> str | None:
    kind = item.get("type") or ("message" if "role" in item else None)
    return kind if isinstance(kind, str) else None


def message_parts(item: dict[str, Any], index: int) -> list[dict[str, Any]]:
    content = item.get("content")
    if isinstance(content, str):
        return [{"type": "input_text", "text": content}]
    if not isinstance(content, list) or not all(isinstance(part, dict) for part in content):
        raise InvalidRequest(f"Invalid value for 'input[{index}].content'.", param=f"input[{index}].content",
                             code="invalid_value")
    return content


def system_text(body: dict[str, Any], provider: str) -> str | None:
    """`instructions`, then every system or developer message of the input, joined (providers take one system)."""
    texts: list[str] = []
    instructions = body.get("instructions")
    if instructions is not None:
        if not isinstance(instructions, str):
            raise unsupported(provider, "`instructions` that are not a string", "instructions")
        if instructions:
            texts.append(instructions)
    for index, item in enumerate(input_items(body)):
        if item_type(item) == "message" and item.get("role") in ("system", "developer"):
            parts = message_parts(item, index)
            pieces = [part_text(part) for part in parts]
            if any(piece is None for piece in pieces):
                raise unsupported(provider, "A system message with content other than text",
                                  f"input[{index}].content")
            texts.append("\n".join(piece for piece in pieces if piece is not None))
    return "\n\n".join(texts) if texts else None


def function_output_text(output: Any, index: int) -> str | None:
    """A `function_call_output`'s output as text; None when it carries more than text (images)."""
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        texts = [part_text(part) for part in output]
        if all(text is not None for text in texts):
            return "\n".join(text for text in texts if text is not None)
        return None
    raise InvalidRequest(f"Invalid value for 'input[{index}].output'.", param=f"input[{index}].output",
                         code="invalid_value")


def stop_sequences(body: dict[str, Any]) -> list[str] | None:
    stop = body.get("stop")
    if isinstance(stop, str):
        return [stop]
    if isinstance(stop, list) and all(isinstance(entry, str) for entry in stop):
        return list(stop) or None
    return None


def function_tools(body: dict[str, Any], provider: str) -> list[dict[str, Any]]:
    """The request's function tools (`allowed_tools` narrows them); any other kind is refused."""
    raw = body.get("tools")
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise InvalidRequest("`tools` must be an array.", param="tools", code="invalid_value")
    tools = []
    for index, tool in enumerate(raw):
        if not isinstance(tool, dict) or tool.get("type") != "function":
            kind = tool.get("type") if isinstance(tool, dict) else tool
            raise unsupported(provider, f"The tool type '{kind}'", f"tools[{index}].type")
        if not isinstance(tool.get("name"), str) or not tool["name"]:
            raise InvalidRequest("A function tool needs a `name`.", param=f"tools[{index}].name", code="invalid_value")
        tools.append(tool)
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "allowed_tools":
        listed = choice.get("tools")
        allowed = {entry.get("name") for entry in listed if isinstance(entry, dict)} if isinstance(listed, list) else set()
        tools = [tool for tool in tools if tool["name"] in allowed]
    return tools


def tool_choice_mode(body: dict[str, Any]) -> tuple[str, str | None]:
    """(`auto` | `required` | `none` | `function`, the function's name)."""
    choice = body.get("tool_choice")
    if choice is None:
        return "auto", None
    if isinstance(choice, str) and choice in ("auto", "required", "none"):
        return choice, None
    if isinstance(choice, dict):
        if choice.get("type") == "function" and isinstance(choice.get("name"), str):
            return "function", choice["name"]
        if choice.get("type") == "allowed_tools":
            mode = choice.get("mode") or "auto"
            if mode in ("auto", "required"):
                return mode, None
    raise InvalidRequest("Invalid value for 'tool_choice'.", param="tool_choice", code="invalid_value")


def thinking_budget(body: dict[str, Any]) -> int | None:
    reasoning = body.get("reasoning")
    effort = reasoning.get("effort") if isinstance(reasoning, dict) else None
    if effort is None or effort == "none":
        return None
    budget = THINKING_BUDGETS.get(effort) if isinstance(effort, str) else None
    if budget is None:
        raise InvalidRequest("Invalid value for 'reasoning.effort'.", param="reasoning.effort", code="invalid_value")
    return budget


def wants_reasoning_summary(body: dict[str, Any]) -> bool:
    reasoning = body.get("reasoning")
    return isinstance(reasoning, dict) and reasoning.get("summary") is not None


def json_schema_format(body: dict[str, Any], provider: str) -> tuple[str, dict[str, Any] | None] | None:
    """`text.format`: None for text, ("json_object", None) or ("json_schema", schema)."""
    text = body.get("text")
    text_format = text.get("format") if isinstance(text, dict) else None
    if not isinstance(text_format, dict) or text_format.get("type") in (None, "text"):
        return None
    if text_format["type"] == "json_object":
        return "json_object", None
    if text_format["type"] == "json_schema" and isinstance(text_format.get("schema"), dict):
        return "json_schema", text_format["schema"]
    raise unsupported(provider, f"The text format '{text_format.get('type')}'", "text.format.type")


def count(value: Any, provider: str) -> int:
    if value is None:
        return 0
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise invalid_reply(provider, f"token count {value!r} is not a non-negative integer")
    return value


def usage(input_tokens: int, output_tokens: int, *, cached: int = 0, cache_write: int = 0, reasoning: int = 0
          ) -> dict[str, Any]:
    """OpenAI's Responses usage shape (the SDK requires every detail field)."""
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": cache_write},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": input_tokens + output_tokens,
    }
