"""How a round's context is measured against its model's window and the client's compaction threshold, against the
fake model server (its `/tokenize` counts 3 tokens a message plus its words; its `/v1/models` reports 4096): a small
context costs no model-server call, one near a limit is counted by the server's tokenizer, the window is the server's
unless configured, and a failed window lookup is not repeated on every round."""

from __future__ import annotations

from typing import Any

import pytest
from agentic_core.routing import ModelRoute
from agentic_executor.context_budget import SMALLEST_WINDOW, ContextBudget, context_too_long
from agentic_executor.upstream import UpstreamClient

from tests.support.fake_upstream import SERVED_MODEL, FakeUpstream


def _body(words: int) -> dict[str, Any]:
    text = " ".join(["word"] * words)
    return {"model": SERVED_MODEL, "input": [{"type": "message", "role": "user",
                                               "content": [{"type": "input_text", "text": text}]}]}


async def test_a_small_context_is_not_counted_nor_its_window_looked_up(
        client: UpstreamClient, route: ModelRoute, upstream: FakeUpstream) -> None:
    assert await ContextBudget(client).measure(route, _body(10), threshold=None) == (None, None)
    assert await ContextBudget(client).measure(route, _body(10), threshold=100_000) == (None, None)
    assert upstream.tokenize_requests == []


async def test_a_context_near_the_compaction_threshold_is_counted_by_the_server(
        client: UpstreamClient, route: ModelRoute, upstream: FakeUpstream) -> None:
    tokens, _ = await ContextBudget(client).measure(route, _body(50), threshold=100)
    assert tokens == 3 + 50  # the server's count, not the 4-bytes-a-token estimate
    assert len(upstream.tokenize_requests) == 1


async def test_a_context_near_the_window_is_counted_and_the_window_is_the_servers(
        client: UpstreamClient, route: ModelRoute, upstream: FakeUpstream) -> None:
    near = _body(3500)  # ~4400 estimated tokens: over 80% of the fake's 4096
    tokens, window = await ContextBudget(client).measure(route, near, threshold=None)
    assert window == 4096 and tokens == 3 + 3500
    far = _body(500)  # ~630 estimated: looked-up window unneeded
    assert await ContextBudget(client).measure(route, far, threshold=None) == (None, None)


async def test_a_configured_window_wins_over_the_servers(client: UpstreamClient, route: ModelRoute) -> None:
    _, window = await ContextBudget(client, configured_window=SMALLEST_WINDOW).measure(route, _body(3500), None)
    assert window == SMALLEST_WINDOW


async def test_where_the_server_cannot_count_the_estimate_is_used(client: UpstreamClient) -> None:
    unreachable = ModelRoute("*", "http://127.0.0.1:1/v1")
    tokens, window = await ContextBudget(client).measure(unreachable, _body(50), threshold=10)
    assert tokens is not None and tokens > 50 and window is None


class CountingUpstream:
    """Counts window lookups; reports no window (a server without max_model_len) or one."""

    def __init__(self, window: int | None) -> None:
        self.window, self.lookups = window, 0

    async def max_model_len(self, route: ModelRoute, model: str) -> int | None:
        self.lookups += 1
        return self.window


@pytest.mark.parametrize("reported", [8192, None])
async def test_the_window_is_looked_up_once_per_server_and_model(reported: int | None) -> None:
    upstream = CountingUpstream(reported)
    budget = ContextBudget(upstream)  # type: ignore[arg-type]
    route = ModelRoute("*", "http://model/v1")
    for _ in range(3):
        assert await budget.window(route, "m") == reported
    assert upstream.lookups == 1
    await budget.window(route, "another-model")
    await budget.window(ModelRoute("*", "http://another-server/v1"), "m")
    assert upstream.lookups == 3


def test_a_context_too_long_is_a_400_that_says_how_to_fix_it() -> None:
    error = context_too_long(5000, 4096).to_dict()["error"]
    assert error["code"] == "context_length_exceeded" and error["param"] == "input"
    assert "4096" in error["message"] and "5000" in error["message"] and "compact" in error["message"]
