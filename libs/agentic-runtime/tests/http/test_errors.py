"""Every HTTP error in the API's own shape, from a real server on loopback: OpenAI's, Anthropic's under its
prefix; an unexpected exception is a shaped 500, logged once with the trace id and without request content."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import AsyncIterator

import httpx
import orjson
import pytest
import uvicorn
from agentic_core.errors import Conflict
from agentic_runtime.http.errors import ErrorShapes, install_error_handlers
from agentic_runtime.logs import JsonFormatter
from agentic_runtime.tracing import configure_tracing
from fastapi import FastAPI, Request
from fastapi.responses import StreamingResponse

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = f"00-{TRACE_ID}-00f067aa0ba902b7-01"
SECRET = "the-users-private-prompt"


def _app(observed: list[tuple[str, int]]) -> FastAPI:
    app = FastAPI()
    install_error_handlers(app, ErrorShapes(anthropic_prefixes=("/v1/messages",)),
                           observe=lambda request, status: observed.append((request.url.path, status)))

    async def broken(request: Request) -> None:
        raise RuntimeError(f"a bug that quotes the request: {SECRET}")

    async def locked() -> None:
        raise Conflict("The conversation is busy.", code="conversation_locked")

    async def breaks_mid_stream() -> StreamingResponse:
        async def chunks() -> AsyncIterator[bytes]:
            yield b"event: one\ndata: {}\n\n"
            raise RuntimeError(SECRET)

        return StreamingResponse(chunks(), media_type="text/event-stream")

    for prefix in ("/v1/responses", "/v1/messages"):
        app.add_api_route(f"{prefix}/broken", broken, methods=["POST"])
        app.add_api_route(f"{prefix}/locked", locked, methods=["POST"])
    app.add_api_route("/v1/responses/stream", breaks_mid_stream, methods=["POST"])
    return app


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(JsonFormatter("test"))
        self.lines: list[dict[str, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(orjson.loads(self.format(record)))


@pytest.fixture()
async def server() -> AsyncIterator[tuple[str, list[tuple[str, int]], _Lines]]:
    configure_tracing("test")
    observed: list[tuple[str, int]] = []
    lines = _Lines()
    logging.getLogger().addHandler(lines)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = uvicorn.Config(_app(observed), host="127.0.0.1", port=port, log_config=None, lifespan="off")
    uvicorn_server = uvicorn.Server(config)
    task = asyncio.create_task(uvicorn_server.serve())
    while not uvicorn_server.started:
        await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}", observed, lines
    finally:
        uvicorn_server.should_exit = True
        await task
        logging.getLogger().removeHandler(lines)


def _errors(lines: _Lines) -> list[dict[str, str]]:
    return [line for line in lines.lines if line["level"] == "error"]


async def test_an_unexpected_exception_is_an_openai_shaped_500_logged_once_without_request_content(server) -> None:
    base, observed, lines = server
    async with httpx.AsyncClient() as client:
        reply = await client.post(f"{base}/v1/responses/broken", content=SECRET, headers={"traceparent": TRACEPARENT})
    assert reply.status_code == 500
    error = reply.json()["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["type"] == "server_error"
    assert SECRET not in reply.text
    (logged,) = _errors(lines)
    assert logged["trace_id"] == TRACE_ID
    assert "RuntimeError" in logged["msg"] and "/v1/responses/broken" in logged["msg"]
    assert SECRET not in orjson.dumps(lines.lines).decode()
    assert observed == [("/v1/responses/broken", 500)]


async def test_an_unexpected_exception_under_messages_is_anthropic_shaped(server) -> None:
    base, _, lines = server
    async with httpx.AsyncClient() as client:
        reply = await client.post(f"{base}/v1/messages/broken")
    assert reply.status_code == 500
    assert reply.json()["type"] == "error" and reply.json()["error"]["type"] == "api_error"
    (logged,) = _errors(lines)
    assert len(logged["trace_id"]) == 32  # a trace of its own, to quote in a bug report


async def test_domain_errors_and_unknown_routes_take_the_shape_of_their_path(server) -> None:
    base, observed, _ = server
    async with httpx.AsyncClient() as client:
        openai_conflict = await client.post(f"{base}/v1/responses/locked")
        anthropic_conflict = await client.post(f"{base}/v1/messages/locked")
        unknown = await client.get(f"{base}/v1/nothing-here")
        unknown_messages = await client.get(f"{base}/v1/messages/nothing-here")
        wrong_method = await client.get(f"{base}/v1/responses/locked")
    assert openai_conflict.status_code == 409 and openai_conflict.json()["error"]["code"] == "conversation_locked"
    assert anthropic_conflict.status_code == 409
    assert anthropic_conflict.json()["error"] == {"type": "conflict_error", "message": "The conversation is busy."}
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "unknown_url"
    assert unknown_messages.status_code == 404 and unknown_messages.json()["error"]["type"] == "not_found_error"
    assert wrong_method.status_code == 405 and wrong_method.json()["error"]["type"] == "invalid_request_error"
    assert (("/v1/responses/locked", 409)) in observed


async def test_a_failure_after_the_stream_started_ends_it_and_is_logged_once(server) -> None:
    base, _, lines = server
    async with httpx.AsyncClient() as client:
        reply = await client.post(f"{base}/v1/responses/stream")
    assert reply.status_code == 200 and reply.text == "event: one\ndata: {}\n\n"
    await asyncio.sleep(0.05)
    assert len(_errors(lines)) == 1
