"""What a relayed Responses model server leaves out or sends as null, filled in to the Open Responses schemas.

A `store: false` request that needs no state goes to the model server byte for
byte, and its reply comes back the same way. Servers differ in what they put on
response objects (vLLM 0.32 sends `text: null`, `top_logprobs: null`, no
`completed_at`, `store`, `error`, `safety_identifier` nor `prompt_cache_key`, and
`phase: null` on messages), so the few events that carry a response, an item or
a content part are conformed here; deltas, which are nearly all of a stream's
events, are recognised from their first bytes and relayed untouched.
"""

from __future__ import annotations

from typing import Any

import orjson

from agentic_core.responses.response import echoed_tool, normalize_content_part, normalize_usage, strip_server_nulls

# Events whose data holds an object to conform, by the key it is under.
_CONFORMED_KEYS = {
    "response.created": "response", "response.in_progress": "response", "response.queued": "response",
    "response.completed": "response", "response.incomplete": "response", "response.failed": "response",
    "response.output_item.added": "item", "response.output_item.done": "item",
    "response.content_part.added": "part", "response.content_part.done": "part",
}
_CONFORMED_EVENT_LINES = tuple(f"event: {name}\n".encode() for name in _CONFORMED_KEYS)
# A frame without an `event:` line is looked into only when its data may hold such an object.
_OBJECT_MARKERS = (b'"response":', b'"item":', b'"part":')
_FINISHED = frozenset({"completed", "incomplete", "failed", "cancelled"})
# The request's own values for fields a server may not echo.
_ECHOED_FIELDS = ("prompt_cache_key", "safety_identifier", "instructions", "max_output_tokens", "max_tool_calls")


class RelayedShape:
    """What one relayed request fills into the response objects its server sends (`store: false`: not stored)."""

    __slots__ = ("echoed", "now", "previous_response_id")

    def __init__(self, request: dict[str, Any], now: int, previous_response_id: str | None = None) -> None:
        self.echoed = {field: request.get(field) for field in _ECHOED_FIELDS}
        self.now = now  # completed_at of a finished response the server did not time
        # A WebSocket continuation reaches the server with its history inlined: the client named this parent.
        self.previous_response_id = previous_response_id

    def response(self, response: dict[str, Any]) -> dict[str, Any]:
        """The response object with every field the specification requires, each of its type."""
        fixed = dict(response)
        for field, value in self.echoed.items():
            if fixed.get(field) is None:
                fixed[field] = value
        if self.previous_response_id is not None:
            fixed["previous_response_id"] = self.previous_response_id
        status = fixed.get("status")
        if fixed.get("completed_at") is None:
            fixed["completed_at"] = self.now if status in _FINISHED and status != "failed" else None
        for field in ("error", "incomplete_details", "previous_response_id", "reasoning"):
            fixed.setdefault(field, None)
        _default(fixed, "object", "response")
        _default(fixed, "output", [])
        _default(fixed, "tool_choice", "auto")
        _default(fixed, "truncation", "disabled")
        _default(fixed, "parallel_tool_calls", True)
        _default(fixed, "top_p", 1.0)
        _default(fixed, "temperature", 1.0)
        _default(fixed, "presence_penalty", 0.0)
        _default(fixed, "frequency_penalty", 0.0)
        _default(fixed, "top_logprobs", 0)
        _default(fixed, "background", False)
        _default(fixed, "service_tier", "default")
        _default(fixed, "metadata", {})
        fixed["store"] = False
        if not isinstance(fixed.get("text"), dict):
            fixed["text"] = {"format": {"type": "text"}}
        tools = fixed.get("tools")
        fixed["tools"] = [echoed_tool(tool) for tool in tools if isinstance(tool, dict)] if isinstance(tools, list) else []
        output = fixed["output"]
        if isinstance(output, list):
            fixed["output"] = [conform_item(item) if isinstance(item, dict) else item for item in output]
        try:
            fixed["usage"] = normalize_usage(fixed.get("usage")) if isinstance(fixed.get("usage"), dict) else None
        except (TypeError, ValueError):
            fixed["usage"] = None
        return fixed

    def event(self, event_type: str, data: bytes) -> bytes:
        """One event's data, conformed when it carries a response, an item or a part; else the same bytes."""
        key = _CONFORMED_KEYS.get(event_type)
        if key is None and (event_type or not any(marker in data for marker in _OBJECT_MARKERS)):
            return data
        try:
            payload = orjson.loads(data)
        except orjson.JSONDecodeError:
            return data
        if not isinstance(payload, dict):
            return data
        key = key or _CONFORMED_KEYS.get(payload.get("type"))  # type: ignore[arg-type]
        inner = payload.get(key) if key else None
        if not isinstance(inner, dict):
            return data
        if key == "response":
            payload[key] = self.response(inner)
        elif key == "item":
            payload[key] = conform_item(inner)
        else:
            payload[key] = normalize_content_part(inner)
        return orjson.dumps(payload)

    def body(self, content: bytes) -> bytes:
        """A whole JSON response body."""
        try:
            payload = orjson.loads(content)
        except orjson.JSONDecodeError:
            return content
        return orjson.dumps(self.response(payload)) if isinstance(payload, dict) else content


def conform_item(item: dict[str, Any]) -> dict[str, Any]:
    """An output item as the schemas want it: no server-only nulls, text parts with `annotations` and `logprobs`."""
    fixed = strip_server_nulls(item)
    if fixed.get("type") == "message" and isinstance(fixed.get("content"), list):
        fixed["content"] = [normalize_content_part(part) if isinstance(part, dict) else part for part in fixed["content"]]
    return fixed


def _has_unnamed_frame(frames: bytes) -> bool:
    return frames.startswith(b"data:") or b"\n\ndata:" in frames


def _default(response: dict[str, Any], field: str, value: Any) -> None:
    if response.get(field) is None:
        response[field] = value


class ConformingSseRelay:
    """A relayed SSE stream, frame by frame: a frame is passed on as it came unless its event carries an object
    to conform (its `event:` line says so, or for a frame without one, its data may). LF framing, as the
    specification asks; a server's CRLF is turned into LF."""

    __slots__ = ("_buffer", "_shape")

    def __init__(self, shape: RelayedShape) -> None:
        self._shape = shape
        self._buffer = b""

    def feed(self, chunk: bytes) -> bytes:
        pending_cr = self._buffer.endswith(b"\r")
        buffer = self._buffer + chunk if self._buffer else chunk
        if pending_cr or b"\r" in chunk:
            # A CR at the end may be half of a CRLF whose LF comes next: it waits in the buffer.
            buffer = buffer.replace(b"\r\n", b"\n")
        end = buffer.rfind(b"\n\n")
        if end < 0:
            self._buffer = buffer
            return b""
        self._buffer = buffer[end + 2:]
        complete = buffer[:end + 2] if self._buffer else buffer
        if complete.find(b"\n\n") == end:  # one frame, as servers write their events: named or not, one lookup
            return self._frame(complete[:-2], complete)
        if not any(line in complete for line in _CONFORMED_EVENT_LINES) and not _has_unnamed_frame(complete):
            return complete  # deltas only, each frame named by its `event:` line
        return b"".join(self._frame(frame) for frame in complete[:-2].split(b"\n\n"))

    def close(self) -> bytes:
        rest, self._buffer = self._buffer.replace(b"\r", b"\n"), b""
        return self._frame(rest.rstrip(b"\n")) if rest.strip() else rest

    def _frame(self, frame: bytes, framed: bytes | None = None) -> bytes:
        """One frame without its blank line; `framed`: the same with it, when the caller has it (no copy)."""
        as_it_came = framed if framed is not None else frame + b"\n\n"
        event_type = ""
        data_start = 0
        if frame.startswith(b"event:"):
            line_end = frame.find(b"\n")
            if line_end < 0:
                return as_it_came
            event_type = frame[6:line_end].strip().decode(errors="replace")
            if event_type not in _CONFORMED_KEYS:
                return as_it_came  # a delta, or another event that carries no object: nearly every frame
            data_start = line_end + 1
        if not frame.startswith(b"data: ", data_start) or frame.find(b"\n", data_start) >= 0:
            return as_it_came  # a comment, a multi-line data or another shape: relayed as it is
        data = frame[data_start + 6:]
        conformed = self._shape.event(event_type, data)
        if conformed is data:
            return as_it_came
        return frame[:data_start] + b"data: " + conformed + b"\n\n"
