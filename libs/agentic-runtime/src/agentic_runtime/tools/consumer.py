"""One durable JetStream pull consumer per tool kind, shared by every replica (tool runners, mcp-bridge).

At-least-once without double side effects: a finished call's result is kept
in a KV bucket before the message is acked, so a redelivery (the runner died
after finishing) is answered from there instead of running the tool again; a
call whose deadline passed is dropped unrun. Running calls heartbeat
(`in_progress`) every few seconds, so that a short ack wait redelivers the
calls of a dead runner soon, and never those of a live one. A stalled broker
delays an answer (every request to it is retried), never loses its ack.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Protocol

from agentic.v1 import common_pb2
from agentic_core.tools.protocol import ToolCall, ToolResult
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.errors import NoRespondersError
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy
from nats.js.errors import BadRequestError, KeyNotFoundError, NoStreamResponseError, NotFoundError
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind
from prometheus_client import Counter, Gauge, Histogram

from agentic_runtime.logs import bind_principal
from agentic_runtime.nats.broker import ensure_key_value, retrying
from agentic_runtime.nats.worker import PullWorker, in_progress
from agentic_runtime.tools.protocol import (
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
        heartbeat_seconds: float | None = None,
        durable: str | None = None,
    ) -> None:
        self.client = client
        self.jetstream = client.jetstream()
        self.handler = handler
        self.kind = handler.kind
        self.durable = durable or durable_name(handler.kind)
        self.concurrency = concurrency
        self.ack_wait = ack_wait
        # A beat must land well inside the ack wait, or a running call is redelivered.
        self.heartbeat_seconds = min(heartbeat_seconds or ack_wait / 3, ack_wait / 2)
        self.max_deliveries = max(max_deliveries, len(backoff) + 1)
        self.backoff = backoff
        self.lag_poll_seconds = lag_poll_seconds
        self.worker = PullWorker(self._fetch, self._handle, concurrency=concurrency, what=f"{self.kind} calls")
        self._lag: asyncio.Task[None] | None = None
        # Deliveries of the calls running here, by dispatch id: a redelivery that arrives while the call still runs
        # (its heartbeats were held up by a stalled broker) joins the running call instead of running it again.
        self._running: dict[str, list[Msg]] = {}

    async def start(self) -> None:
        # A dedupe cache of recent results: kept in memory, it costs a call no disk write.
        self.results = await ensure_key_value(self.client, TOOL_RESULTS_BUCKET, TOOL_RESULTS_TTL_SECONDS, in_memory=True)
        config = ConsumerConfig(
            name=self.durable,
            durable_name=self.durable,
            filter_subject=subject_for(self.kind),
            ack_policy=AckPolicy.EXPLICIT,
            deliver_policy=DeliverPolicy.ALL,
            ack_wait=self.ack_wait,
            max_deliver=self.max_deliveries,
            backoff=self.backoff or None,
        )
        try:  # create, or update an existing durable to this ack wait and these redeliveries
            await self.jetstream.add_consumer(TOOLS_STREAM_NAME, config)
        except BadRequestError as exc:  # a durable made with other fixed fields: keep it as it is
            log.warning("the %s consumer keeps its own settings: %s", self.durable, exc)
        self.subscription = await self.jetstream.pull_subscribe(
            subject_for(self.kind), durable=self.durable, stream=TOOLS_STREAM_NAME, config=config
        )
        self.worker.start()
        self._lag = asyncio.create_task(self._export_lag())
        self._lag.add_done_callback(_log_failure)

    async def stop(self, drain_seconds: float) -> None:
        """Stop taking calls, give running ones `drain_seconds`, leave the rest to be redelivered."""
        if self._lag is not None:
            self._lag.cancel()
        await self.worker.stop(drain_seconds)
        try:
            await self.subscription.unsubscribe()
        except Exception as exc:  # already gone with the connection
            log.debug("unsubscribing %s: %s", self.kind, exc)
        await self.handler.close()

    async def _fetch(self, free: int) -> list[Msg]:
        return await self.subscription.fetch(free, timeout=1.0)

    async def _handle(self, message: Msg) -> None:
        try:
            call = ToolCall.from_json(message.data)
        except (ValueError, TypeError, KeyError):
            log.warning("dropping a malformed %s call", self.kind)
            await message.term()
            return
        if call.tenant:  # this task's log lines name the tenant the call runs for
            bind_principal(common_pb2.Principal(tenant=call.tenant))
        joined = self._running.get(call.call_id)
        if joined is not None:  # still running here: acknowledged with the first delivery when it finishes
            joined.append(message)
            await message.in_progress()
            return
        deliveries = self._running[call.call_id] = [message]
        heartbeat = in_progress(deliveries, self.heartbeat_seconds, f"a {self.kind} call")
        try:
            await self._handle_once(call, (message.headers or {}).get(REPLY_HEADER))
        finally:
            heartbeat.cancel()
            del self._running[call.call_id]
        for delivery in deliveries:
            await self._ack(delivery)

    async def _handle_once(self, call: ToolCall, reply: str | None) -> None:
        """Answers the call (from the stored result, or by running it) unless its deadline has passed."""
        if call.expired():
            DROPPED_EXPIRED.labels(kind=self.kind).inc()
            return
        try:
            stored = await retrying(lambda left: self._stored_result(call.call_id, left), _monotonic_deadline(call),
                                    f"looking up the stored result of a {self.kind} call")
        except TimeoutError:  # the deadline passed while the broker stalled: nobody waits for the answer any more
            DROPPED_EXPIRED.labels(kind=self.kind).inc()
            return
        if stored is not None:
            REPLAYED.labels(kind=self.kind).inc()
            await self._answer(reply, stored)
            return
        # This task exists for this call alone: the call's span stays current in it, no detach needed.
        span = _tracer.start_span(f"tool {call.kind}", context=context_from(call.trace), kind=SpanKind.CONSUMER,
                                  attributes={"agentic.tool": call.tool, "agentic.call_id": call.call_id})
        otel_context.attach(trace.set_span_in_context(span))
        log.info("running %s call %s", call.tool, call.call_id)
        IN_FLIGHT.labels(kind=self.kind).inc()
        started = time.perf_counter()
        try:
            result = await self._run(call)
        finally:
            IN_FLIGHT.labels(kind=self.kind).dec()
            span.end()
        CALLS.labels(kind=self.kind, status=result.status).observe(time.perf_counter() - started)
        payload = result.to_json()
        # Kept before the ack, so that a redelivery is answered from here; retried through a broker stall (the
        # heartbeat holds the message meanwhile). Past the result's own bound, the answer goes out unkept.
        try:
            await retrying(lambda left: self._keep(result_key(call.call_id), payload, left),
                           max(_monotonic_deadline(call), time.monotonic() + self.ack_wait), "keeping a tool result")
        except Exception as exc:
            log.error("the result of %s call %s could not be kept: %r", call.tool, call.call_id, exc)
        await self._answer(reply, payload)

    async def _run(self, call: ToolCall) -> ToolResult:
        try:
            return await asyncio.wait_for(self.handler.run(call), timeout=call.seconds_left())
        except TimeoutError:
            return ToolResult.error(call.call_id, f"The {call.tool} tool ran past its deadline.")
        except Exception as exc:  # a broken tool is a failed call, never a dead runner
            log.exception("the %s tool failed", call.tool)
            return ToolResult.error(call.call_id, f"The {call.tool} tool failed: {type(exc).__name__}.")

    async def _stored_result(self, call_id: str, timeout: float) -> bytes | None:
        try:
            return await self._get(call_id, timeout)
        except (NotFoundError, NoStreamResponseError, NoRespondersError):
            await self._recreate_results()
            return await self._get(call_id, timeout)

    async def _get(self, call_id: str, timeout: float) -> bytes | None:
        try:
            entry = await asyncio.wait_for(self.results.get(result_key(call_id)), timeout)
        except KeyNotFoundError:
            return None
        return entry.value or None

    async def _keep(self, key: str, payload: bytes, timeout: float) -> None:
        try:
            await asyncio.wait_for(self.results.put(key, payload), timeout)
        except (NoStreamResponseError, NoRespondersError):
            await self._recreate_results()
            raise

    async def _recreate_results(self) -> None:
        """The in-memory result bucket does not survive a broker restart: made again, and the request retried."""
        log.warning("the %s result bucket is gone (a broker restart?): making it again", TOOL_RESULTS_BUCKET)
        self.results = await ensure_key_value(self.client, TOOL_RESULTS_BUCKET, TOOL_RESULTS_TTL_SECONDS, in_memory=True)

    async def _answer(self, reply: str | None, payload: bytes) -> None:
        # A core publish is buffered by the client through a stall or a reconnect; it fails only when closed.
        if reply:
            try:
                await self.client.publish(reply, payload)
            except Exception as exc:
                log.warning("answering a %s call failed: %r", self.kind, exc)

    async def _ack(self, message: Msg) -> None:
        try:
            await message.ack()
        except Exception as exc:  # the connection is gone: the call is redelivered and answered from the stored result
            log.warning("acknowledging a %s call failed: %r", self.kind, exc)

    async def _export_lag(self) -> None:
        while True:
            try:
                info = await self.jetstream.consumer_info(TOOLS_STREAM_NAME, self.durable)
                QUEUE_PENDING.labels(kind=self.kind).set(info.num_pending)
                QUEUE_ACK_PENDING.labels(kind=self.kind).set(info.num_ack_pending)
            except Exception as exc:
                log.debug("consumer info for %s failed: %s", self.kind, exc)
            await asyncio.sleep(self.lag_poll_seconds)


def _monotonic_deadline(call: ToolCall) -> float:
    """The call's deadline on the monotonic clock (a call without one: as long as its result is kept)."""
    return time.monotonic() + min(call.seconds_left(), TOOL_RESULTS_TTL_SECONDS)


def _log_failure(task: asyncio.Task[None]) -> None:
    """The lag task's exception is collected: a failure is logged, never left for the loop to report at exit."""
    if not task.cancelled() and (exc := task.exception()) is not None:
        log.error("a tool consumer task failed", exc_info=exc)
