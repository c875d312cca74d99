"""A stateless Responses request → the Chat Completions body a chat-only model server accepts.

Fields with a Chat Completions equivalent are mapped; fields that only make
sense to a stateful Responses server are dropped; fields this module does not
know are forwarded untouched (model-server sampling extras such as `top_k`,
`seed`, `stop`, `repetition_penalty`), as on the Responses path.

Per-key decisions for what is not mapped one to one:

| Responses key | Chat Completions |
|---|---|
| `input`, `instructions` | `messages` (instructions first, as a system message) |
| `max_output_tokens` | `max_tokens` (the name every OpenAI-compatible server knows) |
| `text.format`, `text.verbosity` | `response_format` (`text` is the default: omitted), `verbosity` |
| `reasoning.effort` | `reasoning_effort`; `summary` has no equivalent and is dropped |
| `top_logprobs`, `include: [message.output_text.logprobs]` | `logprobs: true` (+ `top_logprobs`) |
| `safety_identifier` | `user`, when `user` is not set (same purpose, the widely supported name) |
| `tools`, `tool_choice` | chat tool shape; `allowed_tools` narrows `tools`; without tools both are omitted with `parallel_tool_calls` |
| `stream` | kept; streaming adds `stream_options: {include_usage: true}` (usage arrives in the last chunk) |
| `store`, `metadata` | dropped: on chat servers they mean "store this completion", never wanted here |
| `previous_response_id`, `conversation`, `background`, `truncation`, `include`, `max_tool_calls`, `context_management`, `prompt` | dropped: state, execution and limits belong to the gateway |
| `stream_options` (Responses: `include_obfuscation`) | replaced, see `stream` |
| `n` | dropped: a response has exactly one output |
| `prompt_cache_key`, `service_tier`, `user`, `temperature`, `top_p`, `parallel_tool_calls` | kept (Chat Completions has them too) |

A reasoning item goes back as `reasoning` (and `reasoning_content`) on the
assistant message it precedes, as vLLM's chat API takes a model's earlier reasoning.
Input items the chat format cannot carry (hosted tool calls, custom tools,
image file ids, item references) raise `InvalidRequest`, so that a turn fails
with a clear 400 instead of the model silently losing context.
"""

from __future__ import annotations

from typing import Any

from agentic_core.errors import InvalidRequest

# Keys of a Responses request that are consumed by the mapping or have no meaning to a chat server.
_HANDLED_OR_DROPPED = frozenset({
    "input", "instructions", "tools", "tool_choice", "parallel_tool_calls", "max_output_tokens", "text",
    "reasoning", "top_logprobs", "include", "safety_identifier", "stream", "stream_options",
    "store", "metadata", "previous_response_id", "conversation", "background", "truncation",
    "max_tool_calls", "context_management", "prompt", "n",
})
_LOGPROBS_INCLUDE = "message.output_text.logprobs"
_TEXT_PARTS = frozenset({"input_text", "output_text", "text", "summary_text", "reasoning_text"})
_SIMPLE_TOOL_CHOICES = frozenset({"auto", "none", "required"})


def chat_request_from_responses(body: dict[str, Any]) -> dict[str, Any]:
    """The Chat Completions body equivalent to the stateless Responses request `body`."""
    chat: dict[str, Any] = {"model": body.get("model"), "messages": _messages(body)}
    tools = _tools(body.get("tools"))
    tool_choice = body.get("tool_choice")
    if isinstance(tool_choice, dict) and tool_choice.get("type") == "allowed_tools":
        tools, tool_choice = _apply_allowed_tools(tools, tool_choice)
    if tools:
        chat["tools"] = tools
        if tool_choice is not None:
            chat["tool_choice"] = _tool_choice(tool_choice)
        if body.get("parallel_tool_calls") is not None:
            chat["parallel_tool_calls"] = body["parallel_tool_calls"]
    if body.get("max_output_tokens") is not None:
        chat["max_tokens"] = body["max_output_tokens"]
    _map_text(body.get("text"), chat)
    reasoning = body.get("reasoning")
    if isinstance(reasoning, dict) and reasoning.get("effort") is not None:
        chat["reasoning_effort"] = reasoning["effort"]
    _map_logprobs(body, chat)
    if body.get("user") is None and body.get("safety_identifier") is not None:
        chat["user"] = body["safety_identifier"]
    for key, value in body.items():
        if key not in _HANDLED_OR_DROPPED and key not in chat:
            chat[key] = value
    if "stream" in body:
        chat["stream"] = body["stream"]
        if body["stream"] is True:
            chat["stream_options"] = {"include_usage": True}
    return chat


# -- messages -------------------------------------------------------------------


def _messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    instructions = body.get("instructions")
    if instructions is not None:
        if not isinstance(instructions, str):
            raise InvalidRequest("`instructions` must be a string for a Chat Completions model server.",
                                 param="instructions", code="unsupported_value")
        messages.append({"role": "system", "content": instructions})
    raw_input = body.get("input")
    if isinstance(raw_input, str):
        messages.append({"role": "user", "content": raw_input})
        return messages
    if raw_input is None:
        return messages
    if not isinstance(raw_input, list):
        raise InvalidRequest("`input` must be a string or an array of items.", param="input", code="invalid_value")
    # An assistant turn is one chat message: its text and the calls that follow it are merged.
    open_assistant: dict[str, Any] | None = None
    for index, item in enumerate(raw_input):
        if not isinstance(item, dict):
            raise InvalidRequest(f"Input item {index} must be an object.", param=f"input[{index}]", code="invalid_value")
        item_type = item.get("type") or ("message" if "role" in item else None)
        if item_type == "reasoning":
            # The model's reasoning goes back on the assistant message it led to (an item with no text is dropped).
            text = _reasoning_text(item)
            if text:
                if open_assistant is None or not _only_reasoning(open_assistant):
                    open_assistant = {"role": "assistant", "content": None}
                    messages.append(open_assistant)
                _add_reasoning(open_assistant, text)
            continue
        if item_type == "function_call":
            if open_assistant is None:
                open_assistant = {"role": "assistant", "content": None}
                messages.append(open_assistant)
            open_assistant.setdefault("tool_calls", []).append(_tool_call(item, index))
            continue
        if item_type == "message":
            message = _message(item, index)
            if message["role"] == "assistant" and open_assistant is not None and _only_reasoning(open_assistant):
                open_assistant.update(message)  # the answer its reasoning led to
                continue
            messages.append(message)
            open_assistant = message if message["role"] == "assistant" else None
            continue
        if item_type == "function_call_output":
            messages.append(_tool_message(item, index))
            open_assistant = None
            continue
        raise InvalidRequest(
            f"Input items of type '{item_type}' cannot be sent to a Chat Completions model server.",
            param=f"input[{index}]", code="unsupported_value",
        )
    return messages


def _reasoning_text(item: dict[str, Any]) -> str:
    """A reasoning item's text: its reasoning parts, else its summary's."""
    for key in ("content", "summary"):
        parts = item.get(key)
        texts = [text for part in parts if isinstance(part, dict) and (text := _part_text(part))] \
            if isinstance(parts, list) else []
        if texts:
            return "\n".join(texts)
    return ""


def _only_reasoning(message: dict[str, Any]) -> bool:
    return "reasoning" in message and message.get("content") is None and not message.keys() & {"tool_calls", "refusal"}


def _add_reasoning(message: dict[str, Any], text: str) -> None:
    # vLLM reads `reasoning` (its older releases, SGLang and DeepSeek-style templates `reasoning_content`).
    joined = f"{message['reasoning']}\n{text}" if message.get("reasoning") else text
    message["reasoning"] = message["reasoning_content"] = joined


def _message(item: dict[str, Any], index: int) -> dict[str, Any]:
    role = item.get("role")
    if role not in ("user", "system", "developer", "assistant"):
        raise InvalidRequest(f"Invalid value for 'input[{index}].role'.", param=f"input[{index}].role", code="invalid_value")
    # `developer` is OpenAI's newer name for `system`; many chat templates only know `system`.
    chat_role = "system" if role == "developer" else role
    content = item.get("content")
    if isinstance(content, str):
        return {"role": chat_role, "content": content}
    if not isinstance(content, list) or not all(isinstance(part, dict) for part in content):
        raise InvalidRequest(f"Invalid value for 'input[{index}].content'.", param=f"input[{index}].content",
                             code="invalid_value")
    if chat_role == "assistant":
        return _assistant_message(content, index)
    texts = [_part_text(part) for part in content]
    if all(text is not None for text in texts):
        # vLLM joins text parts with a newline when it renders a template; doing it here keeps every server equal.
        return {"role": chat_role, "content": "\n".join(text for text in texts if text is not None)}
    if chat_role != "user":
        raise InvalidRequest(f"Only user messages may carry non-text content (input[{index}]).",
                             param=f"input[{index}].content", code="unsupported_value")
    return {"role": "user", "content": [_user_part(part, f"input[{index}].content[{position}]")
                                        for position, part in enumerate(content)]}


def _assistant_message(content: list[dict[str, Any]], index: int) -> dict[str, Any]:
    texts: list[str] = []
    refusals: list[str] = []
    for position, part in enumerate(content):
        if part.get("type") == "refusal":
            refusals.append(str(part.get("refusal") or ""))
            continue
        text = _part_text(part)
        if text is None:
            raise InvalidRequest("Assistant messages may only carry text and refusals.",
                                 param=f"input[{index}].content[{position}]", code="unsupported_value")
        texts.append(text)
    message: dict[str, Any] = {"role": "assistant", "content": "".join(texts) if texts else None}
    if refusals:
        message["refusal"] = "".join(refusals)
    return message


def _part_text(part: dict[str, Any]) -> str | None:
    part_type = part.get("type")
    if isinstance(part_type, str) and part_type in _TEXT_PARTS and isinstance(part.get("text"), str):
        text: str = part["text"]
        return text
    return None


def _user_part(part: dict[str, Any], param: str) -> dict[str, Any]:
    part_type = part.get("type")
    text = _part_text(part)
    if text is not None:
        return {"type": "text", "text": text}
    if part_type == "input_image":
        url = part.get("image_url")
        if not isinstance(url, str) or not url:
            raise InvalidRequest("Images must be given by `image_url` (a URL or data URL) for a Chat Completions "
                                 "model server; `file_id` is not supported.", param=param, code="unsupported_value")
        image: dict[str, Any] = {"url": url}
        if part.get("detail") is not None:
            image["detail"] = part["detail"]
        return {"type": "image_url", "image_url": image}
    if part_type == "input_file" and part.get("file_url") is None:
        file = {key: part[key] for key in ("file_data", "file_id", "filename") if part.get(key) is not None}
        return {"type": "file", "file": file}
    if part_type == "input_audio" and isinstance(part.get("input_audio"), dict):
        return {"type": "input_audio", "input_audio": part["input_audio"]}
    raise InvalidRequest(f"Content parts of type '{part_type}' cannot be sent to a Chat Completions model server.",
                         param=param, code="unsupported_value")


def _tool_call(item: dict[str, Any], index: int) -> dict[str, Any]:
    call_id, name, arguments = item.get("call_id"), item.get("name"), item.get("arguments")
    if not isinstance(call_id, str) or not call_id or not isinstance(name, str) or not isinstance(arguments, str):
        raise InvalidRequest(f"Input item {index} of type 'function_call' needs `call_id`, `name` and `arguments`.",
                             param=f"input[{index}]", code="invalid_value")
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _tool_message(item: dict[str, Any], index: int) -> dict[str, Any]:
    call_id, output = item.get("call_id"), item.get("output")
    if not isinstance(call_id, str) or not call_id:
        raise InvalidRequest(f"Input item {index} of type 'function_call_output' needs a non-empty `call_id`.",
                             param=f"input[{index}].call_id", code="invalid_value")
    if isinstance(output, list):
        texts = [_part_text(part) if isinstance(part, dict) else None for part in output]
        if any(text is None for text in texts):
            raise InvalidRequest("A function call output may only carry text for a Chat Completions model server.",
                                 param=f"input[{index}].output", code="unsupported_value")
        output = "\n".join(text for text in texts if text is not None)
    if not isinstance(output, str):
        raise InvalidRequest(f"Invalid value for 'input[{index}].output'.", param=f"input[{index}].output",
                             code="invalid_value")
    return {"role": "tool", "tool_call_id": call_id, "content": output}


# -- tools and options ----------------------------------------------------------


def _tools(raw_tools: Any) -> list[dict[str, Any]]:
    if raw_tools is None:
        return []
    if not isinstance(raw_tools, list):
        raise InvalidRequest("`tools` must be an array.", param="tools", code="invalid_value")
    tools: list[dict[str, Any]] = []
    for index, tool in enumerate(raw_tools):
        tool_type = tool.get("type") if isinstance(tool, dict) else None
        if tool_type != "function" or not isinstance(tool, dict):
            raise InvalidRequest(f"Tools of type '{tool_type}' cannot be sent to a Chat Completions model server.",
                                 param=f"tools[{index}].type", code="unsupported_value")
        if not isinstance(tool.get("name"), str):
            raise InvalidRequest("A function tool needs a `name`.", param=f"tools[{index}].name", code="invalid_value")
        function = {key: tool[key] for key in ("name", "description", "parameters", "strict") if tool.get(key) is not None}
        tools.append({"type": "function", "function": function})
    return tools


def _apply_allowed_tools(tools: list[dict[str, Any]], choice: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    """`allowed_tools` has no portable chat form: send only the allowed tools, with its mode."""
    listed = choice.get("tools")
    names = [tool.get("name") for tool in listed if isinstance(tool, dict)] if isinstance(listed, list) else []
    allowed = {name for name in names if isinstance(name, str)}
    mode = choice.get("mode") or "auto"
    if mode not in ("auto", "required"):
        raise InvalidRequest("Invalid value for 'tool_choice.mode'.", param="tool_choice.mode", code="invalid_value")
    return [tool for tool in tools if tool["function"].get("name") in allowed], mode


def _tool_choice(choice: Any) -> Any:
    if isinstance(choice, str) and choice in _SIMPLE_TOOL_CHOICES:
        return choice
    if isinstance(choice, dict) and choice.get("type") == "function" and isinstance(choice.get("name"), str):
        return {"type": "function", "function": {"name": choice["name"]}}
    kind = choice.get("type") if isinstance(choice, dict) else choice
    raise InvalidRequest(f"The tool choice '{kind}' cannot be sent to a Chat Completions model server.",
                         param="tool_choice", code="unsupported_value")


def _map_text(text: Any, chat: dict[str, Any]) -> None:
    if not isinstance(text, dict):
        return
    if text.get("verbosity") is not None:
        chat["verbosity"] = text["verbosity"]
    text_format = text.get("format")
    if not isinstance(text_format, dict) or text_format.get("type") in (None, "text"):
        return
    if text_format["type"] == "json_object":
        chat["response_format"] = {"type": "json_object"}
        return
    if text_format["type"] == "json_schema":
        schema = {key: text_format[key] for key in ("name", "description", "schema", "strict")
                  if text_format.get(key) is not None}
        chat["response_format"] = {"type": "json_schema", "json_schema": schema}
        return
    raise InvalidRequest(f"The text format '{text_format['type']}' cannot be sent to a Chat Completions model server.",
                         param="text.format.type", code="unsupported_value")


def _map_logprobs(body: dict[str, Any], chat: dict[str, Any]) -> None:
    top_logprobs = body.get("top_logprobs")
    include = body.get("include")
    wanted = (isinstance(top_logprobs, int) and top_logprobs > 0) or (
        isinstance(include, list) and _LOGPROBS_INCLUDE in include)
    if not wanted:
        return
    chat["logprobs"] = True
    if isinstance(top_logprobs, int):
        chat["top_logprobs"] = top_logprobs
