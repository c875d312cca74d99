"""A background response's events in JetStream, on a real NATS server: a client streaming it gets every event once,
in order, as published (bytes untouched), up to the terminal event; resuming after an event gets the rest, live ones
included; a publish retried after a lost acknowledgement is not seen twice; and events past their retention are a
400 telling the client to retrieve the response instead, never a stream with a gap."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator

import pytest
from agentic_core.errors import InvalidRequest
from agentic_core.responses.stream import PublicEvent
from agentic_executor.response_events import ResponseEvents
from agentic_runtime.nats.broker import connect, ensure_streams
from agentic_runtime.tls import transport_security


def _events(count: int, first: int = 0) -> list[PublicEvent]:
    """`count` deltas from sequence `first`, the last of them turned into `response.completed`."""
    events: list[PublicEvent] = [("response.output_text.delta", n, b'{"delta": "w%d", "sequence_number": %d}' % (n, n))
                                 for n in range(first, first + count)]
    last = first + count - 1
    events[-1] = ("response.completed", last, b'{"type": "response.completed", "sequence_number": %d}' % last)
    return events


@pytest.fixture(scope="module")
async def events(infra: dict[str, str]) -> AsyncIterator[ResponseEvents]:
    client = await connect(infra["nats_url"], "agentic-executor-test", transport_security({}))
    await ensure_streams(client)
    yield ResponseEvents(client)
    await client.close()


@pytest.fixture()
def response_id() -> str:
    return f"resp_{secrets.token_hex(8)}"


async def _read(events: ResponseEvents, response_id: str, starting_after: int, ended: bool = True) -> list[PublicEvent]:
    return [event async for event in events.read(response_id, starting_after, ended)]


async def test_a_stream_is_every_event_in_order_up_to_the_terminal_one(events: ResponseEvents, response_id: str) -> None:
    published = _events(5)
    for event in published:
        await events.publish(response_id, event)
    assert await _read(events, response_id, starting_after=-1) == published


async def test_resuming_after_an_event_gets_the_rest(events: ResponseEvents, response_id: str) -> None:
    published = _events(5)
    for event in published:
        await events.publish(response_id, event)
    assert await _read(events, response_id, starting_after=1) == published[2:]


async def test_a_reader_waiting_on_a_running_response_gets_its_events_as_they_come(
        events: ResponseEvents, response_id: str) -> None:
    published = _events(4)
    await events.publish(response_id, published[0])
    reader = asyncio.create_task(_read(events, response_id, starting_after=-1, ended=False))
    await asyncio.sleep(0.2)
    assert not reader.done()
    for event in published[1:]:
        await events.publish(response_id, event)
    assert await asyncio.wait_for(reader, 10) == published


async def test_a_retried_publish_is_not_seen_twice(events: ResponseEvents, response_id: str) -> None:
    published = _events(3)
    for event in [published[0], published[0], published[1], published[1], published[2]]:
        await events.publish(response_id, event)
    assert await _read(events, response_id, starting_after=-1) == published


async def test_the_next_sequence_continues_after_the_last_event(events: ResponseEvents, response_id: str) -> None:
    assert await events.next_sequence(response_id) == 0
    for event in _events(3):
        await events.publish(response_id, event)
    assert await events.next_sequence(response_id) == 3


async def test_an_ended_response_whose_events_are_gone_is_a_400(events: ResponseEvents, response_id: str) -> None:
    with pytest.raises(InvalidRequest) as expired:
        await _read(events, response_id, starting_after=-1)
    assert expired.value.code == "events_expired" and expired.value.param == "stream"


async def test_events_asked_for_that_are_no_longer_kept_are_a_400_not_a_gap(events: ResponseEvents,
                                                                            response_id: str) -> None:
    for event in _events(3, first=5):  # as if 0-4 had aged out
        await events.publish(response_id, event)
    with pytest.raises(InvalidRequest) as expired:
        await _read(events, response_id, starting_after=0)
    assert expired.value.code == "events_expired"
    assert [sequence for _, sequence, _ in await _read(events, response_id, starting_after=4)] == [5, 6, 7]
