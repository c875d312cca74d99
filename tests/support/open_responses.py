"""The Open Responses specification's schemas (tests/fixtures/openresponses) as validators for our objects and
stream events."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

SPEC = Path(__file__).parents[1] / "fixtures" / "openresponses" / "openapi.json"
EVENT_SCHEMAS = {
    "response.created": "ResponseCreatedStreamingEvent", "response.queued": "ResponseQueuedStreamingEvent",
    "response.in_progress": "ResponseInProgressStreamingEvent", "response.completed": "ResponseCompletedStreamingEvent",
    "response.failed": "ResponseFailedStreamingEvent", "response.incomplete": "ResponseIncompleteStreamingEvent",
    "response.output_item.added": "ResponseOutputItemAddedStreamingEvent",
    "response.output_item.done": "ResponseOutputItemDoneStreamingEvent",
    "response.content_part.added": "ResponseContentPartAddedStreamingEvent",
    "response.content_part.done": "ResponseContentPartDoneStreamingEvent",
    "response.output_text.delta": "ResponseOutputTextDeltaStreamingEvent",
    "response.output_text.done": "ResponseOutputTextDoneStreamingEvent",
    "response.function_call_arguments.delta": "ResponseFunctionCallArgumentsDeltaStreamingEvent",
    "response.function_call_arguments.done": "ResponseFunctionCallArgumentsDoneStreamingEvent",
    "error": "ErrorStreamingEvent",
}


@cache
def _validator(schema: str) -> Draft202012Validator:
    components = json.loads(SPEC.read_text())["components"]
    return Draft202012Validator({"components": components, "$ref": f"#/components/schemas/{schema}"})


def violations(schema: str, instance: Any) -> list[str]:
    return [f"{'/'.join(map(str, error.absolute_path)) or '(root)'}: {error.message}"
            for error in _validator(schema).iter_errors(instance)]


def event_violations(events: list[dict[str, Any]], *, websocket: bool = False) -> dict[str, list[str]]:
    """Every event against its schema (a WebSocket `error` against the WebSocket error envelope), by position."""
    problems = {}
    for index, event in enumerate(events):
        schema = "WebSocketErrorEvent" if websocket and event["type"] == "error" else EVENT_SCHEMAS.get(event["type"])
        errors = [f"an event the specification does not define: {event['type']}"] if schema is None else \
            violations(schema, event)
        if errors:
            problems[f"{index} {event['type']}"] = errors
    return problems
