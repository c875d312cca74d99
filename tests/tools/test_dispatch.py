"""Tool calls over real NATS JetStream: executor dispatch, runner consumers, redelivery, deadlines, dedupe."""

from __future__ import annotations

import asyncio
import secrets
import time

import pytest
from agentic_core.tools.protocol import ToolCall, ToolResult
from agentic_local.infra import EmbeddedNats
from agentic_runtime.nats import broker
from agentic_runtime.tls import transport_security
from agentic_runtime.tools import protocol
from agentic_runtime.tools.consumer import KindConsumer
from agentic_runtime.tools.dispatch import DispatchMetrics, ToolDispatcher
from prometheus_client import CollectorRegistry, Counter, Histogram


class CountingTool:
    """A tool that sleeps, then records that it finished (its 'side effect')."""

    def __init__(self, kind: str, seconds: float = 0.0) -> None:
        self.kind = kind
        self.seconds = seconds
        self.started: list[str] = []
        self.finished: list[str] = []
        self.running = 0
        self.most_at_once = 0

    async def run(self, call: ToolCall) -> ToolResult:
        self.started.append(call.call_id)
        self.running += 1
        self.most_at_once = max(self.most_at_once, self.running)
        try:
            await asyncio.sleep(self.seconds)
        finally:
            self.running -= 1
        self.finished.append(call.call_id)
        return ToolResult.ok(call.call_id, {"echo": call.arguments})

    async def close(self) -> None:
        pass


@pytest.fixture()
async def client(infra):
    connection = await broker.connect(infra["nats_url"], "test", transport_security({}))
    await broker.ensure_streams(connection)
    yield connection
    await connection.drain()


@pytest.fixture()
def kind() -> str:
    return f"test{secrets.token_hex(4)}"


def _call(kind: str, seconds: float = 10.0) -> ToolCall:
    return ToolCall(call_id=f"resp_t/{secrets.token_hex(6)}", kind=kind, tool="counting", arguments={"x": 1},
                    deadline=time.time() + seconds)


def _consumer(client, tool, ack_wait: float = 30.0) -> KindConsumer:
    return KindConsumer(client, tool, concurrency=2, ack_wait=ack_wait, max_deliveries=5, backoff=[], lag_poll_seconds=1)


async def test_a_call_reaches_a_runner_and_its_result_comes_back(client, kind) -> None:
    tool = CountingTool(kind)
    consumer = _consumer(client, tool)
    await consumer.start()
    dispatcher = ToolDispatcher(client)
    await dispatcher.start()
    try:
        call = _call(kind)
        result = await dispatcher.call(call, timeout=10)
        assert result.status == "ok" and result.content == {"echo": {"x": 1}}
        assert tool.finished == [call.call_id]
    finally:
        await dispatcher.close()
        await consumer.stop(1)


async def test_without_a_runner_the_call_fails_instead_of_waiting_for_its_timeout(client, kind) -> None:
    dispatcher = ToolDispatcher(client)
    await dispatcher.start()
    result = await dispatcher.call(_call(kind), timeout=30)
    await dispatcher.close()
    assert result.status == "error" and "No runner" in result.content


async def test_a_call_past_its_deadline_is_dropped_unrun(client, kind) -> None:
    tool = CountingTool(kind)
    consumer = _consumer(client, tool)
    await consumer.start()
    dispatcher = ToolDispatcher(client)
    await dispatcher.start()
    try:
        result = await dispatcher.call(_call(kind, seconds=-1), timeout=2)
        assert result.status == "error" and "did not finish" in result.content
        await asyncio.sleep(0.5)
        assert tool.started == []
    finally:
        await dispatcher.close()
        await consumer.stop(1)


async def test_a_runner_dying_mid_call_hands_it_to_another_and_it_finishes_once(client, kind) -> None:
    doomed, survivor = CountingTool(kind, seconds=30), CountingTool(kind, seconds=0.2)
    first = _consumer(client, doomed, ack_wait=1.0)
    await first.start()
    dispatcher = ToolDispatcher(client)
    await dispatcher.start()
    call = _call(kind, seconds=30)
    pending = asyncio.create_task(dispatcher.call(call, timeout=30))
    while not doomed.started:
        await asyncio.sleep(0.05)
    await first.stop(0)  # dies without acknowledging: the call is redelivered after the ack wait
    second = _consumer(client, survivor, ack_wait=1.0)
    await second.start()
    try:
        result = await pending
        assert result.status == "ok"
        assert doomed.finished == [] and survivor.finished == [call.call_id]
    finally:
        await dispatcher.close()
        await second.stop(1)


async def test_a_redelivered_finished_call_is_answered_without_running_again(client, kind) -> None:
    tool = CountingTool(kind)
    results = await broker.ensure_key_value(client, protocol.TOOL_RESULTS_BUCKET, protocol.TOOL_RESULTS_TTL_SECONDS)
    call = _call(kind)
    await results.put(protocol.result_key(call.call_id), ToolResult.ok(call.call_id, "from before").to_json())
    consumer = _consumer(client, tool)
    await consumer.start()
    dispatcher = ToolDispatcher(client)
    await dispatcher.start()
    try:
        result = await dispatcher.call(call, timeout=10)
        assert result.content == "from before" and tool.started == []
    finally:
        await dispatcher.close()
        await consumer.stop(1)


async def test_the_first_result_wins_and_duplicates_are_dropped(client, kind) -> None:
    dispatcher = ToolDispatcher(client)
    await dispatcher.start()
    call = _call(kind)
    future = asyncio.get_running_loop().create_future()
    dispatcher.pending[call.call_id] = future
    await client.publish(dispatcher.inbox + ".x", ToolResult.ok(call.call_id, "first").to_json())
    await client.publish(dispatcher.inbox + ".y", ToolResult.ok(call.call_id, "second").to_json())
    await client.flush()
    assert (await asyncio.wait_for(future, 5)).content == "first"
    await dispatcher.close()


async def test_calls_beyond_the_runner_concurrency_wait_their_turn(client, kind) -> None:
    tool = CountingTool(kind, seconds=0.3)
    consumer = KindConsumer(client, tool, concurrency=1, ack_wait=30, max_deliveries=5, backoff=[], lag_poll_seconds=1)
    await consumer.start()
    dispatcher = ToolDispatcher(client)
    await dispatcher.start()
    try:
        results = await asyncio.gather(*(dispatcher.call(_call(kind), timeout=10) for _ in range(3)))
        assert all(result.status == "ok" for result in results)
        assert tool.most_at_once == 1 and len(tool.finished) == 3
    finally:
        await dispatcher.close()
        await consumer.stop(1)


# Call ids as model servers and llm-d coordinators write them: none is a valid KV key, subject token or header as is.
ODD_CALL_IDS = [
    "functions.get_weather:0",
    "call with spaces",
    "appel_météo_天気_🌦",
    ".leading.and..double.dots.",
    "wild*card",
    "tail>",
    "line\r\nbreak",
    ("call:é.*> " * 50)[:500],
]


async def test_any_call_id_gets_its_result_once_and_is_acknowledged(client, kind) -> None:
    tool = CountingTool(kind)
    consumer = _consumer(client, tool, ack_wait=1.0)
    await consumer.start()
    dispatcher = ToolDispatcher(client)
    await dispatcher.start()
    response_id = f"resp_{secrets.token_hex(6)}"
    calls = [ToolCall(call_id=f"{response_id}/{call_id}", kind=kind, tool="counting", arguments={"x": index},
                      deadline=time.time() + 30) for index, call_id in enumerate(ODD_CALL_IDS)]
    try:
        results = await asyncio.gather(*(dispatcher.call(call, timeout=5) for call in calls))
        assert [(result.call_id, result.status, result.content) for result in results] == [
            (call.call_id, "ok", {"echo": call.arguments}) for call in calls
        ]
        await asyncio.sleep(2.5)  # past two ack waits: an unacknowledged call would have been redelivered by now
        assert sorted(tool.started) == sorted(tool.finished) == sorted(call.call_id for call in calls)
        info = await client.jetstream().consumer_info(protocol.TOOLS_STREAM.name, consumer.durable)
        assert (info.num_pending, info.num_ack_pending, info.num_redelivered) == (0, 0, 0)
        stored = await broker.ensure_key_value(client, protocol.TOOL_RESULTS_BUCKET)
        for call in calls:
            entry = await stored.get(protocol.result_key(call.call_id))
            assert entry.value is not None and ToolResult.from_json(entry.value).call_id == call.call_id
    finally:
        await dispatcher.close()
        await consumer.stop(1)


async def test_a_broker_that_stops_answering_makes_an_error_result_not_a_failed_turn(tmp_path) -> None:
    # A server of its own: stopping the shared one would fail every other test.
    server = EmbeddedNats(tmp_path, tmp_path)
    connection = await broker.connect(server.start(), "test-broker-gone", transport_security({}))
    try:
        await broker.ensure_streams(connection)
        dispatcher = ToolDispatcher(connection)
        await dispatcher.start()
        server.stop()  # the runner lookup (a JetStream request) now times out
        result = await asyncio.wait_for(dispatcher.call(_call("web_search"), timeout=2), 30)
        assert result.status == "error" and "could not be dispatched" in result.content
    finally:
        server.stop()
        await connection.close()


async def test_the_dispatcher_counts_calls_and_duplicates_in_the_metrics_it_is_given(client, kind) -> None:
    registry = CollectorRegistry()
    metrics = DispatchMetrics(
        Counter("calls", "", ["kind", "status"], registry=registry), Histogram("seconds", "", ["kind"], registry=registry),
        Counter("duplicates", "", registry=registry),
    )
    tool = CountingTool(kind)
    consumer = _consumer(client, tool)
    await consumer.start()
    dispatcher = ToolDispatcher(client, metrics)
    await dispatcher.start()
    try:
        result = await dispatcher.call(_call(kind), timeout=10)
        await client.publish(dispatcher.inbox + ".late", result.to_json())  # the same result again: a duplicate
        await client.flush()
        await asyncio.sleep(0.2)
    finally:
        await dispatcher.close()
        await consumer.stop(1)
    assert registry.get_sample_value("calls_total", {"kind": kind, "status": "ok"}) == 1
    assert registry.get_sample_value("seconds_count", {"kind": kind}) == 1
    assert registry.get_sample_value("duplicates_total") == 1
