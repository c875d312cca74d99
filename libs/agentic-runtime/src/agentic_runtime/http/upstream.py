"""Talking to model servers: the routing table from settings, and one pooled HTTP client with retries.

aiohttp rather than httpx: this client is on every turn's hot path, and
profiling showed httpx spending most of the executor's CPU per turn.
"""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
import orjson
import yaml
from agentic_core.errors import AgenticError, UpstreamTimeout, UpstreamUnavailable
from agentic_core.routing import ModelRoute, ModelRouter, parse_routes

from agentic_runtime.settings import UpstreamSettings
from agentic_runtime.tracing import carrier

# The Messages API version every `anthropic` route is spoken to in (Anthropic's only stable one).
ANTHROPIC_VERSION = "2023-06-01"
# Failures that happen before the server has answered anything: safe to retry.
_RETRYABLE = (aiohttp.ClientConnectorError, aiohttp.ServerDisconnectedError, aiohttp.ClientOSError)


def build_router(settings: UpstreamSettings) -> ModelRouter:
    """The table from `AGENTIC_MODELS` / `AGENTIC_MODELS_FILE`, with `AGENTIC_UPSTREAM_*` as the default route."""
    table: list[ModelRoute] = []
    if settings.models:
        table += parse_routes(orjson.loads(settings.models), dict(os.environ))
    if settings.models_file:
        text = Path(settings.models_file).read_text()
        raw = yaml.safe_load(text) if settings.models_file.endswith((".yaml", ".yml")) else orjson.loads(text)
        table += parse_routes(raw, dict(os.environ))
    default = ModelRoute(
        match="*",
        base_url=settings.upstream_url.rstrip("/"),
        api=settings.upstream_api,  # type: ignore[arg-type]
        api_key=settings.upstream_api_key.get_secret_value() if settings.upstream_api_key else None,
    )
    return ModelRouter(table, default)


def transport_error(exc: BaseException) -> AgenticError:
    if isinstance(exc, (asyncio.TimeoutError, aiohttp.ServerTimeoutError)):
        return UpstreamTimeout("The model server did not answer in time.")
    if isinstance(exc, aiohttp.ClientConnectorError):
        return UpstreamUnavailable("Could not connect to the model server.", code="upstream_unreachable")
    return UpstreamUnavailable(f"The connection to the model server failed ({type(exc).__name__}).")


class UpstreamHttp:
    """One aiohttp session per process. Create inside the running event loop; `close()` at shutdown."""

    def __init__(self, settings: UpstreamSettings) -> None:
        self.retries = settings.upstream_retries
        self.backoff = settings.upstream_retry_backoff_seconds
        self.session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=settings.upstream_max_connections, ttl_dns_cache=60),
            timeout=aiohttp.ClientTimeout(
                total=None,
                sock_connect=settings.upstream_connect_timeout_seconds,
                sock_read=settings.upstream_read_timeout_seconds,
            ),
            # Identity encoding: bodies are parsed or relayed as they are, never recompressed.
            skip_auto_headers=("User-Agent", "Accept-Encoding"),
        )

    async def close(self) -> None:
        await self.session.close()

    @staticmethod
    def headers(route: ModelRoute, content_type: str | None = "application/json") -> dict[str, str]:
        """The route's own key, in the header its API reads it from (never another route's)."""
        headers = carrier()  # vLLM and most servers continue a W3C trace
        if content_type:
            headers["content-type"] = content_type
        if route.api == "anthropic":
            headers["anthropic-version"] = ANTHROPIC_VERSION
            if route.api_key:
                headers["x-api-key"] = route.api_key
        elif route.api == "gemini":
            if route.api_key:
                headers["x-goog-api-key"] = route.api_key
        elif route.api_key:
            headers["authorization"] = f"Bearer {route.api_key}"
        return headers

    @asynccontextmanager
    async def request(
        self, method: str, url: str, route: ModelRoute, body: bytes | None = None, content_type: str | None = "application/json",
        extra_headers: dict[str, str] | None = None,
    ) -> AsyncIterator[aiohttp.ClientResponse]:
        """Send, retrying connection failures (before any byte arrived) with exponential backoff. `extra_headers`:
        routing hints (a session header) added to the route's own."""
        headers = self.headers(route, content_type)
        if extra_headers:
            headers.update(extra_headers)
        attempt = 0
        while True:
            try:
                reply = await self.session.request(method, url, data=body, headers=headers)
                break
            except _RETRYABLE as exc:
                if attempt >= self.retries:
                    raise transport_error(exc) from None
                await asyncio.sleep(self.backoff * (2**attempt) * (0.5 + random.random()))
                attempt += 1
            except (TimeoutError, aiohttp.ClientError) as exc:
                raise transport_error(exc) from None
        try:
            yield reply
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise transport_error(exc) from None
        finally:
            reply.release()


async def read_bounded(reply: aiohttp.ClientResponse, limit: int) -> bytes:
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
