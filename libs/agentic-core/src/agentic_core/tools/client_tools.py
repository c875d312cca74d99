"""Client-executed tool types, offered to a model server as plain function tools and mapped back.

OpenAI's Responses API lets a client declare tools of several types that the
client runs itself: `function`, `namespace` (a named group of function and
custom tools), `custom` (freeform text input, optionally constrained by a
grammar), `local_shell`, `shell` (local environment), `apply_patch` and
`computer_use_preview`. Model servers (vLLM, most OpenAI-compatible servers)
know only function tools, so each declaration becomes one or more function
tools, and each function call the model makes comes back to the client in the
shape its declaration implies (`custom_tool_call` with `input`,
`local_shell_call` with an `exec` action, a `function_call` with its
`namespace`, ...). History travels the other way: the client's call and output
items are turned back into the function calls and outputs the model saw.

The model-side names are a pure function of the declaration (a namespace
member is `<namespace>__<name>`), so history can be mapped without the
request's registry. See docs/agent-clients.md for the mapping of each type.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

import orjson

from agentic_core.errors import InvalidRequest
from agentic_core.json_types import Item

# Call item type → the output item type that answers it (the continuation rules and the round loop use these).
CALL_OUTPUT_OF = {
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
    "local_shell_call": "local_shell_call_output",
    "shell_call": "shell_call_output",
    "apply_patch_call": "apply_patch_call_output",
    "computer_call": "computer_call_output",
}
CLIENT_CALL_TYPES = frozenset(CALL_OUTPUT_OF)
# A client tool's kind → the type of the item its calls appear as.
PUBLIC_CALL_TYPE = {"function": "function_call", "custom": "custom_tool_call", "local_shell": "local_shell_call",
                    "shell": "shell_call", "apply_patch": "apply_patch_call", "computer": "computer_call"}
CLIENT_OUTPUT_TYPES = frozenset(CALL_OUTPUT_OF.values())

# The function names the fixed-shape tools take on the model side.
LOCAL_SHELL_NAME = "local_shell"
SHELL_NAME = "shell"
APPLY_PATCH_NAME = "apply_patch"
COMPUTER_NAME = "computer"

_MODEL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
# Keys of a function declaration a model server understands; the rest (defer_loading, allowed_callers,
# output_schema, ...) are the platform's own.
_FUNCTION_KEYS = ("name", "description", "parameters", "strict")


@dataclass(frozen=True, slots=True)
class ClientTool:
    """One model-visible function standing for a client tool."""

    kind: str                    # function | custom | local_shell | shell | apply_patch | computer
    name: str                    # the name the client declared (inside its namespace, if any)
    namespace: str | None = None
    declaration: Item | None = None  # the client's declaration, for tools whose call echoes it


def model_name(name: str, namespace: str | None = None) -> str:
    """The function name a model server sees; stable, within OpenAI's `^[A-Za-z0-9_-]{1,64}$`."""
    joined = f"{namespace}__{name}" if namespace else name
    if _MODEL_NAME.match(joined):
        return joined
    # Cleaned and shortened, with a digest of the original so that two names never meet.
    cleaned = re.sub(r"[^A-Za-z0-9_-]", "_", joined)[:55]
    return f"{cleaned}_{hashlib.sha256(joined.encode()).hexdigest()[:8]}"


def model_functions(tool: Item, param: str) -> list[tuple[ClientTool, Item]]:
    """The function tools (with what each stands for) that one client declaration becomes."""
    tool_type = tool["type"]
    if tool_type == "namespace":
        return _namespace_functions(tool, param)
    if tool_type in ("function", "custom"):
        return [_named_function(tool, param, None)]
    if tool_type == "local_shell":
        return [(ClientTool("local_shell", LOCAL_SHELL_NAME), _LOCAL_SHELL_FUNCTION)]
    if tool_type == "shell":
        return [(ClientTool("shell", SHELL_NAME, declaration=tool), _SHELL_FUNCTION)]
    if tool_type == "apply_patch":
        return [(ClientTool("apply_patch", APPLY_PATCH_NAME), _APPLY_PATCH_FUNCTION)]
    if tool_type in ("computer_use_preview", "computer"):
        return [(ClientTool("computer", COMPUTER_NAME, declaration=tool), _computer_function(tool))]
    raise InvalidRequest(f"Unsupported tool type {tool_type!r}.", param=f"{param}.type", code="unsupported_tool")


def _namespace_functions(tool: Item, param: str) -> list[tuple[ClientTool, Item]]:
    namespace = tool.get("name")
    if not isinstance(namespace, str) or not namespace:
        raise InvalidRequest("A namespace tool needs a `name`.", param=f"{param}.name", code="invalid_value")
    members = tool.get("tools")
    if not isinstance(members, list) or not members:
        raise InvalidRequest("A namespace tool needs a non-empty `tools` array.", param=f"{param}.tools",
                             code="invalid_value")
    functions = []
    for index, member in enumerate(members):
        member_param = f"{param}.tools[{index}]"
        if not isinstance(member, dict) or member.get("type") not in ("function", "custom"):
            raise InvalidRequest("A namespace holds only function and custom tools.", param=f"{member_param}.type",
                                 code="invalid_value")
        client_tool, function = _named_function(member, member_param, namespace)
        if tool.get("description"):
            function = {**function, "description": f"[{namespace}: {tool['description']}] {function.get('description') or ''}".strip()}
        functions.append((client_tool, function))
    return functions


def _named_function(tool: Item, param: str, namespace: str | None) -> tuple[ClientTool, Item]:
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        raise InvalidRequest(f"A {tool['type']} tool needs a `name`.", param=f"{param}.name", code="invalid_value")
    if tool["type"] == "custom":
        return ClientTool("custom", name, namespace), _custom_function(tool, model_name(name, namespace))
    function = {key: tool[key] for key in _FUNCTION_KEYS if tool.get(key) is not None}
    function.update(type="function", name=model_name(name, namespace))
    return ClientTool("function", name, namespace), function


def _custom_function(tool: Item, name: str) -> Item:
    description = tool.get("description") or ""
    input_format = tool.get("format")
    if isinstance(input_format, dict) and input_format.get("type") == "grammar":
        description += (f"\n\nThe input must match this {input_format.get('syntax', 'lark')} grammar:\n"
                        f"{input_format.get('definition', '')}")
    return {
        "type": "function", "name": name, "description": description.strip(),
        "parameters": {"type": "object", "properties": {"input": {"type": "string", "description": "The tool's input, as free text."}},
                       "required": ["input"], "additionalProperties": False},
    }


def _function(name: str, description: str, properties: Item, required: list[str]) -> Item:
    return {"type": "function", "name": name, "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required}}


_STRINGS = {"type": "array", "items": {"type": "string"}}
_LOCAL_SHELL_FUNCTION = _function(
    LOCAL_SHELL_NAME, "Run a command on the user's machine and return its output.",
    {"command": {**_STRINGS, "description": "The program and its arguments."},
     "workdir": {"type": "string", "description": "The working directory."},
     "timeout_ms": {"type": "integer", "description": "How long the command may run."}},
    ["command"],
)
_SHELL_FUNCTION = _function(
    SHELL_NAME, "Run shell commands on the user's machine and return their output.",
    {"commands": {**_STRINGS, "description": "Shell commands, run in order."},
     "timeout_ms": {"type": "integer"}, "max_output_length": {"type": "integer"}},
    ["commands"],
)
_APPLY_PATCH_FUNCTION = _function(
    APPLY_PATCH_NAME,
    "Create, update or delete a file on the user's machine; `diff` is a unified diff (the whole content for create_file).",
    {"operation": {"type": "object",
                   "properties": {"type": {"type": "string", "enum": ["create_file", "update_file", "delete_file"]},
                                  "path": {"type": "string"}, "diff": {"type": "string"}},
                   "required": ["type", "path"]}},
    ["operation"],
)


def _computer_function(tool: Item) -> Item:
    screen = f"{tool.get('display_width', '?')}x{tool.get('display_height', '?')}"
    return _function(
        COMPUTER_NAME,
        f"Act on the user's {tool.get('environment', 'computer')} screen ({screen} pixels): click, double_click, drag, "
        "keypress, move, screenshot, scroll, type or wait. Each action returns a screenshot.",
        {"action": {"type": "object", "description": "The action, with its `type` and fields "
                                                      "(x, y, button, keys, text, scroll_x, scroll_y, path)."}},
        ["action"],
    )


# -- the model's function call → the client's call item -------------------------------------------


def _arguments(call: Item) -> Any:
    try:
        return orjson.loads(call.get("arguments") or "{}")
    except orjson.JSONDecodeError:
        return None


def public_call(call: Item, tool: ClientTool) -> Item:
    """A model function call for `tool` in the shape the client declared (ids and status kept)."""
    base: Item = {key: call[key] for key in ("id", "call_id") if key in call}
    status = call.get("status", "completed")
    if tool.kind == "function":
        return {**call, "name": tool.name, "namespace": tool.namespace} if tool.namespace else call
    arguments = _arguments(call)
    fields: Item = arguments if isinstance(arguments, dict) else {}
    if tool.kind == "custom":
        text = fields.get("input") if isinstance(fields.get("input"), str) else call.get("arguments") or ""
        item = {"type": "custom_tool_call", **base, "name": tool.name, "input": text}
        if tool.namespace:
            item["namespace"] = tool.namespace
        return item
    if tool.kind == "local_shell":
        command = fields.get("command")
        action: Item = {"type": "exec", "command": [str(part) for part in command] if isinstance(command, list) else [],
                  "env": fields.get("env") if isinstance(fields.get("env"), dict) else {},
                  "timeout_ms": fields.get("timeout_ms"), "working_directory": fields.get("workdir"), "user": None}
        return {"type": "local_shell_call", **base, "status": status, "action": action}
    if tool.kind == "shell":
        commands = fields.get("commands")
        action = {"commands": [str(part) for part in commands] if isinstance(commands, list) else [],
                  "timeout_ms": fields.get("timeout_ms"), "max_output_length": fields.get("max_output_length")}
        environment = (tool.declaration or {}).get("environment")
        return {"type": "shell_call", **base, "status": status, "action": action, "environment": environment}
    if tool.kind == "apply_patch":
        return {"type": "apply_patch_call", **base, "status": status, "operation": fields.get("operation") or {}}
    return {"type": "computer_call", **base, "status": status, "action": fields.get("action") or {},
            "pending_safety_checks": []}


# -- the client's items → what the model saw -------------------------------------------------------


def model_call(item: Item) -> Item | None:
    """A client call item as the model's function call, or None when it is not a mapped kind."""
    item_type = item.get("type")
    keep: Item = {key: item[key] for key in ("id", "call_id", "status") if key in item}
    if item_type == "function_call":
        namespace = item.get("namespace")
        if not namespace:
            return None
        mapped = {key: value for key, value in item.items() if key != "namespace"}
        mapped["name"] = model_name(str(item.get("name") or ""), namespace)
        return mapped
    if item_type == "custom_tool_call":
        name = model_name(str(item.get("name") or ""), item.get("namespace"))
        return _function_call(keep, name, {"input": item.get("input", "")})
    action: Item = item["action"] if isinstance(item.get("action"), dict) else {}
    if item_type == "local_shell_call":
        arguments = {"command": action.get("command", [])}
        if action.get("working_directory"):
            arguments["workdir"] = action["working_directory"]
        if action.get("timeout_ms") is not None:
            arguments["timeout_ms"] = action["timeout_ms"]
        return _function_call(keep, LOCAL_SHELL_NAME, arguments)
    if item_type == "shell_call":
        arguments = {key: action[key] for key in ("commands", "timeout_ms", "max_output_length") if action.get(key) is not None}
        return _function_call(keep, SHELL_NAME, arguments)
    if item_type == "apply_patch_call":
        return _function_call(keep, APPLY_PATCH_NAME, {"operation": item.get("operation") or {}})
    if item_type == "computer_call":
        return _function_call(keep, COMPUTER_NAME, {"action": action})
    return None


def _function_call(keep: Item, name: str, arguments: Any) -> Item:
    keep.setdefault("status", "completed")
    return {"type": "function_call", **keep, "name": name, "arguments": orjson.dumps(arguments).decode()}


def call_id_of(item: Item) -> Any:
    """The call an output answers: `call_id`, or `id` for a `local_shell_call_output` (OpenAI's shape)."""
    if item.get("type") == "local_shell_call_output" and not item.get("call_id"):
        return item.get("id")
    return item.get("call_id")


def model_output(item: Item) -> Item:
    """A client output item as the `function_call_output` the model reads."""
    item_type = item.get("type")
    output: Any = item.get("output")
    if item_type == "shell_call_output":
        output = _shell_output_text(output)
    elif item_type == "apply_patch_call_output":
        output = output if isinstance(output, str) and output else f"apply_patch {item.get('status', 'completed')}"
    elif item_type == "computer_call_output":
        screenshot: Item = output if isinstance(output, dict) else {}
        output = [{"type": "input_image", "image_url": screenshot.get("image_url"), "detail": "auto"}] \
            if screenshot.get("image_url") else "screenshot taken"
    return {"type": "function_call_output", "call_id": call_id_of(item), "output": output if output is not None else ""}


def _shell_output_text(chunks: Any) -> str:
    parts = []
    for chunk in chunks if isinstance(chunks, list) else []:
        if not isinstance(chunk, dict):
            continue
        text = "".join(str(chunk.get(stream) or "") for stream in ("stdout", "stderr"))
        outcome: Item = chunk["outcome"] if isinstance(chunk.get("outcome"), dict) else {}
        ending = "timed out" if outcome.get("type") == "timeout" else f"exit code {outcome.get('exit_code')}"
        parts.append(f"{text}\n[{ending}]" if text else f"[{ending}]")
    return "\n".join(parts)
