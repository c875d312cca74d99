"""llm-d's OpenAPI document (`GET /openapi.json`): the three steps' bodies and headers, which FastAPI cannot see
because each route reads its own body. Paths come from the routes themselves (agentic_runtime.http.openapi)."""

from __future__ import annotations

from agentic_core.json_types import Schema
from agentic_core.responses.json_schema import CREATE_RESPONSE
from agentic_runtime.http.openapi import build_document, header, json_body
from fastapi import FastAPI

from agentic_llm_d.auth import WORKLOAD_TOKEN_HEADER
from agentic_llm_d.settings import LlmDSettings

VERSION = "1alpha"
_CONTEXT: Schema = {"type": "string", "minLength": 1, "description": "The sealed context the previous step returned."}
_ERROR: Schema = {"type": "object", "required": ["error"], "properties": {"error": {
    "type": "object", "required": ["message", "type", "param", "code"],
    "properties": {"message": {"type": "string"}, "type": {"type": "string"},
                   "param": {"type": ["string", "null"]}, "code": {"type": ["string", "null"]}}}}}


def llm_d_document(app: FastAPI, settings: LlmDSettings) -> Schema:
    tenant = header(settings.tenant_header, {"type": "string", "minLength": 1, "maxLength": settings.max_tenant_bytes},
                    "The caller's tenant (`default` without it).", required=False)
    execute = header(settings.execute_header, {"enum": ["true", "false"]},
                     "`true` runs gateway tools through the execute step.", required=False)
    operations: dict[tuple[str, str], Schema] = {
        ("post", "/v1alpha/responses/hydrate"): {"parameters": [tenant, execute], "requestBody": json_body(CREATE_RESPONSE)},
        ("post", "/v1alpha/responses/execute"): {"parameters": [tenant], "requestBody": json_body({
            "type": "object", "required": ["context", "calls", "request"],
            "properties": {"context": _CONTEXT, "calls": {"type": "array", "minItems": 1, "items": {"type": "object"}},
                           "request": {"type": "object", "required": ["input"],
                                       "properties": {"input": {"type": "array"}}},
                           "usage": {"type": "object", "description": "The round's `usage` as the model server "
                                     "reported it (optional): counted in the tenant's usage."}},
        })},
        ("post", "/v1alpha/responses/persist"): {"parameters": [tenant], "requestBody": json_body({
            "type": "object", "required": ["context"],
            "description": "Exactly one of `response` (the model's JSON answer) or `sse` (its stream, as text).",
            "properties": {"context": _CONTEXT, "response": {"type": "object"}, "sse": {"type": "string"}},
        })},
    }
    security = {"workload_token": {"type": "apiKey", "in": "header", "name": WORKLOAD_TOKEN_HEADER}}
    return build_document(app, VERSION, operations, {"": _ERROR}, security)
