"""Finding tools: in a module, behind an entry point of group `agentic.tools`, or by a `module[:attribute]` name."""

from __future__ import annotations

import importlib
import importlib.metadata
from types import ModuleType
from typing import Any

from agentic_tools._tool import Tool

ENTRY_POINT_GROUP = "agentic.tools"


def tools_in(target: Any, origin: str) -> list[Tool]:
    """The tools a module defines or imports, a single tool, or a list of tools."""
    if isinstance(target, Tool):
        return [target]
    if isinstance(target, ModuleType):
        return _unique(value for value in vars(target).values() if isinstance(value, Tool))
    if isinstance(target, list | tuple) and all(isinstance(item, Tool) for item in target):
        return _unique(target)
    raise TypeError(f"{origin} names {type(target).__name__}, not a module, a tool or a list of tools")


def load_reference(reference: str) -> list[Tool]:
    """`package.module` (every tool in it) or `package.module:attribute` (a tool or a list of tools)."""
    module_name, _, attribute = reference.strip().partition(":")
    target: Any = importlib.import_module(module_name)
    for part in filter(None, attribute.split(".")):
        target = getattr(target, part)
    return tools_in(target, reference)


def entry_point_tools(group: str = ENTRY_POINT_GROUP) -> list[Tool]:
    """Every tool that installed distributions declare in `group`, in the order the entry points are listed."""
    tools: list[Tool] = []
    for entry_point in importlib.metadata.entry_points(group=group):
        tools.extend(tools_in(entry_point.load(), f"entry point {entry_point.name!r} ({entry_point.value})"))
    return _unique(tools)


def _unique(tools: Any) -> list[Tool]:
    seen: dict[int, Tool] = {}
    for item in tools:
        seen.setdefault(id(item), item)
    return list(seen.values())
