"""The split data plane against a stand-in state client: budgets and what reaches state."""

from __future__ import annotations

import asyncio

import orjson
import pytest
from agentic_core.errors import PayloadTooLarge
from agentic_core.responses.history import StoredHistory
from agentic_llm_d.sealing import ContextSealer
from agentic_llm_d.settings import LlmDSettings
from agentic_llm_d.split import SplitService

KEY = "signing-key-" + "k" * 32
COMPLETED = {"status": "completed", "output": [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                                                "content": [{"type": "output_text", "text": "4", "annotations": []}]}]}


class RecordingState:
    def __init__(self) -> None:
        self.persisted: list[tuple[object, str]] = []

    async def rehydrate(self, principal, previous_response_id: str) -> StoredHistory:
        return StoredHistory([orjson.dumps({"type": "message", "id": "msg_h", "role": "user", "content": [{"type": "input_text", "text": "x" * 500}]})])

    async def persist_split_turn(self, turn, digest: str) -> bytes | None:
        self.persisted.append((turn, digest))
        return None


def _service(**settings: object) -> tuple[SplitService, RecordingState]:
    config = LlmDSettings(AGENTIC_LLM_D_SIGNING_KEY=KEY, AGENTIC_LLM_D_API_TOKEN="t" * 40, **settings)
    state = RecordingState()
    return SplitService(config, state, ContextSealer(KEY, 600)), state  # type: ignore[arg-type]


def _run(coroutine):
    return asyncio.run(coroutine)


def test_a_context_over_its_budget_is_413_at_hydrate() -> None:
    service, _ = _service(max_context_bytes=400)
    with pytest.raises(PayloadTooLarge) as raised:
        _run(service.hydrate(orjson.dumps({"model": "m", "input": "y" * 500}), "default"))
    assert raised.value.code == "body_too_large" and raised.value.http_status == 413


def test_the_relayed_response_budget_applies_to_json_and_sse() -> None:
    service, _ = _service(max_upstream_bytes=100)
    context = orjson.loads(_run(service.hydrate(orjson.dumps({"model": "m", "input": "hi"}), "default")))["context"]
    for relayed in ({"response": {**COMPLETED, "pad": "p" * 100}}, {"sse": "s" * 101}):
        with pytest.raises(PayloadTooLarge):
            _run(service.persist(orjson.dumps({"context": context, **relayed}), "default"))


def test_persist_stores_input_and_output_with_a_digest_that_an_identical_retry_repeats() -> None:
    service, state = _service()
    hydrated = orjson.loads(_run(service.hydrate(orjson.dumps({"model": "m", "input": "q", "previous_response_id": "resp_x"}), "t")))
    assert [item["content"][0]["text"][:1] for item in hydrated["request"]["input"]] == ["x", "q"]
    body = orjson.dumps({"context": hydrated["context"], "response": COMPLETED})
    stored = orjson.loads(_run(service.persist(body, "t")))
    _run(service.persist(body, "t"))
    (first, digest), (_, retry_digest) = state.persisted
    assert digest == retry_digest
    assert first.principal.tenant == "t" and first.previous_response_id == "resp_x" and first.response_id == stored["id"]
    assert [item.id for item in first.output_items] == ["msg_1"] and len(first.input_items) == 1
    reordered = orjson.dumps({"context": hydrated["context"], "response": {"output": COMPLETED["output"], "status": "completed"}})
    _run(service.persist(reordered, "t"))
    assert state.persisted[-1][1] == digest  # key order does not make a retry different


def test_a_different_response_has_a_different_digest() -> None:
    service, state = _service()
    context = orjson.loads(_run(service.hydrate(orjson.dumps({"model": "m", "input": "q"}), "t")))["context"]
    _run(service.persist(orjson.dumps({"context": context, "response": COMPLETED}), "t"))
    _run(service.persist(orjson.dumps({"context": context, "response": {**COMPLETED, "usage": {"output_tokens": 1}}}), "t"))
    assert state.persisted[0][1] != state.persisted[1][1]


def test_store_false_and_failed_responses_never_reach_state() -> None:
    service, state = _service()
    unstored = orjson.loads(_run(service.hydrate(orjson.dumps({"model": "m", "input": "q", "store": False}), "t")))["context"]
    assert orjson.loads(_run(service.persist(orjson.dumps({"context": unstored, "response": COMPLETED}), "t")))["store"] is False
    context = orjson.loads(_run(service.hydrate(orjson.dumps({"model": "m", "input": "q"}), "t")))["context"]
    failed = orjson.loads(_run(service.persist(orjson.dumps({"context": context, "response": {"status": "failed", "output": []}}), "t")))
    assert failed["status"] == "error" and failed["error"]["code"] == "upstream_failed"
    assert state.persisted == []
