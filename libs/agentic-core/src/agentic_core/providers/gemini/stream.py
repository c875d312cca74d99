"""Gemini's `streamGenerateContent?alt=sse` chunks → the Responses events vLLM's /v1/responses sends for the same
generation.

Each chunk is a `GenerateContentResponse` holding the next parts: thought text
continues the open reasoning item, text the open message, a `functionCall`
arrives whole (one arguments delta); a part's `thoughtSignature` lands on a
reasoning item right before that part's item, as on the JSON path. Usage is
cumulative (the last chunk's counts). Gemini sends no end marker: the terminal
event is written at the end of the stream, once a chunk gave a `finishReason`;
a stream cut before one has no terminal event.
"""

from __future__ import annotations

from typing import Any

from agentic_core.json_types import Event
from agentic_core.providers.events import ResponsesEventWriter
from agentic_core.providers.gemini.response import candidate_of, pieces, status_for, usage_from_gemini


class GeminiStreamTranslator:
    """Feed parsed chunks to `translate`, then call `finish` at the end of the stream."""

    def __init__(self, request: dict[str, Any]) -> None:
        self._writer = ResponsesEventWriter(request)
        self._usage: dict[str, Any] | None = None
        self._finish_reason: str | None = None
        self._blocked = False
        self._last_kind: str | None = None

    def translate(self, chunk: dict[str, Any]) -> list[Event]:
        if self._writer.finished:
            return []
        candidate, blocked = candidate_of(chunk)
        self._blocked = self._blocked or blocked
        events = [] if self._writer.started else self._writer.start()
        if isinstance(chunk.get("usageMetadata"), dict):
            self._usage = usage_from_gemini(chunk["usageMetadata"])
        if candidate is None:
            return events
        for piece in pieces(candidate):
            if piece.kind == "signature":
                # The signature of the part that follows: on the reasoning item open just before it, else on its own.
                events += self._writer.reasoning_blob(piece.text, new_item=self._last_kind != "thought")
            elif piece.kind == "thought":
                if self._last_kind == "signature":
                    events += self._writer.close()
                events += self._writer.reasoning(piece.text)
            elif piece.kind == "text":
                if piece.text or self._last_kind != "signature":
                    events += self._writer.text(piece.text)
            else:
                events += self._writer.call(piece.name, piece.call_id)
                events += self._writer.arguments(piece.text)
                events += self._writer.close()
            self._last_kind = piece.kind
        finish_reason = candidate.get("finishReason")
        if isinstance(finish_reason, str) and finish_reason:
            self._finish_reason = finish_reason
        return events

    def finish(self) -> list[Event]:
        """End of stream: the terminal event if a chunk ended the generation; [] if the stream was cut."""
        if self._writer.finished or (self._finish_reason is None and not self._blocked):
            return []
        status, incomplete_details, error = status_for(self._finish_reason, self._blocked)
        return self._writer.finish(status, usage=self._usage, incomplete_details=incomplete_details, error=error)
