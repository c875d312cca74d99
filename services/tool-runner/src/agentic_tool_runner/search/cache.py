"""Search results kept for a while in a JetStream key-value bucket, shared by every tool runner, one tenant's
apart from another's.

Live searches write their hits here. A request whose `web_search` tool says
`external_web_access: false` (Codex's default, "cached" mode) is answered from
here only: no query leaves the cluster for it. Entries are keyed by tenant, so a
tenant's cached-only search never finds (and so never learns) what another searched.
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


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def cache_key(tenant: str, provider: str, request: SearchRequest) -> str:
    """`<tenant digest>.<search digest>`: the same query asked the same way (case and spacing aside) by the same
    tenant meets the same entry. Digests, as KV keys allow only a few characters; the tenant's is a key prefix, so
    one tenant's entries can be listed or purged alone (`<tenant digest>.>`)."""
    query = " ".join(request.query.lower().split())
    parts = [provider, query, str(request.count), ",".join(request.allowed_domains), request.country or ""]
    return f"{_digest(tenant)[:32]}.{_digest(chr(0x1f).join(parts))}"


class SearchCache:
    def __init__(self, bucket: KeyValue) -> None:
        self.bucket = bucket

    async def get(self, tenant: str, provider: str, request: SearchRequest) -> list[SearchHit] | None:
        """The hits stored for this tenant's search, or None (never stored, expired, or the bucket unreachable)."""
        try:
            entry = await self.bucket.get(cache_key(tenant, provider, request))
        except KeyNotFoundError:
            return None
        except (NatsError, TimeoutError) as error:
            log.warning("web search cache unreadable: %s", type(error).__name__)
            return None
        if entry.value is None:
            return None
        return [SearchHit(**hit) for hit in orjson.loads(entry.value)]

    async def put(self, tenant: str, provider: str, request: SearchRequest, hits: list[SearchHit]) -> None:
        """Best effort: a search that worked is not failed by a cache that did not."""
        value = orjson.dumps([{"title": hit.title, "url": hit.url, "snippet": hit.snippet} for hit in hits])
        try:
            await self.bucket.put(cache_key(tenant, provider, request), value)
        except (NatsError, TimeoutError) as error:
            log.warning("web search cache unwritable: %s", type(error).__name__)
