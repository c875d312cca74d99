"""How many tokens a round's context holds, and how many its model takes, asked of the model server only when it matters.

The window is the model server's `max_model_len` (vLLM's /v1/models), read once per
server and model and kept (a failed read is retried after a minute), unless
`AGENTIC_EXECUTOR_CONTEXT_WINDOW_TOKENS` sets it. Counting starts from the cheap
estimate (4 bytes of JSON per token); a context estimated under half of a compaction
threshold, or under 80% of the window, is taken to be under it, and only one nearer
is counted exactly (the model server's tokenizer, where it has one).
"""

from __future__ import annotations

import time
from typing import Any

from agentic_core.errors import InvalidRequest
from agentic_core.responses.token_estimate import estimate_input_tokens
from agentic_core.routing import ModelRoute

from agentic_executor.upstream import UpstreamClient

# Smaller windows are not looked up: a context estimated under half of this never is too long.
SMALLEST_WINDOW = 2048
_RETRY_LOOKUP_SECONDS = 60.0
_WINDOW_MARGIN = 1.25  # the estimate (4 bytes of JSON per token) runs high on English and JSON, low on CJK


def context_too_long(count: int, window: int) -> InvalidRequest:
    return InvalidRequest(
        f"This model's maximum context length is {window} tokens; the input holds {count}. Shorten the input or "
        "compact the context (`context_management` or POST /v1/responses/compact).",
        param="input", code="context_length_exceeded",
    )


class ContextBudget:
    def __init__(self, upstream: UpstreamClient, configured_window: int = 0) -> None:
        self.upstream = upstream
        self.configured_window = configured_window
        self._windows: dict[tuple[str, str], tuple[int | None, float]] = {}

    async def window(self, route: ModelRoute, model: str) -> int | None:
        if self.configured_window:
            return self.configured_window
        key = (route.base_url, model)
        known = self._windows.get(key)
        if known is not None and (known[0] is not None or time.monotonic() < known[1]):
            return known[0]
        length = await self.upstream.max_model_len(route, model)
        self._windows[key] = (length, time.monotonic() + _RETRY_LOOKUP_SECONDS)
        return length

    async def count(self, route: ModelRoute, body: dict[str, Any]) -> int:
        """The model server's count of the body's input, or the estimate where it cannot count."""
        counted = await self.upstream.count_input_tokens(route, body)
        return counted if counted is not None else estimate_input_tokens(body)

    async def measure(self, route: ModelRoute, body: dict[str, Any], threshold: int | None) -> tuple[int | None, int | None]:
        """(tokens, window): tokens is None when the body is far enough under the threshold and the window."""
        estimate = estimate_input_tokens(body)
        window = await self.window(route, body["model"]) if estimate * 2 > SMALLEST_WINDOW else None
        # A compaction threshold is the client's: counted exactly from half of it. The window only guards against
        # a model server error, so it is counted from nearer (each count is a model server round trip); a context
        # the estimate misjudges past it still gets the model server's own 400 about its length.
        near = (threshold is not None and estimate * 2 > threshold) or (
            window is not None and estimate * _WINDOW_MARGIN > window)
        return (await self.count(route, body) if near else None), window
