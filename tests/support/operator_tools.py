"""Operator tools the end-to-end tests' tool runner loads (AGENTIC_TOOL_RUNNER_OPERATOR_MODULES)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agentic_tools import hint, ok, tool


@tool
def echo(text: str) -> dict:
    """Repeat the text back."""
    return ok({"echoed": text})


@tool
async def slow(seconds: float) -> str:
    """Wait, then answer."""
    await asyncio.sleep(seconds)
    return "finally"


@tool
def always_fails(reason: str) -> str:
    """A tool that breaks."""
    raise RuntimeError(f"broken on purpose: {reason}")


@tool
def pick_color(color: str) -> str:
    """Choose a color the shop stocks."""
    if color not in ("red", "blue"):
        return hint(f"{color!r} is not stocked", alternatives=["red", "blue"])
    return f"{color} chosen"


@tool(parallel_safe=False)
async def append_marker(path: str, marker: str, seconds: float = 0.0) -> str:
    """Wait, then append a line to a file: a visible side effect for at-most-once checks."""
    await asyncio.sleep(seconds)
    with Path(path).open("a") as handle:
        handle.write(marker + "\n")
    return "appended"
