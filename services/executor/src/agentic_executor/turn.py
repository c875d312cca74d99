"""One Responses turn: validate, rehydrate, run the round loop, persist, and emit public events.

The turn is persisted atomically before its terminal event is sent or its
JSON is returned, so a client continuing at once always finds it.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import orjson
from agentic.v1 import common_pb2, executor_pb2, state_pb2
from agentic_core.errors import AgenticError, InvalidRequest
from agentic_core.ids import new_response_id
from agentic_core.responses.conversation_view import conversation_rows
from agentic_core.responses.items import model_input, normalize_input
from agentic_core.responses.pending_calls import validate_continuation
from agentic_core.responses.request import (
    CreateResponseRequest,
    conversation_id_of,
    parse_json_object,
    validate_create_request,
)
from agentic_core.responses.response import build_response
from agentic_core.responses.token_estimate import estimate_input_tokens
from agentic_core.responses.upstream_request import stateless_request
from agentic_core.routing import ModelRoute, ModelRouter
from agentic_core.tools.approvals import resolve_approvals
from agentic_core.tools.mcp import McpServerTools, list_tools_item, listed_servers
from agentic_core.tools.registry import ToolRegistry, build_registry, model_tool_choice
from agentic_runtime.operator_tools import OperatorToolCatalog
from agentic_runtime.tool_dispatch import ToolDispatcher

from agentic_executor.mcp_discovery import McpDiscovery
from agentic_executor.metrics import TURNS
from agentic_executor.rounds import RoundLoop, ToolPolicy, TurnResult
from agentic_executor.state_client import StateClient
from agentic_executor.upstream import UpstreamClient

log = logging.getLogger(__name__)


@dataclass(slots=True)
class TurnContext:
    request: CreateResponseRequest
    payload: dict[str, Any]
    principal: common_pb2.Principal
    response_id: str
    created_at: int
    input_items: list[dict[str, Any]]
    route: ModelRoute
    registry: ToolRegistry | None = None  # built once the history is known (MCP discovery needs it)
    conversation_id: str | None = None
    lease_token: str | None = None  # held while the turn runs on a conversation
    persisted: bool = False


@dataclass(frozen=True, slots=True)
class TurnPolicy:
    conversation_lease_seconds: float = 900.0
    conversation_wait_seconds: float = 10.0
    shell_enabled: bool = False
    tools: ToolPolicy = ToolPolicy()


def _event_message(event_type: str, sequence: int, data: bytes) -> executor_pb2.ExecuteEvent:
    return executor_pb2.ExecuteEvent(
        event=executor_pb2.StreamEvent(event_type=event_type, sequence_number=sequence, data=data)
    )


class TurnRunner:
    def __init__(
        self,
        upstream: UpstreamClient,
        router: ModelRouter,
        state: StateClient,
        policy: TurnPolicy | None = None,
        dispatcher: ToolDispatcher | None = None,
        operator_tools: OperatorToolCatalog | None = None,
        mcp: McpDiscovery | None = None,
    ) -> None:
        self.upstream = upstream
        self.router = router
        self.state = state
        self.policy = policy or TurnPolicy()
        self.dispatcher = dispatcher
        self.operator_tools = operator_tools
        self.mcp = mcp

    async def run(
        self, request: executor_pb2.ExecuteRequest, payload: dict[str, Any] | None = None
    ) -> AsyncIterator[executor_pb2.ExecuteEvent]:
        """The Execute stream of one turn. Errors before the first event end it with `error`.
        `payload`: the request body already parsed (a translated Messages body), instead of its bytes."""
        context: TurnContext | None = None
        try:
            context = await self._context(request, payload)
            history = await self._load_history(context)
            loop, body = await self._prepare_loop(context, history, stream=request.stream)
            if request.stream:
                async for message in self._run_streaming(context, body, loop):
                    yield message
            else:
                yield executor_pb2.ExecuteEvent(response=await self._run_json(context, body, loop))
        except AgenticError as error:
            TURNS.labels(status="error").inc()
            yield executor_pb2.ExecuteEvent(
                error=common_pb2.ApiError(http_status=error.http_status, body=error.body())
            )
        finally:
            if context is not None and context.lease_token is not None and not context.persisted:
                await asyncio.shield(self._release_lease(context))

    async def _context(self, request: executor_pb2.ExecuteRequest, payload: dict[str, Any] | None = None) -> TurnContext:
        if not request.principal.tenant:
            raise InvalidRequest("The request has no tenant.", code="missing_tenant")
        if payload is None:
            payload = parse_json_object(request.request_json)
        parsed = validate_create_request(payload)
        conversation_id = conversation_id_of(parsed)
        if parsed.background:
            raise InvalidRequest("Background responses are not supported yet.", param="background", code="unsupported_parameter")
        return TurnContext(
            request=parsed,
            payload=payload,
            principal=request.principal,
            response_id=new_response_id(),
            created_at=int(time.time()),
            input_items=normalize_input(parsed.input),
            route=self.router.route(parsed.model),
            conversation_id=conversation_id,
        )

    async def _build_registry(self, context: TurnContext) -> list[McpServerTools]:
        tools = context.request.tools or []
        operator_tools = {}
        if self.operator_tools is not None and any(isinstance(tool, dict) and tool.get("type") == "operator" for tool in tools):
            operator_tools = await self.operator_tools.definitions()
        servers: list[McpServerTools] = []
        if any(isinstance(tool, dict) and tool.get("type") == "mcp" for tool in tools):
            if self.mcp is None:
                raise InvalidRequest("MCP tools are not available on this gateway.", param="tools", code="unsupported_tool")
            servers = await self.mcp.discover(context.principal, tools)
        context.registry = build_registry(tools, operator_tools, shell_enabled=self.policy.shell_enabled, mcp_servers=servers)
        return servers

    async def _prepare_loop(
        self, context: TurnContext, history: list[dict[str, Any]], *, stream: bool
    ) -> tuple[RoundLoop, dict[str, Any]]:
        """Tools, MCP listings and approvals settled; returns the loop and the first upstream body."""
        servers = await self._build_registry(context)
        approvals = resolve_approvals(history, context.input_items)
        loop = self._loop(context)
        shown = listed_servers(history)
        loop.add_items_first([list_tools_item(server) for server in servers if server.declaration.server_label not in shown])
        outputs = await loop.settle_approvals(approvals) if approvals else []
        restored = [approval.call for approval in approvals if approval.restored]
        validate_continuation(history, context.input_items + restored + outputs)
        body = self._upstream_body(context, history, stream=stream)
        body["input"] += model_input(restored + outputs)
        return loop, body

    def _loop(self, context: TurnContext) -> RoundLoop:
        assert context.registry is not None
        return RoundLoop(
            self.upstream, self.dispatcher, self.policy.tools, route=context.route, registry=context.registry,
            response_id=context.response_id, tenant=context.principal.tenant, include=set(context.request.include or []),
            max_tool_calls=context.request.max_tool_calls,
        )

    def _upstream_body(self, context: TurnContext, history: list[dict[str, Any]], *, stream: bool) -> dict[str, Any]:
        assert context.registry is not None
        body = stateless_request(context.payload, history, context.input_items, stream=stream)
        body["model"] = context.route.model_for(context.request.model)
        if context.request.tools:
            body["tools"] = context.registry.model_tools
        if context.request.tool_choice is not None:
            body["tool_choice"] = model_tool_choice(context.request.tool_choice, context.registry)
        return body

    async def count_input_tokens(
        self, request: executor_pb2.ExecuteRequest, payload: dict[str, Any] | None = None
    ) -> executor_pb2.TokenCount:
        """The input a turn would send (history included), counted by the model server or estimated."""
        context = await self._context(request, payload)
        history: list[bytes] = []
        if context.request.previous_response_id:
            history = await self.state.rehydrate(context.principal, context.request.previous_response_id)
        elif context.conversation_id:
            history = await self.state.conversation_history(context.principal, context.conversation_id)
        await self._build_registry(context)
        body = self._upstream_body(context, [orjson.loads(item) for item in history], stream=False)
        counted = await self.upstream.count_input_tokens(context.route, body)
        if counted is not None:
            return executor_pb2.TokenCount(input_tokens=counted, method="tokenizer")
        return executor_pb2.TokenCount(input_tokens=estimate_input_tokens(body), method="estimate")

    async def _load_history(self, context: TurnContext) -> list[dict[str, Any]]:
        """Rehydrate the chain or take the conversation's lease; returns the history items."""
        history: list[bytes] = []
        if context.request.previous_response_id:
            history = await self.state.rehydrate(context.principal, context.request.previous_response_id)
        elif context.conversation_id:
            lease_token = uuid.uuid4().hex
            history = await self.state.begin_conversation_turn(
                context.principal, context.conversation_id, lease_token,
                self.policy.conversation_lease_seconds, self.policy.conversation_wait_seconds,
            )
            context.lease_token = lease_token
        return [orjson.loads(item) for item in history]

    async def _release_lease(self, context: TurnContext) -> None:
        try:
            await self.state.end_conversation_turn(context.principal, context.conversation_id or "", context.lease_token or "")
        except AgenticError as error:  # the lease also expires by itself
            log.warning("releasing the lease on %s failed: %s", context.conversation_id, error.message)

    async def _run_json(self, context: TurnContext, body: dict[str, Any], loop: RoundLoop) -> bytes:
        async for _ in loop.run(body, stream=False, opening=[]):
            pass
        result = loop.result
        response = self._final_response(context, result)
        if _should_persist(context, result):
            await self._persist(context, response, result)
        TURNS.labels(status=result.status).inc()
        return orjson.dumps(response)

    async def _run_streaming(
        self, context: TurnContext, body: dict[str, Any], loop: RoundLoop
    ) -> AsyncIterator[executor_pb2.ExecuteEvent]:
        opening = self._final_response(context, TurnResult(status="in_progress"))
        # Emitted once the model server answered, so that a refused request is still a plain HTTP error.
        openers = [{"type": event_type, "response": opening} for event_type in ("response.created", "response.in_progress")]
        async for event in loop.run(body, stream=True, opening=openers):
            yield _event_message(*event)
        result = loop.result
        response = self._final_response(context, result)
        if _should_persist(context, result):
            try:
                await self._persist(context, response, result)
            except AgenticError as error:
                log.error("persisting %s failed: %s", context.response_id, error.message)
                result.status, result.error = "failed", {"code": "persist_failed", "message": "The response could not be stored."}
                response = self._final_response(context, result)
        TURNS.labels(status=response["status"]).inc()
        yield _event_message(*loop.sequencer.emit({"type": f"response.{response['status']}", "response": response}))

    def _final_response(self, context: TurnContext, result: TurnResult) -> dict[str, Any]:
        finished_at = int(time.time()) if result.status == "completed" else None
        return build_response(
            context.request,
            response_id=context.response_id,
            created_at=context.created_at,
            status=result.status,
            output=result.public_output,
            usage=result.usage,
            error=result.error,
            incomplete_details=result.incomplete_details,
            completed_at=finished_at,
            conversation_id=context.conversation_id,
        )

    async def _persist(self, context: TurnContext, response: dict[str, Any], result: TurnResult) -> None:
        # The output rows are the model-facing continuation (gateway calls as their call/output pair),
        # so that rehydration replays what the model saw and never a public projection twice.
        await self.state.persist_turn(
            state_pb2.PersistTurnRequest(
                principal=context.principal,
                response_id=context.response_id,
                previous_response_id=context.request.previous_response_id or "",
                response=orjson.dumps(response),
                input_items=[state_pb2.Item(id=item["id"], data=orjson.dumps(item)) for item in context.input_items],
                output_items=[state_pb2.Item(id=item["id"], data=orjson.dumps(item)) for item in result.continuation],
                model=context.request.model,
                status=result.status,
                store_response=context.request.store,
                conversation_id=context.conversation_id or "",
                lease_token=context.lease_token or "",
                conversation_items=self._conversation_items(context, result),
            )
        )
        context.persisted = True

    @staticmethod
    def _conversation_items(context: TurnContext, result: TurnResult) -> list[state_pb2.Item]:
        if context.conversation_id is None:
            return []
        rows = conversation_rows(context.input_items, result.public_output, result.continuation, result.public_of_call)
        return [state_pb2.Item(id=item["id"], data=orjson.dumps(item), visibility=visibility, linked_item_id=linked)
                for item, visibility, linked in rows]


def _should_persist(context: TurnContext, result: TurnResult) -> bool:
    """Stored responses, and every finished turn of a conversation (its items belong to it)."""
    return result.status != "failed" and (context.request.store or context.conversation_id is not None)
