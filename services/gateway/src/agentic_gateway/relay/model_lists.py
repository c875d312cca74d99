"""Each model server's `GET /models` entries, kept briefly, so that a client start (Codex asks for its catalog
every time) does not ask every model server again."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

import orjson
from agentic_core.errors import AgenticError, UpstreamUnavailable
from agentic_core.model_catalog import Entry
from agentic_core.routing import ModelRoute
from agentic_runtime.http.upstream import UpstreamHttp, read_bounded

log = logging.getLogger(__name__)

_LISTING_LIMIT_BYTES = 4 * 1024 * 1024


class ModelLists:
    """A listing is kept `ttl_seconds` from when it was asked for (0: never kept); askers at the same time share
    one request; a failed listing is not kept, so the next asker tries again."""

    def __init__(self, upstream: UpstreamHttp, ttl_seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.upstream = upstream
        self.ttl_seconds = ttl_seconds
        self.clock = clock
        self._listings: dict[str, tuple[float, asyncio.Task[list[Entry] | None]]] = {}

    async def entries(self, route: ModelRoute) -> list[Entry] | None:
        """The server's entries (each with a string `id`), or None when it did not answer with a list."""
        now = self.clock()
        kept = self._listings.get(route.base_url)
        if kept is None or kept[0] <= now or _failed(kept[1]):
            kept = (now + self.ttl_seconds, asyncio.ensure_future(self._fetch(route)))
            self._listings[route.base_url] = kept
        # Shielded: an asker that goes away does not cancel the listing the others wait for.
        try:
            return await asyncio.shield(kept[1])
        finally:
            if _failed(kept[1]) and self._listings.get(route.base_url) is kept:
                del self._listings[route.base_url]

    async def _fetch(self, route: ModelRoute) -> list[Entry] | None:
        try:
            async with self.upstream.request("GET", route.base_url + "/models", route, content_type=None) as reply:
                content = await read_bounded(reply, _LISTING_LIMIT_BYTES)
                if reply.status != 200:
                    raise UpstreamUnavailable(f"GET /models answered {reply.status}")
            data = orjson.loads(content).get("data")
            if not isinstance(data, list):
                raise UpstreamUnavailable("GET /models answered no `data` list")
        except (AgenticError, orjson.JSONDecodeError, AttributeError) as error:
            log.warning("listing models of %s failed: %s", route.base_url, getattr(error, "message", error))
            return None
        return [entry for entry in data if isinstance(entry, dict) and isinstance(entry.get("id"), str)]


def _failed(listing: asyncio.Task[list[Entry] | None]) -> bool:
    return listing.done() and (listing.cancelled() or listing.exception() is not None or listing.result() is None)
