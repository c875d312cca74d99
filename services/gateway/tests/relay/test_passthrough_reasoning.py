"""Pass-through decisions for reasoning: only the executor seals reasoning items and opens them, so a request that
asks for their encrypted content, or sends one back, takes the executor (HTTP and WebSocket alike)."""

from __future__ import annotations

from agentic_core.routing import ModelRoute
from agentic_gateway.relay.passthrough import is_stateless_responses_request

ROUTE = ModelRoute("*", "http://vllm:8000/v1")
REASONING = {"type": "reasoning", "id": "rs_1", "summary": [], "content": [{"type": "reasoning_text", "text": "hm"}]}


def _body(*items: dict, **fields: object) -> dict:
    return {"model": "m", "store": False, "input": [{"role": "user", "content": "hi"}, *items], **fields}


def test_a_request_asking_for_encrypted_reasoning_takes_the_executor() -> None:
    assert not is_stateless_responses_request(_body(include=["reasoning.encrypted_content"]), ROUTE)
    assert is_stateless_responses_request(_body(include=["message.output_text.logprobs"]), ROUTE)


def test_a_reasoning_item_with_encrypted_content_takes_the_executor() -> None:
    assert not is_stateless_responses_request(_body({**REASONING, "encrypted_content": "v1.sealed"}), ROUTE)


def test_reasoning_items_without_encrypted_content_still_pass_through() -> None:
    assert is_stateless_responses_request(_body(REASONING, {**REASONING, "encrypted_content": None}), ROUTE)
