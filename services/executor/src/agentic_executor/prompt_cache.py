"""Routing hints for prefix caches: a prompt cache key for every round of a turn, stable across a chain's turns.

The turns of one chain (`previous_response_id`) or one conversation share their
prefix; a scheduler that sends requests carrying the same key to the same
replica finds it in KV cache. A client's own `prompt_cache_key` (and
`cache_salt`) is sent as given. Without one we derive it: an HMAC of the tenant
and the chain's root (its first stored item, the same on every turn of the
chain) or the conversation id, under a key derived from the executors' shared
secret (`AGENTIC_EXECUTOR_COMPACTION_KEY`) — stable on every executor, distinct
per chain, and never the same for two tenants nor guessable from the ids.
Without the secret no key is derived.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Sequence
from typing import Any

from agentic_core.json_types import Item
from agentic_core.responses.history import StoredHistory, as_history
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from agentic_executor.settings import ExecutorSettings

PURPOSE = b"agentic prompt cache key v1"
KEY_PREFIX = "pck_"


def chain_root(conversation_id: str | None, history: StoredHistory | Sequence[Item], input_items: Sequence[Item],
               response_id: str) -> str:
    """What every turn of the same chain or conversation has in common."""
    if conversation_id:
        return f"conversation:{conversation_id}"
    # A new chain's root is its first input item, stored as history later.
    for first_id in (as_history(history).first_id(), input_items[0].get("id") if input_items else None):
        if isinstance(first_id, str) and first_id:
            return f"chain:{first_id}"
    return f"response:{response_id}"


class PromptCacheKeys:
    """No secret (or derivation off): the client's key or none."""

    def __init__(self, secret: str | None = None) -> None:
        self._key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=PURPOSE).derive(secret.encode()) \
            if secret else None

    @classmethod
    def from_settings(cls, settings: ExecutorSettings) -> PromptCacheKeys:
        secret = settings.compaction_key.get_secret_value().strip() if settings.compaction_key else None
        return cls(secret if settings.derive_prompt_cache_key else None)

    def key_for(self, tenant: str, root: str) -> str | None:
        if self._key is None:
            return None
        digest = hmac.new(self._key, tenant.encode() + b"\0" + root.encode(), hashlib.sha256).digest()
        return KEY_PREFIX + base64.urlsafe_b64encode(digest[:24]).decode()

    def with_key(self, body: dict[str, Any], tenant: str, root: str) -> dict[str, Any]:
        """`body` with a prompt cache key: the client's, else the derived one (if any)."""
        if isinstance(body.get("prompt_cache_key"), str) and body["prompt_cache_key"]:
            return body
        key = self.key_for(tenant, root)
        return {**body, "prompt_cache_key": key} if key else body
