"""The split context: what `hydrate` hands the coordinator and `persist` needs back, as JWT claims.

Signing and verifying are the llm-d service's job; this module only shapes
and checks the claims, so a context that verifies but is malformed is still
rejected with "context rejected: ...".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentic_core.errors import InvalidRequest

AUDIENCE = "agentic-llm-d"
DEFAULT_TTL_SECONDS = 600
RESPONSE_ID_PREFIX = "resp_"


def context_rejected(reason: str) -> InvalidRequest:
    return InvalidRequest(f"context rejected: {reason}", param="context", code="invalid_request_error")


@dataclass(frozen=True, slots=True)
class SplitContext:
    """One hydrated turn: the reserved id, whose it is, what was asked, and what its history holds."""

    response_id: str
    tenant: str
    original_request: dict[str, Any]
    created_at: int
    conversation_id: str | None = None  # conversations are refused; kept for the reference's wire shape
    effective_tools: list[dict[str, Any]] | None = None
    effective_tool_choice: str | dict[str, Any] | None = None
    # Call ids of the calls in the continued history, so persist can keep call ids unique without reloading it.
    history_call_ids: list[str] = field(default_factory=list)
    # The execute step: the caller may run gateway tools through us between its inference rounds.
    execute: bool = False
    executed: list[dict[str, Any]] = field(default_factory=list)         # model-facing call/output pairs so far
    executed_public: list[dict[str, Any]] = field(default_factory=list)  # their public items (web_search_call, ...)
    rounds: int = 0

    def claims(self, *, now: int, ttl_seconds: int = DEFAULT_TTL_SECONDS) -> dict[str, Any]:
        claims = self._claims(now=now, ttl_seconds=ttl_seconds)
        if not self.execute:  # the reference's wire shape, unless the caller uses the execute step
            for key in ("execute", "executed", "executed_public", "rounds"):
                del claims["ctx"][key]
        return claims

    def _claims(self, *, now: int, ttl_seconds: int) -> dict[str, Any]:
        return {
            "aud": AUDIENCE,
            "iat": now,
            "exp": now + ttl_seconds,
            "ctx": {
                "response_id": self.response_id,
                "tenant": self.tenant,
                "original_request": self.original_request,
                "conversation_id": self.conversation_id,
                "effective_tools": self.effective_tools,
                "effective_tool_choice": self.effective_tool_choice,
                "history_call_ids": self.history_call_ids,
                "created_at": self.created_at,
                "execute": self.execute,
                "executed": self.executed,
                "executed_public": self.executed_public,
                "rounds": self.rounds,
            },
        }

    @classmethod
    def from_claims(cls, claims: dict[str, Any]) -> SplitContext:
        """The context inside verified claims; anything malformed is rejected, never defaulted."""
        ctx = claims.get("ctx")
        if not isinstance(ctx, dict):
            raise context_rejected("it carries no turn")
        response_id = ctx.get("response_id")
        if not isinstance(response_id, str) or not response_id.startswith(RESPONSE_ID_PREFIX) or len(response_id) <= len(RESPONSE_ID_PREFIX):
            raise context_rejected("it carries no reserved response id")
        tenant = ctx.get("tenant")
        if not isinstance(tenant, str) or not tenant:
            raise context_rejected("it carries no tenant")
        original_request = ctx.get("original_request")
        if not isinstance(original_request, dict):
            raise context_rejected("it carries no request")
        created_at = ctx.get("created_at")
        if not isinstance(created_at, int) or isinstance(created_at, bool):
            raise context_rejected("it carries no creation time")
        conversation_id = ctx.get("conversation_id")
        if conversation_id is not None:
            raise context_rejected("conversation is not supported for split execution")
        tools = ctx.get("effective_tools")
        if tools is not None and not (isinstance(tools, list) and all(isinstance(tool, dict) for tool in tools)):
            raise context_rejected("its tools are malformed")
        tool_choice = ctx.get("effective_tool_choice")
        if tool_choice is not None and not isinstance(tool_choice, str | dict):
            raise context_rejected("its tool choice is malformed")
        call_ids = ctx.get("history_call_ids", [])
        if not isinstance(call_ids, list) or not all(isinstance(call_id, str) for call_id in call_ids):
            raise context_rejected("its history call ids are malformed")
        execute = ctx.get("execute", False)
        executed, executed_public, rounds = ctx.get("executed", []), ctx.get("executed_public", []), ctx.get("rounds", 0)
        if not isinstance(execute, bool) or not isinstance(rounds, int) or isinstance(rounds, bool):
            raise context_rejected("its execute state is malformed")
        for items in (executed, executed_public):
            if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
                raise context_rejected("its executed items are malformed")
        return cls(
            response_id=response_id, tenant=tenant, original_request=original_request, created_at=created_at,
            conversation_id=None, effective_tools=tools, effective_tool_choice=tool_choice, history_call_ids=call_ids,
            execute=execute, executed=executed, executed_public=executed_public, rounds=rounds,
        )
