"""A turn's plan before its first round, decided from its input and history alone.

What the input settles (MCP approvals answered, calls restored for a client that keeps its own state), what is shown
before the first round (the tool listings of MCP servers the chain has not listed yet), which shown outputs belong
to denied calls, and the first body the model server is sent. The executor does the I/O around it: discovering the
tools, running the approved calls, the rounds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentic_core.json_types import Item
from agentic_core.responses.compaction import Opener
from agentic_core.responses.history import StoredHistory, as_history
from agentic_core.responses.pending_calls import validate_continuation
from agentic_core.responses.reasoning import ReasoningOpener, opened_request
from agentic_core.responses.round_request import first_round_request
from agentic_core.tools.approvals import Approval, answers_approval, resolve_approvals
from agentic_core.tools.mcp import McpServerTools, list_tools_item, listed_servers


@dataclass(frozen=True, slots=True)
class ModelView:
    """How the model server is addressed for this turn: its name there, its tools and tool choice in its forms."""

    model: str
    tools: list[dict[str, Any]] | None = None  # None: the request named no tools, none are sent
    tool_choice: Any = None                    # None: not sent
    stream: bool = False


@dataclass(frozen=True, slots=True)
class TurnPlan:
    history: StoredHistory
    input_items: list[Item]
    approvals: list[Approval] = field(default_factory=list)
    listings: list[Item] = field(default_factory=list)  # `mcp_list_tools` items shown (and stored) before round one

    @property
    def approved(self) -> list[Item]:
        """The calls the input approved: they run before the first round."""
        return [approval.call for approval in self.approvals if approval.approved]

    @property
    def restored(self) -> list[Item]:
        """Calls rebuilt from approval requests a `store: false` client sent back: the history did not hold them."""
        return [approval.call for approval in self.approvals if approval.restored]

    def denied_outputs(self, public_of_call: Mapping[str, str]) -> frozenset[str]:
        """The public items of the calls the input denied (shown, never run: the audit record says so)."""
        return frozenset(public_of_call[call_id] for approval in self.approvals
                         if not approval.approved and (call_id := str(approval.call.get("call_id"))) in public_of_call)

    def first_request(
        self, payload: dict[str, Any], view: ModelView, settled: Sequence[Item] = (), *, open_compaction: Opener | None,
        open_reasoning: ReasoningOpener, check: bool = True,
    ) -> dict[str, Any]:
        """The one place a turn's first upstream body is built (later rounds extend a copy). `settled`: the outputs
        of the calls the approvals settled. `check`: the input must continue the history (every pending call
        answered); a token count leaves it unchecked. Reasoning items sealed by us are opened last: the model
        reads what it produced."""
        sent = [*self.restored, *settled]
        if check:
            validate_continuation(self.history.calls(), [*self.input_items, *sent])
        body = first_round_request(payload, self.history, self.input_items, sent, stream=view.stream,
                                   open_compaction=open_compaction, model=view.model, tools=view.tools,
                                   tool_choice=view.tool_choice)
        return opened_request(body, open_reasoning)


def plan_turn(history: StoredHistory | Sequence[Item], input_items: list[Item],
              servers: Sequence[McpServerTools] = ()) -> TurnPlan:
    """`servers`: the MCP servers discovered for the request's tools; those the chain listed are not listed again.
    The history is parsed only for a request that answers an approval or has MCP tools."""
    stored = as_history(history)
    listed = listed_servers(stored.items) if servers else set()
    approvals = resolve_approvals(stored.items, input_items) if answers_approval(input_items) else []
    return TurnPlan(stored, input_items, approvals,
                    [list_tools_item(server) for server in servers if server.declaration.server_label not in listed])
