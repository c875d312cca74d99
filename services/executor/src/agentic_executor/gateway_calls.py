"""A turn's gateway-owned calls: run through the tool runners, shown as their public items, answered to the model."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentic_core.json_types import Event, Item
from agentic_core.responses.round_outcome import is_gateway_call
from agentic_core.responses.turn_so_far import TurnSoFar
from agentic_core.tools import file_search
from agentic_core.tools.approvals import Approval
from agentic_core.tools.mcp import approval_request_item
from agentic_core.tools.protocol import ToolResult
from agentic_core.tools.public_items import GatewayCallView, function_call_output, standalone_item_events
from agentic_core.tools.registry import ToolBinding, ToolRegistry
from agentic_runtime.tools.dispatch import CallBudget, ToolDispatcher, run_gateway_calls

from agentic_executor.usage import ToolTally


@dataclass(frozen=True, slots=True)
class ToolPolicy:
    max_rounds: int = 10
    max_concurrent_calls: int = 5
    call_timeout_seconds: float = 60.0


@dataclass(frozen=True, slots=True)
class PlacedCall:
    """A gateway call with the `output_index` its public items take."""

    view: GatewayCallView
    index: int

    def opening(self) -> list[Event]:
        return self.view.opening(self.index)


@dataclass(frozen=True, slots=True)
class FinishedCalls:
    so_far: TurnSoFar            # with the calls' public items
    closings: list[list[Event]]  # per call, the events that finish its public items
    outputs: list[Item]          # what the model reads next, per call


@dataclass(frozen=True, slots=True)
class Shown:
    """Items added to a turn and the events that show them."""

    so_far: TurnSoFar
    events: list[Event]


class GatewayCalls:
    """The gateway calls of one turn; `max_tool_calls` counts over all of them."""

    def __init__(
        self,
        dispatcher: ToolDispatcher | None,
        registry: ToolRegistry,
        policy: ToolPolicy,
        *,
        response_id: str,
        tenant: str,
        include: set[str],
        max_tool_calls: int | None,
    ) -> None:
        self.dispatcher = dispatcher
        self.registry = registry
        self.policy = policy
        self.response_id = response_id
        self.tenant = tenant
        self.include = include
        self.budget = CallBudget(max_tool_calls)
        self.tally = ToolTally()  # for the turn's usage record
        # The files this turn's searches found: the messages after them cite those (file_citation annotations).
        self.citations = file_search.Citations()
        self.cites_files = registry.binding(file_search.NAME) is not None

    def annotated(self, items: list[Item]) -> list[Item]:
        """Messages with the citations of the files searched so far."""
        return [self.citations.annotated_item(item) for item in items] if self.citations.by_marker else items

    def is_gateway_call(self, item: Item) -> bool:
        return is_gateway_call(item, self.registry)

    def binding(self, call: Item) -> ToolBinding:
        binding = self.registry.binding(call.get("name", ""))
        assert binding is not None, "only calls the registry routes to the gateway get here"
        return binding

    async def run(self, calls: Sequence[Item]) -> list[ToolResult]:
        """Every call gets a result, in order (refusals too)."""
        if not calls:
            return []
        with self.tally.timing(calls, self.binding):
            return await run_gateway_calls(
                self.dispatcher, self.registry, list(calls), response_id=self.response_id, tenant=self.tenant,
                timeout=self.policy.call_timeout_seconds, max_concurrent=self.policy.max_concurrent_calls,
                budget=self.budget,
            )

    def place(self, calls: Sequence[Item], first_index: int) -> list[PlacedCall]:
        placed, index = [], first_index
        for call in calls:
            view = GatewayCallView(self.binding(call), call, self.include)
            placed.append(PlacedCall(view, index))
            index += 2 if view.binding.public_type == "function_call" else 1  # operator tools: the call and its output
        return placed

    def finish(self, placed: list[PlacedCall], results: list[ToolResult], so_far: TurnSoFar) -> FinishedCalls:
        closings, outputs, links = [], [], {}
        for call, result in zip(placed, results, strict=True):
            items, events = call.view.closing(call.index, result)
            so_far = so_far.shown(items)
            closings.append(events)
            if call.view.binding.kind == file_search.NAME and result.status == "ok":
                self.citations.add(result.details.get("results") or [])
            if call.view.binding.public_type == "function_call":
                outputs.append(items[1])  # operator tools show the output the model reads
            else:  # the model's output stays behind the public item, linked to it
                links[call.view.call["call_id"]] = call.view.public_id
                outputs.append(function_call_output(call.view.call["call_id"], result))
        return FinishedCalls(so_far.linked(links), closings, outputs)

    def approval_requests(self, calls: Sequence[Item], so_far: TurnSoFar) -> Shown:
        """Calls held for the client's approval, shown and stored as `mcp_approval_request`s."""
        events: list[Event] = []
        for call in calls:
            binding = self.binding(call)
            request = approval_request_item(binding.server_label or "", binding.runner_name, call.get("arguments") or "{}",
                                            call["call_id"])
            events += standalone_item_events(request, so_far.next_index)
            so_far = so_far.shown([request]).continued([request])
        return Shown(so_far, events)

    async def settle_approvals(self, approvals: list[Approval], so_far: TurnSoFar) -> tuple[Shown, list[Item]]:
        """Runs the approved calls and answers the denied ones; also returns the outputs the model reads next."""
        approved = [approval.call for approval in approvals if approval.approved]
        results = dict(zip((call["call_id"] for call in approved), await self.run(approved), strict=True))
        placed = self.place([approval.call for approval in approvals], so_far.next_index)
        answers = [results.get(approval.call["call_id"]) or _denied(approval) for approval in approvals]
        finished = self.finish(placed, answers, so_far)
        events = [event for call, closing in zip(placed, finished.closings, strict=True) for event in call.opening() + closing]
        # A store:false client sent the request back, not the model's call: the call is restored before its output.
        restored = [approval.call for approval in approvals if approval.restored]
        return Shown(finished.so_far.continued([*restored, *finished.outputs]), events), finished.outputs


def _denied(approval: Approval) -> ToolResult:
    reason = f": {approval.reason}" if approval.reason else "."
    return ToolResult.error(approval.call["call_id"], "The user did not approve this call" + reason)


def shown_first(items: list[Item], so_far: TurnSoFar) -> Shown:
    """Items shown before the first round (e.g. `mcp_list_tools`), stored with the turn."""
    events: list[Event] = []
    for item in items:
        events += standalone_item_events(item, so_far.next_index)
        so_far = so_far.shown([item]).continued([item])
    return Shown(so_far, events)
