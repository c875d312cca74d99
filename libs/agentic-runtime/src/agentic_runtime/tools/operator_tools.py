"""Operator-written tools as the tool runners published them (a NATS KV bucket), cached briefly."""

from __future__ import annotations

import time
from collections.abc import Collection
from typing import Any

import orjson
from nats.aio.client import Client
from nats.js.errors import BucketNotFoundError, KeyNotFoundError, NotFoundError

from agentic_runtime.nats.broker import TOOL_DEFINITIONS_BUCKET

_CACHE_SECONDS = 5.0


class OperatorToolCatalog:
    def __init__(self, client: Client, bucket: str = TOOL_DEFINITIONS_BUCKET) -> None:
        self.jetstream = client.jetstream()
        self.bucket = bucket
        self._cached: dict[str, dict[str, Any]] = {}
        self._expires = 0.0

    async def definitions(self, wanted: Collection[str] = ()) -> dict[str, dict[str, Any]]:
        """name → function tool definition (`type`, `name`, `description`, `parameters`, `strict`). A `wanted`
        name the cache lacks reads the bucket again at once: a tool a runner has just published is usable."""
        if time.monotonic() < self._expires and all(name in self._cached for name in wanted):
            return self._cached
        definitions = await self._read()
        self._cached, self._expires = definitions, time.monotonic() + _CACHE_SECONDS
        return definitions

    async def _read(self) -> dict[str, dict[str, Any]]:
        # The keys come from the stream's subjects, not nats-py's `keys()`: that watcher can end before the
        # messages already delivered to it are read, and report an empty bucket to a freshly connected client.
        subjects = f"$KV.{self.bucket}."
        try:
            bucket = await self.jetstream.key_value(self.bucket)
            info = await self.jetstream.stream_info(f"KV_{self.bucket}", subjects_filter=subjects + ">")
        except (BucketNotFoundError, NotFoundError):
            return {}
        definitions: dict[str, dict[str, Any]] = {}
        for subject in sorted(info.state.subjects or {}):
            try:
                entry = await bucket.get(subject.removeprefix(subjects))
            except KeyNotFoundError:  # deleted (its marker keeps the subject) or purged meanwhile
                continue
            if entry.value:
                definition = orjson.loads(entry.value)
                definitions[definition["name"]] = definition
        return definitions
