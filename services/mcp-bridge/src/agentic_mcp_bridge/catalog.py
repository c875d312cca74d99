"""The discovery cache: a server's tool list per (server, credentials fingerprint), for a TTL.

Concurrent misses for one key share one fetch. `notifications/tools/list_changed`
invalidates a key, and a fetch that was already under way then is not stored.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

CacheKey = tuple[str, str]


@dataclass(frozen=True, slots=True)
class DiscoveredTool:
    name: str
    description: str
    input_schema: bytes   # JSON
    annotations: bytes    # JSON, or empty


class ToolCatalog:
    def __init__(self, *, ttl_seconds: float, max_entries: int) -> None:
        self.ttl_seconds = ttl_seconds
        self.max_entries = max_entries
        self._entries: OrderedDict[CacheKey, tuple[float, list[DiscoveredTool]]] = OrderedDict()
        self._fetches: dict[CacheKey, asyncio.Task[list[DiscoveredTool]]] = {}
        self._stale: set[asyncio.Task[list[DiscoveredTool]]] = set()

    def cached(self, key: CacheKey) -> list[DiscoveredTool] | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        if entry[0] <= time.monotonic():
            del self._entries[key]
            return None
        return entry[1]

    async def tools(self, key: CacheKey, fetch: Callable[[], Awaitable[list[DiscoveredTool]]]) -> list[DiscoveredTool]:
        """The cached list, else the result of `fetch` (shared by concurrent callers; a caller's own
        cancellation or timeout leaves the fetch running for the others)."""
        cached = self.cached(key)
        if cached is not None:
            return cached
        task = self._fetches.get(key)
        if task is None:
            task = asyncio.create_task(self._fill(key, fetch))
            task.add_done_callback(_retrieve)
            self._fetches[key] = task
        return await asyncio.shield(task)

    async def _fill(self, key: CacheKey, fetch: Callable[[], Awaitable[list[DiscoveredTool]]]) -> list[DiscoveredTool]:
        task = asyncio.current_task()
        try:
            tools = await fetch()
            if task not in self._stale and self.ttl_seconds > 0:
                self._entries[key] = (time.monotonic() + self.ttl_seconds, tools)
                self._entries.move_to_end(key)
                while len(self._entries) > self.max_entries:
                    self._entries.popitem(last=False)
            return tools
        finally:
            if self._fetches.get(key) is task:
                del self._fetches[key]
            self._stale.discard(task)

    def invalidate(self, key: CacheKey) -> None:
        self._entries.pop(key, None)
        task = self._fetches.pop(key, None)
        if task is not None:
            self._stale.add(task)


def _retrieve(task: asyncio.Task[list[DiscoveredTool]]) -> None:
    """Mark a shared fetch's failure as seen, when every caller gave up waiting for it."""
    if not task.cancelled():
        task.exception()
