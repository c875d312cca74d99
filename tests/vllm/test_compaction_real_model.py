"""Compaction against a real vLLM (CPU) with SmolLM2-135M: the compact endpoint, continuing from its output,
automatic compaction over a threshold, and the context window (SmolLM2's max_model_len, 4096) before sending.

Structure only, never wording: the summary is whatever a 135M model writes.
"""

from __future__ import annotations

import openai
import pytest
from openai import OpenAI

pytestmark = pytest.mark.vllm

MODEL = "smollm2"
SHORT = {"max_output_tokens": 32, "temperature": 0}


def _chain(client: OpenAI) -> str:
    first = client.responses.create(model=MODEL, input="My name is Ada and I like tea. Say hi.", **SHORT)
    second = client.responses.create(model=MODEL, input="What should I drink today?", previous_response_id=first.id,
                                     **SHORT)
    return second.id


def test_compact_then_continue_from_its_output(client: OpenAI) -> None:
    compacted = client.responses.compact(model=MODEL, previous_response_id=_chain(client))
    assert compacted.object == "response.compaction"
    assert [item.type for item in compacted.output] == ["message", "message", "compaction"]
    assert compacted.output[-1].encrypted_content.startswith("v1.")
    assert compacted.usage.output_tokens > 0

    carried = [item.model_dump(exclude_none=True, warnings=False) for item in compacted.output]
    response = client.responses.create(model=MODEL, input=[*carried, {"role": "user", "content": "And tomorrow?"}],
                                       **SHORT)
    assert response.status in ("completed", "incomplete")
    assert response.output_text.strip()
    assert response.usage.input_tokens > 0


def test_automatic_compaction_over_the_threshold(client: OpenAI) -> None:
    response = client.responses.create(model=MODEL, input="Remind me what I like.", previous_response_id=_chain(client),
                                       context_management=[{"type": "compaction", "compact_threshold": 40}], **SHORT)
    assert [item.type for item in response.output][:1] == ["compaction"]
    assert response.output[-1].type == "message" and response.output_text.strip()
    # The next turn reads the compacted context from the stored chain.
    after = client.responses.create(model=MODEL, input="Thanks.", previous_response_id=response.id, **SHORT)
    assert after.status in ("completed", "incomplete")


def test_automatic_compaction_streamed(client: OpenAI) -> None:
    events = list(client.responses.create(model=MODEL, input="Remind me what I like.", stream=True,
                                          previous_response_id=_chain(client),
                                          context_management=[{"type": "compaction", "compact_threshold": 40}], **SHORT))
    added = [event.item.type for event in events if event.type == "response.output_item.added"]
    assert added[0] == "compaction"
    assert events[-1].type in ("response.completed", "response.incomplete")


def test_a_context_longer_than_the_window_is_refused_before_sending(client: OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model=MODEL, input="tea " * 6000, **SHORT)
    assert caught.value.code == "context_length_exceeded" and "4096" in caught.value.message
