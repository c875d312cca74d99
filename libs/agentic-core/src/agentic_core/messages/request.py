"""An Anthropic Messages request → the stateless Responses create body the round loop runs.

Validation happens here, before any inference: a malformed body raises
`InvalidRequest` with a dotted `param` in Anthropic's style (`messages.2.content.0.type`).

| Messages key | Responses |
|---|---|
| `system` (string or text blocks) | `instructions` (blocks joined by newlines) |
| `messages` | `input` items, see below |
| `max_tokens` (required on create) | `max_output_tokens` |
| `temperature`, `top_p` | kept |
| `top_k`, `stop_sequences` | forwarded extras `top_k`, `stop` (model-server sampling keys, as on the Responses path) |
| `metadata.user_id` | `safety_identifier` |
| `tools` | client tools → function tools; `web_search_2025…` → `web_search` (+ `include` of its sources); `operator`, `code_interpreter`, `shell` passed through |
| `web_search.max_uses` | `max_tool_calls` (the gateway's bound on all of the turn's gateway calls) |
| `tool_choice` | `auto`/`required`/`none`/`{type: function, name}`; `disable_parallel_tool_use` → `parallel_tool_calls: false` |
| `output_config.effort`, `.format` | `reasoning.effort`, `text.format` (json_schema) |
| `stream` | kept; `store` is always false (Messages is stateless) |
| `thinking`, `service_tier`, `cache_control`, `speed`, `inference_geo`, … | accepted and dropped: the model server reasons (or not) on its own and has no tiers or prompt-cache controls |
| `container` | refused: the gateway offers none |
| `mcp_servers` | Anthropic's MCP connector → `mcp` tools run by the gateway (no approvals: the connector has none) |
| Responses-only keys (`input`, `previous_response_id`, …) | refused: they would change what a stateless Messages call means |
| anything else | forwarded untouched (model-server extras such as `seed`, `repetition_penalty`) |

Blocks of `messages`: text and image/document blocks become message items
(`input_text`, `input_image` with a data URL or the block's URL, `input_file`
with the document's `title` as its file name; the executor fetches URLs under
its host policy, never the model server; assistant text as
`output_text`); assistant `tool_use` → `function_call`; user `tool_result` →
`function_call_output`; `thinking` → a `reasoning` item (its signature is
dropped, model servers refuse encrypted reasoning, unless it is one we sealed:
a hosted model's own reasoning state, opened by the executor for the model);
`redacted_thinking`, `server_tool_use` and `web_search_tool_result` are dropped
(see `_DROPPED_BLOCKS`). Any other block type is refused, naming the block.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from agentic_core.errors import InvalidRequest

WEB_SEARCH_TOOL_TYPES = frozenset({"web_search_20250305", "web_search_20260209", "web_search_20260318"})
# Gateway tools declared the Responses way; the registry validates them as on /v1/responses.
GATEWAY_TOOL_TYPES = frozenset({"operator", "code_interpreter", "shell", "file_search"})
WEB_SEARCH_SOURCES = "web_search_call.action.sources"
SEALED_PREFIX = "v1."  # what the executor seals (agentic_runtime.sealed_box): reasoning it opens again
SAFETY_IDENTIFIER_MAX_CHARS = 64  # OpenAI's limit on `safety_identifier`

# Blocks of earlier assistant turns the model is not shown again:
# - `redacted_thinking` is encrypted for Anthropic's models; no model server can read it.
# - `server_tool_use` / `web_search_tool_result` are the public face of a search the gateway ran. The model
#   saw that search as a function call and a text output which a stateless client does not hold; the results'
#   `encrypted_content` is opaque, and what the model took from them is already in the assistant text that
#   followed. Replaying a half-reconstructed call would teach the model a call shape it was never given.
_DROPPED_BLOCKS = frozenset({"redacted_thinking", "server_tool_use", "web_search_tool_result"})
_ROLE_BLOCKS = {
    "user": frozenset({"text", "image", "document", "tool_result"}),
    "assistant": frozenset({"text", "tool_use", "thinking"}) | _DROPPED_BLOCKS,
    "system": frozenset({"text"}),
}
_KNOWN_BLOCKS = frozenset().union(*_ROLE_BLOCKS.values())
_TOOL_CHOICES = {"auto": "auto", "any": "required", "none": "none"}
_EFFORTS = {"low": "low", "medium": "medium", "high": "high", "xhigh": "high", "max": "high"}

# Keys read by the mapping below.
_MAPPED = frozenset({
    "model", "messages", "system", "max_tokens", "tools", "tool_choice", "temperature", "top_p", "top_k",
    "stop_sequences", "metadata", "stream", "output_config", "mcp_servers",
})
# Anthropic keys with no meaning for a model server behind the gateway: accepted, not forwarded.
_IGNORED = frozenset({
    "thinking", "service_tier", "cache_control", "speed", "inference_geo", "diagnostics", "user_profile_id",
    "workspace_id", "context_management",
})
_UNSUPPORTED = {
    "container": "Containers are not supported by this gateway.",
}
# Responses keys that would make a stateless Messages call stateful or change its limits behind its back.
_RESPONSES_ONLY = frozenset({
    "input", "instructions", "previous_response_id", "conversation", "store", "background", "include",
    "max_output_tokens", "max_tool_calls", "parallel_tool_calls", "text", "reasoning", "truncation", "prompt",
    "safety_identifier", "prompt_cache_key", "top_logprobs", "user", "stream_options",
})


def responses_request_from_messages(body: dict[str, Any]) -> dict[str, Any]:
    """The Responses create body equivalent to the Messages create `body` (validated first)."""
    request = _common(body)
    max_tokens = body.get("max_tokens")
    if max_tokens is None:
        raise InvalidRequest("max_tokens: Field required.", param="max_tokens", code="missing_required_parameter")
    if not _is_int(max_tokens) or max_tokens < 1:
        raise _invalid("max_tokens", "expected an integer of at least 1")
    request["max_output_tokens"] = max_tokens
    for key in ("temperature", "top_p"):
        value = body.get(key)
        if value is not None:
            if not _is_number(value) or not 0 <= value <= 1:
                raise _invalid(key, "expected a number between 0 and 1")
            request[key] = value
    top_k = body.get("top_k")
    if top_k is not None:
        if not _is_int(top_k) or top_k < 0:
            raise _invalid("top_k", "expected a non-negative integer")
        request["top_k"] = top_k
    stop = body.get("stop_sequences")
    if stop is not None:
        if not isinstance(stop, list) or not all(isinstance(sequence, str) for sequence in stop):
            raise _invalid("stop_sequences", "expected an array of strings")
        if stop:
            request["stop"] = stop
    user_id = _metadata_user_id(body.get("metadata"))
    if user_id:
        request["safety_identifier"] = user_id
    stream = body.get("stream")
    if stream is not None:
        if not isinstance(stream, bool):
            raise _invalid("stream", "expected a boolean")
        request["stream"] = stream
    mcp_tools = _mcp_tools(body.get("mcp_servers"))
    if mcp_tools:
        request["tools"] = [*(request.get("tools") or []), *mcp_tools]
    for key, value in body.items():
        if key not in _MAPPED and key not in _IGNORED and key not in _UNSUPPORTED and key not in request:
            request[key] = value
    request["store"] = False
    return request


def _mcp_tools(servers: Any) -> list[dict[str, Any]]:
    """Anthropic's MCP connector (`mcp_servers`: {type: url, url, name, authorization_token?, tool_configuration?})
    as the gateway's `mcp` tools."""
    if servers is None:
        return []
    if not isinstance(servers, list):
        raise _invalid("mcp_servers", "expected an array of servers")
    tools = []
    for index, server in enumerate(servers):
        param = f"mcp_servers.{index}"
        if not isinstance(server, dict) or server.get("type", "url") != "url":
            raise _invalid(param, "expected {\"type\": \"url\", \"url\", \"name\"}")
        url, name = server.get("url"), server.get("name")
        if not isinstance(url, str) or not isinstance(name, str) or not url or not name:
            raise _invalid(param, "a server needs a `url` and a `name`")
        tool: dict[str, Any] = {"type": "mcp", "server_label": name, "server_url": url, "require_approval": "never"}
        token = server.get("authorization_token")
        if token is not None:
            if not isinstance(token, str):
                raise _invalid(f"{param}.authorization_token", "expected a string")
            tool["authorization"] = token
        configuration = server.get("tool_configuration") or {}
        if isinstance(configuration, dict):
            if configuration.get("enabled") is False:
                continue
            if isinstance(configuration.get("allowed_tools"), list):
                tool["allowed_tools"] = configuration["allowed_tools"]
        tools.append(tool)
    return tools


def fetches_media(body: Any) -> bool:
    """An image or document given by URL: only the executor fetches it (under its host policy, then as data), so
    such a request is never relayed to a model server's own `/v1/messages`, which would fetch the URL itself."""
    messages = body.get("messages") if isinstance(body, dict) else None
    return isinstance(messages, list) and any(
        _blocks_fetch(message.get("content")) for message in messages if isinstance(message, dict))


def _blocks_fetch(blocks: Any) -> bool:
    for block in blocks if isinstance(blocks, list) else []:
        if not isinstance(block, dict):
            continue
        source = block.get("source")
        if block.get("type") in ("image", "document") and isinstance(source, dict):
            if source.get("type") == "url" or _blocks_fetch(source.get("content")):
                return True
        if block.get("type") == "tool_result" and _blocks_fetch(block.get("content")):
            return True
    return False


def count_tokens_request(body: dict[str, Any]) -> dict[str, Any]:
    """The `/v1/responses/input_tokens` body counting what the Messages `body` would send (no generation keys)."""
    request = _common(body)
    request["store"] = False
    return request


def count_tokens_reply(input_tokens: int) -> dict[str, Any]:
    """Anthropic's `MessageTokensCount`."""
    return {"input_tokens": input_tokens}


# -- shared by create and count ---------------------------------------------------


def _common(body: Any) -> dict[str, Any]:
    """model, instructions, input and the tool settings: what both create and count_tokens carry."""
    if not isinstance(body, dict):
        raise InvalidRequest("The request body must be a JSON object.", code="invalid_json")
    for key, message in _UNSUPPORTED.items():
        if body.get(key) is not None:
            raise InvalidRequest(message, param=key, code="unsupported_parameter")
    for key in body:
        if key in _RESPONSES_ONLY:
            raise InvalidRequest(f"{key}: is not a Messages API parameter.", param=key, code="unknown_parameter")
    model = body.get("model")
    if model is None:
        raise InvalidRequest("model: Field required.", param="model", code="missing_required_parameter")
    if not isinstance(model, str) or not model:
        raise _invalid("model", "expected a non-empty string")
    request: dict[str, Any] = {"model": model}
    instructions = _system(body.get("system"))
    if instructions is not None:
        request["instructions"] = instructions
    if "messages" not in body:
        raise InvalidRequest("messages: Field required.", param="messages", code="missing_required_parameter")
    request["input"] = _input(body["messages"])
    tools, max_uses, web_search_name = _tools(body.get("tools"))
    if tools:
        request["tools"] = tools
    if web_search_name is not None:
        request["include"] = [WEB_SEARCH_SOURCES]
    if max_uses is not None:
        request["max_tool_calls"] = max_uses
    choice = body.get("tool_choice")
    if choice is not None:
        request["tool_choice"], parallel = _tool_choice(choice, tools, web_search_name)
        if parallel is False:
            request["parallel_tool_calls"] = False
    _output_config(body.get("output_config"), request)
    return request


def _system(system: Any) -> str | None:
    if system is None or isinstance(system, str):
        return system
    if not isinstance(system, list):
        raise _invalid("system", "expected a string or an array of text blocks")
    return "\n".join(_text_of(block, f"system.{index}") for index, block in enumerate(system))


def _metadata_user_id(metadata: Any) -> str | None:
    if metadata is None:
        return None
    if not isinstance(metadata, dict):
        raise _invalid("metadata", "expected an object")
    user_id = metadata.get("user_id")
    if user_id is not None and not isinstance(user_id, str):
        raise _invalid("metadata.user_id", "expected a string")
    if user_id is not None and len(user_id) > SAFETY_IDENTIFIER_MAX_CHARS:
        # Anthropic allows longer ids (Claude Code sends a JSON object of ~170 characters); OpenAI's field
        # holds 64: a digest keeps one id per user within it.
        return hashlib.sha256(user_id.encode()).hexdigest()
    return user_id


def _output_config(config: Any, request: dict[str, Any]) -> None:
    if config is None:
        return
    if not isinstance(config, dict):
        raise _invalid("output_config", "expected an object")
    effort = config.get("effort")
    if effort is not None:
        if not isinstance(effort, str) or effort not in _EFFORTS:
            raise _invalid("output_config.effort", f"expected one of {', '.join(_EFFORTS)}")
        # Model servers know low/medium/high; Anthropic's higher levels ask for the most there is.
        request["reasoning"] = {"effort": _EFFORTS[effort]}
    output_format = config.get("format")
    if output_format is not None:
        if not isinstance(output_format, dict) or output_format.get("type") != "json_schema":
            raise _invalid("output_config.format.type", "expected 'json_schema'")
        schema = output_format.get("schema")
        if not isinstance(schema, dict):
            raise _invalid("output_config.format.schema", "expected an object")
        request["text"] = {"format": {"type": "json_schema", "name": "output", "schema": schema}}


# -- messages → input items -------------------------------------------------------


def _input(messages: Any) -> list[dict[str, Any]]:
    if not isinstance(messages, list) or not messages:
        raise _invalid("messages", "expected a non-empty array of messages")
    items: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        param = f"messages.{index}"
        if not isinstance(message, dict):
            raise _invalid(param, "expected an object")
        role = message.get("role")
        if not isinstance(role, str) or role not in _ROLE_BLOCKS:
            raise _invalid(f"{param}.role", "expected 'user', 'assistant' or 'system'")
        if "content" not in message:
            raise InvalidRequest(f"{param}.content: Field required.", param=f"{param}.content",
                                 code="missing_required_parameter")
        content = message["content"]
        if isinstance(content, str):
            items.append(_message_item(role, [_text_part(role, content)]))
        elif isinstance(content, list):
            items += _blocks(role, content, f"{param}.content")
        else:
            raise _invalid(f"{param}.content", "expected a string or an array of content blocks")
    return items


def _blocks(role: str, blocks: list[Any], param: str) -> list[dict[str, Any]]:
    """One message's blocks, in order: runs of text/media become one message item, calls their own items."""
    items: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []

    def flush() -> None:
        if parts:
            items.append(_message_item(role, list(parts)))
            parts.clear()

    for index, block in enumerate(blocks):
        block_param = f"{param}.{index}"
        block_type = _block_type(block, block_param)
        if block_type not in _ROLE_BLOCKS[role]:
            if block_type in _KNOWN_BLOCKS:
                raise InvalidRequest(f"{block_param}.type: '{block_type}' blocks are not allowed in {role} messages.",
                                     param=f"{block_param}.type", code="invalid_value")
            raise InvalidRequest(f"{block_param}.type: content blocks of type '{block_type}' are not supported.",
                                 param=f"{block_param}.type", code="unsupported_value")
        if block_type in _DROPPED_BLOCKS:
            continue
        if block_type == "text":
            parts.append(_text_part(role, _text_of(block, block_param)))
        elif block_type == "image":
            parts.append(_image_part(block, block_param))
        elif block_type == "document":
            parts += _document_parts(block, block_param)
        else:
            flush()
            if block_type == "tool_result":
                items.append(_tool_result(block, block_param))
            elif block_type == "tool_use":
                items.append(_tool_use(block, block_param))
            else:
                thinking = block.get("thinking")
                if not isinstance(thinking, str):
                    raise _invalid(f"{block_param}.thinking", "expected a string")
                signature = block.get("signature")
                sealed = isinstance(signature, str) and signature.startswith(SEALED_PREFIX)
                if thinking or sealed:
                    reasoning: dict[str, Any] = {"type": "reasoning", "summary": [],
                                                 "content": [{"type": "reasoning_text", "text": thinking}] if thinking else []}
                    if sealed:
                        reasoning["encrypted_content"] = signature  # ours: the executor opens it for the model
                    items.append(reasoning)
    flush()
    return items


def _block_type(block: Any, param: str) -> str:
    if not isinstance(block, dict):
        raise _invalid(param, "expected a content block object")
    block_type = block.get("type")
    if not isinstance(block_type, str):
        raise InvalidRequest(f"{param}.type: Field required.", param=f"{param}.type", code="missing_required_parameter")
    return block_type


def _message_item(role: str, parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "message", "role": role, "content": parts}


def _text_part(role: str, text: str) -> dict[str, Any]:
    if role == "assistant":
        return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
    return {"type": "input_text", "text": text}


def _text_of(block: Any, param: str) -> str:
    if _block_type(block, param) != "text":
        raise _invalid(f"{param}.type", "expected 'text'")
    text = block.get("text")
    if not isinstance(text, str):
        raise _invalid(f"{param}.text", "expected a string")
    return text


def _image_part(block: dict[str, Any], param: str) -> dict[str, Any]:
    source = _source(block, param)
    if source["type"] == "base64":
        media_type, data = source.get("media_type"), source.get("data")
        if not isinstance(media_type, str) or not media_type.startswith("image/"):
            raise _invalid(f"{param}.source.media_type", "expected an image media type such as 'image/png'")
        if not isinstance(data, str) or not data:
            raise _invalid(f"{param}.source.data", "expected base64 data")
        url = f"data:{media_type};base64,{data}"
    elif source["type"] == "url":
        url = _source_url(source, param)
    else:
        raise _unsupported_source(source, param)
    return {"type": "input_image", "image_url": url, "detail": "auto"}


def _document_parts(block: dict[str, Any], param: str) -> list[dict[str, Any]]:
    source = _source(block, param)
    title = block.get("title")
    if source["type"] == "text":
        data = source.get("data")
        if not isinstance(data, str):
            raise _invalid(f"{param}.source.data", "expected a string")
        return [{"type": "input_text", "text": data}]
    if source["type"] == "content":
        content = source.get("content")
        if isinstance(content, str):
            return [{"type": "input_text", "text": content}]
        if not isinstance(content, list):
            raise _invalid(f"{param}.source.content", "expected a string or an array of blocks")
        return [_media_part(entry, f"{param}.source.content.{index}") for index, entry in enumerate(content)]
    if source["type"] == "base64":
        media_type, data = source.get("media_type"), source.get("data")
        if media_type != "application/pdf":
            raise _invalid(f"{param}.source.media_type", "expected 'application/pdf'")
        if not isinstance(data, str) or not data:
            raise _invalid(f"{param}.source.data", "expected base64 data")
        filename = title if isinstance(title, str) and title else "document.pdf"
        return [{"type": "input_file", "filename": filename, "file_data": f"data:application/pdf;base64,{data}"}]
    if source["type"] == "url":
        part = {"type": "input_file", "file_url": _source_url(source, param)}
        return [{**part, "filename": title} if isinstance(title, str) and title else part]
    raise _unsupported_source(source, param)


def _media_part(block: Any, param: str) -> dict[str, Any]:
    """A text or image block inside a tool result or a content document."""
    block_type = _block_type(block, param)
    if block_type == "text":
        return {"type": "input_text", "text": _text_of(block, param)}
    if block_type == "image":
        return _image_part(block, param)
    raise InvalidRequest(f"{param}.type: content blocks of type '{block_type}' are not supported here.",
                         param=f"{param}.type", code="unsupported_value")


def _source(block: dict[str, Any], param: str) -> dict[str, Any]:
    source = block.get("source")
    if not isinstance(source, dict) or not isinstance(source.get("type"), str):
        raise _invalid(f"{param}.source", "expected a source object with a `type`")
    return source


def _source_url(source: dict[str, Any], param: str) -> str:
    url = source.get("url")
    if not isinstance(url, str) or not url:
        raise _invalid(f"{param}.source.url", "expected a URL")
    return url


def _unsupported_source(source: dict[str, Any], param: str) -> InvalidRequest:
    reason = " (the gateway has no Files API)" if source["type"] == "file" else ""
    return InvalidRequest(f"{param}.source.type: sources of type '{source['type']}' are not supported{reason}.",
                          param=f"{param}.source.type", code="unsupported_value")


def _tool_use(block: dict[str, Any], param: str) -> dict[str, Any]:
    call_id, name, arguments = block.get("id"), block.get("name"), block.get("input")
    if not isinstance(call_id, str) or not call_id:
        raise _invalid(f"{param}.id", "expected a non-empty string")
    if not isinstance(name, str) or not name:
        raise _invalid(f"{param}.name", "expected a non-empty string")
    if not isinstance(arguments, dict):
        raise _invalid(f"{param}.input", "expected an object")
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": orjson.dumps(arguments).decode()}


def _tool_result(block: dict[str, Any], param: str) -> dict[str, Any]:
    call_id = block.get("tool_use_id")
    if not isinstance(call_id, str) or not call_id:
        raise _invalid(f"{param}.tool_use_id", "expected a non-empty string")
    is_error = block.get("is_error", False)
    if is_error is not None and not isinstance(is_error, bool):
        raise _invalid(f"{param}.is_error", "expected a boolean")
    content = block.get("content", "")
    if content is None:
        content = ""
    # The gateway renders its own failed tool calls to the model the same way (`render_for_model`).
    prefix = "Error: " if is_error else ""
    if isinstance(content, str):
        return _call_output(call_id, prefix + content)
    if not isinstance(content, list):
        raise _invalid(f"{param}.content", "expected a string or an array of blocks")
    parts = [_media_part(entry, f"{param}.content.{index}") for index, entry in enumerate(content)]
    if all(part["type"] == "input_text" for part in parts):
        return _call_output(call_id, prefix + "\n".join(part["text"] for part in parts))
    if prefix:
        if parts[0]["type"] == "input_text":
            parts[0] = {"type": "input_text", "text": prefix + parts[0]["text"]}
        else:
            parts.insert(0, {"type": "input_text", "text": prefix.rstrip()})
    return _call_output(call_id, parts)


def _call_output(call_id: str, output: str | list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": output}


# -- tools ------------------------------------------------------------------------


def _tools(raw_tools: Any) -> tuple[list[dict[str, Any]], int | None, str | None]:
    """(Responses tools, max_tool_calls from web search `max_uses`, the web search tool's name if declared)."""
    if raw_tools is None:
        return [], None, None
    if not isinstance(raw_tools, list):
        raise _invalid("tools", "expected an array")
    tools: list[dict[str, Any]] = []
    max_uses: int | None = None
    web_search_name: str | None = None
    for index, tool in enumerate(raw_tools):
        param = f"tools.{index}"
        if not isinstance(tool, dict):
            raise _invalid(param, "expected an object")
        tool_type = tool.get("type")
        if tool_type is not None and not isinstance(tool_type, str):
            raise _invalid(f"{param}.type", "expected a string")
        if tool_type is None or tool_type == "custom":
            tools.append(_client_tool(tool, param))
        elif tool_type in WEB_SEARCH_TOOL_TYPES:
            if web_search_name is not None:
                raise _invalid(param, "the web search tool may be declared only once")
            web_search_tool, max_uses = _web_search_tool(tool, param)
            tools.append(web_search_tool)
            web_search_name = "web_search"
        elif tool_type in GATEWAY_TOOL_TYPES:
            tools.append(dict(tool))
        else:
            raise InvalidRequest(f"{param}.type: tools of type {tool_type!r} are not supported by this gateway.",
                                 param=f"{param}.type", code="unsupported_tool")
    return tools, max_uses, web_search_name


def _client_tool(tool: dict[str, Any], param: str) -> dict[str, Any]:
    name, schema, description = tool.get("name"), tool.get("input_schema"), tool.get("description")
    if not isinstance(name, str) or not name:
        raise _invalid(f"{param}.name", "expected a non-empty string")
    if not isinstance(schema, dict):
        raise _invalid(f"{param}.input_schema", "expected a JSON Schema object")
    if description is not None and not isinstance(description, str):
        raise _invalid(f"{param}.description", "expected a string")
    strict = tool.get("strict", False)
    if not isinstance(strict, bool):
        raise _invalid(f"{param}.strict", "expected a boolean")
    function: dict[str, Any] = {"type": "function", "name": name}
    if description is not None:
        function["description"] = description
    # Anthropic tools are non-strict unless asked; OpenAI's default is the opposite, so say it.
    function.update(parameters=schema, strict=strict)
    return function


def _web_search_tool(tool: dict[str, Any], param: str) -> tuple[dict[str, Any], int | None]:
    if tool.get("name") != "web_search":
        raise _invalid(f"{param}.name", "expected 'web_search'")
    max_uses = tool.get("max_uses")
    if max_uses is not None and (not _is_int(max_uses) or max_uses < 1):
        raise _invalid(f"{param}.max_uses", "expected an integer of at least 1")
    if tool.get("blocked_domains"):
        raise InvalidRequest(f"{param}.blocked_domains: blocking domains is not supported; use `allowed_domains`.",
                             param=f"{param}.blocked_domains", code="unsupported_parameter")
    web_search: dict[str, Any] = {"type": "web_search"}
    allowed = tool.get("allowed_domains")
    if allowed is not None:
        if not isinstance(allowed, list) or not all(isinstance(domain, str) and domain for domain in allowed):
            raise _invalid(f"{param}.allowed_domains", "expected an array of domain names")
        if allowed:
            web_search["filters"] = {"allowed_domains": allowed}
    location = tool.get("user_location")
    if location is not None:
        if not isinstance(location, dict) or location.get("type") != "approximate":
            raise _invalid(f"{param}.user_location", "expected {\"type\": \"approximate\", ...}")
        web_search["user_location"] = {key: value for key, value in location.items() if value is not None}
    return web_search, max_uses


def _tool_choice(choice: Any, tools: list[dict[str, Any]], web_search_name: str | None) -> tuple[Any, bool | None]:
    """(Responses tool_choice, parallel_tool_calls: False when parallel use is disabled, else None)."""
    if not isinstance(choice, dict):
        raise _invalid("tool_choice", "expected an object such as {\"type\": \"auto\"}")
    choice_type = choice.get("type")
    disable_parallel = choice.get("disable_parallel_tool_use")
    if disable_parallel is not None and not isinstance(disable_parallel, bool):
        raise _invalid("tool_choice.disable_parallel_tool_use", "expected a boolean")
    parallel = False if disable_parallel else None
    if choice_type in ("any", "tool") and not tools:
        raise _invalid("tool_choice", f"'{choice_type}' needs at least one tool in `tools`")
    if isinstance(choice_type, str) and choice_type in _TOOL_CHOICES:
        return _TOOL_CHOICES[choice_type], parallel
    if choice_type != "tool":
        raise _invalid("tool_choice.type", "expected one of auto, any, tool, none")
    name = choice.get("name")
    if not isinstance(name, str) or not name:
        raise _invalid("tool_choice.name", "expected a non-empty string")
    if name == web_search_name:
        return {"type": "web_search"}, parallel
    # Gateway tools without a name (code_interpreter, shell) are called by their type.
    declared = {tool.get("name") or tool.get("type") for tool in tools if tool.get("type") != "web_search"}
    if name not in declared:
        raise _invalid("tool_choice.name", f"no tool named {name!r} is declared in `tools`")
    return {"type": "function", "name": name}, parallel


# -- helpers ----------------------------------------------------------------------


def _invalid(param: str, expectation: str) -> InvalidRequest:
    return InvalidRequest(f"{param}: {expectation}.", param=param, code="invalid_value")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
