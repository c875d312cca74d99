"""Validation of a Responses create request.

Only what the stateful path must understand is typed; every other field is
kept as the client sent it and forwarded to the model server.
"""

from __future__ import annotations

from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agentic_core.errors import InvalidRequest
from agentic_core.ids import Identifier, is_identifier
from agentic_core.json_bounds import check_body_depth, check_tags

METADATA_MAX_PAIRS = 16
METADATA_MAX_KEY_CHARS = 64
METADATA_MAX_VALUE_CHARS = 512


def check_metadata(cls: type, value: dict[str, str] | None) -> dict[str, str] | None:
    """OpenAI's metadata bounds: 16 pairs, keys up to 64 characters, values up to 512."""
    if value is None:
        return value
    if len(value) > METADATA_MAX_PAIRS:
        raise ValueError(f"at most {METADATA_MAX_PAIRS} key-value pairs are allowed")
    for key, item in value.items():
        if len(key) > METADATA_MAX_KEY_CHARS:
            raise ValueError(f"keys may be at most {METADATA_MAX_KEY_CHARS} characters")
        if len(item) > METADATA_MAX_VALUE_CHARS:
            raise ValueError(f"values may be at most {METADATA_MAX_VALUE_CHARS} characters")
    return value


class CreateResponseRequest(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)

    model: str = Field(min_length=1)
    input: str | list[dict[str, Any]] = Field(default_factory=list)
    instructions: str | None = None
    previous_response_id: Identifier | None = None
    conversation: str | dict[str, Any] | None = None
    store: bool = True
    stream: bool = False
    background: bool = False
    # False prepares the turn (history, tools) and answers at once without inference (WebSocket prewarm).
    generate: bool = True
    metadata: dict[str, str] | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, ge=0, le=1)
    presence_penalty: float | None = Field(default=None, ge=-2, le=2)
    frequency_penalty: float | None = Field(default=None, ge=-2, le=2)
    max_output_tokens: int | None = Field(default=None, ge=1)
    max_tool_calls: int | None = Field(default=None, ge=0)
    parallel_tool_calls: bool | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    top_logprobs: int | None = Field(default=None, ge=0, le=20)
    truncation: str | None = None
    user: str | None = None
    safety_identifier: str | None = None
    prompt_cache_key: str | None = None
    service_tier: str | None = None
    text: dict[str, Any] | None = None
    reasoning: dict[str, Any] | None = None
    include: list[str] | None = None

    _metadata = field_validator("metadata")(check_metadata)

    @field_validator("truncation")
    @classmethod
    def _truncation_mode(cls, value: str | None) -> str | None:
        if value not in (None, "auto", "disabled"):
            raise ValueError("expected 'auto' or 'disabled'")
        return value


class CompactRequest(BaseModel):
    """`POST /v1/responses/compact`: the context to compact is `previous_response_id`'s chain, then `input`."""

    model_config = ConfigDict(extra="allow", strict=True)

    model: str = Field(min_length=1)
    input: str | list[dict[str, Any]] = Field(default_factory=list)
    instructions: str | None = None
    previous_response_id: Identifier | None = None


def validate_compact_request(payload: dict[str, Any]) -> CompactRequest:
    try:
        return CompactRequest.model_validate(payload)
    except ValidationError as exc:
        raise invalid_request_from(exc) from None


def conversation_id_of(request: CreateResponseRequest) -> str | None:
    """`conversation` is an id or `{"id": ...}`; it excludes `previous_response_id`."""
    conversation = request.conversation
    if conversation is None:
        return None
    if request.previous_response_id is not None:
        raise InvalidRequest(
            "Mutually exclusive parameters: use either `previous_response_id` or `conversation`, not both.",
            param="conversation", code="mutually_exclusive_parameters",
        )
    conversation_id = conversation.get("id") if isinstance(conversation, dict) else conversation
    if not is_identifier(conversation_id):
        raise InvalidRequest("Invalid value for 'conversation': expected an id or {\"id\": ...}.", param="conversation",
                             code="invalid_value")
    return str(conversation_id)


def parse_json_object(body: bytes) -> dict[str, Any]:
    """Parse a request body that must be one JSON object, nested no deeper than `MAX_JSON_DEPTH`, with string
    tags (`agentic_core.json_bounds`)."""
    try:
        payload = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise InvalidRequest(f"The request body is not valid JSON: {exc}", code="invalid_json") from None
    if not isinstance(payload, dict):
        raise InvalidRequest("The request body must be a JSON object.", code="invalid_json")
    check_body_depth(body, payload)
    check_tags(payload)
    return payload


def validate_create_request(payload: dict[str, Any]) -> CreateResponseRequest:
    try:
        return CreateResponseRequest.model_validate(payload)
    except ValidationError as exc:
        raise invalid_request_from(exc) from None


def invalid_request_from(exc: ValidationError) -> InvalidRequest:
    """The first validation problem, worded for a client, with a dotted `param`."""
    first = exc.errors(include_url=False)[0]
    param = ".".join(str(part) for part in first["loc"] if not _is_union_tag(part)) or None
    if first["type"] == "missing":
        message = f"Missing required parameter: '{param}'."
        return InvalidRequest(message, param=param, code="missing_required_parameter")
    got = type(first.get("input")).__name__ if "input" in first else "value"
    message = f"Invalid value for '{param}': {first['msg']} (got {_json_type_name(got)})."
    return InvalidRequest(message, param=param, code="invalid_value")


def _is_union_tag(part: Any) -> bool:
    # pydantic names union branches in `loc` (e.g. 'str', 'list[dict[str,any]]'); they mean nothing to a client.
    return isinstance(part, str) and ("[" in part or part in {"str", "int", "float", "bool", "dict", "list"})


def _json_type_name(python_type: str) -> str:
    return {
        "str": "a string",
        "int": "an integer",
        "float": "a number",
        "bool": "a boolean",
        "dict": "an object",
        "list": "an array",
        "NoneType": "null",
    }.get(python_type, python_type)
