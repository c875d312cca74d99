"""Events ready at once leave as one message, in order; a lone event is not held back; an error comes after
what preceded it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from agentic.v1 import executor_pb2
from agentic_core.errors import InvalidRequest
from agentic_executor.coalesce import coalesced


def _event(n: int) -> executor_pb2.ExecuteEvent:
    return executor_pb2.ExecuteEvent(event=executor_pb2.StreamEvent(event_type="e", sequence_number=n, data=b"{}"))


def _numbers(message: executor_pb2.ExecuteEvent) -> list[int]:
    if message.WhichOneof("payload") == "events":
        return [event.sequence_number for event in message.events.events]
    return [message.event.sequence_number]


async def _collect(source: AsyncIterator[executor_pb2.ExecuteEvent]) -> list[list[int]]:
    return [_numbers(message) async for message in coalesced(source)]


async def test_a_burst_leaves_together_and_a_pause_splits_it() -> None:
    async def turn() -> AsyncIterator[executor_pb2.ExecuteEvent]:
        for n in range(3):
            yield _event(n)
        await asyncio.sleep(0.05)  # waiting for the model server: what is ready goes now
        for n in range(3, 5):
            yield _event(n)

    assert await _collect(turn()) == [[0, 1, 2], [3, 4]]


async def test_a_lone_event_is_sent_alone_and_at_once() -> None:
    sent: list[list[int]] = []
    gate = asyncio.Event()

    async def turn() -> AsyncIterator[executor_pb2.ExecuteEvent]:
        yield _event(0)
        await gate.wait()
        yield _event(1)

    async def read() -> None:
        async for message in coalesced(turn()):
            sent.append(_numbers(message))
            gate.set()

    await asyncio.wait_for(read(), 5)
    assert sent == [[0], [1]]


async def test_an_error_follows_the_events_before_it() -> None:
    async def turn() -> AsyncIterator[executor_pb2.ExecuteEvent]:
        yield _event(0)
        yield _event(1)
        raise InvalidRequest("boom")

    received: list[list[int]] = []
    with pytest.raises(InvalidRequest):
        async for message in coalesced(turn()):
            received.append(_numbers(message))
    assert received == [[0, 1]]


async def test_a_json_response_is_not_batched() -> None:
    async def turn() -> AsyncIterator[executor_pb2.ExecuteEvent]:
        yield executor_pb2.ExecuteEvent(response=b'{"id": "resp_1"}')

    messages = [message async for message in coalesced(turn())]
    assert [message.WhichOneof("payload") for message in messages] == ["response"]
