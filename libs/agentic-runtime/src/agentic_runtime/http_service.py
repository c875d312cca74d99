"""What every HTTP service shares: probes, `/metrics`, and running under uvicorn with a drain."""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import Awaitable, Callable, Iterator
from types import FrameType

import orjson
import uvicorn
from agentic_core.errors import AgenticError, InvalidRequest, PayloadTooLarge
from fastapi import FastAPI, Request
from fastapi.responses import Response
from fastapi.telemetry import TelemetryConfig
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from agentic_runtime.body_encoding import decode_body, encodings_of

ReadinessCheck = Callable[[], Awaitable[dict[str, bool]]]
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
    `too_large(limit, declared size or None)` shapes the error for services with their own wording."""
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
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_large(limit, None)
        chunks.append(chunk)
    body = b"".join(chunks)
    return decode_body(body, codings, limit, too_large, invalid_code) if codings else body


def add_probe_routes(app: FastAPI, readiness: ReadinessCheck) -> None:
    """`/health` (the process is alive), `/ready` (its dependencies answer), `/metrics`."""

    @app.get("/health", include_in_schema=False)
    async def health() -> Response:
        return Response(content=b'{"status":"ok"}', media_type="application/json")

    @app.get("/ready", include_in_schema=False)
    async def ready() -> Response:
        if getattr(app.state, "draining", False):  # set by run_uvicorn at SIGTERM, before the listener closes
            return Response(content=b'{"status":"draining","checks":{}}', status_code=503, media_type="application/json")
        checks = await readiness()
        is_ready = all(checks.values())
        body = orjson.dumps({"status": "ready" if is_ready else "not_ready", "checks": checks})
        return Response(content=body, status_code=200 if is_ready else 503, media_type="application/json")

    @app.get("/metrics", include_in_schema=False)
    async def metrics() -> Response:
        return Response(content=generate_latest(), media_type=CONTENT_TYPE_LATEST)


class _DrainingServer(uvicorn.Server):
    """SIGTERM/SIGINT: readiness fails at once, the listener closes `unready_seconds` later, in-flight requests
    then get the graceful timeout; exit 0 (uvicorn would re-raise the signal and die by it). A second signal
    stops at once."""

    def __init__(self, config: uvicorn.Config, app: FastAPI, unready_seconds: float) -> None:
        super().__init__(config)
        self.app = app
        self.unready_seconds = unready_seconds
        self.close_at: float | None = None

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
        if self.close_at is not None and time.monotonic() >= self.close_at:
            self.should_exit = True
        return await super().on_tick(counter)


def run_uvicorn(app: FastAPI, host: str, port: int, drain_seconds: float, unready_seconds: float = 0.0) -> None:
    """Serve until SIGTERM/SIGINT, then drain as `_DrainingServer` says."""
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        loop="uvloop",
        http="httptools",
        lifespan="on",
        log_config=None,
        access_log=False,
        timeout_graceful_shutdown=max(1, int(drain_seconds)),
    )
    _DrainingServer(config, app, unready_seconds).run()
