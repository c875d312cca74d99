"""What every HTTP service shares: probes, `/metrics`, and running under uvicorn with a drain."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from types import FrameType
from typing import Protocol

import orjson
import uvicorn
from agentic_core.errors import AgenticError, InvalidRequest, PayloadTooLarge, RequestTimeout
from fastapi import FastAPI, Request
from fastapi.responses import Response
from fastapi.telemetry import TelemetryConfig
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from agentic_runtime.http.body_encoding import decode_body, encodings_of
from agentic_runtime.http.guard import guarded_protocol

ReadinessCheck = Callable[[], Awaitable[dict[str, bool]]]
_CUT_SECONDS = 1  # after the drain bound, what still runs gets this long to write its last event
# FastAPI would trace and meter every request itself once a tracer provider exists: a span per
# request on the hot path. Our services open the spans that matter (a turn, a tool call) themselves.
NO_FRAMEWORK_TELEMETRY: TelemetryConfig = {"tracing": False, "metrics": False}


def _default_too_large(limit: int, size: int | None) -> AgenticError:
    if size is not None:
        return PayloadTooLarge(f"The request body is {size} bytes; the limit is {limit} bytes.")
    return PayloadTooLarge(f"The request body exceeds the limit of {limit} bytes.")


async def read_body(
    request: Request,
    limit: int,
    too_large: Callable[[int, int | None], AgenticError] = _default_too_large,
    invalid_code: str | None = None,
) -> bytes:
    """The body, refused (413) as soon as the declared or received size passes `limit`; never buffered beyond it.
    A compressed body (`Content-Encoding`) is decoded, and the limit applies to the decoded bytes as well.
    `too_large(limit, declared size or None)` shapes the error for services with their own wording. A client that
    sends nothing for the server's body timeout (`HttpTimeouts.body_seconds`) gets a 408."""
    codings = encodings_of(request.headers.get("content-encoding"))
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            declared_size = int(declared)
        except ValueError:
            raise InvalidRequest("The Content-Length header is not a number.", code=invalid_code) from None
        if declared_size > limit:
            raise too_large(limit, declared_size)
    chunks: list[bytes] = []
    size = 0
    stream = request.stream()
    gap: float | None = getattr(request.app.state, "body_timeout_seconds", None)
    while True:
        try:
            async with asyncio.timeout(gap):
                chunk = await anext(stream)
        except StopAsyncIteration:
            break
        except TimeoutError:
            raise RequestTimeout(f"The request body stalled: nothing arrived for {gap:g} s.",
                                 code="body_timeout") from None
        size += len(chunk)
        if size > limit:
            raise too_large(limit, None)
        chunks.append(chunk)
    body = b"".join(chunks)
    return decode_body(body, codings, limit, too_large, invalid_code) if codings else body


def add_probe_routes(app: FastAPI, readiness: ReadinessCheck, *, metrics: bool = True) -> None:
    """`/health` (the process is alive), `/ready` (its dependencies answer), and `/metrics` unless the service
    serves it on a port of its own (`metrics=False`)."""

    @app.get("/health")
    async def health() -> Response:
        return Response(content=b'{"status":"ok"}', media_type="application/json")

    @app.get("/ready")
    async def ready() -> Response:
        if getattr(app.state, "draining", False):  # set by run_uvicorn at SIGTERM, before the listener closes
            return Response(content=b'{"status":"draining","checks":{}}', status_code=503, media_type="application/json")
        checks = await readiness()
        is_ready = all(checks.values())
        body = orjson.dumps({"status": "ready" if is_ready else "not_ready", "checks": checks})
        return Response(content=body, status_code=200 if is_ready else 503, media_type="application/json")

    if not metrics:
        return

    @app.get("/metrics")
    async def exposition() -> Response:
        return Response(content=generate_latest(), media_type=CONTENT_TYPE_LATEST)


class LongLivedConnections:
    """Connections that outlive a request (WebSockets). uvicorn would cut them at once at shutdown, so at SIGTERM
    each is told to drain (finish its work, take no more, close) and the server waits for them, within a bound."""

    def __init__(self) -> None:
        self._open: set[Drainable] = set()
        self.draining = False

    def add(self, connection: Drainable) -> None:
        self._open.add(connection)
        if self.draining:
            connection.drain()

    def discard(self, connection: Drainable) -> None:
        self._open.discard(connection)

    def __len__(self) -> int:
        return len(self._open)

    def drain(self) -> None:
        self.draining = True
        for connection in list(self._open):
            connection.drain()


class Drainable(Protocol):
    def drain(self) -> None: ...


class _DrainingServer(uvicorn.Server):
    """SIGTERM/SIGINT: readiness fails at once and long-lived connections start draining; the listener closes
    `unready_seconds` later, or once the requests and connections in flight are done if that is later, and at
    most `drain_seconds` after that. What still runs then is cancelled (a cut stream ends with its terminal
    error event) within `_CUT_SECONDS`. Exit 0 (uvicorn would re-raise the signal and die by it). A second
    signal stops at once."""

    def __init__(self, config: uvicorn.Config, app: FastAPI, unready_seconds: float, drain_seconds: float) -> None:
        super().__init__(config)
        self.app = app
        self.unready_seconds = unready_seconds
        self.drain_seconds = drain_seconds
        self.close_at: float | None = None
        long_lived = getattr(app.state, "long_lived", None)
        self.long_lived: LongLivedConnections = long_lived if long_lived is not None else LongLivedConnections()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self.handle_exit)
        yield

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self.close_at is not None:
            super().handle_exit(sig, frame)
            return
        self.app.state.draining = True
        self.close_at = time.monotonic() + self.unready_seconds

    async def on_tick(self, counter: int) -> bool:
        if self.close_at is not None:
            if not self.long_lived.draining:  # here, on the loop: a signal handler must not touch its objects
                self.long_lived.drain()
            now = time.monotonic()
            # The listener stays open (answering /ready with 503) while requests and WebSockets are in flight.
            busy = bool(self.long_lived) or any(not task.done() for task in self.server_state.tasks)
            if now >= self.close_at and (not busy or now >= self.close_at + self.drain_seconds):
                self.should_exit = True
        return await super().on_tick(counter)


def run_uvicorn(
    app: FastAPI, host: str, port: int, drain_seconds: float, unready_seconds: float = 0.0,
    websockets: WebSocketOptions | None = None, timeouts: HttpTimeouts | None = None,
) -> None:
    """Serve until SIGTERM/SIGINT, then drain as `_DrainingServer` says. Without `websockets`, none are served.
    A request's head and body are read under `timeouts` (`HttpTimeouts()` unless given)."""
    timeouts = timeouts or HttpTimeouts()
    app.state.body_timeout_seconds = timeouts.body_seconds  # read_body's bound
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        loop="uvloop",
        http=guarded_protocol(timeouts.header_seconds),  # httptools, with a bound on each request's head
        lifespan="on",
        log_config=None,
        access_log=False,
        timeout_graceful_shutdown=_CUT_SECONDS,  # the drain itself happened before, listener open
        ws="websockets-sansio" if websockets else "none",
        ws_max_size=websockets.max_message_bytes if websockets else 16 * 1024 * 1024,
        ws_ping_interval=websockets.ping_seconds if websockets else None,
        ws_ping_timeout=websockets.ping_timeout_seconds if websockets else None,
    )
    _DrainingServer(config, app, unready_seconds, drain_seconds).run()


@dataclass(frozen=True, slots=True)
class HttpTimeouts:
    """How long a client may take to send a request's head (from connecting, or from its first byte), and the
    longest silence while it sends the body."""

    header_seconds: float = 10.0
    body_seconds: float = 30.0


@dataclass(frozen=True, slots=True)
class WebSocketOptions:
    max_message_bytes: int
    ping_seconds: float
    ping_timeout_seconds: float
