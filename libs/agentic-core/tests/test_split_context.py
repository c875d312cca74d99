"""The split context's claims: what hydrate signs and persist accepts back."""

from __future__ import annotations

import pytest
from agentic_core.errors import InvalidRequest
from agentic_core.split.context import AUDIENCE, SplitContext

CONTEXT = SplitContext(
    response_id="resp_" + "a" * 48, tenant="tenant-a", original_request={"model": "m", "input": "hi"}, created_at=1_700_000_000,
    effective_tools=[{"type": "function", "name": "f"}], effective_tool_choice="auto", history_call_ids=["call_1"],
)


def test_claims_carry_audience_expiry_and_the_turn() -> None:
    claims = CONTEXT.claims(now=1_700_000_000)
    assert claims["aud"] == AUDIENCE == "agentic-llm-d"
    assert claims["exp"] == 1_700_000_600 and claims["iat"] == 1_700_000_000
    assert set(claims["ctx"]) == {"response_id", "tenant", "original_request", "conversation_id", "effective_tools",
                                  "effective_tool_choice", "history_call_ids", "created_at"}


def test_claims_round_trip() -> None:
    assert SplitContext.from_claims(CONTEXT.claims(now=1)) == CONTEXT


@pytest.mark.parametrize(("key", "value"), [
    ("response_id", ""), ("response_id", "msg_123"), ("response_id", "resp_"), ("response_id", None),
    ("tenant", ""), ("original_request", "text"), ("created_at", "now"), ("created_at", True),
    ("conversation_id", "conv_1"), ("effective_tools", {"type": "function"}), ("effective_tool_choice", 3),
    ("history_call_ids", [1]),
])
def test_malformed_claims_are_rejected(key: str, value: object) -> None:
    claims = CONTEXT.claims(now=1)
    claims["ctx"][key] = value
    with pytest.raises(InvalidRequest) as raised:
        SplitContext.from_claims(claims)
    assert raised.value.message.startswith("context rejected: ")


def test_claims_without_a_turn_are_rejected() -> None:
    with pytest.raises(InvalidRequest, match="^context rejected: "):
        SplitContext.from_claims({"aud": AUDIENCE, "exp": 2})
