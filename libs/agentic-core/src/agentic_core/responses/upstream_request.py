"""The stateless request a model server receives for a turn: the client's fields minus ours, history inlined."""

from __future__ import annotations

from typing import Any

from agentic_core.responses.items import model_input

# Fields that are ours (state, storage, routing) and never reach a stateless model server.
GATEWAY_ONLY_FIELDS = frozenset({"previous_response_id", "conversation", "store", "background", "metadata", "stream"})


def stateless_request(
    payload: dict[str, Any], history: list[dict[str, Any]], input_items: list[dict[str, Any]], *, stream: bool
) -> dict[str, Any]:
    body = {key: value for key, value in payload.items() if key not in GATEWAY_ONLY_FIELDS}
    body["input"] = model_input(history) + model_input(input_items)
    body["store"] = False
    body["stream"] = stream
    return body
