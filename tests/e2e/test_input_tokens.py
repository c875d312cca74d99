"""POST /v1/responses/input_tokens: the model server's tokenizer when it has one, a documented estimate otherwise."""

from __future__ import annotations

import httpx
import openai
import pytest
from openai import OpenAI

from conftest import DEAD_MODEL

MODEL = "smollm2"


def test_counts_with_the_model_servers_tokenizer(client: OpenAI, upstream) -> None:
    counted = client.responses.input_tokens.count(model=MODEL, input="one two three", instructions="be brief")
    # The fake tokenizer: 3 tokens of framing per message plus its words (system + user).
    assert counted.input_tokens == (3 + 2) + (3 + 3)
    assert upstream.tokenize_requests[-1]["messages"][0] == {"role": "system", "content": "be brief"}
    assert upstream.requests == []  # nothing was generated


def test_history_of_a_chain_and_of_a_conversation_is_counted(client: OpenAI, upstream) -> None:
    first = client.responses.create(model=MODEL, input="alpha beta")
    chained = client.responses.input_tokens.count(model=MODEL, input="gamma", previous_response_id=first.id)
    assert len(upstream.tokenize_requests[-1]["messages"]) == 3
    conversation = client.conversations.create(items=[{"role": "user", "content": "delta epsilon"}])
    in_conversation = client.responses.input_tokens.count(model=MODEL, input="gamma", conversation=conversation.id)
    assert len(upstream.tokenize_requests[-1]["messages"]) == 2
    assert chained.input_tokens > in_conversation.input_tokens > 0
    # Counting never takes the conversation: a turn can start right away.
    assert client.responses.create(model=MODEL, input="go", conversation=conversation.id).status == "completed"


def test_without_a_tokenizer_the_count_is_an_estimate(gateway_url, auth_headers) -> None:
    reply = httpx.post(f"{gateway_url}/v1/responses/input_tokens", json={"model": DEAD_MODEL, "input": "x" * 400},
                       headers=auth_headers)
    assert reply.status_code == 200
    assert reply.headers["x-agentic-token-count"] == "estimate"
    assert 100 <= reply.json()["input_tokens"] <= 130


def test_unknown_previous_response_is_404_and_bad_input_400(client: OpenAI) -> None:
    with pytest.raises(openai.NotFoundError):
        client.responses.input_tokens.count(model=MODEL, input="x", previous_response_id="resp_missing")
    with pytest.raises(openai.BadRequestError):
        client.responses.input_tokens.count(model=MODEL, input=[{"role": "robot", "content": "x"}])
