"""The stateless model server: one shared HTTP client, Responses JSON and SSE calls.

aiohttp rather than httpx here: this client is on every turn's hot path, and
profiling showed httpx spending most of the executor's CPU per turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson
from agentic_core.errors import AgenticError, UpstreamTimeout, UpstreamUnavailable
from agentic_core.sse import DONE, SseParser
from agentic_core.upstream_errors import error_from_upstream

from agentic_executor.settings import ExecutorSettings

_ERROR_BODY_LIMIT = 64 * 1024


def _transport_error(exc: BaseException) -> AgenticError:
    if isinstance(exc, (asyncio.TimeoutError, aiohttp.ServerTimeoutError)):
        return UpstreamTimeout("The model server did not answer in time.")
    if isinstance(exc, aiohttp.ClientConnectorError):
        return UpstreamUnavailable("Could not connect to the model server.", code="upstream_unreachable")
    return UpstreamUnavailable(f"The connection to the model server failed ({type(exc).__name__}).")


class UpstreamClient:
    """Create with `UpstreamClient(settings)` inside the running loop; `close()` at shutdown."""

    def __init__(self, settings: ExecutorSettings) -> None:
        self.base_url = settings.upstream_url.rstrip("/")
        self.headers = {"content-type": "application/json"}
        if settings.upstream_api_key is not None:
            self.headers["authorization"] = f"Bearer {settings.upstream_api_key.get_secret_value()}"
        self.max_event_bytes = settings.upstream_max_event_bytes
        self.max_body_bytes = settings.upstream_max_body_bytes
        self.session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=settings.upstream_max_connections, ttl_dns_cache=60),
            timeout=aiohttp.ClientTimeout(
                total=None,
                sock_connect=settings.upstream_connect_timeout_seconds,
                sock_read=settings.upstream_read_timeout_seconds,
            ),
            skip_auto_headers=("User-Agent",),
        )

    async def close(self) -> None:
        await self.session.close()

    async def create_response(self, body: bytes) -> dict[str, Any]:
        """POST /responses without streaming; the parsed response object."""
        try:
            async with self.session.post(f"{self.base_url}/responses", data=body, headers=self.headers) as reply:
                raw = await self._read_bounded(reply, self.max_body_bytes)
                status = reply.status
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise _transport_error(exc) from None
        if status >= 400:
            raise error_from_upstream(status, raw)
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
            async with self.session.post(f"{self.base_url}/responses", data=body, headers=self.headers) as reply:
                if reply.status >= 400:
                    raise error_from_upstream(reply.status, await self._read_bounded(reply, _ERROR_BODY_LIMIT))
                async for chunk in reply.content.iter_any():
                    for event in parser.feed(chunk):
                        if event.data == DONE:
                            return
                        yield _event_json(event.data)
                for event in parser.close():
                    if event.data != DONE:
                        yield _event_json(event.data)
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise _transport_error(exc) from None

    @staticmethod
    async def _read_bounded(reply: aiohttp.ClientResponse, limit: int) -> bytes:
        if reply.content_length is not None and reply.content_length > limit:
            raise UpstreamUnavailable(f"The model server's reply exceeds {limit} bytes.", code="upstream_body_too_large")
        chunks: list[bytes] = []
        size = 0
        async for chunk in reply.content.iter_any():
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
