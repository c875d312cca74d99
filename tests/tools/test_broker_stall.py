"""A NATS stall (the server paused, connections kept) delays a tool call; it never falsifies or repeats it."""

from __future__ import annotations

import asyncio
import gc
import secrets
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from agentic_core.tools.protocol import ToolCall
from agentic_local.infra import EmbeddedNats
from agentic_runtime.nats import broker
from agentic_runtime.tls import transport_security
from agentic_runtime.tools.consumer import KindConsumer
from agentic_runtime.tools.dispatch import DispatchMetrics, ToolDispatcher
from prometheus_client import CollectorRegistry, Counter, Histogram

from tests.tools.test_dispatch import CountingTool

STALL_SECONDS = 7.0  # past one broker request's 5 s timeout


@pytest.fixture()
def server(tmp_path: Path) -> Iterator[EmbeddedNats]:
    nats_server = EmbeddedNats(tmp_path, tmp_path / "logs")
    nats_server.start()
    yield nats_server
    nats_server.resume()
    nats_server.stop()


class Wiring:
    """A consumer of a fresh kind and a dispatcher with its own metrics, on one connection."""

    def __init__(self, tool: CountingTool, consumer: KindConsumer, dispatcher: ToolDispatcher) -> None:
        self.tool, self.consumer, self.dispatcher = tool, consumer, dispatcher
        self.unhandled: list[str] = []  # what the loop reported: task exceptions nobody retrieved

    def loop_reports(self, loop: asyncio.AbstractEventLoop, context: dict[str, object]) -> None:
        self.unhandled.append(f"{context.get('message')}: {context.get('exception')!r}")

    def duplicates(self) -> float:
        assert self.dispatcher.metrics is not None
        return self.dispatcher.metrics.duplicate_results._value.get()  # type: ignore[attr-defined,no-any-return]


@pytest.fixture()
async def wiring(server: EmbeddedNats) -> AsyncIterator[Wiring]:
    client = await broker.connect(server.url, "test", transport_security({}))
    await broker.ensure_streams(client)
    registry = CollectorRegistry()
    metrics = DispatchMetrics(
        Counter("calls", "", ["kind", "status"], registry=registry), Histogram("seconds", "", ["kind"], registry=registry),
        Counter("duplicates", "", registry=registry),
    )
    tool = CountingTool(f"stall{secrets.token_hex(4)}", seconds=1.0)
    consumer = KindConsumer(client, tool, concurrency=2, ack_wait=2.0, max_deliveries=5, backoff=[], lag_poll_seconds=1)
    await consumer.start()
    dispatcher = ToolDispatcher(client, metrics)
    await dispatcher.start()
    wired = Wiring(tool, consumer, dispatcher)
    asyncio.get_running_loop().set_exception_handler(wired.loop_reports)
    yield wired
    await dispatcher.close()
    await consumer.stop(1)
    await client.close()


def _call(kind: str) -> ToolCall:
    return ToolCall(call_id=f"resp_s/{secrets.token_hex(6)}", kind=kind, tool="counting", arguments={"x": 1},
                    deadline=time.time() + 30)


async def _stall(server: EmbeddedNats) -> None:
    server.pause()
    try:
        await asyncio.sleep(STALL_SECONDS)
    finally:
        server.resume()


async def test_a_call_published_during_a_stall_runs_once_when_the_broker_is_back(server, wiring: Wiring) -> None:
    call = _call(wiring.tool.kind)
    await wiring.dispatcher.has_runner(call.kind)  # known before the stall: the publish is what waits
    stall = asyncio.create_task(_stall(server))
    await asyncio.sleep(0.2)
    result = await wiring.dispatcher.call(call, timeout=30)
    await stall
    assert result.status == "ok", result.content
    assert wiring.tool.started == [call.call_id]
    assert wiring.duplicates() == 0


async def test_a_stall_while_the_call_runs_delays_its_result_without_running_it_again(server, wiring: Wiring) -> None:
    call = _call(wiring.tool.kind)
    answer = asyncio.create_task(wiring.dispatcher.call(call, timeout=30))
    while not wiring.tool.started:
        await asyncio.sleep(0.05)
    await _stall(server)  # the result is kept and answered past the ack wait and past one request's timeout
    result = await answer
    assert result.status == "ok", result.content
    assert wiring.tool.started == [call.call_id]
    # The message is acknowledged: nothing waits for an ack wait, nothing is redelivered later.
    info = await wiring.consumer.jetstream.consumer_info("TOOLS", wiring.consumer.durable)
    deadline = time.monotonic() + 10
    while info.num_ack_pending and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
        info = await wiring.consumer.jetstream.consumer_info("TOOLS", wiring.consumer.durable)
    assert info.num_ack_pending == 0 and info.num_pending == 0
    assert wiring.tool.started == [call.call_id]
    gc.collect()  # a finished task's unretrieved exception is reported when it is collected
    assert wiring.unhandled == []


async def test_the_deadline_alone_times_a_call_out_with_an_accurate_message(server, wiring: Wiring) -> None:
    call = _call(wiring.tool.kind)
    await wiring.dispatcher.has_runner(call.kind)
    server.pause()
    try:
        result = await wiring.dispatcher.call(call, timeout=2)
    finally:
        server.resume()
    assert result.status == "error"
    assert "could not be dispatched within 2 s" in str(result.content)
