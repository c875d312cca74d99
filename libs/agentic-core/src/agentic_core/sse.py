"""Incremental Server-Sent Events parsing and framing (the WHATWG rules we need).

The parser is fed raw byte chunks as they arrive and yields complete events;
it never waits for the end of the stream.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentic_core.errors import UpstreamUnavailable

DONE = b"[DONE]"


@dataclass(frozen=True, slots=True)
class SseEvent:
    event: str | None
    data: bytes


class SseParser:
    """Feed byte chunks, get complete events. Bounded: one event may not exceed `max_event_bytes`."""

    __slots__ = ("_buffer", "_max_event_bytes", "_pending_cr")

    def __init__(self, max_event_bytes: int = 16 * 1024 * 1024) -> None:
        self._buffer = b""
        self._max_event_bytes = max_event_bytes
        self._pending_cr = False

    def feed(self, chunk: bytes) -> list[SseEvent]:
        if self._pending_cr:
            # A CR ended the previous chunk: if this chunk starts with LF it was a CRLF.
            chunk = b"\r" + chunk
            self._pending_cr = False
        if b"\r" in chunk:
            if chunk.endswith(b"\r"):
                chunk = chunk[:-1]
                self._pending_cr = True
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        buffer = self._buffer + chunk if self._buffer else chunk
        events: list[SseEvent] = []
        start = 0
        while True:
            end = buffer.find(b"\n\n", start)
            if end < 0:
                break
            event = _parse_block(buffer[start:end])
            if event is not None:
                events.append(event)
            start = end + 2
        self._buffer = buffer[start:]
        if len(self._buffer) > self._max_event_bytes:
            raise UpstreamUnavailable(
                f"upstream sent an SSE event larger than {self._max_event_bytes} bytes",
                code="upstream_event_too_large",
            )
        return events

    def close(self) -> list[SseEvent]:
        """End of stream: a final block without its blank line is still an event."""
        rest, self._buffer = self._buffer, b""
        if self._pending_cr:
            self._pending_cr = False
        if not rest.strip(b"\n"):
            return []
        event = _parse_block(rest.rstrip(b"\n"))
        return [event] if event is not None else []


def _parse_block(block: bytes) -> SseEvent | None:
    event_name: str | None = None
    data_lines: list[bytes] = []
    for line in block.split(b"\n"):
        if not line or line.startswith(b":"):
            continue
        field, sep, value = line.partition(b":")
        if sep and value.startswith(b" "):
            value = value[1:]
        if field == b"data":
            data_lines.append(value)
        elif field == b"event":
            event_name = value.decode("utf-8", "replace")
        # `id` and `retry` carry nothing we use.
    if not data_lines:
        return None
    data = data_lines[0] if len(data_lines) == 1 else b"\n".join(data_lines)
    return SseEvent(event_name, data)


def frame(event_type: str | bytes, data: bytes) -> bytes:
    """One SSE frame with `\\n` line endings, ready for a single write."""
    if isinstance(event_type, str):
        event_type = event_type.encode()
    return b"event: " + event_type + b"\ndata: " + data + b"\n\n"
