"""The stateless request a model server receives for a turn: the client's fields minus ours, history inlined."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentic_core.json_types import Item
from agentic_core.responses.compaction import Opener, latest_compaction, visible_context
from agentic_core.responses.history import StoredHistory, as_history
from agentic_core.responses.items import model_input

# Fields that are ours (state, storage, routing, compaction) and never reach a stateless model server.
GATEWAY_ONLY_FIELDS = frozenset({"previous_response_id", "conversation", "store", "background", "metadata", "stream",
                                 "generate", "context_management"})


def stateless_request(
    payload: dict[str, Any], history: StoredHistory | Sequence[Item], input_items: list[dict[str, Any]], *,
    stream: bool, open_compaction: Opener | None = None,
) -> dict[str, Any]:
    """`open_compaction`: reads compaction items, whose summary then replaces what they superseded. A stored
    history with every model view stored is relayed as those bytes (it holds no compaction item)."""
    body = {key: value for key, value in payload.items() if key not in GATEWAY_ONLY_FIELDS}
    stored = as_history(history)
    if open_compaction is not None and not (stored.relayable and latest_compaction(input_items) is None):
        body["input"] = model_input(visible_context([*stored.items, *input_items], open_compaction))
    else:
        body["input"] = [*stored.model_input(), *model_input(input_items)]
    body["store"] = False
    body["stream"] = stream
    return body
