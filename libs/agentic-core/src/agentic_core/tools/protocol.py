"""What crosses NATS JetStream for a gateway-owned tool call: the `ToolCall` and `ToolResult` payloads.

The executor publishes a `ToolCall`; a runner answers on the message's reply
subject with a `ToolResult`. Both are JSON. A call carries its deadline: a
runner that receives it too late drops it without running it. The names on
the wire (stream, subjects, headers, consumers, keys) are agentic_runtime.tools.protocol's.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import orjson

ResultStatus = Literal["ok", "hint", "error"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    call_id: str               # the model's call id; results are deduplicated on it
    kind: str                  # web_search | code_interpreter | shell | operator | mcp
    tool: str                  # the tool's name (an operator tool's own name; the kind for built-ins)
    arguments: dict[str, Any]  # what the model asked for
    params: dict[str, Any] = field(default_factory=dict)  # from the request's tool declaration
    deadline: float = 0.0      # epoch seconds; past it the call must not run
    tenant: str = ""
    trace: dict[str, str] = field(default_factory=dict)   # W3C trace context

    def to_json(self) -> bytes:
        return orjson.dumps(asdict(self))

    @classmethod
    def from_json(cls, data: bytes) -> ToolCall:
        raw = orjson.loads(data)
        return cls(**{key: raw[key] for key in cls.__dataclass_fields__ if key in raw})

    def expired(self, now: float | None = None) -> bool:
        return self.deadline > 0 and (now if now is not None else time.time()) >= self.deadline

    def seconds_left(self) -> float:
        return max(0.0, self.deadline - time.time()) if self.deadline else float("inf")


@dataclass(frozen=True, slots=True)
class ToolResult:
    """One of three outcomes, rendered to the model in one form (see `render_for_model`).

    ok: `content` is the data (text or JSON-able). hint: `content` is a correction
    the model can act on, with `alternatives`. error: `content` says what failed.
    `details` feeds the public output item (sources, executed code's outputs, ...).
    """

    call_id: str
    status: ResultStatus
    content: Any
    alternatives: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> bytes:
        return orjson.dumps(asdict(self))

    @classmethod
    def from_json(cls, data: bytes) -> ToolResult:
        raw = orjson.loads(data)
        return cls(**{key: raw[key] for key in cls.__dataclass_fields__ if key in raw})

    @classmethod
    def ok(cls, call_id: str, content: Any, **details: Any) -> ToolResult:
        return cls(call_id, "ok", content, details=details)

    @classmethod
    def hint(cls, call_id: str, message: str, alternatives: list[str] | None = None) -> ToolResult:
        return cls(call_id, "hint", message, alternatives=alternatives or [])

    @classmethod
    def error(cls, call_id: str, message: str, **details: Any) -> ToolResult:
        return cls(call_id, "error", message, details=details)


def render_for_model(result: ToolResult) -> str:
    """The function_call_output text the model reads, the same shape for every tool."""
    if result.status == "ok":
        return result.content if isinstance(result.content, str) else orjson.dumps(result.content).decode()
    if result.status == "hint":
        text = f"Hint: {result.content}"
        if result.alternatives:
            text += "\nAlternatives: " + "; ".join(result.alternatives)
        return text
    return f"Error: {result.content}"
