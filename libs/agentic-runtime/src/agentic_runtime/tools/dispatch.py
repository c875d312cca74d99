"""Gateway tool calls over NATS JetStream: publish on `tools.exec.<kind>`, await the result on our inbox.

Delivery is at least once, so a result may arrive twice (a runner died after
answering and the call was redelivered): the first result per dispatch id wins,
later ones are counted and dropped. A stalled or restarting broker delays a
call within its deadline: every request is retried, the publish under one
message id (JetStream keeps one copy), and an answer lost in a restart is
found in the runners' result store.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from dataclasses import dataclass, replace
from typing import Any

import orjson
from agentic_core.tools.protocol import ToolCall, ToolResult
from agentic_core.tools.registry import ToolRegistry
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from nats.js.errors import NotFoundError
from nats.js.kv import KeyValue
from prometheus_client import Counter, Histogram

from agentic_runtime.credential_seal import CredentialSeal
from agentic_runtime.nats.broker import REQUEST_TIMEOUT_SECONDS, retrying
from agentic_runtime.tools.protocol import (
    MSG_ID_HEADER,
    REPLY_HEADER,
    TOOL_RESULTS_BUCKET,
    TOOLS_STREAM_NAME,
    durable_name,
    msg_id,
    result_key,
    subject_for,
)
from agentic_runtime.tracing import carrier

log = logging.getLogger(__name__)

_RUNNER_CACHE_SECONDS = (10.0, 1.0)  # how long a found / missing consumer is remembered
_RESULT_POLL_SECONDS = 5.0  # how often a call waiting for its answer looks for a kept result instead


@dataclass(frozen=True, slots=True)
class DispatchMetrics:
    """The metrics a service keeps of its tool calls: each service names its own (dashboards key on them)."""

    calls: Counter              # labels: kind, status
    seconds: Histogram          # labels: kind; from dispatch to result
    duplicate_results: Counter  # results of already answered calls (redeliveries), dropped

    @classmethod
    def named(cls, prefix: str) -> DispatchMetrics:
        """The three metrics under `<prefix>_tool_…` (the executor's and llm-d's names)."""
        return cls(
            Counter(f"{prefix}_tool_calls_total", "Gateway tool calls by kind and result status.", ["kind", "status"]),
            Histogram(f"{prefix}_tool_call_seconds", "Time from dispatch to result of a gateway tool call.", ["kind"],
                      buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)),
            Counter(f"{prefix}_tool_duplicate_results_total",
                    "Results of already answered calls (redeliveries), dropped."),
        )


class ToolDispatcher:
    def __init__(self, client: Client, metrics: DispatchMetrics | None = None,
                 credentials: CredentialSeal | None = None) -> None:
        self.client = client
        self.credentials = credentials or CredentialSeal(None)  # seals the headers a call carries (MCP)
        self.jetstream = client.jetstream()
        self.metrics = metrics
        self.inbox = f"_INBOX.agentic-executor.{uuid.uuid4().hex}"
        self.pending: dict[str, asyncio.Future[ToolResult]] = {}
        self._runners: dict[str, tuple[bool, float]] = {}
        self._subscription: Subscription | None = None
        self._results: KeyValue | None = None

    async def start(self) -> None:
        self._subscription = await self.client.subscribe(self.inbox + ".*", cb=self._on_result)

    async def close(self) -> None:
        if self._subscription is not None:
            await self._subscription.unsubscribe()

    async def _on_result(self, message: Msg) -> None:
        try:
            result = ToolResult.from_json(message.data)
        except (ValueError, TypeError, KeyError):
            log.warning("dropping a malformed tool result")
            return
        future = self.pending.get(result.call_id)
        if future is None or future.done():
            if self.metrics is not None:
                self.metrics.duplicate_results.inc()
            return
        future.set_result(result)

    async def has_runner(self, kind: str, timeout: float = REQUEST_TIMEOUT_SECONDS) -> bool:
        """Whether the durable consumer of `kind` exists; raises when the broker does not answer."""
        known = self._runners.get(kind)
        now = time.monotonic()
        if known is not None and now < known[1]:
            return known[0]
        try:
            await self.jetstream.consumer_info(TOOLS_STREAM_NAME, durable_name(kind), timeout=timeout)
            present = True
        except NotFoundError:
            present = False
        self._runners[kind] = (present, now + _RUNNER_CACHE_SECONDS[0 if present else 1])
        return present

    async def call(self, call: ToolCall, timeout: float) -> ToolResult:
        """Never raises for the tool's sake: a timeout, a missing runner or a broker failure is an error result."""
        started = time.perf_counter()
        result = await self._call(call, timeout)
        if self.metrics is not None:
            self.metrics.calls.labels(kind=call.kind, status=result.status).inc()
            self.metrics.seconds.labels(kind=call.kind).observe(time.perf_counter() - started)
        return result

    async def _call(self, call: ToolCall, timeout: float) -> ToolResult:
        # A stalled broker delays the call, within its own deadline: each request is retried until then.
        deadline = time.monotonic() + timeout
        try:
            runner = await retrying(lambda left: self.has_runner(call.kind, left), deadline, f"looking up the {call.kind} runner")
        except TimeoutError:
            return ToolResult.error(call.call_id, f"The {call.tool} tool could not be dispatched within {timeout:g} s: "
                                                  "the message broker did not answer.")
        except Exception as exc:  # a broker failure is a failed tool call, never a failed response
            log.warning("looking up the %s runner failed: %r", call.kind, exc)
            return ToolResult.error(call.call_id, f"The {call.tool} tool could not be dispatched.")
        if not runner:
            return ToolResult.error(call.call_id, f"No runner is available for {call.tool!r} tools right now.")
        future: asyncio.Future[ToolResult] = asyncio.get_running_loop().create_future()
        self.pending[call.call_id] = future
        try:
            return await self._publish_and_wait(call, future, deadline, timeout)
        finally:
            self.pending.pop(call.call_id, None)

    async def _publish_and_wait(self, call: ToolCall, future: asyncio.Future[ToolResult], deadline: float,
                                timeout: float) -> ToolResult:
        # The call id is the model's or a coordinator's (any characters): it travels in the payload only.
        # One message id for every try: JetStream keeps a single copy of a publish that is retried.
        headers = {REPLY_HEADER: f"{self.inbox}.{uuid.uuid4().hex}", MSG_ID_HEADER: msg_id(call.call_id)}
        payload = replace(call, params=self.credentials.seal_params(call.params, call.tenant)).to_json()

        async def publish(left: float) -> None:
            if not future.done():  # an earlier try got through and the runner already answered
                await self.jetstream.publish(subject_for(call.kind), payload, headers=headers, timeout=left)

        try:
            await retrying(publish, deadline, f"publishing a {call.kind} call")
        except TimeoutError:
            return ToolResult.error(call.call_id, f"The {call.tool} tool could not be dispatched within {timeout:g} s: "
                                                  "the message broker did not answer.")
        except Exception as exc:  # a broker failure is a failed tool call, never a failed response
            log.warning("dispatching %s failed: %r", call.tool, exc)
            return ToolResult.error(call.call_id, f"The {call.tool} tool could not be dispatched.")
        # The answer is a core message, lost if the broker restarts as it is sent: the kept result is looked up too.
        while not future.done():
            left = deadline - time.monotonic()
            if left <= 0:
                return ToolResult.error(call.call_id, f"The {call.tool} tool did not finish within {timeout:g} s.")
            await asyncio.wait({future}, timeout=min(left, _RESULT_POLL_SECONDS))
            if not future.done() and (kept := await self._kept_result(call.call_id)) is not None:
                return kept
        return future.result()

    async def _kept_result(self, call_id: str) -> ToolResult | None:
        """The result a runner kept for this call (`TOOL_RESULTS_BUCKET`), if the broker answers at once."""
        try:
            if self._results is None:
                self._results = await self.jetstream.key_value(TOOL_RESULTS_BUCKET)
            entry = await asyncio.wait_for(self._results.get(result_key(call_id)), REQUEST_TIMEOUT_SECONDS)
            return ToolResult.from_json(entry.value) if entry.value else None
        except Exception as exc:  # none kept yet, or the broker is away: the answer may still come
            log.debug("no kept result of %s: %r", call_id, exc)
            return None


class CallBudget:
    """`max_tool_calls` of a response, shared by all its rounds."""

    def __init__(self, limit: int | None, used: int = 0) -> None:
        self.limit = limit
        self.used = used

    def take(self) -> bool:
        if self.limit is not None and self.used >= self.limit:
            return False
        self.used += 1
        return True


async def run_gateway_calls(
    dispatcher: ToolDispatcher | None,
    registry: ToolRegistry,
    calls: list[dict[str, Any]],
    *,
    response_id: str,
    tenant: str,
    timeout: float,
    max_concurrent: int,
    budget: CallBudget,
) -> list[ToolResult]:
    """All calls of one round at once, bounded; a tool that is not parallel-safe runs one call at a time.
    Every call gets a result: refusals (budget, malformed arguments) are results too."""
    semaphore = asyncio.Semaphore(max_concurrent)
    serial: dict[str, asyncio.Lock] = {}

    async def one(call: dict[str, Any]) -> ToolResult:
        binding = registry.binding(call.get("name", ""))
        dispatch_id = f"{response_id}/{call['call_id']}"
        if binding is None or binding.owner != "gateway":
            return ToolResult.error(dispatch_id, f"{call.get('name')!r} is not a gateway tool of this request.")
        if not budget.take():
            return ToolResult.error(dispatch_id, "The limit on tool calls for this response (max_tool_calls) is reached; "
                                                 "answer with what you have.")
        try:
            arguments = orjson.loads(call.get("arguments") or "{}")
        except orjson.JSONDecodeError:
            arguments = None
        if not isinstance(arguments, dict):
            return ToolResult.hint(dispatch_id, "The arguments are not a JSON object; call the tool again with arguments "
                                                "matching its schema.")
        if dispatcher is None:
            return ToolResult.error(dispatch_id, "Gateway tools are not available.")
        lock = serial.setdefault(binding.name, asyncio.Lock()) if not binding.parallel_safe else None
        async with semaphore, (lock or contextlib.nullcontext()):
            tool_call = ToolCall(call_id=dispatch_id, kind=binding.kind, tool=binding.runner_name, arguments=arguments,
                                 params=binding.params, deadline=time.time() + timeout, tenant=tenant, trace=carrier())
            return await dispatcher.call(tool_call, timeout)

    return list(await asyncio.gather(*(one(call) for call in calls)))
