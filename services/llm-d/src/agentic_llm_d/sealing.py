"""Sealing the split context as an HS256 JWT (`aud` agentic-llm-d, `exp` now + TTL), and opening it again."""

from __future__ import annotations

from typing import Any

import jwt
import orjson
from agentic_core.split.context import AUDIENCE, SplitContext, context_rejected

ALGORITHM = "HS256"


class ContextSealer:
    def __init__(self, signing_key: str, ttl_seconds: int) -> None:
        self._key = signing_key.encode()
        self.ttl_seconds = ttl_seconds

    def seal(self, context: SplitContext, now: int) -> str:
        # Claims serialised as UTF-8 by orjson (PyJWT's json.dumps would \u-escape non-ASCII text, up to 3x its size).
        claims = orjson.dumps(context.claims(now=now, ttl_seconds=self.ttl_seconds))
        return jwt.api_jws.encode(claims, self._key, algorithm=ALGORITHM)

    def unseal(self, token: str) -> SplitContext:
        """The context `seal` issued, or 400 "context rejected: …" (tampered, foreign key, expired, wrong audience)."""
        try:
            claims: dict[str, Any] = jwt.decode(
                token, self._key, algorithms=[ALGORITHM], audience=AUDIENCE, options={"require": ["exp", "aud"]}
            )
        except jwt.ExpiredSignatureError:
            raise context_rejected("it has expired; hydrate the turn again") from None
        except jwt.InvalidTokenError as exc:
            raise context_rejected(str(exc) or type(exc).__name__) from None
        return SplitContext.from_claims(claims)
