"""A stateless Responses request → the body (and path) Gemini's `generateContent` accepts.

| Responses key | Gemini |
|---|---|
| `model` | the path: `/models/{model}:generateContent`, streamed `:streamGenerateContent?alt=sse` |
| `instructions`, system/developer messages | `systemInstruction` (joined) |
| `input` | `contents`: `user` / `model` turns, consecutive items of one role merged (parallel calls' responses in one turn) |
| `max_output_tokens`, `temperature`, `top_p`, `top_k`, `stop`, `seed` | `generationConfig.maxOutputTokens`, `temperature`, `topP`, `topK`, `stopSequences`, `seed` |
| `tools` (functions) | `tools[].functionDeclarations` (`parametersJsonSchema`: the JSON Schema as given) |
| `tool_choice` | `toolConfig.functionCallingConfig.mode` `AUTO`/`ANY`/`NONE` (a named function: `ANY` + `allowedFunctionNames`) |
| `reasoning.effort`, `reasoning.summary` | `generationConfig.thinkingConfig.thinkingBudget`, `includeThoughts` |
| `text.format` json_object / json_schema | `responseMimeType: application/json` (+ `responseJsonSchema`) |
| everything else (`parallel_tool_calls`, `prompt_cache_key`, `cache_salt`, `user`, ...) | dropped: Gemini has no such key |

Items: text, images and files (data URLs: the executor fetched any URL) →
`text` / `inlineData` parts; `function_call` → `functionCall` (arguments
parsed; `id` kept); `function_call_output` → `functionResponse` (`response:
{"output": …}`, named after its call); a `reasoning` item carrying Gemini's
`thoughtSignature` (see `agentic_core.providers.gemini.response`) gives it back
on the part that follows it in the model's turn (an empty text part if none
does). Other reasoning is dropped; other items raise `InvalidRequest`.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

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
    wants_reasoning_summary,
)

PROVIDER = "a Gemini"
SIGNATURE_PREFIX = "gemini.signature."
_MODES = {"auto": "AUTO", "required": "ANY", "none": "NONE", "function": "ANY"}


def gemini_path(model: str, *, stream: bool) -> str:
    """The path under the route's base URL (`…/v1beta`) that generates with `model`."""
    name = quote(model.removeprefix("models/"), safe="-._~")
    return f"/models/{name}:streamGenerateContent?alt=sse" if stream else f"/models/{name}:generateContent"


def gemini_request_from_responses(body: dict[str, Any]) -> dict[str, Any]:
    """The `generateContent` body equivalent to the stateless Responses request `body` (the model is in the path)."""
    request: dict[str, Any] = {"contents": _contents(body)}
    system = system_text(body, PROVIDER)
    if system:
        request["systemInstruction"] = {"parts": [{"text": system}]}
    _map_tools(body, request)
    config = _generation_config(body)
    if config:
        request["generationConfig"] = config
    return request


# -- contents --------------------------------------------------------------------


class _Contents:
    def __init__(self) -> None:
        self.turns: list[dict[str, Any]] = []
        self.signature: str | None = None  # a thought signature waiting for the model part that follows it

    def add(self, role: str, parts: list[dict[str, Any]]) -> None:
        if role != "model":
            self.flush_signature()
        if not parts:
            return
        if role == "model" and self.signature is not None:
            parts = [{**parts[0], "thoughtSignature": self.signature}, *parts[1:]]
            self.signature = None
        if self.turns and self.turns[-1]["role"] == role:
            self.turns[-1]["parts"] += parts
        else:
            self.turns.append({"role": role, "parts": parts})

    def flush_signature(self) -> None:
        if self.signature is not None:
            signature, self.signature = self.signature, None
            self.add("model", [{"text": "", "thoughtSignature": signature}])


def _contents(body: dict[str, Any]) -> list[dict[str, Any]]:
    contents = _Contents()
    call_names: dict[str, str] = {}
    for index, item in enumerate(input_items(body)):
        kind = item_type(item)
        if kind == "message":
            role = item.get("role")
            if role in ("system", "developer"):
                continue  # in `systemInstruction`
            if role not in ("user", "assistant"):
                raise InvalidRequest(f"Invalid value for 'input[{index}].role'.", param=f"input[{index}].role",
                                     code="invalid_value")
            contents.add("model" if role == "assistant" else "user",
                         _parts(message_parts(item, index), index, model=role == "assistant"))
        elif kind == "reasoning":
            blob = item.get("encrypted_content")
            if isinstance(blob, str) and blob.startswith(SIGNATURE_PREFIX):
                contents.flush_signature()
                contents.signature = blob[len(SIGNATURE_PREFIX):]
        elif kind == "function_call":
            call = _function_call(item, index)
            call_names[str(item["call_id"])] = call["functionCall"]["name"]
            contents.add("model", [call])
        elif kind == "function_call_output":
            contents.add("user", [_function_response(item, index, call_names)])
        else:
            raise unsupported(PROVIDER, f"Input items of type '{kind}'", f"input[{index}]")
    contents.flush_signature()
    return contents.turns


def _parts(parts: list[dict[str, Any]], index: int, *, model: bool) -> list[dict[str, Any]]:
    converted: list[dict[str, Any]] = []
    for position, part in enumerate(parts):
        param = f"input[{index}].content[{position}]"
        text = part_text(part)
        if text is not None:
            converted.append({"text": text})
            continue
        if part.get("type") == "refusal" and model:
            converted.append({"text": str(part.get("refusal") or "")})
            continue
        if model:
            raise unsupported(PROVIDER, "Assistant content other than text", param)
        converted.append(_media_part(part, param))
    return converted


def _media_part(part: dict[str, Any], param: str) -> dict[str, Any]:
    part_type = part.get("type")
    if part_type == "input_image":
        parsed = data_url(part.get("image_url"))
        if parsed is None:
            raise unsupported(PROVIDER, "An image that is not a data URL (`file_id` included)", param)
        return {"inlineData": {"mimeType": parsed[0], "data": parsed[1]}}
    if part_type == "input_file":
        parsed = data_url(part.get("file_data"))
        if parsed is None:
            raise unsupported(PROVIDER, "A file not given as `file_data`", param)
        return {"inlineData": {"mimeType": parsed[0], "data": parsed[1]}}
    raise unsupported(PROVIDER, f"Content parts of type '{part_type}'", param)


def _function_call(item: dict[str, Any], index: int) -> dict[str, Any]:
    call_id, name, arguments = item.get("call_id"), item.get("name"), item.get("arguments")
    if not isinstance(call_id, str) or not call_id or not isinstance(name, str) or not isinstance(arguments, str):
        raise InvalidRequest(f"Input item {index} of type 'function_call' needs `call_id`, `name` and `arguments`.",
                             param=f"input[{index}]", code="invalid_value")
    try:
        args = orjson.loads(arguments) if arguments.strip() else {}
    except orjson.JSONDecodeError:
        args = None
    if not isinstance(args, dict):
        args = {"arguments": arguments}  # Gemini's `args` is an object
    return {"functionCall": {"id": call_id, "name": name, "args": args}}


def _function_response(item: dict[str, Any], index: int, call_names: dict[str, str]) -> dict[str, Any]:
    call_id = item.get("call_id")
    if not isinstance(call_id, str) or not call_id:
        raise InvalidRequest(f"Input item {index} of type 'function_call_output' needs a non-empty `call_id`.",
                             param=f"input[{index}].call_id", code="invalid_value")
    name = call_names.get(call_id)
    if name is None:
        raise InvalidRequest(f"No function call found for call_id '{call_id}' (a Gemini function response names its "
                             "call).", param=f"input[{index}].call_id", code="invalid_value")
    text = function_output_text(item.get("output"), index)
    if text is None:
        raise unsupported(PROVIDER, "A function call output other than text", f"input[{index}].output")
    return {"functionResponse": {"id": call_id, "name": name, "response": {"output": text}}}


# -- tools and options -----------------------------------------------------------


def _map_tools(body: dict[str, Any], request: dict[str, Any]) -> None:
    tools = function_tools(body, PROVIDER)
    if not tools:
        return
    declarations = []
    for tool in tools:
        declaration: dict[str, Any] = {"name": tool["name"]}
        if tool.get("description"):
            declaration["description"] = tool["description"]
        if tool.get("parameters"):
            declaration["parametersJsonSchema"] = tool["parameters"]
        declarations.append(declaration)
    request["tools"] = [{"functionDeclarations": declarations}]
    mode, name = tool_choice_mode(body)
    if mode == "auto":
        return
    config: dict[str, Any] = {"mode": _MODES[mode]}
    if name is not None:
        config["allowedFunctionNames"] = [name]
    request["toolConfig"] = {"functionCallingConfig": config}


def _generation_config(body: dict[str, Any]) -> dict[str, Any]:
    config: dict[str, Any] = {}
    for key, target in (("max_output_tokens", "maxOutputTokens"), ("temperature", "temperature"), ("top_p", "topP"),
                        ("top_k", "topK"), ("seed", "seed")):
        if body.get(key) is not None:
            config[target] = body[key]
    stop = stop_sequences(body)
    if stop:
        config["stopSequences"] = stop
    text_format = json_schema_format(body, PROVIDER)
    if text_format is not None:
        config["responseMimeType"] = "application/json"
        if text_format[1] is not None:
            config["responseJsonSchema"] = text_format[1]
    budget = thinking_budget(body)
    summary = wants_reasoning_summary(body)
    if budget is not None or summary:
        thinking: dict[str, Any] = {}
        if budget is not None:
            thinking["thinkingBudget"] = budget
        if summary:
            thinking["includeThoughts"] = True
        config["thinkingConfig"] = thinking
    return config
