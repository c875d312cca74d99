"""Upstream Responses events → our public events, checked on real vLLM captures."""

from __future__ import annotations

from pathlib import Path

import orjson
from agentic_core.responses.request import CreateResponseRequest
from agentic_core.responses.response import build_response
from agentic_core.responses.stream import EventSequencer, StreamTranslator, outcome_from_json
from agentic_core.sse import SseParser
from openai.types.responses import Response

FIXTURES = Path(__file__).parents[3] / "tests" / "fixtures"


def _upstream_events(name: str) -> list[dict]:
    parser = SseParser()
    events = parser.feed((FIXTURES / name).read_bytes()) + parser.close()
    return [orjson.loads(event.data) for event in events]


def _translate(name: str, first_sequence: int = 2):
    translator = StreamTranslator(EventSequencer(first_sequence))
    public = [each for event in _upstream_events(name) for each in translator.translate(event)]
    return translator, [(t, s, orjson.loads(d)) for t, s, d in public]


def test_lifecycle_events_are_held_back_and_sequence_is_ours() -> None:
    translator, public = _translate("responses-text-stream.sse")
    types = [event_type for event_type, _, _ in public]
    assert "response.created" not in types and "response.completed" not in types
    assert [sequence for _, sequence, _ in public] == list(range(2, 2 + len(public)))
    assert all(data["sequence_number"] == sequence for _, sequence, data in public)
    assert translator.finished


def test_item_ids_are_rewritten_consistently() -> None:
    translator, public = _translate("responses-text-stream.sse")
    ids = {data.get("item_id") or data["item"]["id"] for _, _, data in public}
    assert len(ids) == 1
    (our_id,) = ids
    assert our_id.startswith("msg_") and our_id != "msg_b4af21e50f67ff74"
    outcome = translator.outcome()
    assert outcome is not None and outcome.output[0]["id"] == our_id


def test_text_parts_get_empty_logprobs_and_usage_is_openai_shaped() -> None:
    translator, public = _translate("responses-text-stream.sse")
    done_part = next(data["part"] for event_type, _, data in public if event_type == "response.content_part.done")
    assert done_part["logprobs"] == []
    outcome = translator.outcome()
    assert outcome.status == "completed"
    assert outcome.usage == {
        "input_tokens": 36,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": 8,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 44,
    }
    assert outcome.output[0]["content"][0]["text"] == "Hello, welcome to my world!"
    assert "phase" not in outcome.output[0]


def test_function_call_stream_keeps_call_id_and_arguments() -> None:
    translator, public = _translate("responses-tool-stream.sse")
    call = translator.outcome().output[0]
    assert call["type"] == "function_call" and call["name"] == "get_weather"
    assert call["call_id"] == "chatcmpl-tool-9c4601e00792c336"
    assert orjson.loads(call["arguments"]) == {"city": "Paris"}
    assert call["id"].startswith("fc_") and "async" not in call
    deltas = "".join(data["delta"] for t, _, data in public if t == "response.function_call_arguments.delta")
    assert deltas == call["arguments"]


def test_stream_without_terminal_event_has_no_outcome() -> None:
    translator = StreamTranslator(EventSequencer())
    for event in _upstream_events("responses-text-stream.sse")[:6]:
        translator.translate(event)
    assert translator.outcome() is None


def test_upstream_error_event_fails_the_round() -> None:
    translator = StreamTranslator(EventSequencer())
    translator.translate({"type": "error", "code": "overloaded", "message": "try later", "sequence_number": 0})
    outcome = translator.outcome()
    assert outcome.status == "failed" and outcome.error == {"code": "overloaded", "message": "try later"}


def test_json_response_becomes_a_response_the_sdk_parses_losslessly() -> None:
    upstream = orjson.loads((FIXTURES / "responses-text.response.json").read_bytes())
    outcome = outcome_from_json(upstream)
    request = CreateResponseRequest.model_validate({"model": "smollm2", "input": "hi", "metadata": {"a": "b"}})
    public = build_response(request, response_id="resp_x", created_at=1, status=outcome.status, output=outcome.output,
                            usage=outcome.usage, completed_at=2)
    parsed = Response.model_validate(public)
    # Every field we send survives the SDK's typed model unchanged.
    assert parsed.model_dump(mode="json", exclude_unset=True) == orjson.loads(orjson.dumps(public))
    assert parsed.output_text == "Hello, welcome to my world!"
    assert parsed.metadata == {"a": "b"} and parsed.tools == [] and parsed.store is True
