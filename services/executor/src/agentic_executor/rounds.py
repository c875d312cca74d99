"""The round loop of one turn: infer, run the gateway-owned calls, infer again, until done.

A round ends in one of four ways: nothing left to do (done); a client-owned call
(returned to the client — gateway calls of that mixed round still run and are
recorded); gateway calls ran and rounds remain (continue with `tool_choice:
auto`); gateway calls ran on the last allowed round (incomplete, no dangling
call). Usage is summed over rounds; in a stream, sequence numbers run on and
output indexes are rebased across rounds, and hidden gateway calls reappear as
their public items with OpenAI's lifecycle events.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from agentic_core.errors import AgenticError
from agentic_core.responses.items import model_input
from agentic_core.responses.stream import EventSequencer, RoundOutcome, StreamTranslator, outcome_from_json
from agentic_core.routing import ModelRoute
from agentic_core.tools.approvals import Approval
from agentic_core.tools.mcp import approval_request_item
from agentic_core.tools.protocol import ToolResult
from agentic_core.tools.public_items import GatewayCallView, function_call_output, standalone_item_events
from agentic_core.tools.registry import ToolBinding, ToolRegistry
from agentic_runtime.tool_dispatch import CallBudget, ToolDispatcher, run_gateway_calls

from agentic_executor.metrics import TOOL_ROUNDS, UPSTREAM_FIRST_EVENT_SECONDS
from agentic_executor.upstream import UpstreamClient

PublicEvent = tuple[str, int, bytes]
CALL_TYPES = ("function_call", "custom_tool_call")


@dataclass(frozen=True, slots=True)
class ToolPolicy:
    max_rounds: int = 10
    max_concurrent_calls: int = 5
    call_timeout_seconds: float = 60.0


@dataclass(slots=True)
class TurnResult:
    status: str = "completed"
    public_output: list[dict[str, Any]] = field(default_factory=list)  # what the client sees
    continuation: list[dict[str, Any]] = field(default_factory=list)   # what the next turn's model sees
    usage: dict[str, Any] | None = None
    incomplete_details: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    rounds: int = 0
    public_of_call: dict[str, str] = field(default_factory=dict)  # gateway call id → its public item's id


def add_usage(total: dict[str, Any] | None, more: dict[str, Any] | None) -> dict[str, Any] | None:
    if more is None:
        return total
    if total is None:
        return more
    summed: dict[str, Any] = {}
    for key in total.keys() | more.keys():
        left, right = total.get(key), more.get(key)
        if isinstance(left, dict) or isinstance(right, dict):
            summed[key] = add_usage(left or {}, right or {})
        else:
            summed[key] = (left or 0) + (right or 0)
    return summed


class RoundLoop:
    def __init__(
        self,
        upstream: UpstreamClient,
        dispatcher: ToolDispatcher | None,
        policy: ToolPolicy,
        *,
        route: ModelRoute,
        registry: ToolRegistry,
        response_id: str,
        tenant: str,
        include: set[str],
        max_tool_calls: int | None,
    ) -> None:
        self.upstream = upstream
        self.dispatcher = dispatcher
        self.policy = policy
        self.route = route
        self.registry = registry
        self.response_id = response_id
        self.tenant = tenant
        self.include = include
        self.budget = CallBudget(max_tool_calls)
        self.result = TurnResult()
        self.sequencer = EventSequencer()
        self._preamble_events: list[dict[str, Any]] = []  # emitted right after the opening events

    def _is_gateway_item(self, item: dict[str, Any]) -> bool:
        return item.get("type") == "function_call" and self.registry.is_gateway_call(item.get("name"))

    def _emit(self, event: dict[str, Any]) -> PublicEvent:
        return self.sequencer.emit(event)

    def add_items_first(self, items: list[dict[str, Any]]) -> None:
        """Items shown before the first round (e.g. `mcp_list_tools`), stored with the turn."""
        for item in items:
            self._preamble_events += standalone_item_events(item, len(self.result.public_output))
            self.result.public_output.append(item)
            self.result.continuation.append(item)

    async def settle_approvals(self, approvals: list[Approval]) -> list[dict[str, Any]]:
        """Run the approved calls, report the denied ones; returns the outputs the model reads next."""
        approved = [approval.call for approval in approvals if approval.approved]
        results = dict(zip((call["call_id"] for call in approved), await self._execute(approved), strict=True))
        outputs = []
        for approval in approvals:
            call = approval.call
            result = results.get(call["call_id"]) or ToolResult.error(
                call["call_id"], "The user did not approve this call" + (f": {approval.reason}" if approval.reason else "."))
            view = GatewayCallView(self._binding(call), call, self.include)
            index = len(self.result.public_output)
            items, events = view.closing(index, result)
            self._preamble_events += view.opening(index) + events
            self.result.public_output += items
            outputs.append(self._model_output(view, items, result))
        # A store:false client sent the request back, not the model's call: the call is restored before its output.
        self.result.continuation += [approval.call for approval in approvals if approval.restored] + outputs
        return outputs

    async def run(self, body: dict[str, Any], *, stream: bool, opening: list[dict[str, Any]]) -> AsyncIterator[PublicEvent]:
        """Yields public events (streaming only). Errors before the first event propagate; later ones fail the turn."""
        started = not stream
        for round_number in range(1, self.policy.max_rounds + 1):
            self.result.rounds = round_number
            if stream:
                translator = StreamTranslator(self.sequencer, index_offset=len(self.result.public_output),
                                              is_hidden=self._is_gateway_item)
                clock = time.perf_counter()
                upstream_events = self.upstream.stream_response(self.route, body)
                try:
                    first_event = await anext(upstream_events, None)
                    if round_number == 1:
                        UPSTREAM_FIRST_EVENT_SECONDS.observe(time.perf_counter() - clock)
                    if not started:
                        started = True
                        for event in [*opening, *self._preamble_events]:
                            yield self._emit(event)
                    if first_event is not None:
                        translated = translator.translate(first_event)
                        if translated is not None:
                            yield translated
                        async for event in upstream_events:
                            translated = translator.translate(event)
                            if translated is not None:
                                yield translated
                            if translator.finished:
                                break
                    outcome = translator.outcome() or RoundOutcome(
                        status="failed", output=[],
                        error={"code": "upstream_incomplete",
                               "message": "The model server's stream ended before the response finished."},
                    )
                except AgenticError as error:
                    if not started:
                        raise
                    outcome = RoundOutcome(status="failed", output=[],
                                           error={"code": error.code or "upstream_error", "message": error.message})
                finally:
                    await upstream_events.aclose()
            else:
                clock = time.perf_counter()
                outcome = outcome_from_json(await self.upstream.create_response(self.route, body))
                if round_number == 1:
                    UPSTREAM_FIRST_EVENT_SECONDS.observe(time.perf_counter() - clock)
            async for event in self._after_round(outcome, body, round_number, translator if stream else None):
                yield event
            if self.result.status != "continue":
                TOOL_ROUNDS.observe(round_number)
                return

    def _model_output(self, view: GatewayCallView, public_items: list[dict[str, Any]], tool_result: ToolResult) -> dict[str, Any]:
        """The output the model reads. Shown as is for operator tools; else behind the public item, linked to it."""
        if view.binding.public_type == "function_call":
            return public_items[1]
        self.result.public_of_call[view.call["call_id"]] = view.public_id
        return function_call_output(view.call["call_id"], tool_result)

    def _release_later_items(self, later: list[dict[str, Any]], translator: StreamTranslator | None) -> list[PublicEvent]:
        """The round's items after its first gateway call, shown after that call's public items (the model's order)."""
        events = translator.release_deferred(len(self.result.public_output)) if translator is not None else []
        self.result.public_output += later
        return events

    async def _after_round(
        self, outcome: RoundOutcome, body: dict[str, Any], round_number: int, translator: StreamTranslator | None
    ) -> AsyncIterator[PublicEvent]:
        result = self.result
        stream = translator is not None
        result.usage = add_usage(result.usage, outcome.usage)
        if outcome.status == "failed":
            for event in self._release_later_items([], translator):
                yield event
            result.status, result.error = "failed", outcome.error
            return
        waiting = [item for item in outcome.output if self._is_gateway_item(item) and self._binding(item).requires_approval]
        gateway_calls = [item for item in outcome.output if self._is_gateway_item(item) and item not in waiting]
        client_calls = [item for item in outcome.output if item.get("type") in CALL_TYPES and not self._is_gateway_item(item)]
        first_gateway = next((position for position, item in enumerate(outcome.output) if self._is_gateway_item(item)),
                             len(outcome.output))
        visible = [(position, item) for position, item in enumerate(outcome.output) if not self._is_gateway_item(item)]
        result.public_output += [item for position, item in visible if position < first_gateway]
        later = [item for position, item in visible if position > first_gateway]
        result.continuation += outcome.output
        if outcome.status != "completed" and (gateway_calls or waiting):
            # Cut short (max_output_tokens) with a call the model never finished: it is not executed.
            result.continuation = [item for item in result.continuation if item not in gateway_calls + waiting]
            gateway_calls, waiting = [], []
        for call in waiting:  # not executed: the client approves or denies it in its next request
            binding = self._binding(call)
            request = approval_request_item(binding.server_label or "", binding.runner_name, call.get("arguments") or "{}",
                                            call["call_id"])
            if stream:
                for event in standalone_item_events(request, len(result.public_output)):
                    yield self._emit(event)
            result.public_output.append(request)
            result.continuation.append(request)
        if not gateway_calls:
            for event in self._release_later_items(later, translator):
                yield event
            result.status, result.incomplete_details = outcome.status, outcome.incomplete_details
            return
        views = [GatewayCallView(self._binding(call), call, self.include) for call in gateway_calls]
        indexes, next_index = [], len(result.public_output)
        for view in views:
            indexes.append(next_index)
            next_index += 2 if view.binding.public_type == "function_call" else 1
        if stream:
            for view, index in zip(views, indexes, strict=True):
                for event in view.opening(index):
                    yield self._emit(event)
        results = await self._execute(gateway_calls)
        outputs = []
        for view, index, tool_result in zip(views, indexes, results, strict=True):
            items, events = view.closing(index, tool_result)
            result.public_output += items
            if stream:
                for event in events:
                    yield self._emit(event)
            outputs.append(self._model_output(view, items, tool_result))
        for event in self._release_later_items(later, translator):
            yield event
        result.continuation += outputs
        if client_calls or waiting:
            result.status = "completed"  # the client owns the next step
        elif round_number >= self.policy.max_rounds:
            result.status, result.incomplete_details = "incomplete", {"reason": "max_tool_rounds"}
        else:
            result.status = "continue"
            body["input"] = [*body["input"], *model_input(outcome.output), *outputs]
            body["tool_choice"] = "auto"

    def _binding(self, call: dict[str, Any]) -> ToolBinding:
        binding = self.registry.binding(call.get("name", ""))
        assert binding is not None
        return binding

    async def _execute(self, calls: list[dict[str, Any]]) -> list[ToolResult]:
        return await run_gateway_calls(
            self.dispatcher, self.registry, calls, response_id=self.response_id, tenant=self.tenant,
            timeout=self.policy.call_timeout_seconds, max_concurrent=self.policy.max_concurrent_calls, budget=self.budget,
        )
