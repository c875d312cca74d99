"""The two split-execution steps: hydrate (history in, reserved id and signed context out) and persist.

hydrate reserves nothing in the database: the `resp_…` id is 192 random bits
carried in a context only this service can sign, bound to the caller's
tenant and valid for the context TTL; persist stores it with one atomic
insert, so a second persist of the id is decided by the primary key.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

import orjson
from agentic.v1 import state_pb2
from agentic_core.audit import turn_details
from agentic_core.errors import InvalidRequest
from agentic_core.ids import new_response_id
from agentic_core.responses.items import CALL_TYPES, normalize_input
from agentic_core.responses.pending_calls import validate_continuation
from agentic_core.responses.request import parse_json_object, validate_create_request
from agentic_core.responses.response import build_response
from agentic_core.responses.stream import RoundOutcome
from agentic_core.responses.upstream_request import stateless_request
from agentic_core.split.context import SplitContext, context_rejected
from agentic_core.split.features import ensure_splittable_items, ensure_splittable_request
from agentic_core.split.outcome import UNSTORED_STATUSES, check_call_ids, check_item_ids_against_input, outcome_from_response
from agentic_core.split.sse_lifecycle import outcome_from_sse
from agentic_core.usage.turn_usage import usage_of
from agentic_runtime.state.audit import AuditRecorder
from agentic_runtime.state.client import StateClient
from agentic_runtime.state.usage import UsageRecorder
from agentic_runtime.tools.operator_tools import OperatorToolCatalog

from agentic_llm_d.auth import split_principal
from agentic_llm_d.body import too_large
from agentic_llm_d.execute import registry_for, with_model_tools
from agentic_llm_d.metrics import PERSISTED
from agentic_llm_d.sealing import ContextSealer
from agentic_llm_d.settings import LlmDSettings

# What persist returns for a model response that failed: it is not stored, so nothing can continue from it.
UNSTORED_RESPONSE_STATUS = "error"


def _invalid(message: str, param: str | None = None) -> InvalidRequest:
    return InvalidRequest(message, param=param, code="invalid_request_error")


class SplitService:
    def __init__(
        self, settings: LlmDSettings, state: StateClient, sealer: ContextSealer, catalog: OperatorToolCatalog | None = None,
        usage: UsageRecorder | None = None, audit: AuditRecorder | None = None,
    ) -> None:
        self.settings = settings
        self.state = state
        self.sealer = sealer
        self.catalog = catalog
        self.usage = usage
        self.audit = audit

    async def hydrate(self, body: bytes, tenant: str, *, execute: bool = False) -> bytes:
        payload = parse_json_object(body)
        request = validate_create_request(payload)
        ensure_splittable_request(payload, execute=execute)
        registry = await registry_for(payload, self.catalog) if execute else None
        input_items = normalize_input(request.input)
        history: list[dict[str, Any]] = []
        if request.previous_response_id:
            stored = await self.state.rehydrate(split_principal(tenant), request.previous_response_id)
            history = stored.items
            # The chain may hold what the request alone does not show (a gateway tool's calls, a compaction).
            ensure_splittable_items(history)
        validate_continuation(history, input_items)
        upstream = stateless_request(payload, history, input_items, stream=request.stream)
        if registry is not None:
            upstream = with_model_tools(upstream, registry, payload)
        now = int(time.time())
        context = SplitContext(
            response_id=new_response_id(),
            tenant=tenant,
            original_request=payload,
            created_at=now,
            effective_tools=request.tools,
            effective_tool_choice=request.tool_choice,
            history_call_ids=[
                item["call_id"] for item in history if item.get("type") in CALL_TYPES and isinstance(item.get("call_id"), str)
            ],
            execute=execute,
        )
        token = self.sealer.seal(context, now)
        if len(token) > self.settings.max_context_bytes:
            raise too_large("hydrated context")
        return orjson.dumps({"request": upstream, "context": token})

    async def persist(self, body: bytes, tenant: str) -> bytes:
        envelope = parse_json_object(body)
        relayed_json, relayed_sse = envelope.get("response"), envelope.get("sse")
        if (relayed_json is None) == (relayed_sse is None):
            raise _invalid("exactly one of `response` or `sse` is required")
        token = envelope.get("context")
        if not isinstance(token, str) or not token:
            raise _invalid("`context` is required: send back the context hydrate returned", "context")
        if len(token) > self.settings.max_context_bytes:
            raise too_large("context")
        if relayed_sse is not None:
            if not isinstance(relayed_sse, str):
                raise _invalid("`sse` must be the raw SSE text of the stream, as a string", "sse")
            relayed = b"sse\n" + relayed_sse.encode()
        else:
            relayed = b"json\n" + orjson.dumps(relayed_json, option=orjson.OPT_SORT_KEYS)
        if len(relayed) - relayed.index(b"\n") - 1 > self.settings.max_upstream_bytes:
            raise too_large("upstream response")
        context = self.sealer.unseal(token)
        if context.tenant != tenant:
            raise context_rejected("it was issued for another tenant")
        outcome = outcome_from_sse(relayed_sse) if relayed_sse is not None else outcome_from_response(relayed_json)
        request = validate_create_request(context.original_request)
        input_items = normalize_input(request.input)
        if outcome.status in UNSTORED_STATUSES:
            response = self._response(context, request, outcome)
            response["status"] = UNSTORED_RESPONSE_STATUS
            PERSISTED.labels(outcome="unstored").inc()
            self._account(tenant, request.model, response, input_items)
            return orjson.dumps(response)
        check_item_ids_against_input(input_items, outcome.output)
        executed_ids = [item["call_id"] for item in context.executed if item.get("type") in CALL_TYPES]
        check_call_ids([*context.history_call_ids, *executed_ids], input_items, outcome.output)
        response = self._response(context, request, outcome)
        response_json = orjson.dumps(response)
        if not request.store:
            PERSISTED.labels(outcome="unstored").inc()
            self._account(tenant, request.model, response, input_items)
            return response_json
        stored = await self.state.persist_split_turn(
            state_pb2.PersistTurnRequest(
                principal=split_principal(tenant),
                response_id=context.response_id,
                previous_response_id=request.previous_response_id or "",
                response=response_json,
                input_items=[state_pb2.Item(id=item["id"], data=orjson.dumps(item)) for item in input_items],
                # The execute steps' call/output pairs come first: what the model saw, in order.
                output_items=[state_pb2.Item(id=item["id"], data=orjson.dumps(item))
                              for item in [*context.executed, *outcome.output]],
                model=request.model,
                status=outcome.status,
                store_response=True,
            ),
            hashlib.sha256(relayed).hexdigest(),
        )
        PERSISTED.labels(outcome="stored" if stored is None else "replayed").inc()
        if stored is not None:
            return stored  # a replay: the first persist counted the turn
        self._account(tenant, request.model, response, input_items)
        return response_json

    def _account(self, tenant: str, model: str, response: dict[str, Any], input_items: list[dict[str, Any]]) -> None:
        """The turn's last model request (its usage; the execute steps counted the rounds before it and their
        tools) and its audit record: a list append each."""
        principal = split_principal(tenant)
        if self.usage is not None:
            self.usage.record(principal, model, usage_of(response.get("usage")))
        if self.audit is not None:
            details = turn_details(response, input_items, conversation_id=None,
                                   previous_response_id=response.get("previous_response_id"))
            self.audit.record("response.turn", principal, details)

    @staticmethod
    def _response(context: SplitContext, request: Any, outcome: RoundOutcome) -> dict[str, Any]:
        effective = request.model_copy(update={"tools": context.effective_tools, "tool_choice": context.effective_tool_choice})
        error = outcome.error
        if outcome.status in UNSTORED_STATUSES and error is None:
            error = {"code": "upstream_failed", "message": "The model response failed."}
        return build_response(
            effective,
            response_id=context.response_id,
            created_at=context.created_at,
            status=outcome.status,
            output=[*context.executed_public, *outcome.output],
            usage=outcome.usage,
            error=error,
            incomplete_details=outcome.incomplete_details,
            completed_at=int(time.time()) if outcome.status == "completed" else None,
        )
