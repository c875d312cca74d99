"""Which model servers serve Anthropic's `/v1/messages` themselves, learnt from their answers.

vLLM does; most other Responses servers answer 404 or 405 on that path. Such a
server is remembered for a while, so that Messages requests go straight to the
translation through the round loop instead of asking it again each time.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import orjson

log = logging.getLogger(__name__)

_ROUTE_MISSING_STATUSES = (404, 405)


def lacks_messages_route(status: int, body: bytes) -> bool:
    """A 404/405 that is not an API error object: the path does not exist there. (An unknown model is a 404
    too, but in an error object, and is relayed as the server said it.)"""
    if status not in _ROUTE_MISSING_STATUSES:
        return False
    if status == 405:
        return True
    try:
        payload = orjson.loads(body)
    except orjson.JSONDecodeError:
        return True
    return not (isinstance(payload, dict) and (isinstance(payload.get("error"), dict) or payload.get("type") == "error"))


class NativeMessagesVerdicts:
    """Model servers found without `/v1/messages`, each until `recheck_seconds` after it was found."""

    def __init__(self, recheck_seconds: float = 300.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.recheck_seconds = recheck_seconds
        self.clock = clock
        self._unsupported_until: dict[str, float] = {}

    def unsupported(self, base_url: str) -> bool:
        until = self._unsupported_until.get(base_url)
        if until is None:
            return False
        if self.clock() < until:
            return True
        del self._unsupported_until[base_url]
        return False

    def mark_unsupported(self, base_url: str) -> None:
        if base_url not in self._unsupported_until:
            log.info("%s does not serve /v1/messages; Messages requests for it are translated for %.0f s",
                     base_url, self.recheck_seconds)
        self._unsupported_until[base_url] = self.clock() + self.recheck_seconds
