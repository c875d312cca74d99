"""Relayed Responses replies filled in to the Open Responses schemas: vLLM's captures in, valid objects out, deltas
untouched, whatever the chunking."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from agentic_core.responses.conformance import ConformingSseRelay, RelayedShape

from tests.support.open_responses import violations

FIXTURES = Path(__file__).parents[3] / "tests" / "fixtures"
STREAMS = sorted(FIXTURES.glob("responses-*.sse"))
NOW = 1796035099
SHAPE = RelayedShape({"model": "smollm2", "prompt_cache_key": "chain-1", "safety_identifier": "user-9"}, NOW)
_OBJECT_SCHEMAS = {"response": "ResponseResource", "item": "ItemField", "part": "OutputTextContent"}


def _violations(event: dict[str, Any]) -> list[str]:
    return [f"{event['type']}.{key}: {problem}" for key, schema in _OBJECT_SCHEMAS.items() if key in event
            for problem in violations(schema, event[key])]


def _relayed(raw: bytes, chunk_size: int) -> bytes:
    """Fed in chunks of `chunk_size` bytes; 0: one event per chunk, as servers write them."""
    relay = ConformingSseRelay(SHAPE)
    chunks = [frame + b"\n\n" for frame in raw.split(b"\n\n") if frame] if chunk_size == 0 else \
        [raw[start:start + chunk_size] for start in range(0, len(raw), chunk_size)]
    return b"".join(relay.feed(chunk) for chunk in chunks) + relay.close()


def _frames(stream: bytes) -> list[bytes]:
    return [frame for frame in stream.split(b"\n\n") if frame.strip()]


def test_vllm_response_objects_fail_the_schema_as_sent() -> None:
    """The premise: what vLLM 0.32 sends lacks required fields (else this module would be pointless)."""
    body = json.loads((FIXTURES / "responses-text.response.json").read_bytes())
    assert violations("ResponseResource", body)


@pytest.mark.parametrize("stream", STREAMS, ids=lambda path: path.stem)
@pytest.mark.parametrize("chunk_size", [0, 1, 37, 4096, 1 << 20])
def test_every_relayed_event_conforms_and_deltas_are_the_servers_bytes(stream: Path, chunk_size: int) -> None:
    raw = stream.read_bytes()
    relayed = _relayed(raw, chunk_size)
    frames, originals = _frames(relayed), _frames(raw)
    assert len(frames) == len(originals)
    for frame, original in zip(frames, originals, strict=True):
        event = json.loads(frame.split(b"data: ", 1)[1])
        assert _violations(event) == []
        if event["type"].endswith(".delta"):
            assert frame == original  # relayed, not re-serialised
        else:
            assert event["sequence_number"] == json.loads(original.split(b"data: ", 1)[1])["sequence_number"]


def test_filled_fields_come_from_the_request_and_the_servers_values_stay() -> None:
    body = (FIXTURES / "responses-text.response.json").read_bytes()
    response = orjson.loads(SHAPE.body(body))
    assert violations("ResponseResource", response) == []
    sent = orjson.loads(body)
    assert response["id"] == sent["id"] and response["output"][0]["content"][0]["text"] == sent["output"][0]["content"][0]["text"]
    assert response["prompt_cache_key"] == "chain-1" and response["safety_identifier"] == "user-9"
    assert response["store"] is False and response["completed_at"] == NOW
    assert response["text"] == {"format": {"type": "text"}} and response["top_logprobs"] == 0
    assert response["usage"]["input_tokens"] == sent["usage"]["input_tokens"]
    assert "input_tokens_per_turn" not in response["usage"]["input_tokens_details"]  # OpenAI's usage shape only


def test_an_in_progress_response_has_no_completion_time() -> None:
    created = {"id": "resp_1", "object": "response", "created_at": 1, "status": "in_progress", "model": "m", "output": []}
    assert SHAPE.response(created)["completed_at"] is None
    assert SHAPE.response({**created, "status": "failed"})["completed_at"] is None


def test_crlf_framing_becomes_lf_and_unnamed_frames_are_conformed_too() -> None:
    raw = (FIXTURES / "responses-text-stream.sse").read_bytes()
    unnamed = b"\n\n".join(frame.split(b"\n", 1)[1] for frame in _frames(raw)) + b"\n\n"
    for chunk_size in (0, 50):
        relayed = _relayed(unnamed.replace(b"\n", b"\r\n"), chunk_size)
        assert b"\r" not in relayed
        events = [json.loads(frame.split(b"data: ", 1)[1]) for frame in _frames(relayed)]
        assert len(events) == len(_frames(raw))
        assert [problem for event in events for problem in _violations(event)] == []


def test_what_is_not_json_or_not_an_object_is_relayed_as_it_came() -> None:
    for data in (b"[DONE]", b"not json", b'{"type":"response.completed","response":null}'):
        assert SHAPE.event("response.completed", data) is data
    assert SHAPE.body(b"[1, 2]") == b"[1, 2]"
    relay = ConformingSseRelay(SHAPE)
    assert relay.feed(b": keepalive\n\ndata: [DONE]\n\n") == b": keepalive\n\ndata: [DONE]\n\n"
