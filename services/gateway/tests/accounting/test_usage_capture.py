"""The usage of replies the gateway relays itself (pass-through), as the state service receives it: from a JSON
body, from a long stream's terminal event, from an Anthropic stream's first and last events, once per reply."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from agentic.v1 import common_pb2, usage_pb2, usage_pb2_grpc
from agentic_gateway.accounting.usage_capture import TAIL_BYTES, UsageTap
from agentic_runtime.state.usage import UsageRecorder

PRINCIPAL = common_pb2.Principal(tenant="team", subject="me", key_id="key_1")


class Usage(usage_pb2_grpc.UsageServicer):
    def __init__(self) -> None:
        self.entries: list[usage_pb2.UsageEntry] = []

    async def Record(self, request: usage_pb2.UsageBatch, context: Any) -> usage_pb2.UsageRecorded:
        self.entries.extend(request.entries)
        return usage_pb2.UsageRecorded()


@pytest.fixture()
async def recorded(serve: Any) -> tuple[UsageRecorder, Usage]:
    servicer = Usage()
    peer = await serve("state", lambda server: usage_pb2_grpc.add_UsageServicer_to_server(servicer, server))
    return UsageRecorder(peer), servicer


def _sse(event_type: str, data: dict[str, Any]) -> bytes:
    return f"event: {event_type}\ndata: ".encode() + orjson.dumps(data) + b"\n\n"


async def _sent(recorder: UsageRecorder, servicer: Usage) -> list[tuple[str, str, int, int, int, int]]:
    await recorder.close()  # sends what is pending
    return [(entry.tenant, entry.model, entry.input_tokens, entry.cached_tokens, entry.output_tokens, entry.requests)
            for entry in servicer.entries]


async def test_a_json_reply_counts_its_usage_once(recorded: tuple[UsageRecorder, Usage]) -> None:
    recorder, servicer = recorded
    tap = UsageTap(recorder, PRINCIPAL, "gpt-test")
    body = orjson.dumps({"choices": [{"message": {"content": "hi, usage is not this: {\"usage\": 1}"}}],
                         "usage": {"prompt_tokens": 12, "completion_tokens": 5,
                                   "prompt_tokens_details": {"cached_tokens": 4}}})
    tap.body(body)
    tap.body(body)  # a reply counts once, however it is reported
    assert await _sent(recorder, servicer) == [("team", "gpt-test", 12, 4, 5, 1)]


async def test_a_long_stream_counts_its_terminal_events_usage(recorded: tuple[UsageRecorder, Usage]) -> None:
    recorder, servicer = recorded
    tap = UsageTap(recorder, PRINCIPAL, "gpt-test")
    delta = _sse("response.output_text.delta", {"type": "response.output_text.delta", "delta": "x" * 1000})
    for _ in range(4 * TAIL_BYTES // len(delta)):  # far more than the tap keeps
        tap.chunk(delta)
    tap.chunk(_sse("response.completed", {"type": "response.completed", "response": {
        "output": [], "usage": {"input_tokens": 30, "output_tokens": 70,
                                "input_tokens_details": {"cached_tokens": 10}}}}))
    tap.end()
    assert await _sent(recorder, servicer) == [("team", "gpt-test", 30, 10, 70, 1)]


async def test_an_anthropic_stream_counts_input_from_its_start_and_output_from_its_end(
        recorded: tuple[UsageRecorder, Usage]) -> None:
    recorder, servicer = recorded
    tap = UsageTap(recorder, PRINCIPAL, "claude-test")
    tap.chunk(_sse("message_start", {"type": "message_start", "message": {
        "usage": {"input_tokens": 21, "cache_read_input_tokens": 9, "output_tokens": 1}}}))
    for _ in range(3 * TAIL_BYTES // 100):
        tap.chunk(_sse("content_block_delta", {"type": "content_block_delta", "delta": {"text": "y" * 60}}))
    tap.chunk(_sse("message_delta", {"type": "message_delta", "usage": {"output_tokens": 42}}))
    tap.end()
    # The input is the uncached tokens plus the cache's; the output is the last count.
    assert await _sent(recorder, servicer) == [("team", "claude-test", 30, 9, 42, 1)]


async def test_a_reply_without_usage_still_counts_a_request(recorded: tuple[UsageRecorder, Usage]) -> None:
    recorder, servicer = recorded
    tap = UsageTap(recorder, PRINCIPAL, "gpt-test")
    tap.chunk(b"data: {\"choices\": []}\n\n")
    tap.end()
    tap.end()
    assert await _sent(recorder, servicer) == [("team", "gpt-test", 0, 0, 0, 1)]
