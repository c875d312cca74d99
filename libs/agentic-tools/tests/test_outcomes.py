"""Running a tool: arguments validated first, then ok / hint / error, each rendered to the model in one form."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from datetime import date
from enum import Enum
from typing import Annotated

from agentic_core.tools.protocol import ToolResult, render_for_model
from agentic_tools import Error, Hint, Ok, error, hint, ok, tool
from pydantic import BaseModel, Field


class Size(Enum):
    small = "S"
    large = "L"


class Item(BaseModel):
    sku: str
    quantity: int = 1


@dataclass
class Receipt:
    total: float
    day: date


@tool
def add(a: int, b: int = 2) -> int:
    """Add two numbers."""
    return a + b


@tool
def order(items: list[Item], size: Size, note: str | None = None) -> dict[str, object]:
    """Order items."""
    return {"skus": [item.sku for item in items], "quantities": [item.quantity for item in items], "size": size, "note": note}


@tool
def lookup(code: str) -> Ok | Hint | Error:
    """Look a code up."""
    if code == "down":
        return error("The registry is unavailable.")
    if code != "ABC":
        return hint(f"Unknown code {code!r}.", alternatives=["ABC", "ABD"])
    return ok({"code": "ABC", "name": "Alphabet"})


@tool
def explode(message: str) -> None:
    """Always fails."""
    raise RuntimeError(message)


@tool
def explode_silently() -> None:
    """Fails without a message."""
    raise KeyError


@tool
async def slow_echo(text: str, delay: Annotated[float, Field(ge=0)] = 0.0) -> str:
    """Echo text after a delay."""
    await asyncio.sleep(delay)
    return text


@tool
def which_thread() -> int:
    """The thread this runs on."""
    return threading.get_ident()


@tool
def receipt() -> Receipt:
    """A dataclass result."""
    return Receipt(12.5, date(2026, 1, 2))


async def test_a_plain_return_value_is_ok_and_shown_as_json() -> None:
    result = await add.run("c1", {"a": 40})
    assert result == ToolResult("c1", "ok", 42)
    assert render_for_model(result) == "42"


async def test_a_string_is_shown_to_the_model_as_is() -> None:
    result = await slow_echo.run("c1", {"text": "hello", "delay": None})
    assert render_for_model(result) == "hello"


async def test_ok_data_is_shown_as_json() -> None:
    result = await lookup.run("c1", {"code": "ABC"})
    assert result.status == "ok"
    assert render_for_model(result) == '{"code":"ABC","name":"Alphabet"}'


async def test_a_hint_carries_its_alternatives() -> None:
    result = await lookup.run("c1", {"code": "XYZ"})
    assert result == ToolResult("c1", "hint", "Unknown code 'XYZ'.", alternatives=["ABC", "ABD"])
    assert render_for_model(result) == "Hint: Unknown code 'XYZ'.\nAlternatives: ABC; ABD"


async def test_an_error_is_shown_with_its_message() -> None:
    result = await lookup.run("c1", {"code": "down"})
    assert result == ToolResult("c1", "error", "The registry is unavailable.")
    assert render_for_model(result) == "Error: The registry is unavailable."


async def test_an_exception_is_an_error_with_its_message() -> None:
    result = await explode.run("c1", {"message": "disk full"})
    assert (result.status, render_for_model(result)) == ("error", "Error: disk full")


async def test_an_exception_without_message_is_an_error_named_by_its_type() -> None:
    result = await explode_silently.run("c1", {})
    assert render_for_model(result) == "Error: KeyError"


async def test_missing_wrong_and_unknown_arguments_are_one_hint_before_the_call() -> None:
    result = await add.run("c1", {"b": "two", "c": 1})
    assert result.status == "hint"
    assert result.content == (
        "Invalid arguments for add: a: Field required; b: Input should be a valid integer, unable to parse string as an integer "
        "(got 'two'); c: Extra inputs are not permitted."
    )


async def test_nested_problems_name_their_path() -> None:
    result = await order.run("c1", {"items": [{"sku": "A"}, {"quantity": 3}], "size": "M", "note": None})
    assert result.status == "hint"
    assert "items.1.sku: Field required" in result.content
    assert "size: Input should be 'S' or 'L' (got 'M')" in result.content


async def test_constraints_are_checked() -> None:
    result = await slow_echo.run("c1", {"text": "x", "delay": -1})
    assert result.status == "hint"
    assert "delay: Input should be greater than or equal to 0 (got -1)" in result.content


async def test_arguments_that_are_not_an_object_are_a_hint() -> None:
    result = await add.run("c1", [1, 2])
    assert (result.status, result.content) == ("hint", "The arguments of add must be a JSON object.")


async def test_null_means_the_default_at_every_level() -> None:
    result = await order.run("c1", {"items": [{"sku": "A", "quantity": None}], "size": "L", "note": None})
    assert result.content == {"skus": ["A"], "quantities": [1], "size": "L", "note": None}
    assert (await add.run("c1", {"a": 1, "b": None})).content == 3


async def test_the_function_receives_enum_members_and_model_instances() -> None:
    args, kwargs = order.bind({"items": [{"sku": "A"}], "size": "S", "note": "hi"})
    assert args == []
    assert kwargs == {"items": [Item(sku="A")], "size": Size.small, "note": "hi"}


async def test_a_sync_function_runs_in_a_worker_thread() -> None:
    result = await which_thread.run("c1", {})
    assert result.content != threading.get_ident()


async def test_a_slow_sync_function_does_not_block_the_event_loop() -> None:
    import time

    @tool
    def sleepy() -> str:
        """Sleeps."""
        time.sleep(0.3)
        return "done"

    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    counting = asyncio.create_task(ticker())
    result = await sleepy.run("c1", {})
    counting.cancel()
    assert result.content == "done"
    assert ticks >= 10


async def test_dataclasses_and_dates_are_returned_as_json() -> None:
    result = await receipt.run("c1", {})
    assert render_for_model(result) == '{"total":12.5,"day":"2026-01-02"}'


async def test_results_survive_the_wire() -> None:
    for result in (await receipt.run("c1", {}), await lookup.run("c2", {"code": "XYZ"}), await explode.run("c3", {"message": "m"})):
        assert ToolResult.from_json(result.to_json()) == result


def test_calling_the_tool_calls_the_function() -> None:
    assert add(1, 2) == 3
    assert add.__name__ == "add" and add.__doc__ == "Add two numbers."


async def test_positional_only_parameters_are_passed_by_position() -> None:
    @tool
    def power(base: int, /, exponent: int = 2) -> int:
        """Power."""
        return base**exponent

    assert (await power.run("c1", {"base": 3, "exponent": None})).content == 9


def test_hint_alternatives_are_strings() -> None:
    assert hint("pick one", alternatives=[1, 2]) == Hint("pick one", ["1", "2"])
    assert ok() == Ok(None)
