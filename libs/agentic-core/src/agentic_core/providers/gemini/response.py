"""A Gemini `GenerateContentResponse` → the Responses object vLLM's /v1/responses returns for the same generation.

Parts of the first candidate, in order: thought parts (`thought: true`) → a
reasoning item's text; text parts → one message item (consecutive ones
joined); `functionCall` → a function call (`args` as JSON arguments, Gemini's
`id` as the call id when it gives one). A part's `thoughtSignature` becomes a
reasoning item `gemini.signature.<signature>` placed right before the item of
that part (on the reasoning item already there, if one is), which the request
adapter gives back on the same part. `finishReason`: `MAX_TOKENS` ends
incomplete (`max_output_tokens`), safety and recitation stops incomplete
(`content_filter`), a malformed or unexpected call failed, the rest completed;
a prompt blocked before any candidate is incomplete (`content_filter`). Usage:
`promptTokenCount` (+ tool-use prompt tokens) in, `candidatesTokenCount` +
`thoughtsTokenCount` out, `cachedContentTokenCount` cached, thoughts as reasoning.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from agentic_core.chat.response import function_call_item, message_item, output_text_part, response_object
from agentic_core.errors import UpstreamUnavailable
from agentic_core.ids import new_id, new_item_id, new_response_id
from agentic_core.providers.common import count, invalid_reply, usage
from agentic_core.providers.events import reasoning_output_item
from agentic_core.providers.gemini.request import SIGNATURE_PREFIX

PROVIDER = "Gemini"
STREAM_ERROR_CODE = "upstream_stream_error"
_FILTERED = frozenset({"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "LANGUAGE"})
_FAILED = frozenset({"MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS"})


def status_for(finish_reason: str | None, blocked: bool = False
               ) -> tuple[str, dict[str, Any] | None, dict[str, Any] | None]:
    """(status, incomplete_details, error) of a generation that ended with `finish_reason`."""
    if blocked or finish_reason in _FILTERED:
        return "incomplete", {"reason": "content_filter"}, None
    if finish_reason == "MAX_TOKENS":
        return "incomplete", {"reason": "max_output_tokens"}, None
    if finish_reason in _FAILED:
        return "failed", None, {"code": "server_error",
                                "message": f"The model server ended the generation with '{finish_reason}'."}
    return "completed", None, None


def usage_from_gemini(raw: Any) -> dict[str, Any] | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise invalid_reply(PROVIDER, "`usageMetadata` is not an object")
    thoughts = count(raw.get("thoughtsTokenCount"), PROVIDER)
    prompt = count(raw.get("promptTokenCount"), PROVIDER) + count(raw.get("toolUsePromptTokenCount"), PROVIDER)
    return usage(prompt, count(raw.get("candidatesTokenCount"), PROVIDER) + thoughts,
                 cached=count(raw.get("cachedContentTokenCount"), PROVIDER), reasoning=thoughts)


def raise_if_error(chunk: dict[str, Any]) -> None:
    error = chunk.get("error")
    if isinstance(error, dict):
        raise UpstreamUnavailable(f"The model server failed mid-stream: {error.get('message') or error}",
                                  code=STREAM_ERROR_CODE)


@dataclass(frozen=True, slots=True)
class Piece:
    """One part of a candidate, as the output it adds: `kind` is thought, text, call or signature."""

    kind: str
    text: str = ""
    name: str = ""
    call_id: str | None = None


def candidate_of(chunk: Any) -> tuple[dict[str, Any] | None, bool]:
    """(the first candidate, whether the prompt was blocked)."""
    if not isinstance(chunk, dict):
        raise invalid_reply(PROVIDER, "the body is not a JSON object")
    raise_if_error(chunk)
    candidates = chunk.get("candidates")
    feedback = chunk.get("promptFeedback")
    blocked = isinstance(feedback, dict) and feedback.get("blockReason") is not None
    if candidates is None:
        return None, blocked
    if not isinstance(candidates, list) or not all(isinstance(entry, dict) for entry in candidates):
        raise invalid_reply(PROVIDER, "`candidates` is not an array of objects")
    return (candidates[0] if candidates else None), blocked


def pieces(candidate: dict[str, Any]) -> Iterator[Piece]:
    """The candidate's parts as output pieces; a signature comes before the piece of its part."""
    content = candidate.get("content")
    parts = content.get("parts") if isinstance(content, dict) else None
    if parts is None:
        return
    if not isinstance(parts, list) or not all(isinstance(part, dict) for part in parts):
        raise invalid_reply(PROVIDER, "`content.parts` is not an array of objects")
    for part in parts:
        signature = part.get("thoughtSignature")
        if isinstance(signature, str) and signature:
            yield Piece("signature", SIGNATURE_PREFIX + signature)
        call = part.get("functionCall")
        if isinstance(call, dict):
            name = call.get("name")
            if not isinstance(name, str) or not name:
                raise invalid_reply(PROVIDER, "a functionCall has no name")
            args = call.get("args")
            call_id = call.get("id")
            yield Piece("call", orjson.dumps(args if args is not None else {}).decode(), name,
                        call_id if isinstance(call_id, str) and call_id else None)
        elif isinstance(part.get("text"), str):
            yield Piece("thought" if part.get("thought") is True else "text", part["text"])


def response_from_gemini(reply: Any, request: dict[str, Any]) -> dict[str, Any]:
    """A non-streaming `generateContent` reply → a Responses response object echoing `request`."""
    candidate, blocked = candidate_of(reply)
    output: list[dict[str, Any]] = []
    for piece in pieces(candidate or {}):
        last = output[-1] if output else None
        if piece.kind in ("thought", "signature"):
            if last is None or last["type"] != "reasoning" or (piece.kind == "thought" and "encrypted_content" in last):
                last = reasoning_output_item(new_item_id("reasoning"), "", None, "completed")
                output.append(last)
            if piece.kind == "signature":
                last["encrypted_content"] = piece.text
            elif piece.text:
                last["content"] = [{"text": _reasoning_text(last) + piece.text, "type": "reasoning_text"}]
        elif piece.kind == "text":
            if last is not None and last["type"] == "message":
                last["content"][0]["text"] += piece.text
            elif piece.text or last is None or last["type"] != "reasoning":
                output.append(message_item(new_item_id("message"), [output_text_part(piece.text, [])], "completed"))
        else:
            output.append(function_call_item(new_item_id("function_call"), piece.call_id or new_id("call"), piece.name,
                                             piece.text, "completed"))
    finish_reason = candidate.get("finishReason") if candidate else None
    status, incomplete_details, error = status_for(finish_reason if isinstance(finish_reason, str) else None, blocked)
    if status != "failed" and not any(item["type"] in ("message", "function_call") for item in output):
        output.append(message_item(new_item_id("message"), [output_text_part("", [])], "completed"))
    if status == "incomplete" and output:
        output[-1]["status"] = "incomplete"
    return response_object(
        request, response_id=new_response_id(), created_at=int(time.time()), model=None, status=status,
        output=output, usage=usage_from_gemini(reply.get("usageMetadata")), incomplete_details=incomplete_details,
        error=error,
    )


def _reasoning_text(item: dict[str, Any]) -> str:
    content = item.get("content")
    return str(content[0].get("text") or "") if isinstance(content, list) and content else ""
