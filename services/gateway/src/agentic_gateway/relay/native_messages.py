"""Which model servers serve Anthropic's `/v1/messages` themselves, learnt from their answers.

vLLM does; most other Responses servers answer 404 or 405 on that path, each in
its own body (FastAPI's `{"detail": …}`, OpenAI's and llama.cpp's error
objects). A request so refused is translated through the round loop; the
server is remembered as lacking the route, for a while, when the refusal can
only be about the route: a 405, a 404 that is no API error object, or a 404
for a model the server lists (an unknown model's 404 is not the route's).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import orjson

log = logging.getLogger(__name__)

ROUTE_REFUSED_STATUSES = (404, 405)


def route_refused(status: int) -> bool:
    """The server did not serve the request on this route: the translation serves it instead."""
    return status in ROUTE_REFUSED_STATUSES


def lacks_messages_route(status: int, body: bytes) -> bool:
    """A refusal that can only mean the path does not exist there: a 405, or a 404 that is not an API error
    object (a 404 error object may be about the model)."""
    if not route_refused(status):
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
