"""A scripted fake model server: a real HTTP server on loopback speaking vLLM 0.32's wire format.

Shapes, field sets, event order and error bodies follow the captures in
tests/fixtures (recorded from a real vLLM). Tests script replies with
`FakeUpstream.script(...)` and read what the server received in `.requests`.

For real agent clients (Codex CLI, Claude Code), which send requests of their own besides the turn's:
`EchoToolOutput(prefix)` answers with the last tool output the request carries (`function_call_output`,
Messages `tool_result`, a chat `tool` message), and `script(..., when=declares_tools)` lets only the
requests that match take the scripted replies; the others get the unscripted default answer.
Run standalone for benchmarks: `python -m tests.support.fake_upstream --port 8000`.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import threading
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import orjson
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Mount, Route

from tests.support.threaded_server import ThreadedServer

SERVED_MODEL = "smollm2"
# Asked for this model, `/v1/embeddings` answers as an embedding model would (vLLM's shape): a deterministic unit
# vector per input from its words, so that texts sharing words are near; past EMBEDDING_WINDOW words, a 400 as vLLM
# gives beyond max_model_len. Other models get the short placeholder vectors the pass-through tests check.
EMBEDDING_MODEL = "fake-embedder"
EMBEDDING_DIMENSIONS = 64
EMBEDDING_WINDOW = 256


def hashed_embedding(text: str, dimensions: int = EMBEDDING_DIMENSIONS) -> list[float]:
    """A bag of words hashed into `dimensions` buckets, normalised (crc32: the same in every process)."""
    import math
    import re
    import zlib

    vector = [0.0] * dimensions
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        vector[zlib.crc32(word.encode()) % dimensions] += 1.0
    norm = math.sqrt(sum(value * value for value in vector)) or 1.0
    return [value / norm for value in vector]
# How servers without a route answer it: FastAPI (vLLM, SGLang), OpenAI's API, llama.cpp's server.
UNKNOWN_ROUTE_PREFIXES = {"fastapi": "/no-messages", "openai": "/openai-like", "llama-cpp": "/llama-cpp"}
UNKNOWN_ROUTE_BODIES = {
    "fastapi": b'{"detail":"Not Found"}',
    "openai": b'{"error":{"message":"Invalid URL ({route})","type":"invalid_request_error","param":null,"code":null}}',
    "llama-cpp": b'{"error":{"code":404,"message":"File Not Found","type":"not_found_error"}}',
}


async def _malformed(request: Request, exc: Exception) -> Response:
    """A body the fake cannot read is refused as a real model server refuses it (a fuzzed pass-through body)."""
    body = {"error": {"message": f"malformed request: {type(exc).__name__}", "type": "BadRequestError", "param": None,
                      "code": 400}}
    return Response(orjson.dumps(body), status_code=400, media_type="application/json")


@dataclass
class Text:
    """An assistant message; `incomplete=True` ends it like a `max_output_tokens` cut."""

    text: str
    incomplete: bool = False


@dataclass
class FunctionCall:
    name: str
    arguments: str


@dataclass
class HttpError:
    status: int
    message: str
    error_type: str = "BadRequestError"
    param: str | None = None


@dataclass
class Truncated:
    """A stream that stops after `events` events, without a terminal event."""

    text: str
    events: int = 4


@dataclass
class MalformedSse(Truncated):
    """A stream that sends `events` good events, then a frame whose data is not JSON, and stops."""


@dataclass
class Stalled(Truncated):
    """A stream that sends `events` events, then goes quiet for `seconds` (a model still generating) and stops."""

    seconds: float = 5.0


@dataclass
class Delay:
    """Wait before answering (to provoke timeouts)."""

    seconds: float
    then: Any = None


@dataclass
class Reasoning:
    """The model's reasoning (vLLM with a reasoning parser), then `then`: on /v1/responses a `reasoning` item (its
    `reasoning_text` events first when streamed) before the answer's; on /v1/chat/completions the message's
    `reasoning` (its `reasoning` deltas first). Inside `Output`, a reasoning item alone."""

    text: str
    then: Text | FunctionCall | None = None


@dataclass
class Output:
    """Several output items in one generation, in order (e.g. text then calls). /v1/responses only."""

    items: list[Text | FunctionCall | Reasoning]


@dataclass
class EchoToolOutput:
    """An assistant message: `prefix` + the last tool output in the request (empty when there is none)."""

    prefix: str = ""


Reply = Text | FunctionCall | HttpError | Truncated | Delay | Output | EchoToolOutput | Reasoning
ScriptFilter = Callable[[dict[str, Any]], bool]


def declares_tools(request: dict[str, Any]) -> bool:
    """A `script(..., when=...)` filter: the request declares tools (an agent's turn, not a side request)."""
    return bool(request.get("tools"))


def _hex(n: int = 8) -> str:
    return secrets.token_hex(n)


def _usage(input_tokens: int, output_tokens: int) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0, "input_tokens_per_turn": [], "cached_tokens_per_turn": []},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0, "tool_output_tokens": 0, "output_tokens_per_turn": [], "tool_output_tokens_per_turn": []},
        "total_tokens": input_tokens + output_tokens,
    }


def _response_object(request: dict[str, Any], response_id: str, status: str, output: list, usage: dict | None) -> dict[str, Any]:
    return {
        "id": response_id, "created_at": int(time.time()),
        "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
        "instructions": request.get("instructions"), "metadata": None, "model": request.get("model"),
        "object": "response", "output": output, "parallel_tool_calls": True,
        "temperature": float(request.get("temperature", 1.0)), "tool_choice": request.get("tool_choice", "none" if not request.get("tools") else "auto"),
        "tools": request.get("tools", []), "top_p": 1.0, "background": False,
        "max_output_tokens": request.get("max_output_tokens"), "max_tool_calls": None, "previous_response_id": None,
        "prompt": None, "reasoning": None, "service_tier": "auto", "status": status, "text": None, "top_logprobs": None,
        "truncation": "disabled", "usage": usage, "user": None, "presence_penalty": 0.0, "frequency_penalty": 0.0,
        "kv_transfer_params": None, "ec_transfer_params": None, "input_messages": None, "output_messages": None,
    }


def _words(text: str) -> list[str]:
    pieces, current = [], ""
    for char in text:
        if char in " ,.!?" and current:
            pieces.append(current)
            current = ""
        current += char
    if current:
        pieces.append(current)
    return pieces or [""]


def _last_user_text(request: dict[str, Any]) -> str:
    raw = request.get("input")
    if isinstance(raw, str):
        return raw
    for item in reversed(raw or []):
        if item.get("role") == "user":
            content = item.get("content")
            if isinstance(content, str):
                return content
            return " ".join(part.get("text", "") for part in content or [] if isinstance(part, dict))
    return ""


def _last_chat_user_text(request: dict[str, Any]) -> str:
    for message in reversed(request.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            return " ".join(part.get("text", "") for part in content or [] if isinstance(part, dict))
    return ""


def _chat_usage(prompt_tokens: int, completion_tokens: int) -> dict[str, Any]:
    return {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens + completion_tokens,
            "completion_tokens": completion_tokens}


def _last_item_type(request: dict[str, Any]) -> str | None:
    raw = request.get("input")
    return raw[-1].get("type") if isinstance(raw, list) and raw and isinstance(raw[-1], dict) else None


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(_text_of(part) for part in content)
    if isinstance(content, dict):
        return str(content.get("text") or content.get("output") or _text_of(content.get("content")))
    return ""


def last_tool_output(request: dict[str, Any]) -> str:
    """The last tool result a request carries, in any of the three wire formats."""
    raw = request.get("input")
    for item in reversed(raw if isinstance(raw, list) else []):
        if isinstance(item, dict) and item.get("type") == "function_call_output":
            return _text_of(item.get("output"))
    for message in reversed(request.get("messages") or []):
        if not isinstance(message, dict):
            continue
        if message.get("role") == "tool":
            return _text_of(message.get("content"))
        blocks = message.get("content")
        for block in reversed(blocks if isinstance(blocks, list) else []):
            if isinstance(block, dict) and block.get("type") == "tool_result":
                return _text_of(block.get("content"))
    return ""


def _resolved(reply: Reply, request: dict[str, Any]) -> Reply:
    return Text(reply.prefix + last_tool_output(request)) if isinstance(reply, EchoToolOutput) else reply


def _error_body(reply: HttpError) -> bytes:
    return orjson.dumps({"error": {"message": reply.message, "type": reply.error_type, "param": reply.param, "code": reply.status}})


class FakeUpstream:
    """Start with `start()`; `base_url` ends in `/v1` like a real OpenAI-compatible server."""

    def __init__(
        self, host: str = "127.0.0.1", port: int = 0, served_model: str = SERVED_MODEL, latency: float = 0.0,
        call_tools: bool = False,
    ) -> None:
        self.host = host
        self.port = port
        self.served_model = served_model
        self.call_tools = call_tools  # unscripted: call the first declared tool once, then answer
        self.latency = latency  # added to every generation, like a real model's time to first token
        self.requests: list[dict[str, Any]] = []
        self.tokenize_requests: list[dict[str, Any]] = []
        self.embedding_requests: list[dict[str, Any]] = []  # those for EMBEDDING_MODEL (retrieval's ingestion)
        self.embeddings_failing = False  # EMBEDDING_MODEL answers 503 while set
        self.headers: list[dict[str, str]] = []  # of each generation request, in order
        self._script: deque[tuple[ScriptFilter | None, Reply]] = deque()
        self._lock = threading.Lock()
        self._runner: ThreadedServer | None = None
        self.route_misses: Counter[str] = Counter()  # requests to an unknown route, by the server flavor that answered
        routes = [
            Route("/v1/responses", self._responses, methods=["POST"]),
            Route("/v1/chat/completions", self._chat_completions, methods=["POST"]),
            Route("/v1/models", self._models, methods=["GET"]),
            Route("/v1/embeddings", self._embeddings, methods=["POST"]),
            Route("/tokenize", self._tokenize, methods=["POST"]),
            Route("/v1/completions", self._completions, methods=["POST"]),
        ]
        # Under each flavor's prefix the same server is a Responses server without Anthropic's endpoint, as most
        # are, answering every route it lacks the way that kind of server does.
        flavors = [Mount(prefix, routes=[*routes, Route("/{path:path}", self._unknown_route(flavor),
                                                        methods=["GET", "POST", "PUT", "DELETE"])])
                   for flavor, prefix in UNKNOWN_ROUTE_PREFIXES.items()]
        self.app = Starlette(routes=[*routes, Route("/v1/messages", self._messages, methods=["POST"]), *flavors],
                             exception_handlers={error: _malformed for error in (TypeError, KeyError, AttributeError, ValueError)})

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def script(self, *replies: Reply, when: ScriptFilter | None = None) -> None:
        """Replies for the next generation requests, in order; with `when`, a reply is taken only by a request
        that matches it (others get the unscripted default and leave the script as it is)."""
        with self._lock:
            self._script.extend((when, reply) for reply in replies)

    def _take_scripted(self, request: dict[str, Any]) -> Reply | None:
        """Under the lock: the next scripted reply if this request may take it."""
        if not self._script:
            return None
        when, reply = self._script[0]
        if when is not None and not when(request):
            return None
        self._script.popleft()
        return _resolved(reply, request)

    def reset(self) -> None:
        with self._lock:
            self._script.clear()
            self.requests.clear()
            self.tokenize_requests.clear()
            self.headers.clear()
            self.route_misses.clear()

    def _next_reply(self, request: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(request)
            scripted = self._take_scripted(request)
            if scripted is not None:
                return scripted
        default: Reply = Text(f"Echo: {_last_user_text(request)}")
        if self.call_tools and request.get("tools") and _last_item_type(request) != "function_call_output":
            name = request["tools"][0]["name"]
            # file_search takes queries; the operator tools take text
            arguments = {"queries": [_last_user_text(request)]} if name == "file_search" else {"text": "bench"}
            default = FunctionCall(name, orjson.dumps(arguments).decode())
        return Delay(self.latency, default) if self.latency else default

    async def _models(self, request: Request) -> Response:
        body = {"object": "list", "data": [{"id": self.served_model, "object": "model", "created": int(time.time()), "owned_by": "vllm", "root": "hf_smol", "parent": None, "max_model_len": 4096}]}
        return Response(orjson.dumps(body), media_type="application/json")

    async def _tokenize(self, request: Request) -> Response:
        """vLLM's `/tokenize` (chat form): a deterministic count, 3 tokens of framing per message plus its words."""
        payload = orjson.loads(await request.body())
        with self._lock:
            self.tokenize_requests.append(payload)
        if payload.get("model") != self.served_model:
            return Response(_error_body(HttpError(404, "model not found", "NotFoundError", "model")), status_code=404)
        count = sum(3 + len(_words(str(message.get("content") or ""))) for message in payload.get("messages", []))
        body = {"count": count, "max_model_len": 4096, "tokens": list(range(count)), "token_strs": None}
        return Response(orjson.dumps(body), media_type="application/json")

    @property
    def base_url_without_messages(self) -> str:
        return self.base_url_answering_unknown_routes_like("fastapi")

    def base_url_answering_unknown_routes_like(self, flavor: str) -> str:
        """This server without `/v1/messages` (or any route it lacks), answering such routes like `flavor`."""
        return f"http://{self.host}:{self.port}{UNKNOWN_ROUTE_PREFIXES[flavor]}/v1"

    @property
    def messages_route_misses(self) -> int:
        return self.route_misses["fastapi"]

    def _unknown_route(self, flavor: str) -> Callable[[Request], Awaitable[Response]]:
        async def answer(request: Request) -> Response:
            with self._lock:
                self.route_misses[flavor] += 1
            body = UNKNOWN_ROUTE_BODIES[flavor]
            if flavor == "openai":
                body = body.replace(b"{route}", f"{request.method} /v1/{request.path_params['path']}".encode())
            return Response(body, status_code=404, media_type="application/json")
        return answer

    async def _messages(self, request: Request) -> Response:
        """vLLM's native Anthropic Messages endpoint (text and tool_use; JSON and SSE)."""
        payload = orjson.loads(await request.body())
        reply = self._next_reply(payload)
        while isinstance(reply, Delay):
            await asyncio.sleep(reply.seconds)
            reply = reply.then or Text("Echo")
        if payload.get("model") != self.served_model:
            body = {"type": "error", "error": {"type": "not_found_error", "message": f"model {payload.get('model')} not found"}}
            return Response(orjson.dumps(body), status_code=404, media_type="application/json")
        blocks = []
        for part in self._parts(reply) if isinstance(reply, (Text, FunctionCall, Output)) else []:
            if isinstance(part, FunctionCall):
                blocks.append({"type": "tool_use", "id": f"toolu_{_hex()}", "name": part.name, "input": orjson.loads(part.arguments)})
            else:
                blocks.append({"type": "text", "text": part.text})
        stop = "tool_use" if any(block["type"] == "tool_use" for block in blocks) else "end_turn"
        message = {"id": f"msg_{_hex()}", "type": "message", "role": "assistant", "model": payload["model"], "content": blocks,
                   "stop_reason": stop, "stop_sequence": None, "usage": {"input_tokens": 21, "output_tokens": 7}}
        if not payload.get("stream"):
            return Response(orjson.dumps(message), media_type="application/json")
        return StreamingResponse(self._message_events(message), media_type="text/event-stream")

    @staticmethod
    async def _message_events(message: dict[str, Any]):
        def event(name: str, data: dict[str, Any]) -> bytes:
            return b"event: " + name.encode() + b"\ndata: " + orjson.dumps({"type": name, **data}) + b"\n\n"

        yield event("message_start", {"message": {**message, "content": [], "stop_reason": None,
                                                  "usage": {"input_tokens": 21, "output_tokens": 1}}})
        for index, block in enumerate(message["content"]):
            if block["type"] == "text":
                yield event("content_block_start", {"index": index, "content_block": {"type": "text", "text": ""}})
                for piece in _words(block["text"]):
                    yield event("content_block_delta", {"index": index, "delta": {"type": "text_delta", "text": piece}})
            else:
                yield event("content_block_start", {"index": index, "content_block": {**block, "input": {}}})
                yield event("content_block_delta", {"index": index, "delta": {"type": "input_json_delta",
                                                                                "partial_json": orjson.dumps(block["input"]).decode()}})
            yield event("content_block_stop", {"index": index})
        yield event("message_delta", {"delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                                      "usage": {"output_tokens": 7}})
        yield event("message_stop", {})

    async def _embeddings(self, request: Request) -> Response:
        """vLLM's embeddings shape, with a deterministic vector per input."""
        payload = orjson.loads(await request.body())
        inputs = payload.get("input")
        inputs = [inputs] if isinstance(inputs, str) else inputs
        if payload.get("model") == EMBEDDING_MODEL:
            return self._model_embeddings(payload, inputs)
        with self._lock:
            self.requests.append(payload)
        data = [{"index": index, "object": "embedding", "embedding": [len(text) / 10, 0.5, -0.25]}
                for index, text in enumerate(inputs)]
        tokens = sum(len(_words(text)) for text in inputs)
        body = {"id": f"embd-{_hex()}", "object": "list", "created": int(time.time()), "model": payload.get("model"),
                "data": data, "usage": {"prompt_tokens": tokens, "total_tokens": tokens, "completion_tokens": 0}}
        return Response(orjson.dumps(body), media_type="application/json")

    def _model_embeddings(self, payload: dict[str, Any], inputs: list[str]) -> Response:
        with self._lock:
            self.embedding_requests.append(payload)
            failing = self.embeddings_failing
        if failing:
            return Response(orjson.dumps({"error": {"message": "overloaded", "type": "server_error", "code": 503}}),
                            status_code=503, media_type="application/json")
        if any(len(_words(text)) > EMBEDDING_WINDOW for text in inputs):
            message = f"This model's maximum context length is {EMBEDDING_WINDOW} tokens."
            return Response(orjson.dumps({"error": {"message": message, "type": "BadRequestError", "code": 400}}),
                            status_code=400, media_type="application/json")
        data = [{"index": index, "object": "embedding", "embedding": hashed_embedding(text)}
                for index, text in enumerate(inputs)]
        tokens = sum(len(_words(text)) for text in inputs)
        body = {"id": f"embd-{_hex()}", "object": "list", "created": int(time.time()), "model": EMBEDDING_MODEL,
                "data": data, "usage": {"prompt_tokens": tokens, "total_tokens": tokens, "completion_tokens": 0}}
        return Response(orjson.dumps(body), media_type="application/json")

    async def _completions(self, request: Request) -> Response:
        """vLLM's legacy completions shape (non-streaming)."""
        payload = orjson.loads(await request.body())
        reply = self._next_reply(payload)
        text = reply.text if isinstance(reply, Text) else ""
        body = {"id": f"cmpl-{_hex()}", "object": "text_completion", "created": int(time.time()), "model": payload.get("model"),
                "choices": [{"index": 0, "text": text, "logprobs": None, "finish_reason": "stop", "stop_reason": None}],
                "usage": {"prompt_tokens": 5, "total_tokens": 5 + len(_words(text)), "completion_tokens": len(_words(text))}}
        return Response(orjson.dumps(body), media_type="application/json")

    async def _responses(self, request: Request) -> Response:
        payload = orjson.loads(await request.body())
        with self._lock:
            self.headers.append(dict(request.headers))
        reply = self._next_reply(payload)
        while isinstance(reply, Delay):
            await asyncio.sleep(reply.seconds)
            reply = reply.then or Text(f"Echo: {_last_user_text(payload)}")
        if payload.get("model") != self.served_model:
            reply = HttpError(404, f"The model `{payload.get('model')}` does not exist. Valid aliases: {self.served_model}.", "NotFoundError", "model")
        elif payload.get("previous_response_id"):
            reply = HttpError(404, f"Response with id '{payload['previous_response_id']}' not found.", "invalid_request_error", "response_id")
        if isinstance(reply, HttpError):
            return Response(_error_body(reply), status_code=reply.status, media_type="application/json")
        if payload.get("stream"):
            return StreamingResponse(self._events(payload, reply), media_type="text/event-stream")
        if isinstance(reply, Truncated):  # not streamed: half the body, then a disconnect (or, malformed, a clean end)
            body = orjson.dumps(self._final(payload, Text(reply.text)))
            cut = {} if isinstance(reply, MalformedSse) else {"content-length": str(len(body))}
            return Response(body[: len(body) // 2], headers=cut, media_type="application/json")
        return Response(orjson.dumps(self._final(payload, reply)), media_type="application/json")

    @staticmethod
    def _item(reply: Text | FunctionCall | Truncated | Reasoning, item_id: str, call_id: str, status: str, content: str) -> dict[str, Any]:
        if isinstance(reply, Reasoning):  # vLLM sets a status on the last output item only
            parts = [{"text": content, "type": "reasoning_text"}] if status == "completed" else None
            return {"id": item_id, "summary": [], "type": "reasoning", "content": parts, "encrypted_content": None,
                    "status": "in_progress" if status == "in_progress" else None}
        if isinstance(reply, FunctionCall):
            return {"arguments": content, "call_id": call_id, "name": reply.name, "type": "function_call", "id": item_id,
                    "async": None, "caller": None, "namespace": None, "status": status}
        parts = [{"annotations": [], "text": content, "type": "output_text", "logprobs": None}] if status == "completed" else []
        return {"id": item_id, "content": parts, "role": "assistant", "status": status, "type": "message", "phase": None}

    @staticmethod
    def _parts(reply: Text | FunctionCall | Truncated | Output) -> list[Text | FunctionCall | Truncated]:
        if isinstance(reply, Reasoning):
            return [Reasoning(reply.text), reply.then] if reply.then is not None else [reply]
        return list(reply.items) if isinstance(reply, Output) else [reply]

    def _final(self, payload: dict[str, Any], reply: Text | FunctionCall | Output) -> dict[str, Any]:
        items, words = [], 0
        for part in self._parts(reply):
            content = part.arguments if isinstance(part, FunctionCall) else part.text
            prefix = "fc" if isinstance(part, FunctionCall) else "rs" if isinstance(part, Reasoning) else "msg"
            items.append(self._item(part, f"{prefix}_{_hex()}", f"chatcmpl-tool-{_hex(16)}", "completed", content))
            words += len(_words(content))
        status = "incomplete" if any(isinstance(part, Text) and part.incomplete for part in self._parts(reply)) else "completed"
        return _response_object(payload, f"resp_{_hex()}", status, items, _usage(36, words))

    async def _events(self, payload: dict[str, Any], reply: Text | FunctionCall | Truncated):
        response_id, sequence = f"resp_{_hex()}", 0

        def event(body: dict[str, Any]) -> bytes:
            nonlocal sequence
            body["sequence_number"] = sequence
            sequence += 1
            return b"event: " + body["type"].encode() + b"\ndata: " + orjson.dumps(body) + b"\n\n"

        emitted = 0
        limit = reply.events if isinstance(reply, Truncated) else None
        frames = self._stream_frames(payload, reply, response_id, event)
        for chunk in frames:
            if limit is not None and emitted >= limit:
                if isinstance(reply, MalformedSse):
                    yield b"event: response.output_text.delta\ndata: {\"type\": \"response.output_text.del\n\n"
                if isinstance(reply, Stalled):
                    await asyncio.sleep(reply.seconds)
                return
            emitted += 1
            yield chunk

    def _stream_frames(self, payload, reply, response_id, event):
        opening = _response_object(payload, response_id, "in_progress", [], None)
        yield event({"response": opening, "type": "response.created"})
        yield event({"response": opening, "type": "response.in_progress"})
        done_items, words = [], 0
        for index, part in enumerate(self._parts(reply)):
            is_call = isinstance(part, FunctionCall)
            content = part.arguments if is_call else part.text
            words += len(_words(content))
            prefix = "fc" if is_call else "rs" if isinstance(part, Reasoning) else "msg"
            item_id, call_id = f"{prefix}_{_hex()}", f"chatcmpl-tool-{_hex(16)}"
            yield event({"item": self._item(part, item_id, call_id, "in_progress", ""), "output_index": index,
                         "type": "response.output_item.added"})
            if isinstance(part, Reasoning):
                yield event({"content_index": 0, "item_id": item_id, "output_index": index,
                             "part": {"text": "", "type": "reasoning_text"}, "type": "response.content_part.added"})
                for piece in _words(content):
                    yield event({"content_index": 0, "delta": piece, "item_id": item_id, "output_index": index,
                                 "type": "response.reasoning_text.delta"})
                yield event({"content_index": 0, "item_id": item_id, "output_index": index, "text": content,
                             "type": "response.reasoning_text.done"})
                yield event({"content_index": 0, "item_id": item_id, "output_index": index,
                             "part": {"text": content, "type": "reasoning_text"}, "type": "response.content_part.done"})
            elif is_call:
                for piece in _words(content):
                    yield event({"delta": piece, "item_id": item_id, "output_index": index,
                                 "type": "response.function_call_arguments.delta"})
                yield event({"arguments": content, "item_id": item_id, "output_index": index,
                             "type": "response.function_call_arguments.done", "name": part.name})
            else:
                yield event({"content_index": 0, "item_id": item_id, "output_index": index,
                             "part": {"annotations": [], "text": "", "type": "output_text", "logprobs": []},
                             "type": "response.content_part.added"})
                for piece in _words(content):
                    yield event({"content_index": 0, "delta": piece, "item_id": item_id, "logprobs": [], "output_index": index,
                                 "type": "response.output_text.delta"})
                yield event({"content_index": 0, "item_id": item_id, "logprobs": [], "output_index": index, "text": content,
                             "type": "response.output_text.done"})
                yield event({"content_index": 0, "item_id": item_id, "output_index": index,
                             "part": {"annotations": [], "text": content, "type": "output_text", "logprobs": None},
                             "type": "response.content_part.done"})
            item = self._item(part, item_id, call_id, "completed", content)
            done_items.append(item)
            yield event({"item": item, "output_index": index, "type": "response.output_item.done"})
        status = "incomplete" if any(isinstance(part, Text) and part.incomplete for part in self._parts(reply)) else "completed"
        final = _response_object(payload, response_id, status, done_items, _usage(36, words))
        yield event({"response": final, "type": f"response.{status}"})

    # -- /v1/chat/completions (vLLM's chat wire format, see tests/fixtures/chat-*) ----

    def _next_chat_reply(self, request: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(request)
            scripted = self._take_scripted(request)
            if scripted is not None:
                return scripted
        return Text(f"Echo: {_last_chat_user_text(request)}")

    async def _chat_completions(self, request: Request) -> Response:
        payload = orjson.loads(await request.body())
        reply = self._next_chat_reply(payload)
        while isinstance(reply, Delay):
            await asyncio.sleep(reply.seconds)
            reply = reply.then or Text(f"Echo: {_last_chat_user_text(payload)}")
        if payload.get("model") != self.served_model:
            reply = HttpError(404, f"The model `{payload.get('model')}` does not exist. Valid aliases: {self.served_model}.", "NotFoundError", "model")
        if isinstance(reply, HttpError):
            return Response(_error_body(reply), status_code=reply.status, media_type="application/json")
        if payload.get("stream"):
            return StreamingResponse(self._chat_chunks(payload, reply), media_type="text/event-stream")
        return Response(orjson.dumps(self._chat_completion(payload, reply)), media_type="application/json")

    @staticmethod
    def _chat_finish_reason(reply: Text | FunctionCall | Truncated) -> str:
        if isinstance(reply, FunctionCall):
            return "tool_calls"
        return "length" if isinstance(reply, Text) and reply.incomplete else "stop"

    def _chat_completion(self, payload: dict[str, Any], reply: Text | FunctionCall | Truncated | Reasoning) -> dict[str, Any]:
        reasoning, reply = (reply.text, reply.then or Text("")) if isinstance(reply, Reasoning) else (None, reply)
        is_call = isinstance(reply, FunctionCall)
        content = reply.arguments if is_call else reply.text
        tool_calls = [{"id": f"chatcmpl-tool-{_hex()}", "type": "function",
                       "function": {"name": reply.name, "arguments": reply.arguments}}] if is_call else []
        message = {"role": "assistant", "content": "" if is_call else content, "refusal": None, "annotations": None,
                   "audio": None, "function_call": None, "tool_calls": tool_calls, "reasoning": reasoning}
        usage = {**_chat_usage(36, len(_words(content))), "prompt_tokens_details": None, "completion_tokens_details": None}
        return {
            "id": f"chatcmpl-{_hex()}", "object": "chat.completion", "created": int(time.time()), "model": payload.get("model"),
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": self._chat_finish_reason(reply),
                         "stop_reason": None, "token_ids": None, "routed_experts": None}],
            "service_tier": None, "system_fingerprint": "vllm-0.32.0-b56a86d6", "usage": usage,
            "prompt_logprobs": None, "prompt_token_ids": None, "prompt_text": None,
            "kv_transfer_params": None, "ec_transfer_params": None, "metrics": None,
        }

    async def _chat_chunks(self, payload: dict[str, Any], reply: Text | FunctionCall | Truncated):
        """`data:`-only frames ending in `data: [DONE]`; a `Truncated` reply stops after `events` chunks, with neither
        (a `Stalled` one after its silence)."""
        limit = reply.events if isinstance(reply, Truncated) else None
        for emitted, chunk in enumerate(self._chat_stream_chunks(payload, reply)):
            if limit is not None and emitted >= limit:
                if isinstance(reply, Stalled):
                    await asyncio.sleep(reply.seconds)
                return
            yield b"data: " + orjson.dumps(chunk) + b"\n\n"
        yield b"data: [DONE]\n\n"

    def _chat_stream_chunks(self, payload: dict[str, Any], reply: Text | FunctionCall | Truncated):
        base = {"id": f"chatcmpl-{_hex()}", "object": "chat.completion.chunk", "created": int(time.time()),
                "model": payload.get("model")}

        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
            choice: dict[str, Any] = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
            if finish_reason is not None:
                choice["stop_reason"] = None
            choice["token_ids"] = None
            return {**base, "choices": [choice]}

        yield {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": None,
                                    "finish_reason": None}], "prompt_token_ids": None, "prompt_text": None}
        if isinstance(reply, Reasoning):
            for piece in _words(reply.text):
                yield chunk({"reasoning": piece})
            reply = reply.then or Text("")
        is_call = isinstance(reply, FunctionCall)
        content = reply.arguments if is_call else reply.text
        if is_call:
            yield chunk({"content": None, "tool_calls": [{"id": f"chatcmpl-tool-{_hex()}", "type": "function", "index": 0,
                                                          "function": {"name": reply.name}}]})
            for piece in _words(content):
                yield chunk({"content": None, "tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
        else:
            for piece in _words(content):
                yield chunk({"content": piece})
        yield chunk({}, self._chat_finish_reason(reply))
        if (payload.get("stream_options") or {}).get("include_usage"):
            yield {**base, "choices": [], "usage": _chat_usage(36, len(_words(content))),
                   "system_fingerprint": "vllm-0.32.0-b56a86d6"}

    # -- lifecycle -------------------------------------------------------------

    def start(self) -> FakeUpstream:
        self._runner = ThreadedServer(self.app, self.host, self.port, "fake-upstream")
        self.port = self._runner.start()
        return self

    def stop(self) -> None:
        if self._runner is not None:
            self._runner.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--model", default=SERVED_MODEL)
    parser.add_argument("--latency-ms", type=float, default=0.0, help="added to every generation")
    parser.add_argument("--call-tools", action="store_true", help="call the first declared tool once, then answer")
    args = parser.parse_args()
    fake = FakeUpstream(args.host, args.port, args.model, args.latency_ms / 1000, args.call_tools)
    uvicorn.run(fake.app, host=args.host, port=args.port, log_level="warning", http="httptools", loop="uvloop", access_log=False)


if __name__ == "__main__":
    main()
