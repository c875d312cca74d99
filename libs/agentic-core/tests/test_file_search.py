"""The file_search tool's pure parts: the declaration, the model's function, the public `file_search_call` and its
events, what the model reads, and `file_citation` annotations on the text that cites a result."""

from __future__ import annotations

import orjson
import pytest
from agentic_core.errors import InvalidRequest
from agentic_core.responses.items import model_input
from agentic_core.responses.stream import EventSequencer, StreamTranslator
from agentic_core.tools import file_search
from agentic_core.tools.protocol import ToolResult
from agentic_core.tools.public_items import GatewayCallView
from agentic_core.tools.registry import build_registry, model_tool_choice

STORE = {"type": "file_search", "vector_store_ids": ["vs_1"]}
RESULTS = [{"file_id": "file-aaa", "filename": "alpacas.txt", "score": 0.9, "attributes": {"k": "v"}, "text": "fleece"},
           {"file_id": "file-bbb", "filename": "glaciers.md", "score": 0.5, "attributes": {}, "text": "ice"}]


def _view(include: set[str]) -> GatewayCallView:
    registry = build_registry([STORE])
    call = {"type": "function_call", "call_id": "call_1", "name": "file_search", "arguments": '{"queries": ["fleece"]}'}
    binding = registry.binding("file_search")
    assert binding is not None
    return GatewayCallView(binding, call, include)


def test_the_declaration_is_a_gateway_function_with_its_params() -> None:
    registry = build_registry([{**STORE, "max_num_results": 3, "filters": {"type": "eq", "key": "a", "value": 1},
                                "ranking_options": {"score_threshold": 0.2}}])
    binding = registry.binding("file_search")
    assert binding is not None and binding.owner == "gateway" and binding.kind == "file_search"
    assert binding.public_type == "file_search_call"
    assert binding.params == {"vector_store_ids": ["vs_1"], "max_num_results": 3,
                              "filters": {"type": "eq", "key": "a", "value": 1},
                              "ranking_options": {"score_threshold": 0.2}}
    assert registry.model_tools == [file_search.FUNCTION]
    assert model_tool_choice({"type": "file_search"}, registry) == {"type": "function", "name": "file_search"}


@pytest.mark.parametrize(("tool", "param"), [
    ({"type": "file_search"}, "tools[0].vector_store_ids"),
    ({"type": "file_search", "vector_store_ids": []}, "tools[0].vector_store_ids"),
    ({"type": "file_search", "vector_store_ids": [1]}, "tools[0].vector_store_ids"),
    ({**STORE, "max_num_results": 0}, "tools[0].max_num_results"),
    ({**STORE, "max_num_results": 51}, "tools[0].max_num_results"),
    ({**STORE, "filters": "x"}, "tools[0].filters"),
    ({**STORE, "ranking_options": []}, "tools[0].ranking_options"),
])
def test_a_malformed_declaration_is_a_400_naming_its_field(tool, param) -> None:
    with pytest.raises(InvalidRequest) as raised:
        build_registry([tool])
    assert raised.value.param == param


def test_declared_stores_name_each_declarations_place() -> None:
    assert file_search.declared_stores([{"type": "web_search"}, STORE]) == [(1, ["vs_1"])]


def test_the_call_opens_and_closes_with_openais_events() -> None:
    view = _view(set())
    opening = view.opening(2)
    assert [event["type"] for event in opening] == ["response.output_item.added", "response.file_search_call.in_progress",
                                                    "response.file_search_call.searching"]
    assert opening[0]["item"] == {"id": view.public_id, "type": "file_search_call", "status": "in_progress",
                                  "queries": ["fleece"], "results": None}
    assert all(event["output_index"] == 2 for event in opening)
    assert view.public_id.startswith("fs_") and opening[1]["item_id"] == view.public_id
    items, closing = view.closing(2, ToolResult.ok("c", "text", results=RESULTS))
    assert [event["type"] for event in closing] == ["response.file_search_call.completed", "response.output_item.done"]
    assert items[0]["status"] == "completed" and items[0]["results"] is None


def test_results_are_shown_only_when_included() -> None:
    items, _ = _view({"file_search_call.results"}).closing(0, ToolResult.ok("c", "text", results=RESULTS))
    assert items[0]["results"] == RESULTS


def test_a_failed_search_ends_failed_without_completed() -> None:
    items, closing = _view(set()).closing(0, ToolResult.error("c", "No vector store found"))
    assert items[0]["status"] == "failed"
    assert [event["type"] for event in closing] == ["response.output_item.done"]


def test_the_model_reads_each_result_under_its_marker() -> None:
    text = file_search.result_text(["fleece"], RESULTS)
    assert "[file-aaa] alpacas.txt (score 0.900)\nfleece" in text and "[file-bbb] glaciers.md" in text
    assert file_search.result_text(["x"], []) == 'No file search results for "x".'


def test_the_public_item_is_not_sent_to_the_model() -> None:
    assert model_input([{"type": "file_search_call", "id": "fs_1"}, {"type": "message", "role": "user",
                                                                     "content": "hi"}])[0]["type"] == "message"


def _citations() -> file_search.Citations:
    citations = file_search.Citations()
    citations.add(RESULTS)
    return citations


def test_markers_of_ids_and_filenames_are_annotated_at_their_place() -> None:
    text = "Fleece [file-aaa]. Ice [glaciers.md]. Both [file-aaa, glaciers.md]. Not [file-zzz] nor [1]."
    annotations = _citations().annotations(text)
    assert [(a["file_id"], a["filename"], a["index"]) for a in annotations] == [
        ("file-aaa", "alpacas.txt", text.index("[file-aaa]")),
        ("file-bbb", "glaciers.md", text.index("[glaciers.md]")),
        ("file-aaa", "alpacas.txt", text.index("file-aaa, ")),
        ("file-bbb", "glaciers.md", text.index("glaciers.md]", text.index("Both"))),
    ]
    assert all(annotation["type"] == "file_citation" for annotation in annotations)
    assert file_search.Citations().annotations(text) == []


def test_a_message_gets_its_annotations_once() -> None:
    message = {"type": "message", "id": "msg_1", "role": "assistant",
               "content": [{"type": "output_text", "text": "See [file-aaa].", "annotations": []}]}
    annotated = _citations().annotated_item(message)
    assert annotated["content"][0]["annotations"] == [
        {"type": "file_citation", "file_id": "file-aaa", "filename": "alpacas.txt", "index": 4}]
    assert _citations().annotated_item(annotated) == annotated
    plain = {**message, "content": [{"type": "output_text", "text": "nothing cited", "annotations": []}]}
    assert _citations().annotated_item(plain) is plain


def test_a_stream_adds_annotation_events_before_the_text_is_done() -> None:
    sequencer = EventSequencer()
    translator = StreamTranslator(sequencer, annotate=_citations().stream_events)
    text = "Ice [file-bbb]."
    events = [
        {"type": "response.output_item.added", "output_index": 0,
         "item": {"id": "up_1", "type": "message", "role": "assistant", "content": []}},
        {"type": "response.output_text.delta", "output_index": 0, "item_id": "up_1", "content_index": 0, "delta": text},
        {"type": "response.output_text.done", "output_index": 0, "item_id": "up_1", "content_index": 0, "text": text},
        {"type": "response.content_part.done", "output_index": 0, "item_id": "up_1", "content_index": 0,
         "part": {"type": "output_text", "text": text, "annotations": []}},
        {"type": "response.output_item.done", "output_index": 0,
         "item": {"id": "up_1", "type": "message", "role": "assistant",
                  "content": [{"type": "output_text", "text": text, "annotations": []}]}},
    ]
    public = [orjson.loads(data) for event in events for _, _, data in translator.translate(event)]
    assert [event["type"] for event in public] == [
        "response.output_item.added", "response.output_text.delta", "response.output_text.annotation.added",
        "response.output_text.done", "response.content_part.done", "response.output_item.done"]
    added = public[2]
    annotation = {"type": "file_citation", "file_id": "file-bbb", "filename": "glaciers.md", "index": 4}
    assert added["annotation"] == annotation and added["annotation_index"] == 0
    assert added["item_id"] == public[1]["item_id"] and added["output_index"] == 0 and added["content_index"] == 0
    assert public[4]["part"]["annotations"] == [annotation]
    assert public[5]["item"]["content"][0]["annotations"] == [annotation]
    assert [event["sequence_number"] for event in public] == list(range(6))
