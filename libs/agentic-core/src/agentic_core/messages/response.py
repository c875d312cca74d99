"""Our final Responses response → Anthropic's `Message`, and the pieces the stream translator shares.

What the client sees, in output order:

| Responses output item | Message content |
|---|---|
| `reasoning` | `thinking` (reasoning text, else its summary; signature = `encrypted_content` or "") |
| `message` | one `text` block per non-empty `output_text` / `refusal` part |
| client `function_call` | `tool_use` (`input` = the parsed arguments) |
| `web_search_call` | `server_tool_use` (`srvtoolu_…`, input `{query}`) + `web_search_tool_result` |
| gateway `function_call` + `function_call_output` (operator, shell), `code_interpreter_call`, `file_search_call`, `mcp_*` | hidden: the gateway ran them; Messages has no public form for them |

Ids are derived, not random (`resp_X` → `msg_X`, `ws_X` → `srvtoolu_X`), so the
JSON path and the stream name the same things the same way.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from typing import Any

import orjson

from agentic_core.errors import AgenticError, UpstreamTimeout, UpstreamUnavailable

# Incomplete reason → stop_reason. `max_tool_rounds`: the gateway stopped its tool loop, the turn can go on.
_INCOMPLETE_STOP_REASONS = {"max_output_tokens": "max_tokens", "max_tool_rounds": "pause_turn", "content_filter": "refusal"}
_TEXT_PART_KEYS = {"output_text": "text", "refusal": "refusal"}


def message_from_response(response: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
    """The `Message` for a finished turn. `request` is the Messages body (its `model` and `tools` are read).

    A failed turn has no Message: it raises the error to answer with (see `anthropic_error`).
    """
    if response.get("status") == "failed":
        raise failure_error(response.get("error"))
    hidden = gateway_function_names(request.get("tools"), response.get("tools"))
    output = output_items(response)
    return {
        "id": message_id(response.get("id")),
        "type": "message",
        "role": "assistant",
        "model": message_model(request, response),
        "content": content_blocks(output, hidden),
        "stop_reason": stop_reason(response, hidden),
        "stop_sequence": None,
        "usage": messages_usage(response),
    }


# -- shared with the stream translator --------------------------------------------


def message_id(response_id: Any) -> str:
    return "msg_" + _suffix(response_id)


def server_tool_use_id(item_id: Any) -> str:
    return "srvtoolu_" + _suffix(item_id)


def message_model(request: dict[str, Any], response: dict[str, Any] | None) -> str:
    """The model the client asked for (the route may have sent the turn to another name)."""
    model = request.get("model") or (response or {}).get("model")
    return model if isinstance(model, str) else ""


def gateway_function_names(*tool_lists: Any) -> frozenset[str]:
    """Names of gateway tools whose calls appear publicly as `function_call` items (operator tools, shell)."""
    names: set[str] = set()
    for tools in tool_lists:
        for tool in tools if isinstance(tools, list) else []:
            if not isinstance(tool, dict):
                continue
            if tool.get("type") == "operator" and isinstance(tool.get("name"), str):
                names.add(tool["name"])
            elif tool.get("type") == "shell":
                names.add("shell")
    return frozenset(names)


def output_items(response: dict[str, Any]) -> list[dict[str, Any]]:
    output = response.get("output")
    return [item for item in output if isinstance(item, dict)] if isinstance(output, list) else []


def content_blocks(output: list[dict[str, Any]], hidden_names: AbstractSet[str]) -> list[dict[str, Any]]:
    answered = _answered_call_ids(output)
    blocks: list[dict[str, Any]] = []
    for item in output:
        item_type = item.get("type")
        if item_type == "reasoning":
            text = thinking_text(item)
            if text or thinking_signature(item):  # a hosted model's signature alone is still its thinking
                blocks.append({"type": "thinking", "thinking": text, "signature": thinking_signature(item)})
        elif item_type == "message":
            blocks += [{"type": "text", "text": text} for text in map(part_text, list_of(item.get("content"))) if text]
        elif item_type == "function_call":
            if is_client_call(item, hidden_names, answered):
                blocks.append(tool_use_block(item, tool_input(item.get("arguments"))))
        elif item_type == "web_search_call":
            blocks += [server_tool_use_block(item, search_input(item)), web_search_result_block(item)]
    return blocks


def is_client_call(item: dict[str, Any], hidden_names: AbstractSet[str], answered: AbstractSet[str] = frozenset()) -> bool:
    """A call the client must run: not a gateway tool's, and not already answered in the same output."""
    name, call_id = item.get("name"), item.get("call_id")
    return not (isinstance(name, str) and name in hidden_names) and not (isinstance(call_id, str) and call_id in answered)


def thinking_text(item: dict[str, Any]) -> str:
    parts = [part for part in list_of(item.get("content")) if isinstance(part, dict) and part.get("type") == "reasoning_text"]
    if parts:
        return "".join(str(part.get("text") or "") for part in parts)
    summary = [part for part in list_of(item.get("summary")) if isinstance(part, dict) and part.get("type") == "summary_text"]
    return "\n\n".join(str(part.get("text") or "") for part in summary)


def thinking_signature(item: dict[str, Any]) -> str:
    signature = item.get("encrypted_content")
    return signature if isinstance(signature, str) else ""


def part_text(part: Any) -> str:
    if not isinstance(part, dict) or part.get("type") not in _TEXT_PART_KEYS:
        return ""
    text = part.get(_TEXT_PART_KEYS[part["type"]])
    return text if isinstance(text, str) else ""


def tool_input(arguments: Any) -> dict[str, Any]:
    """The call's arguments as the object Anthropic's `input` must be; {} when the model wrote no JSON object."""
    try:
        parsed = orjson.loads(arguments or "{}")
    except (orjson.JSONDecodeError, TypeError):
        return {}
    return parsed if isinstance(parsed, dict) else {}


def tool_use_block(item: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": str(item.get("call_id") or ""), "name": str(item.get("name") or ""), "input": arguments}


def search_input(item: dict[str, Any]) -> dict[str, Any]:
    """Anthropic's `{query}`; the extra `queries` only when one call ran several (our searches take up to five)."""
    action = _object(item.get("action"))
    queries = [query for query in list_of(action.get("queries")) if isinstance(query, str)]
    query = action.get("query") if isinstance(action.get("query"), str) else (queries[0] if queries else "")
    search: dict[str, Any] = {"query": query}
    if len(queries) > 1:
        search["queries"] = queries
    return search


def server_tool_use_block(item: dict[str, Any], search: dict[str, Any]) -> dict[str, Any]:
    return {"type": "server_tool_use", "id": server_tool_use_id(item.get("id")), "name": "web_search", "input": search}


def web_search_result_block(item: dict[str, Any]) -> dict[str, Any]:
    content: Any
    if item.get("status") in ("failed", "incomplete"):
        # The public item does not say why a search failed; `unavailable` is Anthropic's generic failure.
        content = {"type": "web_search_tool_result_error", "error_code": "unavailable"}
    else:
        action = _object(item.get("action"))
        content = [_search_result(source) for source in list_of(action.get("sources"))
                   if isinstance(source, dict) and isinstance(source.get("url"), str)]
    return {"type": "web_search_tool_result", "tool_use_id": server_tool_use_id(item.get("id")), "content": content}


def stop_reason(response: dict[str, Any], hidden_names: AbstractSet[str]) -> str:
    """`tool_use` whenever the client has a call to run, whatever the model said (vLLM may say end_turn)."""
    if response.get("status") == "incomplete":
        reason = _object(response.get("incomplete_details")).get("reason")
        return _INCOMPLETE_STOP_REASONS.get(reason, "end_turn") if isinstance(reason, str) else "end_turn"
    output = output_items(response)
    answered = _answered_call_ids(output)
    if any(item.get("type") == "function_call" and is_client_call(item, hidden_names, answered) for item in output):
        return "tool_use"
    if any(isinstance(part, dict) and part.get("type") == "refusal"
           for item in output if item.get("type") == "message" for part in list_of(item.get("content"))):
        return "refusal"
    return "end_turn"


def messages_usage(response: dict[str, Any]) -> dict[str, Any]:
    """Summed over the turn's rounds. Anthropic's `input_tokens` excludes cache reads and writes; OpenAI's includes them."""
    usage = _object(response.get("usage"))
    details = _object(usage.get("input_tokens_details"))
    cache_read, cache_write = _count(details.get("cached_tokens")), _count(details.get("cache_write_tokens"))
    result: dict[str, Any] = {
        "input_tokens": max(0, _count(usage.get("input_tokens")) - cache_read - cache_write),
        "cache_creation_input_tokens": cache_write,
        "cache_read_input_tokens": cache_read,
        "output_tokens": _count(usage.get("output_tokens")),
    }
    searches = sum(1 for item in output_items(response)
                   if item.get("type") == "web_search_call" and item.get("status") == "completed")
    if searches:
        # One per server_tool_use block the client sees; failed searches are not counted.
        result["server_tool_use"] = {"web_search_requests": searches, "web_fetch_requests": 0}
    return result


def failure_error(error: Any) -> AgenticError:
    """The error a failed turn answers with."""
    details = error if isinstance(error, dict) else {}
    message = str(details.get("message") or "The response failed.")
    code = str(details.get("code") or "response_failed")
    if code == "upstream_timeout":
        return UpstreamTimeout(message, code=code)
    return UpstreamUnavailable(message, code=code)


# -- helpers ----------------------------------------------------------------------


def _answered_call_ids(output: list[dict[str, Any]]) -> set[str]:
    """Call ids with an output in the same response: calls the gateway already ran."""
    return {item["call_id"] for item in output
            if item.get("type") == "function_call_output" and isinstance(item.get("call_id"), str)}


def _search_result(source: dict[str, Any]) -> dict[str, Any]:
    title = source.get("title")
    result = {"type": "web_search_result", "url": source["url"], "title": title if isinstance(title, str) and title else source["url"],
              # Anthropic's opaque citation token; the gateway keeps none, and ignores the block when it comes back.
              "encrypted_content": ""}
    if isinstance(source.get("page_age"), str):
        result["page_age"] = source["page_age"]
    return result


def _suffix(identifier: Any) -> str:
    text = identifier if isinstance(identifier, str) and identifier else "unknown"
    return text.split("_", 1)[1] if "_" in text else text


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _object(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def list_of(value: Any) -> list[Any]:
    """`value` when it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []
