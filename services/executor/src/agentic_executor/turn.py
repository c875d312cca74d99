"""One Responses turn: read the request once, load its history, run the rounds, persist, answer.

A JSON turn returns its response object; a streamed turn yields its public
events. Either is persisted atomically before its terminal event is sent or its
JSON is returned, so a client continuing at once always finds it. Failures
raise `AgenticError` (the gRPC interceptor turns it into the call's status).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from agentic.v1 import executor_pb2
from agentic_core.errors import AgenticError
from agentic_core.json_types import Event, Item
from agentic_core.responses.history import StoredHistory
from agentic_core.responses.round_outcome import TurnEnding
from agentic_core.responses.stream import EventSequencer
from agentic_core.responses.token_estimate import estimate_input_tokens
from agentic_core.responses.turn_plan import ModelView, TurnPlan, plan_turn
from agentic_core.responses.turn_so_far import TurnSoFar
from agentic_core.routing import ModelRouter
from agentic_core.tools.mcp import McpServerTools
from agentic_core.tools.registry import ToolRegistry, build_registry, model_tool_choice
from agentic_runtime.state.client import StateClient

from agentic_executor.audit import audit_turn
from agentic_executor.conversation_lease import LeaseHeartbeat
from agentic_executor.features import TurnFeatures
from agentic_executor.gateway_calls import GatewayCalls, ToolPolicy, shown_first
from agentic_executor.history import ConversationLease, History
from agentic_executor.input_media import InputMedia
from agentic_executor.metrics import TURNS
from agentic_executor.persist import persist_until_known
from agentic_executor.prompt_cache import PromptCacheKeys, chain_root
from agentic_executor.reasoning_seal import ReasoningSeal
from agentic_executor.retrieval import NoRetrieval, Retrieval
from agentic_executor.rounds import PublicEvent, Rounds, TurnDone
from agentic_executor.turn_context import TurnContext, read_turn_request
from agentic_executor.turn_record import persist_request, response_object, should_persist
from agentic_executor.upstream import UpstreamClient
from agentic_executor.usage import TurnMeter

log = logging.getLogger(__name__)

PERSIST_FAILED = {"code": "persist_failed", "message": "The response could not be stored."}


@dataclass(frozen=True, slots=True)
class TurnStart:
    """Tools known, MCP servers listed, approvals settled: where the first round starts."""

    rounds: Rounds
    body: dict[str, Any]
    so_far: TurnSoFar
    events: list[Event]  # what showing `so_far` takes, sent right after the opening events
    denied: frozenset[str] = frozenset()  # the output items of calls the input denied (the audit record's)


@dataclass(frozen=True, slots=True)
class TurnPolicy:
    conversation_lease_seconds: float = 10.0
    persist_retry_seconds: float = 30.0
    conversation_wait_seconds: float = 10.0
    shell_enabled: bool = False
    tools: ToolPolicy = ToolPolicy()
    reasoning: ReasoningSeal = field(default_factory=ReasoningSeal)  # no key: reasoning items are never sealed
    media: InputMedia = field(default_factory=InputMedia)  # no fetcher: input URLs are refused
    retrieval: Retrieval = field(default_factory=NoRetrieval)  # none: file_search is refused
    cache_keys: PromptCacheKeys = field(default_factory=PromptCacheKeys)  # no secret: only a client's own key is sent


class TurnRunner:
    def __init__(self, upstream: UpstreamClient, router: ModelRouter, state: StateClient, policy: TurnPolicy | None = None,
                 features: TurnFeatures | None = None) -> None:
        self.upstream = upstream
        self.router = router
        self.state = state
        self.history = History(state)
        self.policy = policy or TurnPolicy()
        self.features = features or TurnFeatures()

    async def respond(self, request: executor_pb2.ExecuteRequest, payload: dict[str, Any] | None = None) -> dict[str, Any]:
        """A JSON turn: its response object. `payload`: the body already parsed (a translated Messages body)."""
        async with self._turn(request, payload) as (context, history):
            start = await self._start(context, history, stream=False)
            with self._metered(context, start.rounds) as meter:
                if context.request.generate:
                    done = await start.rounds.run_json(start.body, start.so_far)
                else:
                    done = TurnDone(start.so_far, TurnEnding("completed"))
                meter.answered(done.so_far)
                response, _ = await self._finish(context, request, start, done, streamed=False)
                return response

    async def stream(self, request: executor_pb2.ExecuteRequest, payload: dict[str, Any] | None = None) -> AsyncIterator[PublicEvent]:
        """A streamed turn: its public events, the terminal one once the turn is stored."""
        async with self._turn(request, payload) as (context, history):
            start = await self._start(context, history, stream=True)
            in_progress = response_object(context, TurnSoFar(), TurnEnding("in_progress"))
            # Sent once the model server answered, so that a refused request is still a plain error.
            opening = [{"type": "response.created", "response": in_progress},
                       {"type": "response.in_progress", "response": in_progress}, *start.events]
            events = EventSequencer()  # the turn's one numbering of its events, across its rounds
            done: TurnDone | None = None
            steps = start.rounds.run_stream(start.body, start.so_far, opening, events) if context.request.generate \
                else _prewarmed(start.so_far, opening, events)
            with self._metered(context, start.rounds) as meter:
                async for step in steps:
                    if isinstance(step, TurnDone):
                        done = step
                    else:
                        yield step
                assert done is not None, "the rounds always end with how the turn ended"
                meter.answered(done.so_far)
                response, ending = await self._finish(context, request, start, done, streamed=True)
                yield events.emit({"type": f"response.{ending.status}", "response": response})

    async def _finish(self, context: TurnContext, request: executor_pb2.ExecuteRequest, start: TurnStart, done: TurnDone,
                      *, streamed: bool) -> tuple[dict[str, Any], TurnEnding]:
        """How every turn ends, JSON or streamed: its response object, stored when it should be, counted and
        audited. A store that fails fails a JSON turn (the client gets the error); a streamed turn's events are
        out already, so it ends `failed` instead."""
        ending = done.ending
        response = response_object(context, done.so_far, ending)
        if should_persist(context, ending):
            try:
                await self._persist(context, response, done.so_far, ending)
            except AgenticError as error:
                if not streamed:
                    raise
                log.error("persisting %s failed: %s", context.response_id, error.message)
                ending = replace(ending, status="failed", error=PERSIST_FAILED)
                response = response_object(context, done.so_far, ending)
        TURNS.labels(status=ending.status).inc()
        audit_turn(self.features.audit, context, response, request.request_id, start.denied)
        return response, ending

    @contextmanager
    def _metered(self, context: TurnContext, rounds: Rounds) -> Iterator[TurnMeter]:
        """Records the turn's usage however it ends: the whole turn's once its rounds are done, else the rounds it
        had read when it was cut short (the client left, the turn was cancelled or failed, the store was
        interrupted)."""
        try:
            yield rounds.meter
        finally:
            rounds.meter.record(self.features.usage, context.principal, context.request.model, rounds.calls.tally)

    async def count_input_tokens(
        self, request: executor_pb2.ExecuteRequest, payload: dict[str, Any] | None = None
    ) -> executor_pb2.TokenCount:
        """The input a turn would send (history included), counted by the model server or estimated."""
        context = read_turn_request(request, payload, self.router)
        context.input_items = await self.policy.media.resolve(context.input_items, context.principal)
        history = await self._read_history(context, lease=None)
        registry, _ = await self._registry(context)
        body = self._first_request(context, registry, TurnPlan(history, context.input_items), [], stream=False, check=False)
        counted = await self.upstream.count_input_tokens(context.route, body)
        if counted is not None:
            return executor_pb2.TokenCount(input_tokens=counted, method="tokenizer")
        return executor_pb2.TokenCount(input_tokens=estimate_input_tokens(body), method="estimate")

    @asynccontextmanager
    async def _turn(
        self, request: executor_pb2.ExecuteRequest, payload: dict[str, Any] | None
    ) -> AsyncIterator[tuple[TurnContext, StoredHistory]]:
        """The request read and its history loaded; a conversation's lease is released unless the turn was stored."""
        try:
            context = read_turn_request(request, payload, self.router)
            # Images fetched and files read before the history: what the turn sends and stores (input_media).
            context.input_items = await self.policy.media.resolve(context.input_items, context.principal)
            lease = None
            if context.conversation_id and not context.request.previous_response_id:
                lease = ConversationLease(uuid.uuid4().hex, self.policy.conversation_lease_seconds,
                                          self.policy.conversation_wait_seconds)
            history = await self._read_history(context, lease=lease)
            heartbeat = None
            if lease is not None:
                context.lease_token = lease.token
                heartbeat = LeaseHeartbeat(self.state, context.principal, context.conversation_id or "",
                                           lease.token, lease.seconds)
            try:
                yield context, history
            finally:
                if heartbeat is not None:
                    await heartbeat.stop()
                if context.lease_token is not None and not context.persisted:
                    await asyncio.shield(self._release_lease(context))
        except AgenticError:
            TURNS.labels(status="error").inc()
            raise

    async def _read_history(self, context: TurnContext, *, lease: ConversationLease | None) -> StoredHistory:
        return await self.history.read(context.principal, previous_response_id=context.request.previous_response_id,
                                       conversation_id=context.conversation_id, lease=lease)

    async def _release_lease(self, context: TurnContext) -> None:
        try:
            await self.state.end_conversation_turn(context.principal, context.conversation_id or "", context.lease_token or "")
        except AgenticError as error:  # the lease also expires by itself
            log.warning("releasing the lease on %s failed: %s", context.conversation_id, error.message)

    async def _registry(self, context: TurnContext) -> tuple[ToolRegistry, list[McpServerTools]]:
        """The request's tools as the model sees them, and the MCP servers discovered for them."""
        tools = context.request.tools or []
        wanted = {name for tool in tools if isinstance(tool, dict) and tool.get("type") == "operator"
                  and isinstance(name := tool.get("name"), str)}
        operator_tools = await self.features.operator_tools.definitions(wanted) if wanted else {}
        servers: list[McpServerTools] = []
        if any(isinstance(tool, dict) and tool.get("type") == "mcp" for tool in tools):
            servers = await self.features.mcp.discover(context.principal, tools)
        registry = build_registry(tools, operator_tools, shell_enabled=self.policy.shell_enabled, mcp_servers=servers)
        await self.policy.retrieval.check_stores(context.principal, tools)  # before the model runs: a 404 of ours
        return registry, servers

    async def _start(self, context: TurnContext, history: StoredHistory, *, stream: bool) -> TurnStart:
        registry, servers = await self._registry(context)
        plan = plan_turn(history, context.input_items, servers)
        calls = GatewayCalls(
            self.features.dispatcher, registry, self.policy.tools, response_id=context.response_id,
            tenant=context.principal.tenant, include=set(context.request.include or []),
            max_tool_calls=context.request.max_tool_calls,
        )
        listings = shown_first(plan.listings, TurnSoFar())
        settled, outputs = await calls.settle_approvals(plan.approvals, listings.so_far)
        body = self._first_request(context, registry, plan, outputs, stream=stream)
        # Every round extends a copy of this body: each carries the chain's key (agentic_executor.prompt_cache).
        body = self.policy.cache_keys.with_key(body, context.principal.tenant, chain_root(
            context.conversation_id, history, context.input_items, context.response_id))
        tenant = context.principal.tenant
        guard = self.features.compaction.guard(context.route, threshold=context.compact_threshold,
                                               history=history, input_items=context.input_items, tenant=tenant)
        rounds = Rounds(self.upstream, calls, self.policy.tools, route=context.route, guard=guard,
                        reasoning=self.policy.reasoning.sealer(tenant, context.request.include))
        return TurnStart(rounds, body, settled.so_far, listings.events + settled.events,
                         plan.denied_outputs(settled.so_far.public_of_call))

    def _first_request(self, context: TurnContext, registry: ToolRegistry, plan: TurnPlan, settled: list[Item], *,
                       stream: bool, check: bool = True) -> dict[str, Any]:
        choice = context.request.tool_choice
        view = ModelView(model=context.route.model_for(context.request.model),
                         tools=registry.model_tools if context.request.tools else None,
                         tool_choice=model_tool_choice(choice, registry) if choice is not None else None, stream=stream)
        tenant = context.principal.tenant
        return plan.first_request(context.payload, view, settled, open_compaction=self.features.compaction.opener(tenant),
                                  open_reasoning=self.policy.reasoning.opener(tenant), check=check)

    async def _persist(self, context: TurnContext, response: dict[str, Any], so_far: TurnSoFar, ending: TurnEnding) -> None:
        await persist_until_known(self.state, persist_request(context, response, so_far, ending),
                                  self.policy.persist_retry_seconds)
        context.persisted = True


async def _prewarmed(so_far: TurnSoFar, opening: list[Event], events: EventSequencer) -> AsyncIterator[PublicEvent | TurnDone]:
    """`generate: false`: the opening events and a completed turn with no output; no inference."""
    for event in opening:
        yield events.emit(event)
    yield TurnDone(so_far, TurnEnding("completed"))
