"""Routing hints for prefix caches: every round of every turn of a chain or conversation carries one prompt cache
key (derived when the client gives none) and the session header a scheduler hashes on."""

from __future__ import annotations

from openai import OpenAI

from tests.support.fake_providers import ANTHROPIC_MODEL, FakeProviders
from tests.support.fake_upstream import FakeUpstream, FunctionCall, Text

MODEL = "smollm2"
SESSION_HEADER = "x-session-id"


def _two_round_turn(client: OpenAI, upstream: FakeUpstream, **fields) -> str:
    """A turn whose first round calls the gateway's web search: two requests to the model server."""
    upstream.script(FunctionCall("web_search", '{"query": "prefix caching"}'), Text("found"))
    return client.responses.create(model=MODEL, tools=[{"type": "web_search"}], **fields).id


def _keys(upstream: FakeUpstream) -> list[str]:
    keys = [request.get("prompt_cache_key") for request in upstream.requests]
    headers = [headers.get(SESSION_HEADER) for headers in upstream.headers]
    assert keys == headers, "the session header carries the body's key"
    return keys


def test_every_round_of_every_turn_of_a_chain_carries_one_key(client: OpenAI, upstream: FakeUpstream) -> None:
    first = _two_round_turn(client, upstream, input="one")
    second = _two_round_turn(client, upstream, input="two", previous_response_id=first)
    _two_round_turn(client, upstream, input="three", previous_response_id=second)
    keys = _keys(upstream)
    assert len(keys) == 6 and len(set(keys)) == 1
    assert keys[0].startswith("pck_") and first not in keys[0]


def test_two_chains_get_two_keys(client: OpenAI, upstream: FakeUpstream) -> None:
    upstream.script(Text("a"), Text("b"))
    client.responses.create(model=MODEL, input="same words")
    client.responses.create(model=MODEL, input="same words")
    first, second = _keys(upstream)
    assert first != second


def test_a_conversations_turns_share_a_key(client: OpenAI, upstream: FakeUpstream) -> None:
    conversation = client.conversations.create()
    _two_round_turn(client, upstream, input="q1", conversation=conversation.id)
    upstream.script(Text("a2"))
    client.responses.create(model=MODEL, input="q2", conversation=conversation.id)
    keys = _keys(upstream)
    assert len(keys) == 3 and len(set(keys)) == 1


def test_two_tenants_never_share_a_key(client: OpenAI, other_tenant: OpenAI, upstream: FakeUpstream) -> None:
    keys = []
    for sdk in (client, other_tenant):
        upstream.reset()
        first = _two_round_turn(sdk, upstream, input="the same question")
        _two_round_turn(sdk, upstream, input="and again", previous_response_id=first)
        chain_keys = _keys(upstream)
        assert len(set(chain_keys)) == 1
        keys.append(chain_keys[0])
    assert keys[0] != keys[1]


def test_a_clients_own_key_and_salt_are_sent_as_given(client: OpenAI, upstream: FakeUpstream) -> None:
    upstream.script(FunctionCall("web_search", '{"query": "q"}'), Text("found"))
    client.responses.create(model=MODEL, input="hi", tools=[{"type": "web_search"}], prompt_cache_key="codex-session-1",
                            extra_body={"cache_salt": "tenant-salt"})
    assert _keys(upstream) == ["codex-session-1", "codex-session-1"]
    assert [request["cache_salt"] for request in upstream.requests] == ["tenant-salt", "tenant-salt"]


def test_a_hosted_provider_gets_the_session_header_on_every_round(client: OpenAI, fake_providers: FakeProviders) -> None:
    fake_providers.reset()
    fake_providers.script(FunctionCall("web_search", '{"query": "q"}'), Text("found"))
    first = client.responses.create(model=ANTHROPIC_MODEL, input="hi", tools=[{"type": "web_search"}])
    fake_providers.script(Text("again"))
    client.responses.create(model=ANTHROPIC_MODEL, input="more", previous_response_id=first.id)
    sessions = [headers.get(SESSION_HEADER) for headers in fake_providers.headers]
    assert len(sessions) == 3 and len(set(sessions)) == 1 and sessions[0].startswith("pck_")
    # Anthropic's API has no such key: it is never in the body (the API refuses keys it does not know).
    assert all("prompt_cache_key" not in request for request in fake_providers.requests)
