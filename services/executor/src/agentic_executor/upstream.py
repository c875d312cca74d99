"""The stateless model server: one shared HTTP client, Responses JSON and SSE calls."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson

from agentic_core.errors import AgenticError, UpstreamTimeout, UpstreamUnavailable
from agentic_core.sse import DONE, SseParser
from agentic_core.upstream_errors import error_from_upstream
from agentic_executor.settings import ExecutorSettings

_ERROR_BODY_LIMIT = 64 * 1024


def _transport_error(exc: httpx.HTTPError) -> AgenticError:
    if isinstance(exc, httpx.TimeoutException):
        return UpstreamTimeout(f"The model server did not answer in time ({type(exc).__name__}).")
    if isinstance(exc, httpx.ConnectError):
        return UpstreamUnavailable("Could not connect to the model server.", code="upstream_unreachable")
    return UpstreamUnavailable(f"The connection to the model server failed ({type(exc).__name__}).")


class UpstreamClient:
    def __init__(self, settings: ExecutorSettings) -> None:
        headers = {"content-type": "application/json"}
        if settings.upstream_api_key is not None:
            headers["authorization"] = f"Bearer {settings.upstream_api_key.get_secret_value()}"
        self.max_event_bytes = settings.upstream_max_event_bytes
        self.max_body_bytes = settings.upstream_max_body_bytes
        self.client = httpx.AsyncClient(
            base_url=settings.upstream_url.rstrip("/"),
            headers=headers,
            timeout=httpx.Timeout(
                connect=settings.upstream_connect_timeout_seconds,
                read=settings.upstream_read_timeout_seconds,
                write=settings.upstream_read_timeout_seconds,
                pool=settings.upstream_connect_timeout_seconds,
            ),
            limits=httpx.Limits(
                max_connections=settings.upstream_max_connections,
                max_keepalive_connections=settings.upstream_max_connections,
            ),
        )

    async def close(self) -> None:
        await self.client.aclose()

    async def create_response(self, body: bytes) -> dict[str, Any]:
        """POST /responses without streaming; the parsed response object."""
        try:
            async with self.client.stream("POST", "/responses", content=body) as reply:
                raw = await self._read_bounded(reply, self.max_body_bytes)
        except httpx.HTTPError as exc:
            raise _transport_error(exc) from None
        if reply.status_code >= 400:
            raise error_from_upstream(reply.status_code, raw)
        try:
            payload = orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise UpstreamUnavailable("The model server returned a body that is not JSON.") from None
        if not isinstance(payload, dict):
            raise UpstreamUnavailable("The model server returned JSON that is not a response object.")
        return payload

    async def stream_response(self, body: bytes) -> AsyncIterator[dict[str, Any]]:
        """POST /responses with `stream: true`; yields each event's parsed JSON.

        Errors raised before the first event carry the upstream status; later
        transport failures surface as `UpstreamUnavailable`/`UpstreamTimeout`.
        """
        parser = SseParser(self.max_event_bytes)
        try:
            async with self.client.stream("POST", "/responses", content=body) as reply:
                if reply.status_code >= 400:
                    raise error_from_upstream(reply.status_code, await self._read_bounded(reply, _ERROR_BODY_LIMIT))
                async for chunk in reply.aiter_bytes():
                    for event in parser.feed(chunk):
                        if event.data == DONE:
                            return
                        yield _event_json(event.data)
                for event in parser.close():
                    if event.data != DONE:
                        yield _event_json(event.data)
        except httpx.HTTPError as exc:
            raise _transport_error(exc) from None

    @staticmethod
    async def _read_bounded(reply: httpx.Response, limit: int) -> bytes:
        chunks: list[bytes] = []
        size = 0
        async for chunk in reply.aiter_bytes():
            size += len(chunk)
            if size > limit:
                raise UpstreamUnavailable(f"The model server's reply exceeds {limit} bytes.", code="upstream_body_too_large")
            chunks.append(chunk)
        return b"".join(chunks)


def _event_json(data: bytes) -> dict[str, Any]:
    try:
        event = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise UpstreamUnavailable("The model server sent an SSE event that is not JSON.") from None
    if not isinstance(event, dict):
        raise UpstreamUnavailable("The model server sent an SSE event that is not a JSON object.")
    return event
