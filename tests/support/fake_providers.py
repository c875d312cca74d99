"""Scripted fakes of two hosted model APIs on one loopback HTTP server: Anthropic's Messages API and Google's Gemini.

Under `/anthropic/v1`: `POST /messages` (JSON, or SSE with `message_start`,
`ping`, `content_block_start`/`_delta`/`_stop` with `text_delta`,
`thinking_delta`, `signature_delta` and `input_json_delta` — tool arguments
split over many deltas — then `message_delta` and `message_stop`),
`POST /messages/count_tokens`, `GET /models`; errors as
`{"type": "error", "error": {"type", "message"}}`. Under `/gemini/v1beta`:
`POST /models/{model}:generateContent`, `:streamGenerateContent?alt=sse`
(`data:` chunks of `GenerateContentResponse`, no end marker) and
`:countTokens`; errors as `{"error": {"code", "message", "status"}}`. Shapes
follow the providers' published API references. Each API checks its own key
header (`x-api-key` + `anthropic-version`, `x-goog-api-key`).

Replies are scripted with the fake model server's types (tests.support.fake_upstream): `Text`, `FunctionCall`,
`Output` (parallel calls), `Reasoning` (thinking with a signature; Gemini: a thought and a `thoughtSignature`
on the part that follows), `Truncated` (the stream cut after `events` frames), plus `ProviderError`.
"""

from __future__ import annotations

import asyncio
import secrets
import threading
from collections import deque
from dataclasses import dataclass
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from tests.support.fake_upstream import Delay, FunctionCall, Output, Reasoning, Text, Truncated, _words
from tests.support.threaded_server import ThreadedServer

ANTHROPIC_KEY = "sk-ant-test-key"
GEMINI_KEY = "AIza-test-key"
ANTHROPIC_MODEL = "claude-test-4"
GEMINI_MODEL = "gemini-test-flash"
ARGUMENT_PIECE = 3  # characters of tool-call JSON per `input_json_delta`
_ANTHROPIC_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                          404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error", 500: "api_error",
                          529: "overloaded_error"}
_GEMINI_STATUSES = {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED",
                    500: "INTERNAL", 503: "UNAVAILABLE"}


@dataclass
class ProviderError:
    """An HTTP error in the provider's own shape; `retry_after` sets the header (a 429's)."""

    status: int
    message: str
    retry_after: str | None = None


Reply = Text | FunctionCall | Output | Reasoning | Truncated | ProviderError | Delay


def _hex(n: int = 8) -> str:
    return secrets.token_hex(n)


def _parts(reply: Any) -> list[Any]:
    if isinstance(reply, Reasoning):
        return [Reasoning(reply.text), reply.then] if reply.then is not None else [Reasoning(reply.text)]
    if isinstance(reply, Output):
        return list(reply.items)
    return [reply]


def _sse(name: str | None, data: dict[str, Any]) -> bytes:
    head = b"event: " + name.encode() + b"\n" if name else b""
    return head + b"data: " + orjson.dumps(data) + b"\n\n"


class FakeProviders:
    """Start with `start()`; `anthropic_url` / `gemini_url` are the base URLs a route names."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.host = host
        self.port = 0
        self.requests: list[dict[str, Any]] = []  # every generation body, in order
        self.paths: list[str] = []  # of each generation request (Gemini's carries the model)
        self.headers: list[dict[str, str]] = []  # of each generation request
        self.count_requests: list[dict[str, Any]] = []
        self.last_signature: str | None = None  # of the last thinking block (Anthropic) or thought (Gemini) given
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._runner: ThreadedServer | None = None
        self.app = Starlette(routes=[
            Route("/anthropic/v1/messages", self._anthropic_messages, methods=["POST"]),
            Route("/anthropic/v1/messages/count_tokens", self._anthropic_count, methods=["POST"]),
            Route("/anthropic/v1/models", self._anthropic_models, methods=["GET"]),
            Route("/gemini/v1beta/models/{action:path}", self._gemini, methods=["POST"]),
        ])

    @property
    def anthropic_url(self) -> str:
        return f"http://{self.host}:{self.port}/anthropic/v1"

    @property
    def gemini_url(self) -> str:
        return f"http://{self.host}:{self.port}/gemini/v1beta"

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    def reset(self) -> None:
        with self._lock:
            self._script.clear()
            self.requests.clear()
            self.paths.clear()
            self.headers.clear()
            self.count_requests.clear()

    async def _take(self, request: Request, payload: dict[str, Any], default: str) -> Reply:
        with self._lock:
            self.requests.append(payload)
            self.paths.append(request.url.path + (f"?{request.url.query}" if request.url.query else ""))
            self.headers.append({name.lower(): value for name, value in request.headers.items()})
            reply: Reply = self._script.popleft() if self._script else Text(f"Echo: {default}")
        while isinstance(reply, Delay):
            await asyncio.sleep(reply.seconds)
            reply = reply.then or Text("Echo")
        return reply

    # -- Anthropic Messages --------------------------------------------------------

    @staticmethod
    def _anthropic_error(status: int, message: str, retry_after: str | None = None) -> Response:
        body = {"type": "error", "error": {"type": _ANTHROPIC_ERROR_TYPES.get(status, "api_error"), "message": message}}
        headers = {"retry-after": retry_after} if retry_after else {}
        return Response(orjson.dumps(body), status_code=status, media_type="application/json", headers=headers)

    def _anthropic_refusal(self, request: Request, payload: Any) -> Response | None:
        if request.headers.get("x-api-key") != ANTHROPIC_KEY:
            return self._anthropic_error(401, "invalid x-api-key")
        if not request.headers.get("anthropic-version"):
            return self._anthropic_error(400, "anthropic-version: header is required")
        if not isinstance(payload, dict) or payload.get("model") != ANTHROPIC_MODEL:
            model = payload.get("model") if isinstance(payload, dict) else None
            return self._anthropic_error(404, f"model: {model}")
        return None

    async def _anthropic_models(self, request: Request) -> Response:
        if request.headers.get("x-api-key") != ANTHROPIC_KEY:
            return self._anthropic_error(401, "invalid x-api-key")
        body = {"data": [{"type": "model", "id": ANTHROPIC_MODEL, "display_name": "Claude Test 4",
                          "created_at": "2025-05-14T00:00:00Z"}], "has_more": False, "first_id": ANTHROPIC_MODEL,
                "last_id": ANTHROPIC_MODEL}
        return Response(orjson.dumps(body), media_type="application/json")

    async def _anthropic_count(self, request: Request) -> Response:
        payload = orjson.loads(await request.body())
        refusal = self._anthropic_refusal(request, payload)
        if refusal is not None:
            return refusal
        with self._lock:
            self.count_requests.append(payload)
        words = sum(len(_words(orjson.dumps(message).decode())) for message in payload.get("messages", []))
        return Response(orjson.dumps({"input_tokens": words}), media_type="application/json")

    async def _anthropic_messages(self, request: Request) -> Response:
        payload = orjson.loads(await request.body())
        refusal = self._anthropic_refusal(request, payload)
        if refusal is not None:
            with self._lock:
                self.requests.append(payload)
                self.headers.append({name.lower(): value for name, value in request.headers.items()})
            return refusal
        reply = await self._take(request, payload, _last_anthropic_text(payload))
        if isinstance(reply, ProviderError):
            return self._anthropic_error(reply.status, reply.message, reply.retry_after)
        message = self._anthropic_message(payload, reply)
        if not payload.get("stream"):
            return Response(orjson.dumps(message), media_type="application/json",
                            headers={"request-id": f"req_{_hex()}"})
        limit = reply.events if isinstance(reply, Truncated) else None
        return StreamingResponse(self._anthropic_events(message, limit), media_type="text/event-stream")

    def _anthropic_message(self, payload: dict[str, Any], reply: Reply) -> dict[str, Any]:
        blocks: list[dict[str, Any]] = []
        words = 0
        incomplete = False
        for part in _parts(reply):
            if isinstance(part, Reasoning):
                self.last_signature = f"EqQB{_hex(24)}=="
                blocks.append({"type": "thinking", "thinking": part.text, "signature": self.last_signature})
            elif isinstance(part, FunctionCall):
                blocks.append({"type": "tool_use", "id": f"toolu_{_hex(12)}", "name": part.name,
                               "input": orjson.loads(part.arguments)})
            elif isinstance(part, (Text, Truncated)):
                blocks.append({"type": "text", "text": part.text})
                incomplete = incomplete or (isinstance(part, Text) and part.incomplete)
            words += len(_words(getattr(part, "text", "") or getattr(part, "arguments", "")))
        stop = "max_tokens" if incomplete else "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
        usage = {"input_tokens": 25, "cache_creation_input_tokens": 3, "cache_read_input_tokens": 5,
                 "output_tokens": max(1, words), "service_tier": "standard"}
        return {"id": f"msg_{_hex(12)}", "type": "message", "role": "assistant", "model": payload["model"],
                "content": blocks, "stop_reason": stop, "stop_sequence": None, "usage": usage}

    @staticmethod
    async def _anthropic_events(message: dict[str, Any], limit: int | None):
        frames = []
        start_usage = {**message["usage"], "output_tokens": 1}
        frames.append(_sse("message_start", {"type": "message_start", "message": {
            **message, "content": [], "stop_reason": None, "stop_sequence": None, "usage": start_usage}}))
        frames.append(_sse("ping", {"type": "ping"}))
        for index, block in enumerate(message["content"]):
            if block["type"] == "text":
                frames.append(_sse("content_block_start", {"type": "content_block_start", "index": index,
                                                           "content_block": {"type": "text", "text": ""}}))
                for piece in _words(block["text"]):
                    frames.append(_sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                                               "delta": {"type": "text_delta", "text": piece}}))
            elif block["type"] == "thinking":
                frames.append(_sse("content_block_start", {"type": "content_block_start", "index": index,
                                                           "content_block": {"type": "thinking", "thinking": "",
                                                                             "signature": ""}}))
                for piece in _words(block["thinking"]):
                    frames.append(_sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                                               "delta": {"type": "thinking_delta", "thinking": piece}}))
                frames.append(_sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {
                    "type": "signature_delta", "signature": block["signature"]}}))
            else:
                frames.append(_sse("content_block_start", {"type": "content_block_start", "index": index,
                                                           "content_block": {**block, "input": {}}}))
                arguments = orjson.dumps(block["input"]).decode()
                for start in range(0, len(arguments), ARGUMENT_PIECE):
                    frames.append(_sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {
                        "type": "input_json_delta", "partial_json": arguments[start:start + ARGUMENT_PIECE]}}))
            frames.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
        frames.append(_sse("message_delta", {"type": "message_delta", "delta": {
            "stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": message["usage"]["output_tokens"]}}))
        frames.append(_sse("message_stop", {"type": "message_stop"}))
        for emitted, frame in enumerate(frames):
            if limit is not None and emitted >= limit:
                return  # the connection ends mid-message
            yield frame

    # -- Gemini --------------------------------------------------------------------

    @staticmethod
    def _gemini_error(status: int, message: str, retry_after: str | None = None) -> Response:
        body = {"error": {"code": status, "message": message, "status": _GEMINI_STATUSES.get(status, "UNKNOWN")}}
        headers = {"retry-after": retry_after} if retry_after else {}
        return Response(orjson.dumps(body), status_code=status, media_type="application/json", headers=headers)

    async def _gemini(self, request: Request) -> Response:
        model, _, action = request.path_params["action"].partition(":")
        payload = orjson.loads(await request.body())
        if request.headers.get("x-goog-api-key") != GEMINI_KEY:
            return self._gemini_error(400, "API key not valid. Please pass a valid API key.")
        if model != GEMINI_MODEL:
            return self._gemini_error(404, f"models/{model} is not found for API version v1beta, or is not "
                                           "supported for generateContent.")
        if action == "countTokens":
            with self._lock:
                self.count_requests.append(payload)
            contents = payload.get("generateContentRequest", {}).get("contents", [])
            words = sum(len(_words(orjson.dumps(content).decode())) for content in contents)
            return Response(orjson.dumps({"totalTokens": words}), media_type="application/json")
        if action not in ("generateContent", "streamGenerateContent"):
            return self._gemini_error(404, f"unknown method {action}")
        reply = await self._take(request, payload, _last_gemini_text(payload))
        if isinstance(reply, ProviderError):
            return self._gemini_error(reply.status, reply.message, reply.retry_after)
        parts, finish_reason, words = self._gemini_parts(reply)
        usage = {"promptTokenCount": 30, "candidatesTokenCount": max(1, words), "cachedContentTokenCount": 4,
                 "thoughtsTokenCount": 6 if any(part.get("thought") for part in parts) else 0}
        usage["totalTokenCount"] = usage["promptTokenCount"] + usage["candidatesTokenCount"] + usage["thoughtsTokenCount"]
        response_id = _hex(12)
        if action == "generateContent":
            body = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": finish_reason,
                                    "index": 0}], "usageMetadata": usage, "modelVersion": GEMINI_MODEL,
                    "responseId": response_id}
            return Response(orjson.dumps(body), media_type="application/json")
        if request.query_params.get("alt") != "sse":
            return self._gemini_error(400, "this fake streams only with alt=sse")
        limit = reply.events if isinstance(reply, Truncated) else None
        return StreamingResponse(self._gemini_chunks(parts, finish_reason, usage, response_id, limit),
                                 media_type="text/event-stream")

    def _gemini_parts(self, reply: Reply) -> tuple[list[dict[str, Any]], str, int]:
        parts: list[dict[str, Any]] = []
        signature: str | None = None
        words = 0
        finish_reason = "STOP"
        for part in _parts(reply):
            if isinstance(part, Reasoning):
                parts.append({"text": part.text, "thought": True})
                signature = self.last_signature = f"CiQB{_hex(24)}"  # on the part that follows the thought
                continue
            if isinstance(part, FunctionCall):
                converted: dict[str, Any] = {"functionCall": {"name": part.name, "args": orjson.loads(part.arguments)}}
            else:
                converted = {"text": part.text}
                if isinstance(part, Text) and part.incomplete:
                    finish_reason = "MAX_TOKENS"
            if signature is not None:
                converted["thoughtSignature"], signature = signature, None
            parts.append(converted)
            words += len(_words(getattr(part, "text", "") or getattr(part, "arguments", "")))
        return parts, finish_reason, words

    @staticmethod
    async def _gemini_chunks(parts: list[dict[str, Any]], finish_reason: str, usage: dict[str, Any], response_id: str,
                             limit: int | None):
        pieces: list[dict[str, Any]] = []
        for part in parts:
            if "text" in part and not part.get("thought") and "thoughtSignature" not in part:
                pieces += [{"text": word} for word in _words(part["text"])]
            else:
                pieces.append(part)  # thoughts, calls and signed parts arrive whole
        chunks = []
        for index, piece in enumerate(pieces):
            chunk: dict[str, Any] = {"candidates": [{"content": {"role": "model", "parts": [piece]}, "index": 0}],
                                     "usageMetadata": {"promptTokenCount": usage["promptTokenCount"],
                                                       "totalTokenCount": usage["promptTokenCount"]},
                                     "modelVersion": GEMINI_MODEL, "responseId": response_id}
            if index == len(pieces) - 1:
                chunk["candidates"][0]["finishReason"] = finish_reason
                chunk["usageMetadata"] = usage
            chunks.append(chunk)
        for emitted, chunk in enumerate(chunks):
            if limit is not None and emitted >= limit:
                return
            yield _sse(None, chunk)

    # -- lifecycle -------------------------------------------------------------

    def start(self) -> FakeProviders:
        self._runner = ThreadedServer(self.app, self.host, self.port, "fake-providers")
        self.port = self._runner.start()
        return self

    def stop(self) -> None:
        if self._runner is not None:
            self._runner.stop()


def _last_anthropic_text(payload: dict[str, Any]) -> str:
    for message in reversed(payload.get("messages") or []):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            return " ".join(block.get("text", "") for block in content if block.get("type") == "text")
    return ""


def _last_gemini_text(payload: dict[str, Any]) -> str:
    for content in reversed(payload.get("contents") or []):
        if content.get("role") == "user":
            return " ".join(part.get("text", "") for part in content.get("parts", []) if "text" in part)
    return ""
