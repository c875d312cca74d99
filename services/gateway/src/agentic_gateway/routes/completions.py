"""`POST /v1/chat/completions`, `/v1/completions` and `/v1/embeddings`: relayed to the model's server byte for byte,
or, for a hosted provider that does not speak Chat Completions, run by the executor as a stateless turn."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from agentic.v1 import executor_pb2
from agentic_core.errors import AgenticError
from agentic_core.responses.request import parse_json_object
from agentic_runtime.http.service import read_body
from fastapi import APIRouter, Request
from fastapi.responses import Response

from agentic_gateway.context import API_DEPENDENCIES, gateway_of
from agentic_gateway.http import request_id_of
from agentic_gateway.relay.passthrough import model_of, relay, upstream_body
from agentic_gateway.relay.turn import run_on_executor

router = APIRouter(dependencies=API_DEPENDENCIES)

# Routes whose model servers do not speak Chat Completions (docs/providers.md).
TRANSLATED_CHAT_APIS = frozenset({"anthropic", "gemini"})


def chat_stream_error(error: AgenticError) -> bytes:
    """A Chat Completions stream's error: a data-only chunk with `error` (the openai SDK raises it)."""
    return b"data: " + error.body() + b"\n\n"


def _proxy_route(path: str, label: str) -> Callable[[Request], Coroutine[Any, Any, Response]]:
    async def proxy(request: Request) -> Response:
        gateway = gateway_of(request)
        body = await read_body(request, gateway.settings.max_body_bytes)
        payload = parse_json_object(body)
        route = gateway.router.route(model := model_of(payload))
        if path == "/chat/completions" and route.api in TRANSLATED_CHAT_APIS:
            # A hosted provider's own API is not Chat Completions: the executor runs it as a stateless turn.
            execute = executor_pb2.ExecuteRequest(request_json=body, principal=request.state.principal,
                                                  stream=payload.get("stream") is True, api="chat_completions",
                                                  request_id=request_id_of(request))
            return await run_on_executor(request, execute, label, chat_stream_error)
        return await relay(request, route, path, upstream_body(body, payload, route), payload.get("stream") is True, label,
                           model)

    proxy.__name__ = f"proxy_{label}"
    return proxy


for _path, _label in (("/chat/completions", "chat_completions"), ("/completions", "completions"), ("/embeddings", "embeddings")):
    router.add_api_route(f"/v1{_path}", _proxy_route(_path, _label), methods=["POST"])
