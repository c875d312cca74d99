"""A Chat Completions reply → the Responses response object vLLM's /v1/responses returns for it.

Shared by the JSON path and the stream translator: status from `finish_reason`,
usage, logprobs, and the response object around the output items.
"""

from __future__ import annotations

import time
from typing import Any

from agentic_core.errors import UpstreamUnavailable
from agentic_core.ids import new_id, new_item_id, new_response_id

INVALID_REPLY_CODE = "upstream_invalid_response"
# finish_reason → (status, incomplete reason). Anything else a server invents is a normal end.
_INCOMPLETE_REASONS = {"length": "max_output_tokens", "content_filter": "content_filter"}
# vLLM ends an aborted or failed generation with these; the text it produced is not a finished answer.
_FAILED_REASONS = frozenset({"abort", "error"})


def invalid_reply(message: str) -> UpstreamUnavailable:
    return UpstreamUnavailable(f"The model server sent an invalid Chat Completions reply: {message}",
                               code=INVALID_REPLY_CODE)


def status_for(finish_reason: str | None) -> tuple[str, dict[str, Any] | None, dict[str, Any] | None]:
    """(status, incomplete_details, error) of a generation that ended with `finish_reason`."""
    if finish_reason in _INCOMPLETE_REASONS:
        return "incomplete", {"reason": _INCOMPLETE_REASONS[finish_reason]}, None
    if finish_reason in _FAILED_REASONS:
        error = {"code": "server_error", "message": f"The model server ended the generation with '{finish_reason}'."}
        return "failed", None, error
    return "completed", None, None


def usage_from_chat(usage: Any) -> dict[str, Any] | None:
    """Chat usage in OpenAI's Responses usage shape (the SDK requires every detail field)."""
    if usage is None:
        return None
    if not isinstance(usage, dict):
        raise invalid_reply("`usage` is not an object")
    prompt_details = usage.get("prompt_tokens_details") or {}
    completion_details = usage.get("completion_tokens_details") or {}
    if not isinstance(prompt_details, dict) or not isinstance(completion_details, dict):
        raise invalid_reply("usage details are not objects")
    input_tokens = _count(usage.get("prompt_tokens"))
    output_tokens = _count(usage.get("completion_tokens"))
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": _count(prompt_details.get("cached_tokens")), "cache_write_tokens": 0},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": _count(completion_details.get("reasoning_tokens"))},
        "total_tokens": _count(usage.get("total_tokens")) or input_tokens + output_tokens,
    }


def _count(value: Any) -> int:
    if value is None:
        return 0
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise invalid_reply(f"token count {value!r} is not a non-negative integer")
    return value


def logprobs_from_chat(choice_logprobs: Any) -> list[dict[str, Any]]:
    """Chat `choice.logprobs.content` → Responses output_text logprobs (same data, `bytes` always set)."""
    if choice_logprobs is None:
        return []
    content = choice_logprobs.get("content") if isinstance(choice_logprobs, dict) else None
    if not isinstance(content, list):
        return []
    converted: list[dict[str, Any]] = []
    for entry in content:
        if not isinstance(entry, dict) or not isinstance(entry.get("token"), str):
            raise invalid_reply("a logprobs entry has no `token`")
        alternatives = entry.get("top_logprobs")
        top = [_logprob(alternative) for alternative in (alternatives if isinstance(alternatives, list) else [])
               if isinstance(alternative, dict)]
        converted.append({**_logprob(entry), "top_logprobs": top})
    return converted


def _logprob(entry: dict[str, Any]) -> dict[str, Any]:
    token = str(entry.get("token") or "")
    raw_bytes, logprob = entry.get("bytes"), entry.get("logprob")
    if logprob is not None and not isinstance(logprob, int | float):
        raise invalid_reply(f"logprob {logprob!r} is not a number")
    return {
        "token": token,
        "bytes": raw_bytes if isinstance(raw_bytes, list) else list(token.encode()),
        "logprob": float(logprob or 0.0),
    }


def message_item(item_id: str, parts: list[dict[str, Any]], status: str) -> dict[str, Any]:
    return {"id": item_id, "content": parts, "role": "assistant", "status": status, "type": "message"}


def function_call_item(item_id: str, call_id: str, name: str, arguments: str, status: str) -> dict[str, Any]:
    return {"arguments": arguments, "call_id": call_id, "name": name, "type": "function_call", "id": item_id,
            "status": status}


def reasoning_item(item_id: str, text: str | None, status: str) -> dict[str, Any]:
    item: dict[str, Any] = {"id": item_id, "summary": [], "type": "reasoning"}
    if text is not None:
        item["content"] = [{"text": text, "type": "reasoning_text"}]
    item["status"] = status
    return item


def output_text_part(text: str, logprobs: list[dict[str, Any]], annotations: list[dict[str, Any]] | None = None
                     ) -> dict[str, Any]:
    return {"annotations": annotations or [], "text": text, "type": "output_text", "logprobs": logprobs}


def response_object(
    request: dict[str, Any],
    *,
    response_id: str,
    created_at: int,
    model: str | None,
    status: str,
    output: list[dict[str, Any]],
    usage: dict[str, Any] | None = None,
    incomplete_details: dict[str, Any] | None = None,
    error: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """vLLM's Responses object (minus its server-only fields), echoing the Responses request."""
    tools = request.get("tools") or []
    return {
        "id": response_id,
        "created_at": created_at,
        "incomplete_details": incomplete_details,
        "instructions": request.get("instructions"),
        "metadata": request.get("metadata"),
        "model": model or request.get("model"),
        "object": "response",
        "output": output,
        "parallel_tool_calls": request.get("parallel_tool_calls", True) is not False,
        "temperature": request.get("temperature"),
        "tool_choice": request.get("tool_choice") or ("auto" if tools else "none"),
        "tools": tools,
        "top_p": request.get("top_p"),
        "background": False,
        "max_output_tokens": request.get("max_output_tokens"),
        "max_tool_calls": request.get("max_tool_calls"),
        "previous_response_id": None,
        "reasoning": request.get("reasoning"),
        "service_tier": request.get("service_tier") or "auto",
        "status": status,
        "text": request.get("text"),
        "top_logprobs": request.get("top_logprobs"),
        "truncation": "disabled",
        "usage": usage,
        "user": request.get("user"),
        "error": error,
    }


def response_from_chat_completion(completion: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
    """A non-streaming Chat Completions reply → a Responses response object.

    `request` is the Responses request the chat body was made from; the
    response echoes its settings the way a Responses server would.
    """
    if not isinstance(completion, dict):
        raise invalid_reply("the body is not a JSON object")
    choices = completion.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise invalid_reply("`choices` is missing or empty")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise invalid_reply("`choices[0].message` is not an object")
    finish_reason = choice.get("finish_reason")
    if finish_reason is not None and not isinstance(finish_reason, str):
        raise invalid_reply("`finish_reason` is not a string")
    status, incomplete_details, error = status_for(finish_reason)
    output = _output_items(message, choice.get("logprobs"))
    if status == "incomplete" and output:
        output[-1]["status"] = "incomplete"
    created = completion.get("created")
    return response_object(
        request,
        response_id=new_response_id(),
        created_at=created if isinstance(created, int) else int(time.time()),
        model=completion.get("model") if isinstance(completion.get("model"), str) else None,
        status=status,
        output=output,
        usage=usage_from_chat(completion.get("usage")),
        incomplete_details=incomplete_details,
        error=error,
    )


def _output_items(message: dict[str, Any], choice_logprobs: Any) -> list[dict[str, Any]]:
    content = _optional_str(message, "content")
    refusal = _optional_str(message, "refusal")
    reasoning = _optional_str(message, "reasoning_content") or _optional_str(message, "reasoning")
    tool_calls = message.get("tool_calls") or []
    if not isinstance(tool_calls, list):
        raise invalid_reply("`tool_calls` is not an array")
    output: list[dict[str, Any]] = []
    if reasoning:
        output.append(reasoning_item(new_item_id("reasoning"), reasoning, "completed"))
    # A reply that is only tool calls has no message item (vLLM answers `content: ""` next to them).
    if content or refusal or (not tool_calls and not reasoning):
        parts: list[dict[str, Any]] = []
        if content or not refusal:
            parts.append(output_text_part(content or "", logprobs_from_chat(choice_logprobs),
                                          _annotations(message.get("annotations"))))
        if refusal:
            parts.append({"refusal": refusal, "type": "refusal"})
        output.append(message_item(new_item_id("message"), parts, "completed"))
    for call in tool_calls:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(call, dict) or not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise invalid_reply("a tool call has no function name")
        arguments = function.get("arguments")
        call_id = call.get("id")
        output.append(function_call_item(
            new_item_id("function_call"),
            call_id if isinstance(call_id, str) and call_id else new_id("call"),
            function["name"],
            arguments if isinstance(arguments, str) else "",
            "completed",
        ))
    return output


def _optional_str(message: dict[str, Any], key: str) -> str | None:
    value = message.get(key)
    if value is not None and not isinstance(value, str):
        raise invalid_reply(f"`message.{key}` is not a string")
    return value


def _annotations(raw: Any) -> list[dict[str, Any]]:
    """Chat `url_citation` annotations, flattened to the Responses form; other kinds have no equivalent."""
    annotations: list[dict[str, Any]] = []
    for annotation in raw if isinstance(raw, list) else []:
        citation = annotation.get("url_citation") if isinstance(annotation, dict) else None
        if isinstance(citation, dict):
            annotations.append({"type": "url_citation", **citation})
    return annotations
