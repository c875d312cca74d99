"""Search results kept for a while in a JetStream key-value bucket, shared by every tool runner.

Live searches write their hits here. A request whose `web_search` tool says
`external_web_access: false` (Codex's default, "cached" mode) is answered from
here only: no query leaves the cluster for it.
"""

from __future__ import annotations

import hashlib
import logging

import orjson
from nats.errors import Error as NatsError
from nats.js.errors import KeyNotFoundError
from nats.js.kv import KeyValue

from agentic_tool_runner.search.base import SearchHit, SearchRequest

log = logging.getLogger(__name__)

WEB_SEARCH_CACHE_BUCKET = "WEB_SEARCH_CACHE"


def cache_key(provider: str, request: SearchRequest) -> str:
    """The same query asked the same way (case and spacing aside) meets the same entry."""
    query = " ".join(request.query.lower().split())
    parts = [provider, query, str(request.count), ",".join(request.allowed_domains), request.country or ""]
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


class SearchCache:
    def __init__(self, bucket: KeyValue) -> None:
        self.bucket = bucket

    async def get(self, provider: str, request: SearchRequest) -> list[SearchHit] | None:
        """The hits stored for this search, or None (never stored, expired, or the bucket unreachable)."""
        try:
            entry = await self.bucket.get(cache_key(provider, request))
        except KeyNotFoundError:
            return None
        except (NatsError, TimeoutError) as error:
            log.warning("web search cache unreadable: %s", type(error).__name__)
            return None
        if entry.value is None:
            return None
        return [SearchHit(**hit) for hit in orjson.loads(entry.value)]

    async def put(self, provider: str, request: SearchRequest, hits: list[SearchHit]) -> None:
        """Best effort: a search that worked is not failed by a cache that did not."""
        value = orjson.dumps([{"title": hit.title, "url": hit.url, "snippet": hit.snippet} for hit in hits])
        try:
            await self.bucket.put(cache_key(provider, request), value)
        except (NatsError, TimeoutError) as error:
            log.warning("web search cache unwritable: %s", type(error).__name__)
