"""The executor's part of the audit trail: one `response.turn` record per finished turn (the gateway records
the HTTP request; this adds what only the turn knows: its tools and approvals)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Protocol

from agentic.v1 import common_pb2
from agentic_core.audit import turn_details

from agentic_executor.turn_context import TurnContext


class AuditSink(Protocol):
    def record(self, kind: str, principal: common_pb2.Principal, details: dict[str, Any]) -> None: ...


def audit_turn(recorder: AuditSink, context: TurnContext, response: dict[str, Any], request_id: str,
               denied: Collection[str] = ()) -> None:
    """Keeps the record (a list append); stored or not, JSON or streamed, every finished turn counts. `denied`:
    the output items of the calls the input denied (shown, not run)."""
    details = turn_details(response, context.input_items, conversation_id=context.conversation_id,
                           previous_response_id=context.request.previous_response_id, not_run=denied)
    details["request_id"] = request_id
    recorder.record("response.turn", context.principal, details)
