"""The file_search tool and `input_file` by `file_id` through the whole stack with the official SDK: the model
searches the request's stores (answered by the retrieval service on `tools.exec.file_search`), the client sees a
`file_search_call` with OpenAI's lifecycle events, results only when included, and `file_citation` annotations
on the text that cites a result; another tenant's stores and files are 404s."""

from __future__ import annotations

import io

import openai
import pytest
from openai import OpenAI

from tests.support.fake_upstream import FunctionCall, Text

MODEL = "smollm2"
DOCUMENTS = {
    "alpacas.txt": "Alpacas are kept for their soft fleece, which is spun into yarn in the Peruvian highlands.",
    "glaciers.md": "# Glaciers\n\nA glacier is a persistent body of dense ice that moves under its own weight.",
}


@pytest.fixture(scope="module")
def library(client: OpenAI) -> tuple[str, dict[str, str]]:
    """A store of tenant-a with two ingested files: (store id, filename → file id)."""
    store = client.vector_stores.create(name="file-search")
    ids = {}
    for name, text in DOCUMENTS.items():
        done = client.vector_stores.files.upload_and_poll(vector_store_id=store.id, file=(name, io.BytesIO(text.encode())),
                                                         poll_interval_ms=100)
        assert done.status == "completed", done.last_error
        ids[name] = done.id
    return store.id, ids


def _tool(store_id: str, **extra: object) -> dict:
    return {"type": "file_search", "vector_store_ids": [store_id], **extra}


def _tool_output(request: dict) -> str:
    return next(item for item in request["input"] if item.get("type") == "function_call_output")["output"]


def test_a_json_turn_searches_the_store_and_cites_the_file(client: OpenAI, upstream, library) -> None:
    store_id, ids = library
    alpacas = ids["alpacas.txt"]
    answer = f"Alpaca fleece is spun into yarn [{alpacas}]."
    upstream.script(FunctionCall("file_search", '{"queries": ["alpaca fleece yarn"]}'), Text(answer))
    response = client.responses.create(model=MODEL, input="What is alpaca fleece used for?", tools=[_tool(store_id)])
    assert response.status == "completed" and response.output_text == answer
    (call,) = [item for item in response.output if item.type == "file_search_call"]
    assert call.id.startswith("fs_") and call.status == "completed" and call.queries == ["alpaca fleece yarn"]
    assert call.results is None  # not included
    # The model was offered a function and read the results under their markers, with the public id and name.
    assert upstream.requests[0]["tools"][0]["name"] == "file_search"
    output = _tool_output(upstream.requests[1])
    assert f"[{alpacas}] alpacas.txt" in output and "Peruvian highlands" in output
    message = response.output[-1]
    (annotation,) = message.content[0].annotations
    assert annotation.type == "file_citation" and annotation.file_id == alpacas
    assert annotation.filename == "alpacas.txt" and annotation.index == answer.index(f"[{alpacas}]")


def test_results_only_with_include(client: OpenAI, upstream, library) -> None:
    store_id, ids = library
    upstream.script(FunctionCall("file_search", '{"queries": ["glacier ice"]}'), Text("Ice moves."))
    response = client.responses.create(model=MODEL, input="glaciers?", tools=[_tool(store_id, max_num_results=1)],
                                       include=["file_search_call.results"])
    (call,) = [item for item in response.output if item.type == "file_search_call"]
    (result,) = call.results
    assert result.file_id == ids["glaciers.md"] and result.filename == "glaciers.md"
    assert "dense ice" in result.text and 0 < result.score <= 1 and result.attributes == {}
    stored = client.responses.retrieve(response.id)
    assert [item.type for item in stored.output] == ["file_search_call", "message"]


def test_a_streamed_turn_emits_openais_lifecycle_and_annotations(client: OpenAI, upstream, library) -> None:
    store_id, ids = library
    glaciers = ids["glaciers.md"]
    answer = f"Glaciers move under their own weight [glaciers.md], slowly [{glaciers}]."
    upstream.script(FunctionCall("file_search", '{"queries": ["glacier"]}'), Text(answer))
    events = list(client.responses.create(model=MODEL, input="glaciers?", tools=[_tool(store_id)], stream=True,
                                          include=["file_search_call.results"]))
    types = [event.type for event in events]
    lifecycle = ["response.output_item.added", "response.file_search_call.in_progress",
                 "response.file_search_call.searching", "response.file_search_call.completed",
                 "response.output_item.done"]
    positions = [types.index(kind) for kind in lifecycle]
    assert positions == sorted(positions)
    searching = next(event for event in events if event.type == "response.file_search_call.searching")
    assert searching.output_index == 0 and searching.item_id.startswith("fs_")
    assert [event.sequence_number for event in events] == list(range(len(events)))
    added = [event for event in events if event.type == "response.output_text.annotation.added"]
    assert [(event.annotation_index, event.annotation.index) for event in added] == [
        (0, answer.index("[glaciers.md]")), (1, answer.index(f"[{glaciers}]"))]
    assert types.index("response.output_text.annotation.added") < types.index("response.output_text.done")
    final = events[-1].response
    assert final.output[0].type == "file_search_call" and final.output[0].results[0].file_id == glaciers
    annotations = final.output[-1].content[0].annotations
    assert [(a.file_id, a.filename) for a in annotations] == [(glaciers, "glaciers.md")] * 2


def test_text_citing_nothing_found_is_not_annotated(client: OpenAI, upstream, library) -> None:
    store_id, _ = library
    upstream.script(FunctionCall("file_search", '{"queries": ["alpaca"]}'), Text("See [file-unknown] and [1]."))
    response = client.responses.create(model=MODEL, input="x", tools=[_tool(store_id)])
    assert response.output[-1].content[0].annotations == []


def test_a_store_of_another_tenant_is_404_before_the_model_runs(other_tenant: OpenAI, upstream, library) -> None:
    store_id, _ = library
    with pytest.raises(openai.NotFoundError) as raised:
        other_tenant.responses.create(model=MODEL, input="x", tools=[{"type": "web_search"}, _tool(store_id)])
    assert raised.value.body["param"] == "tools[1].vector_store_ids"
    assert raised.value.body["type"] == "invalid_request_error"
    assert upstream.requests == []
    with pytest.raises(openai.NotFoundError):
        other_tenant.responses.create(model=MODEL, input="x", tools=[_tool("vs_unknown")])


@pytest.mark.parametrize(("options", "param"), [
    ({"filters": {"type": "between", "key": "year", "value": 1}}, "tools[0].filters.type"),
    ({"filters": {"type": "eq", "value": "animals"}}, "tools[0].filters.key"),
    ({"filters": {"type": "and"}}, "tools[0].filters.filters"),
    ({"filters": {"type": "or", "filters": [{"type": "eq", "key": "a", "value": {"x": 1}}]}},
     "tools[0].filters.filters[0].value"),
    ({"filters": {"type": "gt", "key": "year", "value": True}}, "tools[0].filters.value"),
    ({"filters": {"type": "in", "key": "year", "value": 2020}}, "tools[0].filters.value"),
    ({"ranking_options": {"score_threshold": 1.5}}, "tools[0].ranking_options.score_threshold"),
    ({"ranking_options": {"ranker": "bm25"}}, "tools[0].ranking_options.ranker"),
])
def test_malformed_filters_or_ranking_options_are_a_400_before_the_model_runs(client: OpenAI, upstream, library,
                                                                              options: dict, param: str) -> None:
    store_id, _ = library
    for stream in (False, True):
        with pytest.raises(openai.BadRequestError) as raised:
            client.responses.create(model=MODEL, input="x", tools=[_tool(store_id, **options)], stream=stream)
        assert raised.value.body["param"] == param and raised.value.body["code"] == "invalid_value"
    assert upstream.requests == []
    # The search route refuses the same options for the same reason (one validator).
    with pytest.raises(openai.BadRequestError) as raised:
        client.vector_stores.search(store_id, query="x", **options)
    assert raised.value.body["param"] == param.removeprefix("tools[0].")


def test_input_file_by_id_reaches_the_model_as_its_text(client: OpenAI, upstream, library) -> None:
    _, ids = library
    upstream.script(Text("Fleece."))
    client.responses.create(model=MODEL, input=[{"role": "user", "content": [
        {"type": "input_text", "text": "Read this."}, {"type": "input_file", "file_id": ids["alpacas.txt"]}]}])
    (sent,) = upstream.requests
    assert sent["input"][-1]["content"][1] == {
        "type": "input_text", "text": f'<file name="alpacas.txt">\n{DOCUMENTS["alpacas.txt"]}\n</file>'}


def test_a_file_id_of_another_tenant_is_404_naming_the_part(other_tenant: OpenAI, upstream, library) -> None:
    _, ids = library
    with pytest.raises(openai.NotFoundError) as raised:
        other_tenant.responses.create(model=MODEL, input=[{"role": "user", "content": [
            {"type": "input_text", "text": "Read this."}, {"type": "input_file", "file_id": ids["alpacas.txt"]}]}])
    assert raised.value.body["param"] == "input[0].content[1].file_id"
    assert upstream.requests == []


def test_a_continuation_shows_the_model_the_search_it_made(client: OpenAI, upstream, library) -> None:
    store_id, _ = library
    upstream.script(FunctionCall("file_search", '{"queries": ["glacier"]}'), Text("Ice."), Text("Still ice."))
    first = client.responses.create(model=MODEL, input="glaciers?", tools=[_tool(store_id)])
    client.responses.create(model=MODEL, input="and?", previous_response_id=first.id)
    assert [item["type"] for item in upstream.requests[-1]["input"]] == [
        "message", "function_call", "function_call_output", "message", "message"]
    assert "dense ice" in _tool_output(upstream.requests[-1])


def test_a_background_turn_naming_another_tenants_store_is_404_at_once(other_tenant: OpenAI, upstream,
                                                                         library) -> None:
    store_id, _ = library
    with pytest.raises(openai.NotFoundError) as raised:
        other_tenant.responses.create(model=MODEL, input="x", tools=[_tool(store_id)], background=True)
    assert raised.value.body["param"] == "tools[0].vector_store_ids"
    assert upstream.requests == []


def test_the_messages_api_takes_the_tool_declared_the_responses_way(anthropic_client, upstream, library) -> None:
    store_id, ids = library
    upstream.script(FunctionCall("file_search", '{"queries": ["alpaca"]}'), Text("Fleece."))
    message = anthropic_client.messages.create(model=MODEL, max_tokens=64, tools=[_tool(store_id)],
                                               messages=[{"role": "user", "content": "alpacas?"}])
    assert [block.type for block in message.content] == ["text"] and message.content[0].text == "Fleece."
    assert f"[{ids['alpacas.txt']}] alpacas.txt" in _tool_output(upstream.requests[1])


def test_a_conversation_lists_the_search_as_its_public_item(client: OpenAI, upstream, library) -> None:
    store_id, _ = library
    conversation = client.conversations.create()
    upstream.script(FunctionCall("file_search", '{"queries": ["glacier"]}'), Text("Ice."))
    client.responses.create(model=MODEL, input="glaciers?", tools=[_tool(store_id)], conversation=conversation.id)
    listed = client.conversations.items.list(conversation.id, order="asc").data
    assert [item.type for item in listed] == ["message", "file_search_call", "message"]
