"""Operator tools in the runner: loaded from the example package (examples/operator-tools), described, run.

The example package is not installed into the venv. Its source folder is put on `sys.path`, and for
discovery by entry point a temporary `example_operator_tools-0.1.0.dist-info` is written from the
entry points its pyproject.toml declares: `importlib.metadata` reads it exactly as it reads an
installed distribution.
"""

from __future__ import annotations

import textwrap
import time
import tomllib
import uuid
from pathlib import Path
from typing import Any

import orjson
import pytest
from agentic_core.tools.protocol import ToolCall, ToolResult, render_for_model
from agentic_tool_runner.settings import ToolRunnerSettings
from agentic_tool_runner.tools.base import ToolHandler
from agentic_tool_runner.tools.operator import OperatorTools
from agentic_tools import tool

EXAMPLE = Path(__file__).parents[3] / "examples" / "operator-tools"
EXAMPLE_TOOLS = ["convert_units", "convert_currency", "days_between"]


@pytest.fixture
def example_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLE / "src"))


@pytest.fixture
def example_installed(example_on_path: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The example package as if pip-installed: its dist-info, with the entry points of its pyproject.toml."""
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text())["project"]
    info = tmp_path / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    sections = [f"[{group}]\n" + "".join(f"{name} = {value}\n" for name, value in entries.items())
                for group, entries in project["entry-points"].items()]
    (info / "entry_points.txt").write_text("\n".join(sections))
    monkeypatch.syspath_prepend(str(tmp_path))


def settings(modules: str = "") -> ToolRunnerSettings:
    return ToolRunnerSettings(operator_modules=modules)


def call(tool_name: str, arguments: Any, deadline_in: float = 30.0) -> ToolCall:
    return ToolCall(call_id="call_op", kind="operator", tool=tool_name, arguments=arguments, deadline=time.time() + deadline_in)


def assert_strict(schema: Any) -> None:
    if isinstance(schema, dict):
        if schema.get("type") == "object":
            assert schema["additionalProperties"] is False
            assert schema["required"] == list(schema["properties"])
        for key, value in schema.items():
            assert_strict(list(value.values()) if key in ("properties", "$defs") else value)
    elif isinstance(schema, list):
        for item in schema:
            assert_strict(item)


# --- loading -------------------------------------------------------------------------------------


def test_tools_load_from_the_module_list_setting(example_on_path: None) -> None:
    handler = OperatorTools(settings("example_operator_tools.tools"))
    assert list(handler.tools) == EXAMPLE_TOOLS


def test_the_module_list_comes_from_its_env_var(example_on_path: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTIC_TOOL_RUNNER_OPERATOR_MODULES", " example_operator_tools.tools:convert_units , ")
    assert list(OperatorTools(ToolRunnerSettings()).tools) == ["convert_units"]


def test_tools_load_from_the_agentic_tools_entry_points(example_installed: None) -> None:
    handler = OperatorTools(settings())
    assert list(handler.tools) == EXAMPLE_TOOLS


def test_a_tool_found_both_ways_is_loaded_once(example_installed: None) -> None:
    handler = OperatorTools(settings("example_operator_tools.tools:convert_currency"))
    assert list(handler.tools) == EXAMPLE_TOOLS


def test_without_entry_points_or_modules_there_are_no_tools() -> None:
    handler = OperatorTools(settings(), entry_point_group=f"agentic.tools.none{uuid.uuid4().hex[:8]}")
    assert handler.tools == {} and handler.definitions() == []


def test_two_different_tools_with_one_name_fail_at_start_up(example_on_path: None, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    module = f"clashing_tools_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{module}.py").write_text(textwrap.dedent('''
        from agentic_tools import tool

        @tool
        def convert_units(value: float) -> float:
            """Another converter."""
            return value
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError, match="two operator tools are named 'convert_units'"):
        OperatorTools(settings(f"example_operator_tools.tools,{module}"))


def test_a_module_that_cannot_be_imported_fails_at_start_up() -> None:
    with pytest.raises(ModuleNotFoundError):
        OperatorTools(settings("no_such_operator_tools_module"))


# --- definitions ---------------------------------------------------------------------------------


def test_definitions_are_strict_responses_function_tools(example_on_path: None) -> None:
    definitions = OperatorTools(settings("example_operator_tools.tools")).definitions()
    assert [definition["name"] for definition in definitions] == EXAMPLE_TOOLS
    for definition in definitions:
        assert set(definition) == {"type", "name", "description", "parameters", "strict", "parallel_safe"}
        assert (definition["type"], definition["strict"], definition["parallel_safe"]) == ("function", True, True)
        assert definition["description"]
        assert_strict(definition["parameters"])
        assert orjson.loads(orjson.dumps(definition)) == definition  # published as JSON to the executors
    currency = definitions[1]["parameters"]
    assert currency["required"] == ["from_currency", "to_currency", "amount"]
    assert currency["properties"]["amount"]["anyOf"] == [{"type": "number", "minimum": 0}, {"type": "null"}]


def test_parallel_safe_false_is_published() -> None:
    @tool(parallel_safe=False)
    def rotate_key(name: str) -> str:
        """Rotate a key."""
        return name

    assert OperatorTools.from_tools([rotate_key]).definitions()[0]["parallel_safe"] is False


# --- running -------------------------------------------------------------------------------------


@pytest.fixture
def example(example_on_path: None) -> OperatorTools:
    return OperatorTools(settings("example_operator_tools.tools"))


def test_the_handler_is_a_tool_handler_of_kind_operator(example: OperatorTools) -> None:
    handler: ToolHandler = example
    assert handler.kind == "operator"


async def test_an_ok_result_is_shown_as_json(example: OperatorTools) -> None:
    result = await example.run(call("convert_units", {"value": 5, "from_unit": "km", "to_unit": "mi"}))
    assert result == ToolResult("call_op", "ok", {"value": 3.106856, "unit": "mi"})
    assert render_for_model(result) == '{"value":3.106856,"unit":"mi"}'


async def test_null_uses_the_default(example: OperatorTools) -> None:
    result = await example.run(call("convert_currency", {"from_currency": "usd", "to_currency": "EUR", "amount": None}))
    assert result.content == {"amount": 0.92, "currency": "EUR", "rates": "fixed example rates"}


async def test_an_unknown_currency_is_a_hint_with_alternatives(example: OperatorTools) -> None:
    result = await example.run(call("convert_currency", {"from_currency": "EUX", "to_currency": "USD", "amount": 10}))
    assert result.status == "hint"
    assert render_for_model(result) == "Hint: Unknown currency 'EUX'.\nAlternatives: EUR; USD; AUD"


async def test_incompatible_units_are_a_hint(example: OperatorTools) -> None:
    result = await example.run(call("convert_units", {"value": 1, "from_unit": "kg", "to_unit": "km"}))
    assert render_for_model(result) == "Hint: Cannot convert kg to km: one is a length, the other a mass.\nAlternatives: g; lb"


async def test_invalid_arguments_are_a_hint_and_the_tool_does_not_run(example: OperatorTools) -> None:
    result = await example.run(call("convert_units", {"value": "five", "from_unit": "parsec", "to_unit": "m"}))
    assert result.status == "hint"
    assert render_for_model(result).startswith("Hint: Invalid arguments for convert_units: value: Input should be a valid number")
    assert "from_unit: Input should be 'm', 'km', 'mi', 'ft', 'in', 'g', 'kg' or 'lb' (got 'parsec')" in result.content


async def test_an_async_tool_runs(example: OperatorTools) -> None:
    result = await example.run(call("days_between", {"start": "2026-01-01", "end": "2026-03-01"}))
    assert render_for_model(result) == '{"days":59}'


async def test_an_unknown_tool_is_a_hint_listing_the_tools(example: OperatorTools) -> None:
    result = await example.run(call("convert_temperature", {}))
    assert result == ToolResult("call_op", "hint", "There is no tool named 'convert_temperature' on this server.",
                                alternatives=sorted(EXAMPLE_TOOLS))


async def test_an_exception_is_an_error_result() -> None:
    @tool
    def flaky(order_id: str) -> None:
        """Always fails."""
        raise ConnectionError(f"order service refused {order_id}")

    result = await OperatorTools.from_tools([flaky]).run(call("flaky", {"order_id": "A1"}))
    assert render_for_model(result) == "Error: order service refused A1"


async def test_a_sync_tool_past_the_deadline_answers_an_error_without_waiting() -> None:
    @tool
    def slow() -> str:
        """Sleeps."""
        time.sleep(0.6)
        return "late"

    started = time.monotonic()
    result = await OperatorTools.from_tools([slow]).run(call("slow", {}, deadline_in=0.15))
    assert time.monotonic() - started < 0.5
    assert result.status == "error"
    assert result.content.startswith("The slow tool did not finish within")


async def test_a_call_past_its_deadline_does_not_run() -> None:
    ran = []

    @tool
    def side_effect() -> None:
        """Records that it ran."""
        ran.append(True)

    result = await OperatorTools.from_tools([side_effect]).run(call("side_effect", {}, deadline_in=-1))
    assert result.status == "error" and ran == []


async def test_results_cross_the_wire_unchanged(example: OperatorTools) -> None:
    result = await example.run(call("convert_currency", {"from_currency": "GBP", "to_currency": "JPY", "amount": 2}))
    assert ToolResult.from_json(result.to_json()) == result
