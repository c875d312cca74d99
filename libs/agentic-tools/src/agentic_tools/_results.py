"""The three outcomes an operator tool returns: `ok(data)`, `hint(message, alternatives)`, `error(message)`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentic_core.tools.protocol import ToolResult
from pydantic_core import to_jsonable_python


@dataclass(frozen=True, slots=True)
class Ok:
    """Success: `data` is shown to the model (a string as is, anything else as JSON)."""

    data: Any = None


@dataclass(frozen=True, slots=True)
class Hint:
    """A correction the model can act on: what was wrong, and what it could try instead."""

    message: str
    alternatives: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Error:
    """A failure the model cannot fix by changing its arguments."""

    message: str


Outcome = Ok | Hint | Error


def ok(data: Any = None) -> Ok:
    return Ok(data)


def hint(message: str, alternatives: list[str] | None = None) -> Hint:
    return Hint(message, [str(alternative) for alternative in alternatives or []])


def error(message: str) -> Error:
    return Error(message)


def as_outcome(value: Any) -> Outcome:
    """What a tool function returned, as an outcome: a plain value means ok."""
    return value if isinstance(value, Ok | Hint | Error) else Ok(value)


def to_tool_result(call_id: str, outcome: Outcome) -> ToolResult:
    """The wire form the runner sends back (rendered to the model by `render_for_model`)."""
    if isinstance(outcome, Hint):
        return ToolResult.hint(call_id, outcome.message, outcome.alternatives)
    if isinstance(outcome, Error):
        return ToolResult.error(call_id, outcome.message)
    return ToolResult.ok(call_id, _jsonable(outcome.data))


def _jsonable(data: Any) -> Any:
    # Pydantic models, dataclasses, dates, enums and sets become JSON values; anything else is shown by its str().
    if isinstance(data, str):
        return data
    return to_jsonable_python(data, fallback=str)
