"""The public response object and the normalisation of what a model server returns."""

from __future__ import annotations

from typing import Any

from agentic_core.responses.request import CreateResponseRequest

TERMINAL_STATUSES = frozenset({"completed", "incomplete", "failed", "cancelled"})
# Keys some model servers (vLLM) put on items with a null value that OpenAI's schema lacks.
_SERVER_ONLY_NULL_ITEM_KEYS = ("async", "caller", "namespace", "phase")


def build_response(
    request: CreateResponseRequest,
    *,
    response_id: str,
    created_at: int,
    status: str,
    output: list[dict[str, Any]],
    usage: dict[str, Any] | None = None,
    error: dict[str, Any] | None = None,
    incomplete_details: dict[str, Any] | None = None,
    completed_at: int | None = None,
    conversation_id: str | None = None,
) -> dict[str, Any]:
    """Every field the OpenAI and Open Responses specs require, with non-null defaults."""
    reasoning = request.reasoning or {}
    text = request.text or {"format": {"type": "text"}}
    return {
        "id": response_id,
        "object": "response",
        "created_at": created_at,
        "status": status,
        "background": request.background,
        "completed_at": completed_at,
        "conversation": {"id": conversation_id} if conversation_id else None,
        "error": error,
        "incomplete_details": incomplete_details,
        "instructions": request.instructions,
        "max_output_tokens": request.max_output_tokens,
        "max_tool_calls": request.max_tool_calls,
        "model": request.model,
        "output": output,
        "parallel_tool_calls": True if request.parallel_tool_calls is None else request.parallel_tool_calls,
        "previous_response_id": request.previous_response_id,
        "prompt_cache_key": request.prompt_cache_key,
        "reasoning": {"effort": reasoning.get("effort"), "summary": reasoning.get("summary")},
        "safety_identifier": request.safety_identifier,
        "service_tier": request.service_tier or "default",
        "store": request.store,
        "temperature": 1.0 if request.temperature is None else request.temperature,
        "text": text,
        "tool_choice": "auto" if request.tool_choice is None else request.tool_choice,
        "tools": [echoed_tool(tool) for tool in request.tools or []],
        "top_logprobs": request.top_logprobs or 0,
        "top_p": 1.0 if request.top_p is None else request.top_p,
        "presence_penalty": request.presence_penalty or 0.0,
        "frequency_penalty": request.frequency_penalty or 0.0,
        "truncation": request.truncation or "disabled",
        "usage": usage,
        "user": request.user,
        "metadata": request.metadata or {},
    }


def echoed_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """A declared tool as the response shows it: a function tool with every field the specs require
    (`strict` defaults to true, as OpenAI applies it); an mcp tool without its credentials (`authorization`
    dropped, `headers` null: every copy of the response is echoed, streamed and stored); other types as declared."""
    if tool.get("type") == "mcp":
        if "authorization" not in tool and not tool.get("headers"):
            return tool
        return {**{key: value for key, value in tool.items() if key != "authorization"}, "headers": None}
    if tool.get("type") != "function":
        return tool
    return {**tool, "description": tool.get("description"), "parameters": tool.get("parameters"),
            "strict": True if tool.get("strict") is None else tool["strict"]}


def normalize_output_item(item: dict[str, Any], item_id: str) -> dict[str, Any]:
    """An upstream output item in our public form: our id, `logprobs: []` on text parts. A `type` that is not a
    string counts as absent (an item of no known type)."""
    normalized = strip_server_nulls(item)
    normalized["id"] = item_id
    if not isinstance(normalized.get("type"), str):
        normalized.pop("type", None)
    if normalized.get("type") == "message":
        content = normalized.get("content")
        parts = content if isinstance(content, list) else []  # content, or a part, of the wrong type counts as absent
        normalized["content"] = [normalize_content_part(part) for part in parts if isinstance(part, dict)]
    normalized.setdefault("status", "completed")
    return normalized


def normalize_content_part(part: dict[str, Any]) -> dict[str, Any]:
    if part.get("type") != "output_text":
        return part
    if part.get("logprobs") is not None and part.get("annotations") is not None:
        return part
    fixed = dict(part)
    if fixed.get("logprobs") is None:
        fixed["logprobs"] = []
    if fixed.get("annotations") is None:
        fixed["annotations"] = []
    return fixed


def strip_server_nulls(item: dict[str, Any]) -> dict[str, Any]:
    """The item without the null keys some servers add that the schemas lack (a copy)."""
    return {key: value for key, value in item.items() if not (value is None and key in _SERVER_ONLY_NULL_ITEM_KEYS)}


def normalize_usage(usage: dict[str, Any] | None) -> dict[str, Any] | None:
    """OpenAI's usage shape only; server-specific counters are dropped. Details that are not objects count as
    absent; a count that is not a number raises TypeError or ValueError."""
    if not usage:
        return None
    input_details = _details(usage.get("input_tokens_details"))
    output_details = _details(usage.get("output_tokens_details"))
    input_tokens = int(usage.get("input_tokens") or 0)
    output_tokens = int(usage.get("output_tokens") or 0)
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {
            "cached_tokens": int(input_details.get("cached_tokens") or 0),
            "cache_write_tokens": int(input_details.get("cache_write_tokens") or 0),
        },
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": int(output_details.get("reasoning_tokens") or 0)},
        "total_tokens": int(usage.get("total_tokens") or input_tokens + output_tokens),
    }


def _details(details: Any) -> dict[str, Any]:
    return details if isinstance(details, dict) else {}
