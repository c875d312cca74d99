"""The request-scoped tool registry: every declared tool normalised to the function tools the model
sees, and each model-visible name mapped to its owner (the client or the gateway).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from agentic_core.errors import InvalidRequest
from agentic_core.tools import file_search
from agentic_core.tools.client_tools import (
    APPLY_PATCH_NAME,
    COMPUTER_NAME,
    LOCAL_SHELL_NAME,
    PUBLIC_CALL_TYPE,
    SHELL_NAME,
    ClientTool,
    model_functions,
    model_name,
    public_call,
)
from agentic_core.tools.mcp import McpServerTools, model_tool_name

Owner = Literal["client", "gateway"]

WEB_SEARCH_TYPES = frozenset({"web_search", "web_search_preview", "web_search_2025_08_26", "web_search_preview_2025_03_11"})
# Tools the client runs: offered to the model as function tools (see client_tools).
CLIENT_TYPES = frozenset({"function", "custom", "namespace", "local_shell", "apply_patch", "computer_use_preview",
                          "computer"})
# Hosted tools this gateway has no backend for: refused loudly rather than silently dropped.
UNSUPPORTED_TYPES = {
    "image_generation": "image generation is not supported by this gateway",
}
# Accepted and not offered: every deferred tool (`defer_loading`) is loaded from the start, so there is
# nothing left for a tool search to find.
IGNORED_TYPES = frozenset({"tool_search"})
MAX_SEARCH_QUERIES = 5

_WEB_SEARCH_FUNCTION = {
    "type": "function",
    "name": "web_search",
    "description": "Search the web. Give one to five focused queries; results have titles, URLs and snippets.",
    "strict": True,
    "parameters": {
        "type": "object",
        "properties": {
            "queries": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": MAX_SEARCH_QUERIES},
        },
        "required": ["queries"],
        "additionalProperties": False,
    },
}
_CODE_INTERPRETER_FUNCTION = {
    "type": "function",
    "name": "code_interpreter",
    "description": "Run Python 3 code in a sandbox without network access and return stdout, stderr and the last "
    "expression's value. Files written in the working directory persist only for this call.",
    "strict": True,
    "parameters": {
        "type": "object",
        "properties": {"code": {"type": "string", "description": "The Python source to run."}},
        "required": ["code"],
        "additionalProperties": False,
    },
}
_SHELL_FUNCTION = {
    "type": "function",
    "name": "shell",
    "description": "Run one allowlisted command (no shell syntax) in a sandbox and return its output.",
    "strict": True,
    "parameters": {
        "type": "object",
        "properties": {"command": {"type": "array", "items": {"type": "string"}, "minItems": 1}},
        "required": ["command"],
        "additionalProperties": False,
    },
}


@dataclass(frozen=True, slots=True)
class ToolBinding:
    """What a model-visible function name stands for."""

    name: str
    owner: Owner
    kind: str                     # function | custom | web_search | file_search | code_interpreter | shell | operator
    public_type: str              # the type of the public item a call appears as
    params: dict[str, Any] = field(default_factory=dict)  # the request's declaration, for the runner
    parallel_safe: bool = True
    remote_name: str | None = None      # the name the runner knows (an MCP server's own tool name)
    requires_approval: bool = False     # MCP: the client must approve each call first
    server_label: str | None = None
    client: ClientTool | None = None    # a client tool: what the client declared this function as

    @property
    def runner_name(self) -> str:
        return self.remote_name or self.name


@dataclass(slots=True)
class ToolRegistry:
    bindings: dict[str, ToolBinding]
    model_tools: list[dict[str, Any]]   # what the model server receives as `tools`

    def binding(self, name: object) -> ToolBinding | None:
        """The tool a model-side name stands for; a name that is not a string (a model's output) stands for none."""
        return self.bindings.get(name) if isinstance(name, str) else None

    def public_item(self, item: dict[str, Any]) -> dict[str, Any]:
        """A model output item as the client sees it: a client tool's function call in its declared shape."""
        if item.get("type") != "function_call":
            return item
        binding = self.binding(item.get("name"))
        return public_call(item, binding.client) if binding is not None and binding.client is not None else item

    def is_gateway_call(self, name: object) -> bool:
        binding = self.binding(name)
        return binding is not None and binding.owner == "gateway"


def build_registry(
    tools: list[dict[str, Any]] | None,
    operator_tools: dict[str, dict[str, Any]] | None = None,
    *,
    shell_enabled: bool = False,
    mcp_servers: list[McpServerTools] | None = None,
) -> ToolRegistry:
    """`operator_tools`: name → function tool definition, as the tool runners published them.
    `mcp_servers`: the request's `mcp` declarations with the tools the bridge discovered for each."""
    operator_tools = operator_tools or {}
    bindings: dict[str, ToolBinding] = {}
    model_tools: list[dict[str, Any]] = []
    for index, tool in enumerate(tools or []):
        param = f"tools[{index}]"
        if not isinstance(tool, dict) or not isinstance(tool.get("type"), str):
            raise InvalidRequest("Each tool needs a `type`.", param=param, code="invalid_value")
        tool_type = tool["type"]
        if tool_type in CLIENT_TYPES or (tool_type == "shell" and _is_local(tool)):
            for client_tool, function in model_functions(tool, param):
                _add(bindings, ToolBinding(function["name"], "client", client_tool.kind,
                                           PUBLIC_CALL_TYPE[client_tool.kind], client=client_tool), param)
                model_tools.append(function)
        elif tool_type in WEB_SEARCH_TYPES:
            _add(bindings, ToolBinding("web_search", "gateway", "web_search", "web_search_call", _declaration(tool)), param)
            model_tools.append(_WEB_SEARCH_FUNCTION)
        elif tool_type == file_search.NAME:
            _add(bindings, ToolBinding(file_search.NAME, "gateway", file_search.NAME, file_search.PUBLIC_TYPE,
                                       file_search.declaration(tool, param)), param)
            model_tools.append(file_search.FUNCTION)
        elif tool_type == "code_interpreter":
            container = tool.get("container", {"type": "auto"})
            if not (isinstance(container, str) or (isinstance(container, dict) and container.get("type") == "auto")):
                raise InvalidRequest("code_interpreter `container` must be `{\"type\": \"auto\"}` or a container id.",
                                     param=f"{param}.container", code="invalid_value")
            _add(bindings, ToolBinding("code_interpreter", "gateway", "code_interpreter", "code_interpreter_call",
                                       _declaration(tool), parallel_safe=False), param)
            model_tools.append(_CODE_INTERPRETER_FUNCTION)
        elif tool_type == "shell":
            if not shell_enabled:
                raise InvalidRequest("The shell tool is not enabled on this gateway.", param=param, code="unsupported_tool")
            _add(bindings, ToolBinding("shell", "gateway", "shell", "function_call", _declaration(tool), parallel_safe=False),
                 param)
            model_tools.append(_SHELL_FUNCTION)
        elif tool_type == "operator":
            name = tool.get("name")
            definition = operator_tools.get(name) if isinstance(name, str) else None
            if not isinstance(name, str) or definition is None:
                known = ", ".join(sorted(operator_tools)) or "none"
                raise InvalidRequest(f"Unknown operator tool {name!r} (available: {known}).", param=f"{param}.name",
                                     code="unknown_tool")
            _add(bindings, ToolBinding(name, "gateway", "operator", "function_call", _declaration(tool),
                                       parallel_safe=bool(definition.get("parallel_safe", True))), param)
            model_tools.append({key: definition[key] for key in ("type", "name", "description", "parameters", "strict")
                                if key in definition})
        elif tool_type == "mcp" or tool_type in IGNORED_TYPES:
            continue  # mcp: discovered beforehand, added below
        elif tool_type in UNSUPPORTED_TYPES:
            raise InvalidRequest(f"{UNSUPPORTED_TYPES[tool_type]}.", param=param, code="unsupported_tool")
        else:
            raise InvalidRequest(f"Unsupported tool type {tool_type!r}.", param=f"{param}.type", code="unsupported_tool")
    for server in mcp_servers or []:
        declaration = server.declaration
        for tool in server.tools:
            name = model_tool_name(declaration.server_label, tool["name"])
            _add(bindings, ToolBinding(name, "gateway", "mcp", "mcp_call", declaration.runner_params(),
                                       remote_name=tool["name"], requires_approval=declaration.needs_approval(tool["name"]),
                                       server_label=declaration.server_label), f"tools[{declaration.index}]")
            model_tools.append({"type": "function", "name": name, "description": tool.get("description") or "",
                                "parameters": tool.get("input_schema") or {"type": "object", "properties": {}}})
    return ToolRegistry(bindings=bindings, model_tools=model_tools)


def _is_local(tool: dict[str, Any]) -> bool:
    """A `shell` tool in the client's own environment; without one it is the gateway's sandboxed shell."""
    environment = tool.get("environment")
    return isinstance(environment, dict) and environment.get("type") == "local"


def _declaration(tool: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in tool.items() if key not in ("type", "name")}


def _add(bindings: dict[str, ToolBinding], binding: ToolBinding, param: str) -> None:
    if binding.name in bindings:
        raise InvalidRequest(f"Two tools are named {binding.name!r}; tool names must be unique.", param=param,
                             code="duplicate_tool_name")
    bindings[binding.name] = binding


# Tool choices naming a tool type whose model function has a fixed name.
_FIXED_CHOICES = {"code_interpreter": "code_interpreter", file_search.NAME: file_search.NAME, "shell": SHELL_NAME,
                  "local_shell": LOCAL_SHELL_NAME,
                  "apply_patch": APPLY_PATCH_NAME, "computer_use_preview": COMPUTER_NAME, "computer": COMPUTER_NAME}


def model_tool_choice(tool_choice: Any, registry: ToolRegistry) -> Any:
    """The request's `tool_choice` in terms of the model's function tools."""
    if not isinstance(tool_choice, dict):
        return tool_choice
    choice_type = tool_choice.get("type")
    if choice_type in WEB_SEARCH_TYPES:
        name: Any = "web_search"
    elif choice_type in _FIXED_CHOICES:
        name = _FIXED_CHOICES[choice_type]
    elif choice_type in ("function", "custom"):
        name = tool_choice.get("name")
        if isinstance(name, str) and tool_choice.get("namespace"):
            name = model_name(name, tool_choice["namespace"])
    else:
        return tool_choice
    if name not in registry.bindings:
        raise InvalidRequest(f"tool_choice names {tool_choice.get('name') or choice_type!r}, which is not a declared tool.",
                             param="tool_choice", code="invalid_value")
    return {"type": "function", "name": name}
