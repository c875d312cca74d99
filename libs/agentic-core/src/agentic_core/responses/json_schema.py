"""JSON Schemas of the Responses API's request bodies, for the OpenAPI documents of the services that take them
(the gateway; llm-d's hydrate). They describe what the validation (agentic_core.responses.request,
agentic_core.ids, agentic_core.json_bounds) accepts; the services' schemathesis runs hold them to it."""

from __future__ import annotations

from agentic_core.ids import ID_PATTERN, MAX_ID_CHARS
from agentic_core.json_bounds import MAX_JSON_DEPTH
from agentic_core.json_types import Schema
from agentic_core.responses.request import METADATA_MAX_KEY_CHARS, METADATA_MAX_PAIRS, METADATA_MAX_VALUE_CHARS

ID: Schema = {"type": "string", "pattern": ID_PATTERN, "maxLength": MAX_ID_CHARS}
METADATA: Schema = {
    "type": "object", "maxProperties": METADATA_MAX_PAIRS,
    "propertyNames": {"maxLength": METADATA_MAX_KEY_CHARS},
    "additionalProperties": {"type": "string", "maxLength": METADATA_MAX_VALUE_CHARS},
}
TAGGED: Schema = {"type": "object", "properties": {"type": {"type": "string"}}}
MESSAGE_ITEM: Schema = {
    "type": "object", "required": ["role", "content"],
    "properties": {
        "type": {"const": "message"}, "id": ID,
        "role": {"enum": ["user", "assistant", "system", "developer"]},
        "content": {"oneOf": [{"type": "string"}, {"type": "array", "items": TAGGED}]},
    },
}
INPUT: Schema = {"oneOf": [{"type": "string"}, {"type": "array", "items": {"anyOf": [MESSAGE_ITEM, TAGGED]}}]}
TOOLS: Schema = {"type": "array", "items": {"type": "object", "required": ["type"], "properties": {
    "type": {"type": "string"}, "name": {"type": "string"}, "parameters": {"type": "object"}}}}
CREATE_RESPONSE: Schema = {
    "type": "object", "required": ["model"],
    "description": f"Responses API create request (OpenAI's); JSON nested deeper than {MAX_JSON_DEPTH} levels is refused.",
    "properties": {
        "model": {"type": "string", "minLength": 1},
        "input": INPUT,
        "instructions": {"type": ["string", "null"]},
        "previous_response_id": {"anyOf": [ID, {"type": "null"}]},
        "conversation": {"anyOf": [ID, {"type": "object", "required": ["id"], "properties": {"id": ID}},
                                   {"type": "null"}]},
        "store": {"type": "boolean"}, "stream": {"type": ["boolean", "null"]}, "background": {"type": "boolean"},
        "metadata": {"anyOf": [METADATA, {"type": "null"}]},
        "temperature": {"type": ["number", "null"], "minimum": 0, "maximum": 2},
        "top_p": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
        "max_output_tokens": {"type": ["integer", "null"], "minimum": 1},
        "max_tool_calls": {"type": ["integer", "null"], "minimum": 0},
        "parallel_tool_calls": {"type": ["boolean", "null"]},
        "tools": TOOLS,
        "tool_choice": {"anyOf": [{"type": "string"}, {"type": "object"}]},
        "truncation": {"enum": ["auto", "disabled", None]},
        "include": {"type": "array", "items": {"type": "string"}},
        "text": {"type": "object"}, "reasoning": {"type": "object"},
    },
}
