"""The request's tools, normalised for the model, each name owned by the client or the gateway."""

from __future__ import annotations

import pytest
from agentic_core.errors import InvalidRequest
from agentic_core.tools.protocol import ToolResult, render_for_model
from agentic_core.tools.registry import build_registry, model_tool_choice

FUNCTION = {"type": "function", "name": "lookup", "parameters": {"type": "object", "properties": {}}}
OPERATOR = {"convert": {"type": "function", "name": "convert", "description": "d", "parameters": {"type": "object"},
                        "strict": True}}


def test_declarations_become_function_tools_with_owners() -> None:
    registry = build_registry([FUNCTION, {"type": "web_search_preview"}, {"type": "code_interpreter",
                               "container": {"type": "auto"}}, {"type": "operator", "name": "convert"}], OPERATOR)
    assert [tool["name"] for tool in registry.model_tools] == ["lookup", "web_search", "code_interpreter", "convert"]
    assert all(tool["type"] == "function" for tool in registry.model_tools)
    assert registry.binding("lookup").owner == "client"
    assert {name for name, b in registry.bindings.items() if b.owner == "gateway"} == {"web_search", "code_interpreter", "convert"}
    assert registry.binding("code_interpreter").parallel_safe is False
    assert registry.binding("web_search").public_type == "web_search_call"


@pytest.mark.parametrize(
    ("tools", "code"),
    [
        ([{"type": "file_search"}], "invalid_value"),
        ([{"type": "image_generation"}], "unsupported_tool"),
        ([{"type": "shell"}], "unsupported_tool"),
        ([{"type": "mystery"}], "unsupported_tool"),
        ([{"type": "operator", "name": "nope"}], "unknown_tool"),
        ([FUNCTION, FUNCTION], "duplicate_tool_name"),
        ([{"type": "function"}], "invalid_value"),
        ([{"type": "code_interpreter", "container": {"type": "gpu"}}], "invalid_value"),
    ],
)
def test_bad_declarations_are_refused_not_dropped(tools, code) -> None:
    with pytest.raises(InvalidRequest) as raised:
        build_registry(tools, OPERATOR)
    assert raised.value.code == code


def test_shell_is_gateway_owned_only_when_enabled() -> None:
    assert build_registry([{"type": "shell"}], shell_enabled=True).binding("shell").owner == "gateway"


def test_tool_choice_is_translated_to_the_models_function() -> None:
    registry = build_registry([{"type": "web_search"}, FUNCTION])
    assert model_tool_choice({"type": "web_search"}, registry) == {"type": "function", "name": "web_search"}
    assert model_tool_choice("required", registry) == "required"
    with pytest.raises(InvalidRequest):
        model_tool_choice({"type": "function", "name": "undeclared"}, registry)


def test_results_render_in_one_form() -> None:
    assert render_for_model(ToolResult.ok("c", {"a": 1})) == '{"a":1}'
    assert render_for_model(ToolResult.ok("c", "plain")) == "plain"
    assert render_for_model(ToolResult.hint("c", "use metres", ["m", "km"])) == "Hint: use metres\nAlternatives: m; km"
    assert render_for_model(ToolResult.error("c", "down")) == "Error: down"
