"""Validation of Conversations API bodies (create, update, append items)."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agentic_core.responses.request import check_metadata, invalid_request_from

MAX_ITEMS_PER_REQUEST = 20


class CreateConversationRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    items: list[dict[str, Any]] | None = Field(default=None, max_length=MAX_ITEMS_PER_REQUEST)
    metadata: dict[str, str] | None = None

    _metadata = field_validator("metadata")(check_metadata)


class UpdateConversationRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    metadata: dict[str, str]

    _metadata = field_validator("metadata")(check_metadata)


class AppendItemsRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    items: list[dict[str, Any]] = Field(min_length=1, max_length=MAX_ITEMS_PER_REQUEST)


Body = TypeVar("Body", bound=BaseModel)


def validate_body(model: type[Body], payload: dict[str, Any]) -> Body:
    try:
        return model.model_validate(payload)
    except ValidationError as exc:
        raise invalid_request_from(exc) from None
