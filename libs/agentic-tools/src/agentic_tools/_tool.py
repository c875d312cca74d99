"""`@tool`: a plain function, described to the model from its signature and run under the ok/hint/error contract."""

from __future__ import annotations

import asyncio
import functools
import inspect
import re
from collections.abc import Callable
from typing import Any, overload

from agentic_core.tools.protocol import ToolResult
from pydantic import ValidationError

from agentic_tools._results import Error, Hint, Outcome, as_outcome, to_tool_result
from agentic_tools._schema import arguments_model, drop_defaulted_nulls, raw_schema, strict_schema

# What OpenAI-compatible APIs accept as a function name.
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_ARGS_HEADERS = frozenset({"args:", "arguments:", "parameters:", "params:"})
_DOC_PARAM = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


class Tool:
    """A function the model can call. Calling the `Tool` itself calls the function unchanged.

    `parallel_safe=False` asks the executor never to run two calls of this tool at once.
    """

    def __init__(
        self, function: Callable[..., Any], *, name: str | None = None, description: str | None = None, parallel_safe: bool = True
    ) -> None:
        self.function = function
        self.parallel_safe = parallel_safe
        self.name = name or function.__name__
        if not _NAME.match(self.name):
            raise ValueError(f"tool name {self.name!r} must be 1-64 letters, digits, '_' or '-'")
        summary, parameter_docs = _split_docstring(inspect.getdoc(function) or "")
        self.description = description if description is not None else summary
        self._model, self._parameters = arguments_model(function, self.name)
        self._raw_schema = raw_schema(self._model, parameter_docs)
        self.parameters: dict[str, Any] = strict_schema(self._raw_schema, self.name)
        self.is_async = inspect.iscoroutinefunction(function)
        functools.update_wrapper(self, function)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.function(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<Tool {self.name}>"

    def definition(self) -> dict[str, Any]:
        """The Responses API function-tool declaration of this tool."""
        return {"type": "function", "name": self.name, "description": self.description, "parameters": self.parameters, "strict": True}

    def bind(self, arguments: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
        """Validated positional and keyword arguments for the function; raises `pydantic.ValidationError`."""
        cleaned = drop_defaulted_nulls(arguments, self._raw_schema, self._raw_schema.get("$defs", {}))
        validated = self._model.model_validate(cleaned)
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        for parameter in self._parameters:
            value = getattr(validated, parameter.field_name)
            if parameter.positional_only:
                args.append(value)
            else:
                kwargs[parameter.name] = value
        return args, kwargs

    async def invoke(self, arguments: Any) -> Outcome:
        """Validate, run (a sync function in a worker thread), and turn what happened into an outcome. Never raises
        for a tool-level failure; cancellation propagates (a sync function's thread then runs to its end unobserved)."""
        if not isinstance(arguments, dict):
            return Hint(f"The arguments of {self.name} must be a JSON object.")
        try:
            args, kwargs = self.bind(arguments)
        except ValidationError as exc:
            return Hint(_describe(self.name, exc))
        try:
            if self.is_async:
                value = await self.function(*args, **kwargs)
            else:
                value = await asyncio.to_thread(self.function, *args, **kwargs)
                if inspect.isawaitable(value):
                    value = await value
        except Exception as exc:  # the contract: an exception is an error result carrying its message
            return Error(str(exc) or type(exc).__name__)
        return as_outcome(value)

    async def run(self, call_id: str, arguments: Any) -> ToolResult:
        return to_tool_result(call_id, await self.invoke(arguments))


@overload
def tool(function: Callable[..., Any], /) -> Tool: ...
@overload
def tool(
    *, name: str | None = None, description: str | None = None, parallel_safe: bool = True
) -> Callable[[Callable[..., Any]], Tool]: ...
def tool(
    function: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    parallel_safe: bool = True,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a function a tool: `@tool` or `@tool(name=..., description=..., parallel_safe=...)`.

    The name defaults to the function's, the description to its docstring (without the `Args:` section,
    whose lines describe the parameters).
    """
    if function is not None:
        return Tool(function, name=name, description=description, parallel_safe=parallel_safe)
    return lambda wrapped: Tool(wrapped, name=name, description=description, parallel_safe=parallel_safe)


def _describe(tool_name: str, exc: ValidationError) -> str:
    problems = []
    for problem in exc.errors(include_url=False):
        location = ".".join(str(part) for part in problem["loc"]) or "arguments"
        text = f"{location}: {problem['msg']}"
        if problem["type"] not in ("missing", "extra_forbidden") and not isinstance(problem["input"], dict | list):
            text += f" (got {problem['input']!r})"
        problems.append(text)
    return f"Invalid arguments for {tool_name}: " + "; ".join(problems) + "."


def _split_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The text around an `Args:` section, and each parameter's description in it (Google style)."""
    lines = doc.splitlines()
    start = next((index for index, line in enumerate(lines) if line.strip().lower() in _ARGS_HEADERS), None)
    if start is None:
        return doc.strip(), {}
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or lines[end][:1].isspace()):
        end += 1  # the section runs to the next unindented line
    section = [line for line in lines[start + 1 : end] if line.strip()]
    base = min((len(line) - len(line.lstrip()) for line in section), default=0)
    descriptions: dict[str, str] = {}
    current: str | None = None
    for line in section:
        match = _DOC_PARAM.match(line.strip()) if len(line) - len(line.lstrip()) == base else None
        if match:
            current = match.group(1).lstrip("*")
            descriptions[current] = match.group(2).strip()
        elif current is not None:
            descriptions[current] = f"{descriptions[current]} {line.strip()}".strip()
    return "\n".join(lines[:start] + lines[end:]).strip(), descriptions
