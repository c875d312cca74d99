"""The execute step: a coordinator that runs inference itself hands us the gateway-owned calls of one
round; we run them through the same tool runners as the executor and hand back their outputs, the next
upstream request, and a re-signed context that remembers them for persist."""

from __future__ import annotations

import time
from typing import Any

import orjson
from agentic_core.errors import InvalidRequest
from agentic_core.responses.items import model_input
from agentic_core.responses.request import parse_json_object
from agentic_core.split.context import SplitContext, context_rejected
from agentic_core.tools.public_items import GatewayCallView, function_call_output
from agentic_core.tools.registry import ToolRegistry, build_registry, model_tool_choice
from agentic_core.usage.turn_usage import TurnUsage, usage_of
from agentic_runtime.state.usage import UsageRecorder
from agentic_runtime.tools.dispatch import CallBudget, ToolDispatcher, run_gateway_calls
from agentic_runtime.tools.operator_tools import OperatorToolCatalog

from agentic_llm_d.auth import split_principal
from agentic_llm_d.sealing import ContextSealer
from agentic_llm_d.settings import LlmDSettings


def wants_execute(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes")


async def registry_for(payload: dict[str, Any], catalog: OperatorToolCatalog | None) -> ToolRegistry:
    tools = payload.get("tools") or []
    operator_tools = {}
    if catalog is not None and any(isinstance(tool, dict) and tool.get("type") == "operator" for tool in tools):
        operator_tools = await catalog.definitions()
    return build_registry(tools, operator_tools)


def with_model_tools(upstream: dict[str, Any], registry: ToolRegistry, payload: dict[str, Any]) -> dict[str, Any]:
    """The upstream request with gateway tools as the function tools the model calls."""
    if payload.get("tools"):
        upstream["tools"] = registry.model_tools
    if payload.get("tool_choice") is not None:
        upstream["tool_choice"] = model_tool_choice(payload["tool_choice"], registry)
    return upstream


class ExecuteStep:
    def __init__(self, settings: LlmDSettings, sealer: ContextSealer, dispatcher: ToolDispatcher,
                 catalog: OperatorToolCatalog, usage: UsageRecorder | None = None) -> None:
        self.settings = settings
        self.sealer = sealer
        self.dispatcher = dispatcher
        self.catalog = catalog
        self.usage = usage

    async def execute(self, body: bytes, tenant: str) -> bytes:
        envelope = parse_json_object(body)
        token, calls, request = envelope.get("context"), envelope.get("calls"), envelope.get("request")
        if not isinstance(token, str) or not token:
            raise InvalidRequest("`context` is required: send the latest context hydrate or execute returned", param="context")
        if not isinstance(calls, list) or not calls or not all(isinstance(call, dict) for call in calls):
            raise InvalidRequest("`calls` must be the round's gateway-owned function_call items", param="calls")
        if not isinstance(request, dict) or not isinstance(request.get("input"), list):
            raise InvalidRequest("`request` must be the upstream request of the round", param="request")
        context = self.sealer.unseal(token)
        if context.tenant != tenant:
            raise context_rejected("it was issued for another tenant")
        if not context.execute:
            raise context_rejected(f"hydrate was not asked for the execute step ({self.settings.execute_header}: true)")
        if context.rounds >= self.settings.max_tool_rounds:
            raise InvalidRequest(f"This turn already ran {context.rounds} tool rounds, the limit; persist it.",
                                 code="max_tool_rounds")
        registry = await registry_for(context.original_request, self.catalog)
        self._check_calls(calls, registry, context)
        started = time.perf_counter()
        results = await run_gateway_calls(
            self.dispatcher, registry, calls, response_id=context.response_id, tenant=tenant,
            timeout=self.settings.tool_timeout_seconds, max_concurrent=self.settings.max_concurrent_gateway_calls,
            budget=CallBudget(context.original_request.get("max_tool_calls"), _executed_calls(context)),
        )
        if self.usage is not None:
            self.usage.record(split_principal(tenant), str(context.original_request.get("model", "")),
                              _round_usage(envelope.get("usage"), calls, registry, time.perf_counter() - started))
        include = set(context.original_request.get("include") or [])
        outputs: list[dict[str, Any]] = []
        public: list[dict[str, Any]] = []
        for call, result in zip(calls, results, strict=True):
            view = GatewayCallView(registry.bindings[call["name"]], call, include)
            items, _ = view.closing(len(context.executed_public) + len(public), result)
            public += items
            outputs.append(function_call_output(call["call_id"], result))
        updated = SplitContext(**{
            **{name: getattr(context, name) for name in SplitContext.__dataclass_fields__},
            "executed": [*context.executed, *calls, *outputs],
            "executed_public": [*context.executed_public, *public],
            "rounds": context.rounds + 1,
        })
        next_request = {**request, "input": [*request["input"], *model_input(calls), *outputs], "tool_choice": "auto"}
        return orjson.dumps({"outputs": outputs, "request": next_request, "context": self.sealer.seal(updated, int(time.time()))})

    @staticmethod
    def _check_calls(calls: list[dict[str, Any]], registry: ToolRegistry, context: SplitContext) -> None:
        seen = set(context.history_call_ids) | {item.get("call_id") for item in context.executed}
        for index, call in enumerate(calls):
            param = f"calls[{index}]"
            call_id, name = call.get("call_id"), call.get("name")
            if call.get("type") != "function_call" or not isinstance(call_id, str) or not call_id:
                raise InvalidRequest("Each call must be a function_call item with a call_id.", param=param)
            if not registry.is_gateway_call(name):
                raise InvalidRequest(f"{name!r} is not a gateway-owned tool of this turn; return it to the client.", param=param)
            if call_id in seen:
                raise InvalidRequest(f"The call id {call_id!r} was already used in this turn.", param=f"{param}.call_id")
            seen.add(call_id)
            call.setdefault("id", f"fc_{call_id}")


def _round_usage(reported: Any, calls: list[dict[str, Any]], registry: ToolRegistry, seconds: float) -> TurnUsage:
    """The round the coordinator ran before this step: one model request, with the tokens of the `usage` the
    coordinator may pass along (persist counts the last round's), and the gateway calls it made, by kind."""
    usage = usage_of(reported)
    for call in calls:
        binding = registry.binding(call["name"])
        kind = binding.kind if binding is not None else "function"
        usage.tool_calls[kind] = usage.tool_calls.get(kind, 0) + 1
    usage.tool_seconds = seconds
    return usage


def _executed_calls(context: SplitContext) -> int:
    return sum(1 for item in context.executed if item.get("type") == "function_call")
