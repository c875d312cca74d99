"""Reasoning items sealed for stateless clients: the seal and its opening, and a round's public and model forms."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
from agentic_core.errors import InvalidRequest
from agentic_core.responses.reasoning import opened_request
from agentic_core.responses.stream import EventSequencer
from agentic_core.responses.turn_so_far import TurnSoFar
from agentic_core.routing import ModelRoute
from agentic_core.tools.protocol import ToolCall, ToolResult
from agentic_core.tools.registry import build_registry
from agentic_executor.compaction_seal import CompactionSeal
from agentic_executor.gateway_calls import GatewayCalls, ToolPolicy
from agentic_executor.reasoning_seal import ReasoningSeal
from agentic_executor.rounds import NextRound, Rounds, TurnDone
from agentic_runtime.sealed_box import PREFIX

KEY = "r" * 40
INCLUDE = ["reasoning.encrypted_content"]
THOUGHT = "the user wants the weather, so I should search first"
REASONING = {"id": "rs_1", "type": "reasoning", "summary": [], "status": "completed",
             "content": [{"type": "reasoning_text", "text": THOUGHT}]}
MESSAGE = {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
           "content": [{"type": "output_text", "text": "sunny", "annotations": [], "logprobs": []}]}
SEARCH = {"id": "fc_1", "type": "function_call", "call_id": "c1", "name": "web_search", "arguments": '{"query": "x"}',
          "status": "completed"}
ROUTE = ModelRoute("*", "http://model/v1")


def _sealed(tenant: str = "tenant-a", item: dict[str, Any] = REASONING) -> dict[str, Any]:
    return ReasoningSeal(KEY).sealer(tenant, INCLUDE)(item)


def test_a_sealed_item_keeps_its_parts_and_its_encrypted_content_hides_the_reasoning() -> None:
    sealed = _sealed()
    assert {key: value for key, value in sealed.items() if key != "encrypted_content"} == REASONING
    assert sealed["encrypted_content"].startswith(PREFIX)
    assert THOUGHT not in sealed["encrypted_content"] and "the user" not in sealed["encrypted_content"]


def test_opening_replays_what_the_model_produced_whatever_the_client_kept_of_it() -> None:
    sent_back = {**_sealed(), "content": [{"type": "reasoning_text", "text": "edited"}], "summary": []}
    opened = ReasoningSeal(KEY).opener("tenant-a")({key: value for key, value in sent_back.items() if key != "content"})
    assert opened == {"id": "rs_1", "type": "reasoning", "status": "completed", "summary": [],
                      "content": [{"type": "reasoning_text", "text": THOUGHT}]}
    assert "encrypted_content" not in opened  # vLLM refuses any
    opened = ReasoningSeal(KEY).opener("tenant-a")(sent_back)
    assert opened["content"] == REASONING["content"]


def test_a_model_servers_own_blob_is_sealed_with_the_reasoning_and_replayed_to_it() -> None:
    sealed = _sealed(item={**REASONING, "encrypted_content": "gAAAA-the-servers-own"})
    assert "gAAAA" not in sealed["encrypted_content"]
    assert ReasoningSeal(KEY).opener("tenant-a")(sealed)["encrypted_content"] == "gAAAA-the-servers-own"


@pytest.mark.parametrize("tamper", [
    lambda token: token[:-2] + ("AA" if not token.endswith("AA") else "BB"),
    lambda token: token[:20] + token[21:],
    lambda token: PREFIX + "!!not-base64",
    lambda token: PREFIX,
])
def test_a_tampered_blob_is_a_400_naming_the_input(tamper: Any) -> None:
    item = _sealed()
    with pytest.raises(InvalidRequest) as caught:
        ReasoningSeal(KEY).opener("tenant-a")({**item, "encrypted_content": tamper(item["encrypted_content"])})
    assert (caught.value.code, caught.value.param, caught.value.http_status) == ("invalid_encrypted_content", "input", 400)


def test_a_blob_sealed_for_another_tenant_another_key_or_as_a_compaction_does_not_open() -> None:
    item = _sealed("tenant-a")
    compaction_blob = CompactionSeal(KEY, plain=False)._box.seal(b'{"content": [], "summary": []}', b"tenant-a")  # type: ignore[union-attr]
    for opener, blob in ((ReasoningSeal(KEY).opener("tenant-b"), item["encrypted_content"]),
                         (ReasoningSeal("x" * 40).opener("tenant-a"), item["encrypted_content"]),
                         (ReasoningSeal(None).opener("tenant-a"), item["encrypted_content"]),
                         (ReasoningSeal(KEY).opener("tenant-a"), compaction_blob)):
        with pytest.raises(InvalidRequest) as caught:
            opener({**item, "encrypted_content": blob})
        assert caught.value.code == "invalid_encrypted_content"


def test_null_absent_and_foreign_encrypted_content_are_read_as_today() -> None:
    opener = ReasoningSeal(KEY).opener("tenant-a")
    for item in (REASONING, {**REASONING, "encrypted_content": None}, {**REASONING, "encrypted_content": "gAAAA-theirs"}):
        assert opener(item) is item


def test_nothing_is_sealed_unless_asked_for_and_never_without_a_key() -> None:
    assert ReasoningSeal(KEY).sealer("tenant-a", None)(REASONING) is REASONING
    assert ReasoningSeal(KEY).sealer("tenant-a", ["message.output_text.logprobs"])(REASONING) is REASONING
    assert ReasoningSeal(None).sealer("tenant-a", INCLUDE)(REASONING) is REASONING
    assert ReasoningSeal(KEY).sealer("tenant-a", INCLUDE)(MESSAGE) is MESSAGE


def test_one_turn_seals_an_item_once_so_its_event_and_its_response_agree() -> None:
    sealer = ReasoningSeal(KEY).sealer("tenant-a", INCLUDE)
    assert sealer(dict(REASONING))["encrypted_content"] == sealer(dict(REASONING))["encrypted_content"]
    assert sealer({**REASONING, "id": "rs_2"})["encrypted_content"] != sealer(REASONING)["encrypted_content"]


def test_a_request_body_gets_its_reasoning_items_opened_and_keeps_the_rest() -> None:
    body = {"model": "m", "input": [{"role": "user", "content": "hi"}, _sealed(), MESSAGE]}
    opened = opened_request(body, ReasoningSeal(KEY).opener("tenant-a"))
    assert opened["input"][0] == body["input"][0] and opened["input"][2] is MESSAGE
    assert opened["input"][1]["content"] == REASONING["content"] and "encrypted_content" not in opened["input"][1]
    plain = {"model": "m", "input": [{"role": "user", "content": "hi"}]}
    assert opened_request(plain, ReasoningSeal(KEY).opener("tenant-a")) is plain


# -- a round: the client sees the sealed item, the model's continuation keeps its own -----------------------------


class ScriptedUpstream:
    def __init__(self, *outputs: list[dict[str, Any]]) -> None:
        self.outputs = list(outputs)
        self.bodies: list[dict[str, Any]] = []

    async def create_response(self, route: ModelRoute, body: dict[str, Any]) -> dict[str, Any]:
        self.bodies.append(body)
        return {"status": "completed", "output": self.outputs.pop(0)}

    async def stream_response(self, route: ModelRoute, body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        self.bodies.append(body)
        output = self.outputs.pop(0)
        for index, item in enumerate(output):
            yield {"type": "response.output_item.added", "output_index": index, "item": {**item, "status": "in_progress"}}
            yield {"type": "response.output_item.done", "output_index": index, "item": item}
        yield {"type": "response.completed", "response": {"status": "completed", "output": output}}


class Dispatcher:
    async def call(self, call: ToolCall, timeout: float) -> ToolResult:
        return ToolResult.ok(call.call_id, "found")


def _rounds(upstream: ScriptedUpstream, include: list[str] | None = INCLUDE) -> Rounds:
    policy = ToolPolicy()
    calls = GatewayCalls(Dispatcher(), build_registry([{"type": "web_search"}]), policy, response_id="resp_1",
                         tenant="tenant-a", include=set(), max_tool_calls=None)
    return Rounds(upstream, calls, policy, route=ROUTE,  # type: ignore[arg-type]
                  reasoning=ReasoningSeal(KEY).sealer("tenant-a", include))


BODY = {"model": "m", "input": [{"role": "user", "content": "weather?"}]}


async def test_a_json_round_shows_sealed_reasoning_and_continues_with_the_models_own() -> None:
    upstream = ScriptedUpstream([REASONING, SEARCH], [MESSAGE])
    rounds = _rounds(upstream)
    result = await rounds.json_round(BODY, TurnSoFar())
    assert isinstance(result, NextRound)
    shown = result.so_far.public_output[0]
    assert shown["type"] == "reasoning" and shown["encrypted_content"].startswith(PREFIX)
    kept = result.so_far.continuation[0]
    assert kept["content"] == REASONING["content"] and "encrypted_content" not in kept
    # The next round reads the reasoning as the model wrote it, no blob.
    assert "encrypted_content" not in result.body["input"][1] and result.body["input"][1]["content"] == REASONING["content"]
    done = await rounds.json_round(result.body, result.so_far)
    assert isinstance(done, TurnDone)


async def test_a_streamed_round_seals_the_item_of_its_done_event_as_in_its_output() -> None:
    rounds = _rounds(ScriptedUpstream([REASONING, MESSAGE]))
    steps = [step async for step in rounds.stream_round(BODY, TurnSoFar(), [], EventSequencer())]
    done = steps[-1]
    assert isinstance(done, TurnDone)
    events = [orjson.loads(data) for _, _, data in steps[:-1]]
    added = next(event for event in events if event["type"] == "response.output_item.added")
    assert "encrypted_content" not in added["item"]
    finished = next(event for event in events if event["type"] == "response.output_item.done")
    shown = done.so_far.public_output[0]
    assert finished["item"]["encrypted_content"] == shown["encrypted_content"]
    assert finished["item"]["id"] == shown["id"] and THOUGHT not in shown["encrypted_content"]
    assert "encrypted_content" not in done.so_far.continuation[0]


async def test_without_include_a_round_shows_reasoning_as_today() -> None:
    rounds = _rounds(ScriptedUpstream([REASONING, MESSAGE]), include=None)
    done = await rounds.json_round(BODY, TurnSoFar())
    assert isinstance(done, TurnDone)
    assert "encrypted_content" not in done.so_far.public_output[0]
