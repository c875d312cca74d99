"""The gateway's OpenAPI document (`GET /openapi.json`): what the routes read from bodies and query strings, which
FastAPI cannot see because each route reads its own body (byte for byte, for pass-through). Paths come from the
routes themselves (agentic_runtime.http.openapi); tests/e2e/test_schemathesis.py holds the service to this document.

The WebSocket mode of `/v1/responses` is not an OpenAPI operation; see docs/websocket.md."""

from __future__ import annotations

from agentic_core.json_types import Schema
from agentic_core.responses.json_schema import CREATE_RESPONSE, ID, INPUT, MESSAGE_ITEM, METADATA, TAGGED
from agentic_runtime.http.openapi import build_document, json_body, query
from fastapi import FastAPI

VERSION = "1"
_COMPACT: Schema = {
    "type": "object", "required": ["model"],
    "properties": {"model": {"type": "string", "minLength": 1}, "input": INPUT,
                   "instructions": {"type": ["string", "null"]},
                   "previous_response_id": {"anyOf": [ID, {"type": "null"}]}},
}
_ITEMS: Schema = {"type": "array", "maxItems": 20, "items": {"anyOf": [MESSAGE_ITEM, TAGGED]}}
_ANTHROPIC_MESSAGES: Schema = {"type": "array", "items": {
    "type": "object", "required": ["role", "content"],
    "properties": {"role": {"enum": ["user", "assistant"]},
                   "content": {"oneOf": [{"type": "string"}, {"type": "array", "items": TAGGED}]}},
}}
_MESSAGES_FIELDS: Schema = {
    "model": {"type": "string", "minLength": 1},
    "messages": _ANTHROPIC_MESSAGES,
    "system": {"oneOf": [{"type": "string"}, {"type": "array", "items": TAGGED}]},
    "tools": {"type": "array", "items": {"type": "object", "required": ["name"], "properties": {
        "type": {"type": "string"}, "name": {"type": "string"}, "input_schema": {"type": "object"}}}},
}


def _passthrough(fields: Schema) -> Schema:
    return {"type": "object", "required": ["model"],
            "properties": {"model": {"type": "string", "minLength": 1}, "stream": {"type": "boolean"}, **fields}}


_PAGE = [
    query("limit", {"type": "integer", "minimum": 1, "maximum": 100}),
    query("order", {"enum": ["asc", "desc"]}),
    query("after", ID, "The id to list after (a cursor)."),
]

_STORE = "/v1/vector_stores/{vector_store_id}"
_ATTRIBUTES: Schema = {"type": "object", "maxProperties": 16,
                       "additionalProperties": {"type": ["string", "number", "boolean"]}}
_EXPIRES_AFTER: Schema = {"type": "object", "required": ["anchor", "days"], "properties": {
    "anchor": {"type": "string"}, "days": {"type": "integer", "minimum": 1, "maximum": 365}}}
_CHUNKING: Schema = {"type": "object", "required": ["type"], "properties": {"type": {"enum": ["auto", "static"]}}}
_FILE_IDS: Schema = {"type": "array", "minItems": 1, "maxItems": 500, "items": ID}
# Files and vector stores: the retrieval service validates what the gateway relays (docs/retrieval.md).
_RETRIEVAL: dict[tuple[str, str], Schema] = {
    ("post", "/v1/files"): {"requestBody": {"required": True, "content": {"multipart/form-data": {"schema": {
        "type": "object", "required": ["purpose", "file"],
        "properties": {"purpose": {"type": "string"}, "file": {"type": "string", "format": "binary"},
                       "expires_after[anchor]": {"type": "string"}, "expires_after[seconds]": {"type": "integer"}},
    }}}}},
    ("get", "/v1/files"): {"parameters": [*_PAGE, query("purpose", {"type": "string"})]},
    ("post", "/v1/vector_stores"): {"requestBody": json_body({"type": "object", "properties": {
        "name": {"type": "string"}, "file_ids": _FILE_IDS, "metadata": METADATA, "expires_after": _EXPIRES_AFTER,
        "chunking_strategy": _CHUNKING}}, required=False)},
    ("get", "/v1/vector_stores"): {"parameters": [*_PAGE, query("before", ID)]},
    ("post", _STORE): {"requestBody": json_body({"type": "object", "properties": {
        "name": {"type": ["string", "null"]}, "metadata": {"anyOf": [METADATA, {"type": "null"}]},
        "expires_after": {"anyOf": [_EXPIRES_AFTER, {"type": "null"}]}}}, required=False)},
    ("post", f"{_STORE}/files"): {"requestBody": json_body({"type": "object", "required": ["file_id"], "properties": {
        "file_id": ID, "attributes": _ATTRIBUTES, "chunking_strategy": _CHUNKING}})},
    ("get", f"{_STORE}/files"): {"parameters": [
        *_PAGE, query("before", ID), query("filter", {"enum": ["in_progress", "completed", "failed", "cancelled"]})]},
    ("post", f"{_STORE}/files/{{file_id}}"): {"requestBody": json_body({
        "type": "object", "required": ["attributes"], "properties": {"attributes": _ATTRIBUTES}})},
    ("post", f"{_STORE}/file_batches"): {"requestBody": json_body({"type": "object", "required": ["file_ids"], "properties": {
        "file_ids": _FILE_IDS, "attributes": _ATTRIBUTES, "chunking_strategy": _CHUNKING}})},
    ("get", f"{_STORE}/file_batches/{{batch_id}}/files"): {"parameters": [
        *_PAGE, query("before", ID), query("filter", {"enum": ["in_progress", "completed", "failed", "cancelled"]})]},
    ("post", f"{_STORE}/search"): {"requestBody": json_body({"type": "object", "required": ["query"], "properties": {
        "query": {"oneOf": [{"type": "string", "minLength": 1}, {"type": "array", "minItems": 1, "items": {"type": "string"}}]},
        "filters": {"type": "object"}, "max_num_results": {"type": "integer", "minimum": 1, "maximum": 50},
        "ranking_options": {"type": "object"}, "rewrite_query": {"type": "boolean"}}})},
}

OPERATIONS: dict[tuple[str, str], Schema] = {
    **_RETRIEVAL,
    ("post", "/v1/responses"): {"requestBody": json_body(CREATE_RESPONSE)},
    ("post", "/v1/responses/input_tokens"): {"requestBody": json_body(CREATE_RESPONSE)},
    ("post", "/v1/responses/compact"): {"requestBody": json_body(_COMPACT)},
    ("get", "/v1/responses/{response_id}"): {"parameters": [
        query("stream", {"enum": ["true", "false"]}, "Stream a background response's events."),
        query("starting_after", {"type": "integer", "minimum": 0}, "The sequence number to stream after."),
    ]},
    ("get", "/v1/responses/{response_id}/input_items"): {"parameters": [
        *_PAGE, query("before", ID, "The id to list before (a cursor).")]},
    ("post", "/v1/conversations"): {"requestBody": json_body({
        "type": "object", "additionalProperties": False,
        "properties": {"items": {"anyOf": [_ITEMS, {"type": "null"}]}, "metadata": {"anyOf": [METADATA, {"type": "null"}]}},
    }, required=False)},
    ("post", "/v1/conversations/{conversation_id}"): {"requestBody": json_body({
        "type": "object", "additionalProperties": False, "required": ["metadata"], "properties": {"metadata": METADATA},
    })},
    ("post", "/v1/conversations/{conversation_id}/items"): {"requestBody": json_body({
        "type": "object", "additionalProperties": False, "required": ["items"], "properties": {"items": {**_ITEMS, "minItems": 1}},
    })},
    ("get", "/v1/conversations/{conversation_id}/items"): {"parameters": _PAGE},
    # Pass-through: relayed byte for byte to the model's server, which validates the rest.
    ("post", "/v1/chat/completions"): {"requestBody": json_body(_passthrough({
        "messages": {"type": "array", "items": {"type": "object", "properties": {"role": {"type": "string"}}}}}))},
    ("post", "/v1/completions"): {"requestBody": json_body(_passthrough({
        "prompt": {"oneOf": [{"type": "string"}, {"type": "array"}]}}))},
    ("post", "/v1/embeddings"): {"requestBody": json_body(_passthrough({
        "input": {"oneOf": [{"type": "string"}, {"type": "array"}]}}))},
    ("post", "/v1/messages"): {"requestBody": json_body({
        "type": "object", "required": ["model", "max_tokens", "messages"],
        "description": "Anthropic Messages API create request.",
        "properties": {**_MESSAGES_FIELDS, "max_tokens": {"type": "integer", "minimum": 1},
                       "stream": {"type": "boolean"}},
    })},
    ("post", "/v1/messages/count_tokens"): {"requestBody": json_body({
        "type": "object", "required": ["model", "messages"], "properties": _MESSAGES_FIELDS,
    })},
}
_OPENAI_ERROR: Schema = {"type": "object", "required": ["error"], "properties": {"error": {
    "type": "object", "required": ["message", "type", "param", "code"],
    "properties": {"message": {"type": "string"}, "type": {"type": "string"},
                   "param": {"type": ["string", "null"]}, "code": {"type": ["string", "null"]}}}}}
_ANTHROPIC_ERROR: Schema = {"type": "object", "required": ["type", "error"], "properties": {
    "type": {"const": "error"},
    "error": {"type": "object", "required": ["type", "message"],
              "properties": {"type": {"type": "string"}, "message": {"type": "string"}}}}}
ERRORS = {"": _OPENAI_ERROR, "/v1/messages": _ANTHROPIC_ERROR}
SECURITY = {
    "bearer": {"type": "http", "scheme": "bearer", "description": "An API key or an OIDC token."},
    "api_key": {"type": "apiKey", "in": "header", "name": "x-api-key"},
}


def gateway_document(app: FastAPI) -> Schema:
    return build_document(app, VERSION, OPERATIONS, ERRORS, SECURITY)
