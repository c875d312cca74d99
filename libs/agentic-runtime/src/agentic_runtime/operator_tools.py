"""Operator-written tools as the tool runners published them (a NATS KV bucket), cached briefly."""

from __future__ import annotations

import time
from typing import Any

import orjson
from nats.aio.client import Client
from nats.js.errors import BucketNotFoundError, NoKeysError

from agentic_runtime.nats import TOOL_DEFINITIONS_BUCKET

_CACHE_SECONDS = 5.0


class OperatorToolCatalog:
    def __init__(self, client: Client) -> None:
        self.jetstream = client.jetstream()
        self._cached: dict[str, dict[str, Any]] = {}
        self._expires = 0.0

    async def definitions(self) -> dict[str, dict[str, Any]]:
        """name → function tool definition (`type`, `name`, `description`, `parameters`, `strict`)."""
        if time.monotonic() < self._expires:
            return self._cached
        try:
            bucket = await self.jetstream.key_value(TOOL_DEFINITIONS_BUCKET)
            keys = await bucket.keys()
        except (BucketNotFoundError, NoKeysError):
            keys, bucket = [], None
        definitions: dict[str, dict[str, Any]] = {}
        for key in keys:
            assert bucket is not None  # keys come from it
            entry = await bucket.get(key)
            if entry.value:
                definition = orjson.loads(entry.value)
                definitions[definition["name"]] = definition
        self._cached, self._expires = definitions, time.monotonic() + _CACHE_SECONDS
        return definitions
