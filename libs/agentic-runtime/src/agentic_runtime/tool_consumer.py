"""One durable JetStream pull consumer per tool kind, shared by every replica (tool runners, mcp-bridge).

At-least-once without double side effects: a finished call's result is kept
in a KV bucket before the message is acked, so a redelivery (the runner died
after finishing) is answered from there instead of running the tool again; a
call whose deadline passed is dropped unrun. Long calls heartbeat so that they
are not redelivered while still running.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Protocol

from agentic_core.tools.protocol import ToolCall, ToolResult
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.errors import TimeoutError as NatsTimeoutError
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy
from nats.js.errors import KeyNotFoundError
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind
from prometheus_client import Counter, Gauge, Histogram

from agentic_runtime.nats import ensure_key_value
from agentic_runtime.tool_protocol import (
    REPLY_HEADER,
    TOOL_RESULTS_BUCKET,
    TOOL_RESULTS_TTL_SECONDS,
    TOOLS_STREAM_NAME,
    durable_name,
    result_key,
    subject_for,
)
from agentic_runtime.tracing import context_from, tracer

log = logging.getLogger(__name__)
_tracer = tracer("agentic.tools")

# Queue depth and lag per kind drive autoscaling (KEDA on the durable consumer, or these gauges).
CALLS = Histogram(
    "agentic_tool_runner_call_seconds", "Tool calls run by this runner, by kind and result status.", ["kind", "status"],
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120),
)
IN_FLIGHT = Gauge("agentic_tool_runner_in_flight", "Calls running now in this runner.", ["kind"])
DROPPED_EXPIRED = Counter("agentic_tool_runner_dropped_expired_total", "Calls dropped unrun: deadline passed.", ["kind"])
REPLAYED = Counter("agentic_tool_runner_replayed_total", "Redelivered calls answered from the stored result.", ["kind"])
QUEUE_PENDING = Gauge("agentic_tool_queue_pending", "Calls waiting in the durable consumer of a kind.", ["kind"])
QUEUE_ACK_PENDING = Gauge("agentic_tool_queue_ack_pending", "Calls delivered and not yet acknowledged.", ["kind"])


class ToolHandler(Protocol):
    """Runs one kind of call. Must not raise for a tool-level failure: return `ToolResult.error`.

    `run` is awaited with the call's deadline as a timeout by the consumer; a
    handler that needs a process or the network cleans up when cancelled.
    """

    kind: str

    async def run(self, call: ToolCall) -> ToolResult: ...

    async def close(self) -> None: ...


class KindConsumer:
    def __init__(
        self,
        client: Client,
        handler: ToolHandler,
        *,
        concurrency: int,
        ack_wait: float,
        max_deliveries: int,
        backoff: list[float],
        lag_poll_seconds: float,
        durable: str | None = None,
    ) -> None:
        self.client = client
        self.jetstream = client.jetstream()
        self.handler = handler
        self.kind = handler.kind
        self.durable = durable or durable_name(handler.kind)
        self.concurrency = concurrency
        self.ack_wait = ack_wait
        self.max_deliveries = max(max_deliveries, len(backoff) + 1)
        self.backoff = backoff
        self.lag_poll_seconds = lag_poll_seconds
        self.active: set[asyncio.Task[None]] = set()
        self._slots = asyncio.Semaphore(concurrency)
        self._stopping = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        # A dedupe cache of recent results: kept in memory, it costs a call no disk write.
        self.results = await ensure_key_value(self.client, TOOL_RESULTS_BUCKET, TOOL_RESULTS_TTL_SECONDS, in_memory=True)
        config = ConsumerConfig(
            durable_name=self.durable,
            filter_subject=subject_for(self.kind),
            ack_policy=AckPolicy.EXPLICIT,
            deliver_policy=DeliverPolicy.ALL,
            ack_wait=self.ack_wait,
            max_deliver=self.max_deliveries,
            backoff=self.backoff or None,
        )
        self.subscription = await self.jetstream.pull_subscribe(
            subject_for(self.kind), durable=self.durable, stream=TOOLS_STREAM_NAME, config=config
        )
        self._tasks = [asyncio.create_task(self._fetch_loop()), asyncio.create_task(self._export_lag())]

    async def stop(self, drain_seconds: float) -> None:
        """Stop taking calls, give running ones `drain_seconds`, leave the rest to be redelivered."""
        self._stopping.set()
        for task in self._tasks:
            task.cancel()
        if self.active:
            await asyncio.wait(self.active, timeout=drain_seconds)
        for task in self.active:
            task.cancel()
        try:
            await self.subscription.unsubscribe()
        except Exception as exc:  # already gone with the connection
            log.debug("unsubscribing %s: %s", self.kind, exc)
        await self.handler.close()

    async def _fetch_loop(self) -> None:
        while not self._stopping.is_set():
            await self._slots.acquire()
            free = 1
            while free < self.concurrency and not self._slots.locked():
                await self._slots.acquire()
                free += 1
            try:
                messages = await self.subscription.fetch(free, timeout=1.0)
            except (NatsTimeoutError, TimeoutError):
                messages = []
            except Exception as exc:  # the broker went away for a moment: try again
                log.warning("fetching %s calls failed: %s", self.kind, exc)
                messages = []
                await asyncio.sleep(0.5)
            for _ in range(free - len(messages)):
                self._slots.release()
            for message in messages:
                task = asyncio.create_task(self._handle(message))
                self.active.add(task)
                task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self.active.discard(task)
        self._slots.release()

    async def _handle(self, message: Msg) -> None:
        try:
            call = ToolCall.from_json(message.data)
        except (ValueError, TypeError, KeyError):
            log.warning("dropping a malformed %s call", self.kind)
            await message.term()
            return
        reply = (message.headers or {}).get(REPLY_HEADER)
        if call.expired():
            DROPPED_EXPIRED.labels(kind=self.kind).inc()
            await message.ack()
            return
        stored = await self._stored_result(call.call_id)
        if stored is not None:
            REPLAYED.labels(kind=self.kind).inc()
            await self._answer(reply, stored)
            await message.ack()
            return
        # This task exists for this call alone: the call's span stays current in it, no detach needed.
        span = _tracer.start_span(f"tool {call.kind}", context=context_from(call.trace), kind=SpanKind.CONSUMER,
                                  attributes={"agentic.tool": call.tool, "agentic.call_id": call.call_id})
        otel_context.attach(trace.set_span_in_context(span))
        log.info("running %s call %s", call.tool, call.call_id)
        heartbeat = asyncio.create_task(self._heartbeat(message))
        IN_FLIGHT.labels(kind=self.kind).inc()
        started = time.perf_counter()
        try:
            result = await self._run(call)
        finally:
            heartbeat.cancel()
            IN_FLIGHT.labels(kind=self.kind).dec()
            span.end()
        CALLS.labels(kind=self.kind, status=result.status).observe(time.perf_counter() - started)
        payload = result.to_json()
        await self.results.put(result_key(call.call_id), payload)
        await self._answer(reply, payload)
        await message.ack()

    async def _run(self, call: ToolCall) -> ToolResult:
        try:
            return await asyncio.wait_for(self.handler.run(call), timeout=call.seconds_left())
        except TimeoutError:
            return ToolResult.error(call.call_id, f"The {call.tool} tool ran past its deadline.")
        except Exception as exc:  # a broken tool is a failed call, never a dead runner
            log.exception("the %s tool failed", call.tool)
            return ToolResult.error(call.call_id, f"The {call.tool} tool failed: {type(exc).__name__}.")

    async def _stored_result(self, call_id: str) -> bytes | None:
        try:
            entry = await self.results.get(result_key(call_id))
        except KeyNotFoundError:
            return None
        return entry.value or None

    async def _answer(self, reply: str | None, payload: bytes) -> None:
        if reply:
            await self.client.publish(reply, payload)

    async def _heartbeat(self, message: Msg) -> None:
        while True:
            await asyncio.sleep(self.ack_wait / 3)
            await message.in_progress()

    async def _export_lag(self) -> None:
        while True:
            try:
                info = await self.jetstream.consumer_info(TOOLS_STREAM_NAME, self.durable)
                QUEUE_PENDING.labels(kind=self.kind).set(info.num_pending)
                QUEUE_ACK_PENDING.labels(kind=self.kind).set(info.num_ack_pending)
            except Exception as exc:
                log.debug("consumer info for %s failed: %s", self.kind, exc)
            await asyncio.sleep(self.lag_poll_seconds)
