"""One Responses turn: validate, rehydrate, infer, persist, and emit public events.

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
from agentic_core.responses.items import normalize_input
from agentic_core.responses.pending_calls import validate_continuation
from agentic_core.responses.request import (
    CreateResponseRequest,
    conversation_id_of,
    parse_json_object,
    validate_create_request,
)
from agentic_core.responses.response import build_response
from agentic_core.responses.stream import EventSequencer, RoundOutcome, StreamTranslator, outcome_from_json
from agentic_core.responses.token_estimate import estimate_input_tokens
from agentic_core.responses.upstream_request import stateless_request
from agentic_core.routing import ModelRoute, ModelRouter

from agentic_executor.metrics import TURNS, UPSTREAM_FIRST_EVENT_SECONDS
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
    conversation_id: str | None = None
    lease_token: str | None = None  # held while the turn runs on a conversation
    persisted: bool = False


def _event_message(event_type: str, sequence: int, data: bytes) -> executor_pb2.ExecuteEvent:
    return executor_pb2.ExecuteEvent(
        event=executor_pb2.StreamEvent(event_type=event_type, sequence_number=sequence, data=data)
    )


@dataclass(frozen=True, slots=True)
class TurnPolicy:
    conversation_lease_seconds: float = 900.0
    conversation_wait_seconds: float = 10.0


class TurnRunner:
    def __init__(
        self, upstream: UpstreamClient, router: ModelRouter, state: StateClient, policy: TurnPolicy | None = None
    ) -> None:
        self.upstream = upstream
        self.router = router
        self.state = state
        self.policy = policy or TurnPolicy()

    async def run(self, request: executor_pb2.ExecuteRequest) -> AsyncIterator[executor_pb2.ExecuteEvent]:
        """The Execute stream of one turn. Errors before the first event end it with `error`."""
        context: TurnContext | None = None
        try:
            context = self._context(request)
            upstream_body = await self._load_history(context, stream=request.stream)
            if request.stream:
                async for message in self._run_streaming(context, upstream_body):
                    yield message
            else:
                yield executor_pb2.ExecuteEvent(response=await self._run_json(context, upstream_body))
        except AgenticError as error:
            TURNS.labels(status="error").inc()
            yield executor_pb2.ExecuteEvent(
                error=common_pb2.ApiError(http_status=error.http_status, body=error.body())
            )
        finally:
            if context is not None and context.lease_token is not None and not context.persisted:
                await asyncio.shield(self._release_lease(context))

    def _context(self, request: executor_pb2.ExecuteRequest) -> TurnContext:
        if not request.principal.tenant:
            raise InvalidRequest("The request has no tenant.", code="missing_tenant")
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

    async def count_input_tokens(self, request: executor_pb2.ExecuteRequest) -> executor_pb2.TokenCount:
        """The input a turn would send (history included), counted by the model server or estimated."""
        context = self._context(request)
        history: list[bytes] = []
        if context.request.previous_response_id:
            history = await self.state.rehydrate(context.principal, context.request.previous_response_id)
        elif context.conversation_id:
            history = await self.state.conversation_history(context.principal, context.conversation_id)
        body = stateless_request(context.payload, [orjson.loads(item) for item in history], context.input_items, stream=False)
        body["model"] = context.route.model_for(context.request.model)
        counted = await self.upstream.count_input_tokens(context.route, body)
        if counted is not None:
            return executor_pb2.TokenCount(input_tokens=counted, method="tokenizer")
        return executor_pb2.TokenCount(input_tokens=estimate_input_tokens(body), method="estimate")

    async def _load_history(self, context: TurnContext, *, stream: bool) -> dict[str, Any]:
        """Rehydrate the chain or take the conversation's lease; returns the upstream body."""
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
        history_items = [orjson.loads(item) for item in history]
        validate_continuation(history_items, context.input_items)
        body = stateless_request(context.payload, history_items, context.input_items, stream=stream)
        body["model"] = context.route.model_for(context.request.model)
        return body

    async def _release_lease(self, context: TurnContext) -> None:
        try:
            await self.state.end_conversation_turn(context.principal, context.conversation_id or "", context.lease_token or "")
        except AgenticError as error:  # the lease also expires by itself
            log.warning("releasing the lease on %s failed: %s", context.conversation_id, error.message)

    async def _run_json(self, context: TurnContext, upstream_body: dict[str, Any]) -> bytes:
        started = time.perf_counter()
        outcome = outcome_from_json(await self.upstream.create_response(context.route, upstream_body))
        UPSTREAM_FIRST_EVENT_SECONDS.observe(time.perf_counter() - started)
        response = self._final_response(context, outcome)
        if _should_persist(context, outcome):
            await self._persist(context, response, outcome)
        TURNS.labels(status=outcome.status).inc()
        return orjson.dumps(response)

    async def _run_streaming(
        self, context: TurnContext, upstream_body: dict[str, Any]
    ) -> AsyncIterator[executor_pb2.ExecuteEvent]:
        sequencer = EventSequencer()
        translator = StreamTranslator(sequencer)
        started = time.perf_counter()
        upstream_events = self.upstream.stream_response(context.route, upstream_body)
        # The first upstream event is awaited before anything is emitted, so that
        # a refused request still reaches the client as a plain HTTP error.
        first_event = await anext(upstream_events, None)
        UPSTREAM_FIRST_EVENT_SECONDS.observe(time.perf_counter() - started)
        opening = self._final_response(context, RoundOutcome(status="in_progress", output=[]))
        opening["completed_at"] = None
        for event_type in ("response.created", "response.in_progress"):
            yield _event_message(*sequencer.emit({"type": event_type, "response": opening}))
        try:
            if first_event is not None:
                translated = translator.translate(first_event)
                if translated is not None:
                    yield _event_message(*translated)
                async for event in upstream_events:
                    translated = translator.translate(event)
                    if translated is not None:
                        yield _event_message(*translated)
                    if translator.finished:
                        break
            outcome = translator.outcome() or RoundOutcome(
                status="failed",
                output=[],
                error={"code": "upstream_incomplete", "message": "The model server's stream ended before the response finished."},
            )
        except AgenticError as error:
            outcome = RoundOutcome(status="failed", output=[], error={"code": error.code or "upstream_error", "message": error.message})
        finally:
            await upstream_events.aclose()
        response = self._final_response(context, outcome)
        if _should_persist(context, outcome):
            try:
                await self._persist(context, response, outcome)
            except AgenticError as error:
                log.error("persisting %s failed: %s", context.response_id, error.message)
                response = self._final_response(
                    context,
                    RoundOutcome(status="failed", output=outcome.output, usage=outcome.usage,
                                 error={"code": "persist_failed", "message": "The response could not be stored."}),
                )
        TURNS.labels(status=response["status"]).inc()
        yield _event_message(*sequencer.emit({"type": f"response.{response['status']}", "response": response}))

    def _final_response(self, context: TurnContext, outcome: RoundOutcome) -> dict[str, Any]:
        finished_at = int(time.time()) if outcome.status == "completed" else None
        return build_response(
            context.request,
            response_id=context.response_id,
            created_at=context.created_at,
            status=outcome.status,
            output=outcome.output,
            usage=outcome.usage,
            error=outcome.error,
            incomplete_details=outcome.incomplete_details,
            completed_at=finished_at,
            conversation_id=context.conversation_id,
        )

    async def _persist(self, context: TurnContext, response: dict[str, Any], outcome: RoundOutcome) -> None:
        await self.state.persist_turn(
            state_pb2.PersistTurnRequest(
                principal=context.principal,
                response_id=context.response_id,
                previous_response_id=context.request.previous_response_id or "",
                response=orjson.dumps(response),
                input_items=[state_pb2.Item(id=item["id"], data=orjson.dumps(item)) for item in context.input_items],
                output_items=[state_pb2.Item(id=item["id"], data=orjson.dumps(item)) for item in outcome.output],
                model=context.request.model,
                status=outcome.status,
                store_response=context.request.store,
                conversation_id=context.conversation_id or "",
                lease_token=context.lease_token or "",
            )
        )
        context.persisted = True


def _should_persist(context: TurnContext, outcome: RoundOutcome) -> bool:
    """Stored responses, and every finished turn of a conversation (its items belong to it)."""
    return outcome.status != "failed" and (context.request.store or context.conversation_id is not None)
