"""Plain records passed between the servicer and the stores."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class TurnRecord:
    tenant: str
    response_id: str
    previous_response_id: str | None
    model: str
    status: str
    response: str
    input_items: list[tuple[str, str]]  # (item id, item JSON)
    output_items: list[tuple[str, str]]
    store_response: bool = True
    conversation_id: str | None = None
    lease_token: str | None = None
    conversation_items: list[tuple[str, str, str, str]] | None = None  # (item id, JSON, visibility, linked item id)
    # Each item's model view (None: none stored), parallel to input then output items; empty: none for any.
    model_views: list[str | None] = field(default_factory=list)
    conversation_model_views: list[str | None] = field(default_factory=list)  # parallel to conversation_items


@dataclass(frozen=True, slots=True)
class StoredItems:
    """A history as stored: each item's JSON and its model view (None where none is stored)."""

    items: list[str]
    model_views: list[str | None]


@dataclass(frozen=True, slots=True)
class ItemPage:
    items: list[tuple[str, str]]  # (item id, item JSON)
    has_more: bool
