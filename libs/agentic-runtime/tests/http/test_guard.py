"""Hostile connections against a real uvicorn on loopback with our protocol (agentic_runtime.http.guard) and read_body: a head that
never ends and a body shorter than its Content-Length are answered 408 and closed, a malformed request is a JSON
400, and a client that leaves mid-upload is an info line, not an error."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import AsyncIterator

import orjson
import pytest
import uvicorn
from agentic_runtime.http.errors import ErrorShapes, install_error_handlers
from agentic_runtime.http.guard import guarded_protocol
from agentic_runtime.http.service import read_body
from fastapi import FastAPI, Request
from fastapi.responses import Response

TIMEOUT = 0.3


def _app() -> FastAPI:
    app = FastAPI()
    app.state.body_timeout_seconds = TIMEOUT
    install_error_handlers(app, ErrorShapes(anthropic_prefixes=("/v1/messages",)))

    async def echo(request: Request) -> Response:
        return Response(content=await read_body(request, 1024), media_type="application/json")

    app.add_api_route("/v1/responses", echo, methods=["POST"])
    app.add_api_route("/v1/messages", echo, methods=["POST"])
    return app


@pytest.fixture()
async def port() -> AsyncIterator[int]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    config = uvicorn.Config(_app(), host="127.0.0.1", port=free, log_config=None, lifespan="off",
                            http=guarded_protocol(TIMEOUT))
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    try:
        yield free
    finally:
        server.should_exit = True
        await task


async def _exchange(port: int, sent: bytes) -> bytes:
    """What the server answers to `sent` before it closes the connection (bounded, so a hang fails the test)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(sent)
    await writer.drain()
    try:
        return await asyncio.wait_for(reader.read(), 20)
    finally:
        writer.close()


def _answer(raw: bytes) -> tuple[int, dict[bytes, bytes], dict[str, object]]:
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *lines = head.split(b"\r\n")
    headers = {name.lower(): value for name, _, value in (line.partition(b": ") for line in lines)}
    return int(status_line.split()[1]), headers, orjson.loads(body)


async def test_a_head_that_never_ends_is_a_408_then_the_connection_closes(port: int) -> None:
    status, headers, body = _answer(await _exchange(port, b"POST /v1/responses HTTP/1.1\r\nhost: x\r\n"))
    assert status == 408 and headers[b"connection"] == b"close"
    assert body["error"]["code"] == "header_timeout"  # type: ignore[index]


async def test_a_connection_that_sends_nothing_is_closed(port: int) -> None:
    status, _, _ = _answer(await _exchange(port, b""))
    assert status == 408


async def test_a_keep_alive_connections_next_head_is_bounded_too(port: int) -> None:
    first = b"POST /v1/responses HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}"
    raw = await _exchange(port, first + b"POST /v1/responses HTTP/1.1\r\n")
    assert raw.startswith(b"HTTP/1.1 200") and b"HTTP/1.1 408" in raw


@pytest.mark.parametrize(("path", "anthropic"), [("/v1/responses", False), ("/v1/messages", True)])
async def test_a_body_shorter_than_its_content_length_is_a_408_in_the_paths_shape(
        port: int, path: str, anthropic: bool) -> None:
    request = f"POST {path} HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n".encode() + b'{"model":'
    status, headers, body = _answer(await _exchange(port, request))
    assert status == 408 and headers[b"connection"] == b"close"
    if anthropic:
        assert body["type"] == "error" and set(body["error"]) == {"type", "message"}  # type: ignore[arg-type]
    else:
        assert body["error"]["code"] == "body_timeout"  # type: ignore[index]


async def test_a_content_length_that_is_not_a_number_is_a_json_400(port: int) -> None:
    request = b"POST /v1/responses HTTP/1.1\r\nhost: x\r\ncontent-length: abc\r\n\r\n{}"
    status, headers, body = _answer(await _exchange(port, request))
    assert status == 400 and headers[b"content-type"] == b"application/json"
    assert set(body["error"]) == {"message", "type", "param", "code"}  # type: ignore[arg-type]
    assert body["error"]["code"] == "invalid_http_request"  # type: ignore[index]


async def test_a_client_that_leaves_mid_upload_is_logged_as_info_not_as_an_error(
        port: int, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"POST /v1/responses HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n{")
        await writer.drain()
        await asyncio.sleep(TIMEOUT / 3)
        writer.close()
        await writer.wait_closed()
        for _ in range(100):
            if any("disconnected" in record.getMessage() for record in caplog.records):
                break
            await asyncio.sleep(0.02)
    assert any(record.levelno == logging.INFO and "disconnected" in record.getMessage() for record in caplog.records)
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]
