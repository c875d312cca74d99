"""The web_search tool through the whole stack: the model searches, the runner asks the provider, the client
sees `web_search_call` items with OpenAI's lifecycle events."""

from __future__ import annotations

from openai import OpenAI

from tests.support.fake_upstream import FunctionCall, Text

MODEL = "smollm2"
WEB_SEARCH = {"type": "web_search"}


def test_multi_round_web_search(client: OpenAI, upstream) -> None:
    upstream.script(
        FunctionCall("web_search", '{"queries": ["python asyncio"]}'),
        FunctionCall("web_search", '{"queries": ["uvloop speed", "grpc aio"]}'),
        Text("Here is what I found."),
    )
    response = client.responses.create(model=MODEL, input="research this", tools=[WEB_SEARCH],
                                       include=["web_search_call.action.sources"])
    assert response.status == "completed" and response.output_text == "Here is what I found."
    calls = [item for item in response.output if item.type == "web_search_call"]
    assert [call.action.query for call in calls] == ["python asyncio", "uvloop speed"]
    assert all(call.status == "completed" and call.action.sources for call in calls)
    # The model saw the provider's results as the tool output, and the canonical function tool.
    assert upstream.requests[0]["tools"][0]["name"] == "web_search"
    output = next(item for item in upstream.requests[1]["input"] if item.get("type") == "function_call_output")
    assert "python asyncio" in output["output"] and "http" in output["output"]
    assert len(upstream.requests) == 3


def test_sources_only_when_included(client: OpenAI, upstream) -> None:
    upstream.script(FunctionCall("web_search", '{"queries": ["x"]}'), Text("ok"))
    response = client.responses.create(model=MODEL, input="search", tools=[WEB_SEARCH])
    (call,) = [item for item in response.output if item.type == "web_search_call"]
    assert getattr(call.action, "sources", None) in (None, [])


def test_streamed_web_search_emits_openais_lifecycle(client: OpenAI, upstream) -> None:
    upstream.script(FunctionCall("web_search", '{"queries": ["streams"]}'), Text("found it"))
    events = list(client.responses.create(model=MODEL, input="search", tools=[WEB_SEARCH], stream=True))
    types = [event.type for event in events]
    lifecycle = ["response.output_item.added", "response.web_search_call.in_progress", "response.web_search_call.searching",
                 "response.web_search_call.completed", "response.output_item.done"]
    positions = [types.index(kind) for kind in lifecycle]
    assert positions == sorted(positions)
    searching = next(event for event in events if event.type == "response.web_search_call.searching")
    assert searching.output_index == 0
    assert [event.sequence_number for event in events] == list(range(len(events)))
    assert events[-1].response.output[0].type == "web_search_call"


def test_too_many_queries_get_a_hint_back(client: OpenAI, upstream) -> None:
    queries = ", ".join(f'"q{n}"' for n in range(7))
    upstream.script(FunctionCall("web_search", f'{{"queries": [{queries}]}}'), Text("fewer then"))
    client.responses.create(model=MODEL, input="search a lot", tools=[WEB_SEARCH])
    output = next(item for item in upstream.requests[1]["input"] if item.get("type") == "function_call_output")
    assert output["output"].startswith("Hint:")


def test_a_conversation_lists_the_search_and_the_model_remembers_the_call(client: OpenAI, upstream) -> None:
    conversation = client.conversations.create()
    upstream.script(FunctionCall("web_search", '{"queries": ["kept"]}'), Text("found"), Text("second"), Text("third"))
    client.responses.create(model=MODEL, input="search it", tools=[WEB_SEARCH], conversation=conversation.id)
    listed = client.conversations.items.list(conversation.id, order="asc").data
    assert [item.type for item in listed] == ["message", "web_search_call", "message"]

    client.responses.create(model=MODEL, input="and?", conversation=conversation.id)
    assert [item["type"] for item in upstream.requests[-1]["input"]] == [
        "message", "function_call", "function_call_output", "message", "message"]

    # Deleting the search removes it from the model's history too (its call and output).
    client.conversations.items.delete(listed[1].id, conversation_id=conversation.id)
    client.responses.create(model=MODEL, input="again", conversation=conversation.id)
    assert [item["type"] for item in upstream.requests[-1]["input"]] == ["message"] * 5


def test_cached_only_search_answers_from_earlier_live_results_and_never_searches_live(client: OpenAI, upstream) -> None:
    import secrets

    seen_live, never_seen = f"agentic cache {secrets.token_hex(4)}", f"agentic cold {secrets.token_hex(4)}"
    cached_only = {"type": "web_search", "external_web_access": False}

    def search(query: str, tool: dict) -> str:
        upstream.reset()
        upstream.script(FunctionCall("web_search", f'{{"queries": ["{query}"]}}'), Text("ok"))
        client.responses.create(model=MODEL, input="search", tools=[tool])
        return next(item for item in upstream.requests[1]["input"] if item.get("type") == "function_call_output")["output"]

    cold = search(never_seen, cached_only)
    assert "no cached results" in cold and "http" not in cold
    live = search(seen_live, {"type": "web_search", "external_web_access": True})
    assert f'Web results for "{seen_live}"' in live
    # Case and spacing aside, the same query is answered from what the live search found.
    cached = search(seen_live.upper().replace(" ", "  "), cached_only)
    assert cached.split("\n", 1)[1] == live.split("\n", 1)[1]


def test_the_search_cache_is_per_tenant(client: OpenAI, other_tenant: OpenAI, upstream) -> None:
    """Tenant B's cached-only search cannot tell what tenant A searched: the cache is keyed by tenant."""
    import secrets

    query = f"agentic tenant cache {secrets.token_hex(4)}"
    cached_only = {"type": "web_search", "external_web_access": False}

    def search(sdk: OpenAI, tool: dict) -> str:
        upstream.reset()
        upstream.script(FunctionCall("web_search", f'{{"queries": ["{query}"]}}'), Text("ok"))
        sdk.responses.create(model=MODEL, input="search", tools=[tool])
        return next(item for item in upstream.requests[1]["input"] if item.get("type") == "function_call_output")["output"]

    live = search(client, {"type": "web_search", "external_web_access": True})
    assert f'Web results for "{query}"' in live
    theirs = search(other_tenant, cached_only)
    assert "no cached results" in theirs and "http" not in theirs
    ours = search(client, cached_only)
    assert ours.split("\n", 1)[1] == live.split("\n", 1)[1]
