"""The Anthropic Messages API against a real vLLM: native pass-through (responses upstream) or translation
(chat upstream), counting tokens, and a gateway tool hidden inside the turn. Structure only, never wording."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from anthropic import Anthropic

pytestmark = pytest.mark.vllm

USER = [{"role": "user", "content": "Say hello in five words."}]


@pytest.fixture(scope="session")
def anthropic_client(vllm_stack) -> Iterator[Anthropic]:
    with Anthropic(base_url=vllm_stack.urls["gateway"], api_key="unused-without-keys", max_retries=0, timeout=180) as sdk:
        yield sdk


def test_messages_create(anthropic_client: Anthropic) -> None:
    message = anthropic_client.messages.create(model="smollm2", max_tokens=24, messages=USER)
    assert message.type == "message" and message.role == "assistant"
    assert message.content and message.content[0].type == "text" and message.content[0].text
    assert message.stop_reason in ("end_turn", "max_tokens")
    assert message.usage.input_tokens > 0 and message.usage.output_tokens > 0


def test_messages_stream(anthropic_client: Anthropic) -> None:
    with anthropic_client.messages.stream(model="smollm2", max_tokens=24, messages=USER) as stream:
        types = [event.type for event in stream]
        final = stream.get_final_message()
    assert types[0] == "message_start" and types[-1] == "message_stop"
    assert "content_block_delta" in types and final.content[0].text


def test_count_tokens(anthropic_client: Anthropic) -> None:
    assert anthropic_client.messages.count_tokens(model="smollm2", messages=USER).input_tokens > 0


def test_a_forced_gateway_tool_stays_hidden(anthropic_client: Anthropic) -> None:
    message = anthropic_client.messages.create(
        model="smollm2", max_tokens=48, messages=USER,
        tools=[{"type": "operator", "name": "echo"}], tool_choice={"type": "any"},
    )
    assert all(block.type != "tool_use" for block in message.content)
