"""The model server's request for each round of a turn: the first built once, each next one a copy that adds the round."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentic_core.json_types import Item
from agentic_core.responses.compaction import Opener
from agentic_core.responses.history import StoredHistory
from agentic_core.responses.items import model_input
from agentic_core.responses.upstream_request import stateless_request


def first_round_request(
    payload: dict[str, Any],
    history: StoredHistory | Sequence[Item],
    input_items: list[Item],
    settled: Sequence[Item] = (),
    *,
    model: str,
    tools: list[dict[str, Any]] | None,
    tool_choice: Any,
    stream: bool,
    open_compaction: Opener | None = None,
) -> dict[str, Any]:
    """`settled`: what approvals settled before the first round (calls restored, then their outputs).
    `tools`/`tool_choice`: the model's forms, or None to send none. `open_compaction`: see `stateless_request`."""
    body = stateless_request(payload, history, input_items, stream=stream, open_compaction=open_compaction)
    ours: dict[str, Any] = {"model": model, "input": [*body["input"], *model_input(list(settled))]}
    if tools is not None:
        ours["tools"] = tools
    if tool_choice is not None:
        ours["tool_choice"] = tool_choice
    return {**body, **ours}


def compacted_request(body: dict[str, Any], visible: Sequence[Item]) -> dict[str, Any]:
    """The same request with the context compacted (the retained user messages and the summary)."""
    return {**body, "input": model_input(list(visible))}


def next_round_request(body: dict[str, Any], round_output: Sequence[Item], call_outputs: Sequence[Item]) -> dict[str, Any]:
    """After gateway calls ran: the model reads its round's output and the calls' outputs, and chooses freely."""
    return {**body, "input": [*body["input"], *model_input(list(round_output)), *call_outputs], "tool_choice": "auto"}
