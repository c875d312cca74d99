"""Usage of the turns the gateway relays itself (pass-through), read from the relayed bytes without parsing them:
a JSON body's last `usage` object, found from its end; a stream's first chunk (Anthropic's `message_start`
carries the input tokens) and its last bytes (the terminal event carries the rest)."""

from __future__ import annotations

from collections import deque
from typing import Any

from agentic.v1 import common_pb2
from agentic_core.usage.turn_usage import first_usage_object, last_usage_object, merged_stream_usage, usage_of
from agentic_runtime.state.usage import UsageRecorder

HEAD_BYTES = 8 * 1024
TAIL_BYTES = 16 * 1024  # the terminal event's usage sits near its end; a usage object is a few hundred bytes
TERMINAL_EVENTS = frozenset({"response.completed", "response.incomplete", "response.failed"})


class UsageTap:
    """One relayed reply. Costs a deque append per chunk; the bytes are looked at once, at the end."""

    def __init__(self, recorder: UsageRecorder, principal: common_pb2.Principal, model: str) -> None:
        self.recorder, self.principal, self.model = recorder, principal, model
        self._head: bytes | None = None
        self._tail: deque[bytes] = deque()
        self._tail_bytes = 0
        self._done = False

    def body(self, content: bytes) -> None:
        """A whole JSON body (or one terminal event's data)."""
        self._record(last_usage_object(content))

    def chunk(self, chunk: bytes) -> None:
        if self._head is None:
            self._head = chunk[:HEAD_BYTES]
        self._tail.append(chunk)
        self._tail_bytes += len(chunk)
        while self._tail_bytes - len(self._tail[0]) >= TAIL_BYTES:
            self._tail_bytes -= len(self._tail.popleft())

    def end(self) -> None:
        """The stream ended: its usage is the tail's last, completed by the head's first (Anthropic's
        `message_start`; a short stream may arrive whole in its first chunk)."""
        tail = last_usage_object(b"".join(self._tail)) if self._tail else None
        head = first_usage_object(self._head) if self._head else None
        self._record(merged_stream_usage(head, tail))

    def _record(self, usage: dict[str, Any] | None) -> None:
        if not self._done:  # a reply counts once
            self._done = True
            self.recorder.record(self.principal, self.model, usage_of(usage))
